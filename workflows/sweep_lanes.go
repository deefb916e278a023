package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Lanes is the slot hand-off's bookkeeping (docs/architecture.md, "Slot hand-off"). Each trial that
// holds a place has a successor reserved when it started; once the window is full, that successor is
// started as a standby trial that waits for the place, and the worker releases it (SignalRelease) as
// the trainer holding the place exits, without waiting for the trial, the sweep and a child start to
// go round the server. The sweep releases it itself when it learns the trial ended and the worker
// did not.
type Lanes struct {
	// Queue: trials taken from the scheduler and not started yet, in order, each some started trial's
	// successor. They start before any trial the scheduler has not given out.
	Queue []sweeps.Trial `json:",omitempty"`
	// Successor: a started trial's successor, by trial ID.
	Successor map[string]string `json:",omitempty"`
	// Standby: the trials started and waiting for a place; true once the sweep held them (only the
	// sweep releases those).
	Standby map[string]bool `json:",omitempty"`
	// Waiting: standby trials whose place was freed while the sweep had no room (paused, or above its
	// concurrency): the sweep releases them, in order, once it has.
	Waiting []string `json:",omitempty"`
	// Vacated: running trials known to have left their place before the sweep heard their end: the
	// standby trial behind one of them ended having trained, so the worker had handed it the place
	// (ended). Reports arrive out of order across a continue-as-new: a trial that ended while the run
	// closed can report after the trial that took its place, and counted as holding a place meanwhile
	// it would leave the window over-full, and no standby trial would start.
	Vacated map[string]bool `json:",omitempty"`
}

// standby says whether a trial is a standby trial, and whether the sweep held it; l may be nil.
func (l *Lanes) standby(id string) (held, ok bool) {
	if l == nil {
		return false, false
	}
	held, ok = l.Standby[id]
	return held, ok
}

// handsOff says whether a sweep's trials hand their places over: a fixed plan (grid, random, sobol)
// with no early_terminate and no metric.target. A scheduler that decides from results (bayes, pbt,
// pruning, a target that stops the sweep) must see the results before it gives out the next trial,
// which a successor reserved ahead of time would not.
func handsOff(spec *sweeps.Spec) bool {
	switch spec.Method {
	case sweeps.MethodGrid, sweeps.MethodRandom, sweeps.MethodSobol, "":
	default:
		return false
	}
	return spec.EarlyTerminate == nil && spec.Metric.Target == nil
}

// active is how many of the running trials hold a place: all but the standby ones; l may be nil.
func (l *Lanes) active(running int) int {
	if l == nil {
		return running
	}
	return running - len(l.Standby) - len(l.Vacated)
}

// next takes the oldest reserved trial, else asks more (the scheduler); l may be nil.
func (l *Lanes) next(more func() (sweeps.Trial, bool)) (sweeps.Trial, bool) {
	if l != nil && len(l.Queue) > 0 {
		t := l.Queue[0]
		l.Queue = l.Queue[1:]
		return t, true
	}
	return more()
}

// queued says whether a reserved trial waits to start; l may be nil.
func (l *Lanes) queued() bool { return l != nil && len(l.Queue) > 0 }

// waiting says whether a standby trial waits for the sweep to release it; l may be nil.
func (l *Lanes) waiting() bool { return l != nil && len(l.Waiting) > 0 }

// reserve takes from more (the scheduler) the successor of trial id, being started, and queues it; ""
// when there is none or l is nil.
func (l *Lanes) reserve(id string, more func() (sweeps.Trial, bool)) string {
	if l == nil {
		return ""
	}
	next, ok := more()
	if !ok {
		return ""
	}
	l.Queue = append(l.Queue, next)
	l.Successor[id] = next.ID
	return next.ID
}

// standbyDepth is how many standby trials wait behind a running one: three, so that places are handed
// over at once even while the sweep cannot start standby trials for longer than two trials last. A
// continue-as-new does that: the run's closing workflow task is often refused because a trial ended
// meanwhile (UnhandledCommand), and the worker then replays the whole run, about 2 s for 4,000 events
// on two busy cores; so does a restart of the control worker.
const standbyDepth = 3

// due returns the reserved successors to start as standby trials now, at most limit (-1: no limit):
// while the window is exactly full (full: not paused, as many trials holding places as the
// concurrency), the chain of successors behind each trial holding a place is started standbyDepth
// deep, each standby trial once the start of the trial ahead of it has landed (landed: started and
// running). In trial ID order of the trials holding places.
//
// Waiting for the landing keeps a sweep's first starts ahead of its standby trials: a standby trial is
// not needed before the trainer ahead of it exits, and sent in the same workflow task as the first
// trials (48 standby starts beside 16 at concurrency 16) they compete with those trials' own first
// workflow tasks and activities on the server (docs/BENCHMARKS.md, "Orchestration overhead").
func (l *Lanes) due(landed func(string) bool, full bool, limit int) []string {
	if l == nil || !full || len(l.Queue) == 0 {
		return nil
	}
	queued := l.queuedIDs()
	var due []string
	for _, id := range sortedKeys(l.Successor) {
		if next, ok := l.dueBehind(id, landed, queued); ok {
			if due = append(due, next); len(due) == limit {
				return due
			}
		}
	}
	return due
}

// anyDue says whether due would name a trial. It is asked in every pass of the sweep's workflow tasks
// (canStart), so it does without due's order: whether one is due does not depend on it.
func (l *Lanes) anyDue(landed func(string) bool, full bool) bool {
	if l == nil || !full || len(l.Queue) == 0 {
		return false
	}
	queued := l.queuedIDs()
	for id := range l.Successor {
		if _, ok := l.dueBehind(id, landed, queued); ok {
			return true
		}
	}
	return false
}

