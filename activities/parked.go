package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// A standby trial's first segment can wait for its place inside a worker (docs/architecture.md, "Slot
// hand-off"): the Trial workflow schedules it on its trial queue's parked queue (ParkedQueue) with
// SegmentInput.Parked, and the attempt waits here, holding no place and sending no heartbeat, until the
// trial ahead of it hands its place over on this worker. Its trainer then starts at once: the hand-off
// costs no round trip to the Temporal server. A parked attempt that is not handed a place ends without
// training (SegmentResult.Unhanded) when its workflow disarms it (StopSegment with ParkedOnly: the
// trial was held, released by the sweep, or cancelled), when the worker stops, or after parkLimit,
// before the server could time it out for want of a heartbeat; its workflow then waits for its release
// as a standby trial without a parked segment does.

// ParkedQueue is the task queue of the segments parked for trial queue q; the workers of q serve it.
func ParkedQueue(q string) string { return q + "/parked" }

// parkedSeg is a segment attempt parked in this worker.
type parkedSeg struct {
	trial string // parkedTrial of its trial
	key   string // segmentKey of the attempt
	// handed receives the places of the trial that handed its place over (nil: a worker without
	// places); buffered, so the hand-off never waits.
	handed   chan *Places
	disarmed chan struct{}
}

// parkedTrial names a trial among those of every sweep a worker serves.
func parkedTrial(sweepID, trialID string) string { return sweepID + "/" + trialID }

// parkedSegs are the segments parked in a worker, by trial (parkedTrial) and by attempt.
type parkedSegs struct {
	mu      sync.Mutex
	byTrial map[string]*parkedSeg
	byKey   map[string]*parkedSeg
}

func (ps *parkedSegs) park(trial, key string) *parkedSeg {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byTrial == nil {
		ps.byTrial, ps.byKey = map[string]*parkedSeg{}, map[string]*parkedSeg{}
	}
	s := &parkedSeg{trial: trial, key: key, handed: make(chan *Places, 1), disarmed: make(chan struct{})}
	if old := ps.byTrial[trial]; old != nil {
		// An earlier attempt of the same segment left behind (its workflow moved on): it must never
		// train now.
		delete(ps.byKey, old.key)
		close(old.disarmed)
	}
	ps.byTrial[trial], ps.byKey[key] = s, s
	return s
}

// take removes the segment parked for trial, for a hand-off; nil when none is parked here.
func (ps *parkedSegs) take(trial string) *parkedSeg {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	s := ps.byTrial[trial]
	if s != nil {
		delete(ps.byTrial, trial)
		delete(ps.byKey, s.key)
	}
	return s
}

// disarm ends the parked attempt key without training; false when it is not parked here (handed its
// place already, or never parked on this worker).
func (ps *parkedSegs) disarm(key string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	s := ps.byKey[key]
	if s == nil {
		return false
	}
	delete(ps.byKey, key)
	delete(ps.byTrial, s.trial)
	close(s.disarmed)
	return true
}

// leave removes s as it gives up waiting; false when a hand-off took it first (its places are on the
// way in s.handed).
func (ps *parkedSegs) leave(s *parkedSeg) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byTrial[s.trial] != s {
		return false
	}
	delete(ps.byTrial, s.trial)
	delete(ps.byKey, s.key)
	return true
}

// handOver gives the place of a trainer that exited cleanly to the segment parked here for its
// successor, if one is: places (the exiting segment's, nil without) count the successor's trainer in
// its stead. Only a segment's first attempt hands over here: a retry may run where an earlier
// attempt's successor gave up waiting and its workflow moved on.
func (a *Activities) handOver(ctx context.Context, sweepID, successor string, places *Places) bool {
	if successor == "" || (activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt != 1) {
		return false
	}
	s := a.parked.take(parkedTrial(sweepID, successor))
	if s == nil {
		return false
	}
	if places != nil {
		places.Inherit()
	}
	s.handed <- places
	return true
}

// parkLimit is how long a parked attempt waits: it sends no heartbeat meanwhile, and once handed its
// place its first heartbeat comes a heartbeat interval later, so both must fit in the heartbeat
// timeout, with 10 s to spare; at most half of it.
func parkLimit(timeout, every time.Duration) time.Duration {
	return max(0, min(timeout/2, timeout-every-10*time.Second))
}

// awaitPlace parks the attempt until it is handed a place (true, with the places that count its
// trainer) or gives up (false): disarmed, the worker stopping, its context ending, or parkLimit.
func (a *Activities) awaitPlace(ctx context.Context, in SegmentInput, every time.Duration) (*Places, bool) {
	var key string
	var timeout time.Duration
	var workerStop <-chan struct{}
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		key, timeout, workerStop = segmentKey(info), info.HeartbeatTimeout, activity.GetWorkerStopChannel(ctx)
	}
	limit := parkLimit(timeout, every)
	if limit <= 0 {
		return nil, false
	}
	s := a.parked.park(parkedTrial(in.SweepID, in.Trial.ID), key)
	a.announceParked(ctx, key)
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case p := <-s.handed:
		return p, true
	case <-s.disarmed:
		return nil, false
	case <-t.C:
	case <-workerStop:
	case <-ctx.Done():
	}
	if a.parked.leave(s) {
		return nil, false
	}
	return <-s.handed, true // a hand-off took it as it gave up
}

// announceParked tells the parked attempt's workflow where to disarm it (SegmentStarted), from a
// goroutine; without a stop queue the attempt is disarmed only by its parkLimit.
func (a *Activities) announceParked(ctx context.Context, key string) {
	if a.StopQueue == "" || a.Announce == nil || !activity.IsActivity(ctx) {
		return
	}
	info := activity.GetInfo(ctx)
	go func() {
		if err := a.announce(context.WithoutCancel(ctx), info, key); err != nil {
			activityLog(ctx).Warn("could not tell the standby trial where to disarm its parked segment; it gives up waiting on its own",
				"error", err)
		}
	}()
}

// giveBack returns the place a parked segment inherited when it ends before its trainer ran.
func (p *Places) giveBack() {
	if p != nil {
		p.Unplaced()
		p.Release()
	}
}

// startedAt sets when the server last heard of the attempt: a parked attempt's start, not the start
// of its heartbeats.
func (b *beats) startedAt(t time.Time) {
	b.mu.Lock()
	b.heard = t
	b.mu.Unlock()
}
