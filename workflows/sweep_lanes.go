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

// active is how many trials hold a place: the running ones less the standby ones.
func (s *sweepRun) active() int {
	if s.state.Lanes == nil {
		return len(s.running)
	}
	return len(s.running) - len(s.state.Lanes.Standby)
}

// room says whether another trial may take a place now.
func (s *sweepRun) room() bool {
	return !s.state.Paused && s.active() < s.state.Concurrency
}

// nextTrial is the next trial to start: the oldest reserved one, else the scheduler's next.
func (s *sweepRun) nextTrial() (sweeps.Trial, bool) {
	if l := s.state.Lanes; l != nil && len(l.Queue) > 0 {
		t := l.Queue[0]
		l.Queue = l.Queue[1:]
		return t, true
	}
	return s.sched.Next()
}

// peekTrial says whether nextTrial has a trial.
func (s *sweepRun) peekTrial() bool {
	if l := s.state.Lanes; l != nil && len(l.Queue) > 0 {
		return true
	}
	_, ok := s.sched.Peek()
	return ok
}

// reserve takes the successor of a trial being started from the scheduler; "" when it has none.
func (s *sweepRun) reserve(id string) string {
	l := s.state.Lanes
	if l == nil {
		return ""
	}
	next, ok := s.sched.Next()
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

// dueStandby returns the reserved successors to start as standby trials now: while the window is
// exactly full (not paused, not above concurrency), the chain of successors behind each trial holding
// a place is started standbyDepth deep. In trial ID order of the trials holding places.
func (s *sweepRun) dueStandby() []string { return s.due(-1) }

// due is dueStandby's walk, stopping after limit trials (-1: none).
func (s *sweepRun) due(limit int) []string {
	l := s.state.Lanes
	if l == nil || s.state.Paused || s.active() != s.state.Concurrency || len(l.Queue) == 0 {
		return nil
	}
	queued := map[string]bool{}
	for _, t := range l.Queue {
		queued[t.ID] = true
	}
	var due []string
	for _, id := range sortedKeys(l.Successor) {
		if _, standby := l.Standby[id]; standby || !s.running[id] {
			continue // not holding a place
		}
		for depth, at := 0, id; depth < standbyDepth; depth++ {
			next, ok := l.Successor[at]
			if !ok {
				break
			}
			if queued[next] {
				if due = append(due, next); len(due) == limit {
					return due
				}
				break
			}
			if _, standby := l.Standby[next]; !standby || !s.running[next] {
				break
			}
			at = next
		}
	}
	return due
}

// standbyDue takes the trials dueStandby names out of the queue.
func (s *sweepRun) standbyDue() []sweeps.Trial {
	due := s.dueStandby()
	if len(due) == 0 {
		return nil
	}
	l := s.state.Lanes
	var out []sweeps.Trial
	for _, id := range due {
		if i := slices.IndexFunc(l.Queue, func(t sweeps.Trial) bool { return t.ID == id }); i >= 0 {
			out = append(out, l.Queue[i])
			l.Queue = slices.Delete(l.Queue, i, i+1)
		}
	}
	return out
}

// canStartStandby says whether standbyDue would start one; it stops at the first (the sweep's wait
// condition asks it).
func (s *sweepRun) canStartStandby() bool {
	return len(s.due(1)) > 0
}

// laneEnded updates the lanes for a trial that ended: its standby successor took its place if the
// worker released it (sum.HandedOff) and the sweep had not held it; otherwise the sweep releases it
// when it has room (Waiting). A standby trial that ended is no longer waiting.
func (s *sweepRun) laneEnded(sum results.TrialSummary) {
	l := s.state.Lanes
	if l == nil {
		return
	}
	id := sum.TrialID
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

// releaseWaiting releases the waiting standby trials while the sweep has room.
func (s *sweepRun) releaseWaiting(ctx workflow.Context) {
	l := s.state.Lanes
	for l != nil && len(l.Waiting) > 0 && s.room() {
		id := l.Waiting[0]
		l.Waiting = l.Waiting[1:]
		delete(l.Standby, id)
		s.release(ctx, id)
	}
}

// release sends a standby trial the sweep's SignalRelease; its start has landed (a trial whose start is
// still in flight is released once it lands, followTrial).
func (s *sweepRun) release(ctx workflow.Context, id string) {
	if !s.started[id] {
		s.releaseOnStart[id] = true
		return
	}
	s.signalTrial(ctx, id, SignalRelease, Release{FromSweep: true})
}

// holdStandby tells every standby trial not held yet that only the sweep releases it from now on: the
// sweep was paused or its concurrency lowered, and a trainer that exits no longer frees a place.
func (s *sweepRun) holdStandby(ctx workflow.Context) {
	l := s.state.Lanes
	if l == nil {
		return
	}
	for _, id := range sortedKeys(l.Standby) {
		if l.Standby[id] {
			continue
		}
		l.Standby[id] = true
		if s.started[id] {
			s.signalTrial(ctx, id, SignalHold, nil) // else once its start lands (followTrial)
		}
	}
}
