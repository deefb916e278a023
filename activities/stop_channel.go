package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// A stop the workflow decides (a prune, a cancel) is a cancellation of the segment's activity, and
// the Temporal server hands a cancellation to the worker only in a heartbeat's answer. Heartbeats are
// rare (sweeps.HeartbeatInterval: liveness only), so each worker also serves a stop queue of its own
// (Activities.StopQueue): a segment attempt announces it to its Trial workflow as it starts
// (SegmentStarted), and a workflow that cancels the segment sends StopSegment there at once; StopSegment
// heartbeats the attempt straight away, and that heartbeat's answer carries the cancellation. The
// cancellation itself stays Temporal's: a stop queue that is gone (its worker died) costs only the
// latency, the next heartbeat still carries it.

// SignalSegmentStarted is the signal a TrainSegment attempt sends its Trial workflow as it starts, on
// a worker with a stop queue: where to send StopSegment.
const SignalSegmentStarted = "segment-started"

// SegmentStarted says where a running segment attempt takes its stop.
type SegmentStarted struct {
	// StopQueue is the task queue its worker takes StopSegment on.
	StopQueue string
	// Attempt names the attempt for StopSegment (segmentKey).
	Attempt string
}

// StopSegmentRequest names the segment attempt to stop (SegmentStarted.Attempt).
type StopSegmentRequest struct {
	Attempt string
	// ParkedOnly disarms the attempt if it is parked (activities/parked.go) and leaves it alone once it
	// trains: a standby trial held by its sweep must not take a place, but one already handed its place
	// trains on.
	ParkedOnly bool `json:",omitempty"`
}

// StopSegmentTimeout bounds a StopSegment activity from its scheduling to its end: a stop queue whose
// worker is gone leaves the stop to the attempt's next heartbeat.
const StopSegmentTimeout = 30 * time.Second

// SegmentAnnouncer tells a Trial workflow that one of its segment attempts started
// (SignalSegmentStarted); the worker sets it from its Temporal client.
type SegmentAnnouncer interface {
	SegmentStarted(ctx context.Context, workflowID, runID string, s SegmentStarted) error
}

// DefaultAnnounceAfter is how long a segment attempt runs before it announces its stop queue to its
// Trial workflow. A segment that ends sooner sends no signal: each announcement costs the Trial a
// workflow task, and on short segments (1 s trials at concurrency 16 on 2 cores) announcing each at
// once took the orchestration overhead from about +11% to +23% (docs/BENCHMARKS.md, "Orchestration
// overhead"). A stop decided before the announcement is sent as the announcement arrives (the Trial
// workflow's waitOrStop), so it reaches the trainer at most this much later than it would have; under
// the 2 s a stop is given.
const DefaultAnnounceAfter = 1500 * time.Millisecond

// segmentKey names an activity attempt among those a worker runs.
func segmentKey(info activity.Info) string {
	return fmt.Sprintf("%s/%s/%s#%d", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID, info.Attempt)
}

// announceSegment registers the running attempt's heartbeats under its key for StopSegment and, once
// the attempt has run AnnounceAfter, tells its workflow where to send the stop (from a goroutine: the
// trainer does not wait for it); the returned func unregisters it, and an attempt that ends before
// then announces nothing. Without a stop queue, or outside an activity, it does nothing: stops then
// arrive on the attempt's heartbeats alone. A failed announcement is logged and the segment goes on:
// its stops arrive at its next heartbeat.
func (a *Activities) announceSegment(ctx context.Context, b *beats, announced bool) func() {
	if a.StopQueue == "" || a.Announce == nil || !activity.IsActivity(ctx) {
		return func() {}
	}
	info := activity.GetInfo(ctx)
	key := segmentKey(info)
	a.running.Store(key, b)
	if announced {
		return func() { a.running.Delete(key) } // as it parked (announceParked)
	}
	announce := func() {
		if err := a.announce(ctx, info, key); err != nil && ctx.Err() == nil {
			activityLog(ctx).Warn("could not tell the trial workflow where to send a stop; a stop reaches this segment at its next heartbeat",
				"error", err, "heartbeat_every", b.every.String())
		}
	}
	after := a.AnnounceAfter
	if after == 0 {
		after = DefaultAnnounceAfter
	}
	if after < 0 {
		announce()
		return func() { a.running.Delete(key) }
	}
	ended := make(chan struct{})
	go func() {
		t := time.NewTimer(after)
		defer t.Stop()
		select {
		case <-t.C:
			announce()
		case <-ended:
		case <-ctx.Done():
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(ended) })
		a.running.Delete(key)
	}
}

// announce tells the workflow of the attempt key (info) that it takes its stops on this worker's stop
// queue (SegmentStarted), within 10 s.
func (a *Activities) announce(ctx context.Context, info activity.Info, key string) error {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return a.Announce.SegmentStarted(c, info.WorkflowExecution.ID, info.WorkflowExecution.RunID,
		SegmentStarted{StopQueue: a.StopQueue, Attempt: key})
}

// StopSegment brings a stop its workflow asked for to a segment attempt of this worker. A parked one
// (parked.go) ends without training; a running one is heartbeated now, and the answer carries the
// cancellation (the segment then stops its trainer as on any cancellation), unless the request is
// ParkedOnly. It reports whether it did either; an attempt that already ended needs nothing.
func (a *Activities) StopSegment(ctx context.Context, req StopSegmentRequest) (bool, error) {
	if a.parked.disarm(req.Attempt) {
		return true, nil
	}
	if req.ParkedOnly {
		return false, nil
	}
	v, ok := a.running.Load(req.Attempt)
	if !ok {
		return false, nil
	}
	v.(*beats).nudge()
	return true, nil
}