func (l *Lanes) queuedIDs() map[string]bool {
	queued := make(map[string]bool, len(l.Queue))
	for _, t := range l.Queue {
		queued[t.ID] = true
	}
	return queued
}

// dueBehind is the queued trial due behind the running trial id: the first queued successor in its
// lane within standbyDepth, every standby trial before it landed.
func (l *Lanes) dueBehind(id string, landed func(string) bool, queued map[string]bool) (string, bool) {
	if _, standby := l.Standby[id]; standby || l.Vacated[id] || !landed(id) {
		return "", false // not holding a place, or its start is in flight
	}
	for depth, at := 0, id; depth < standbyDepth; depth++ {
		next, ok := l.Successor[at]
		if !ok {
			return "", false
		}
		if queued[next] {
			return next, true
		}
		if _, standby := l.Standby[next]; !standby || !landed(next) {
			return "", false
		}
		at = next
	}
	return "", false
}

// takeDue takes the trials due names out of the queue, in due's order, at most limit (-1: no limit).
func (l *Lanes) takeDue(landed func(string) bool, full bool, limit int) []sweeps.Trial {
	if limit == 0 {
		return nil
	}
	due := l.due(landed, full, limit)
	var out []sweeps.Trial
	for _, id := range due {
		if i := slices.IndexFunc(l.Queue, func(t sweeps.Trial) bool { return t.ID == id }); i >= 0 {
			out = append(out, l.Queue[i])
			l.Queue = slices.Delete(l.Queue, i, i+1)
		}
	}
	return out
}

// ended updates the lanes for a trial that ended: its standby successor took its place if the worker
// released it (sum.HandedOff) and the sweep had not held it; otherwise the sweep releases it when it
// has room (Waiting). A standby trial that ended is no longer waiting. l may be nil.
func (l *Lanes) ended(sum results.TrialSummary) {
	if l == nil {
		return
	}
	id := sum.TrialID
	if _, standby := l.Standby[id]; standby && !sum.NotStarted() {
		// It trained without the sweep's release: the trial ahead of it had handed it the place.
		if ahead, ok := l.ahead(id); ok {
			if l.Vacated == nil {
				l.Vacated = map[string]bool{}
			}
			l.Vacated[ahead] = true
		}
	}
	delete(l.Vacated, id)
	delete(l.Standby, id)
	l.Waiting = slices.DeleteFunc(l.Waiting, func(w string) bool { return w == id })
	next, ok := l.Successor[id]
	delete(l.Successor, id)
	if !ok {
		return
	}
	held, standby := l.Standby[next]
	switch {
	case !standby:
	case sum.HandedOff && !held:
		delete(l.Standby, next) // running already
	default:
		l.Waiting = append(l.Waiting, next)
	}
}

// ahead is the trial whose successor id is. A trial is one trial's successor at most, so the map's
// order does not matter and needs no sort.
func (l *Lanes) ahead(id string) (string, bool) {
	for at, next := range l.Successor {
		if next == id {
			return at, true
		}
	}
	return "", false
}

// popWaiting takes the next waiting standby trial to release, which then holds a place; l may be nil.
func (l *Lanes) popWaiting() (string, bool) {
	if !l.waiting() {
		return "", false
	}
	id := l.Waiting[0]
	l.Waiting = l.Waiting[1:]
	delete(l.Standby, id)
	return id, true
}

// hold marks every standby trial not held yet as held (only the sweep releases it from now on) and
// returns them, in ID order; l may be nil.
func (l *Lanes) hold() []string {
	if l == nil {
		return nil
	}
	var held []string
	for _, id := range sortedKeys(l.Standby) {
		if !l.Standby[id] {
			l.Standby[id] = true
			held = append(held, id)
		}
	}
	return held
}

// active is how many trials hold a place: the running ones less the standby ones.
func (s *sweepRun) active() int { return s.state.Lanes.active(s.book.count()) }

// room says whether another trial may take a place now.
func (s *sweepRun) room() bool {
	return !s.state.Paused && s.active() < s.state.Concurrency
}

// full says whether the window is exactly full: not paused, as many trials holding places as the
// concurrency. Standby trials start only then (Lanes.due).
func (s *sweepRun) full() bool {
	return !s.state.Paused && s.active() == s.state.Concurrency
}

// releaseWaiting releases the waiting standby trials while the sweep has room.
func (s *sweepRun) releaseWaiting(ctx workflow.Context) {
	for s.room() {
		id, ok := s.state.Lanes.popWaiting()
		if !ok {
			return
		}
		s.release(ctx, id)
	}
}

// release sends a standby trial the sweep's SignalRelease; its start has landed (a trial whose start is
// still in flight is released once it lands, followTrials).
func (s *sweepRun) release(ctx workflow.Context, id string) {
	if !s.book.release(id) {
		return
	}
	if reason := s.standbyInfeasible(id); reason != "" {
		s.sendSkip(ctx, id, reason)
		return
	}
	s.signalTrial(ctx, id, SignalRelease, Release{FromSweep: true})
}

// holdStandby tells every standby trial not held yet that only the sweep releases it from now on: the
// sweep was paused or its concurrency lowered, and a trainer that exits no longer frees a place.
func (s *sweepRun) holdStandby(ctx workflow.Context) {
	for _, id := range s.state.Lanes.hold() {
		if s.book.hasStarted(id) {
			s.signalTrial(ctx, id, SignalHold, nil) // else once its start lands (followTrials)
		}
	}
}
