package workflows

import (
	"github.com/rlsweep/rlsweep/scheduler"
)

// trialBook is the Sweep's bookkeeping of its trials, apart from the Temporal calls that act on it:
// which trials run, which of their starts have landed, which standby trials to release once theirs
// has, which this run follows by their futures, the scheduler's last answer to each running trial at a
// segment boundary, and the questions held for an answer. sweepRun asks it and makes the calls; it
// never lets map order reach a decision (every list it returns is in trial ID order).
type trialBook struct {
	// running: trials started (or carried over) and not yet recorded as ended.
	running map[string]bool
	// starting counts the starts sent whose landing is not confirmed yet; started holds the trials
	// whose start landed (every carried one too); releaseOnStart the standby trials released while
	// their start was in flight, released once it lands.
	starting       int
	started        map[string]bool
	releaseOnStart map[string]bool
	// followed: the trials this run started, whose end their futures tell; a carried trial is not.
	followed map[string]bool
	// decided is the scheduler's last answer to each running trial (at a boundary, or a stop between
	// boundaries), carried over a continue-as-new (SweepState.Decided).
	decided map[string]scheduler.Decision
	// held: the questions the scheduler answered Wait, asked again after other questions and ends.
	held map[string]scheduler.Boundary
	// ended: a trial ended since the held questions were last taken (retake): they may have an
	// answer now.
	ended bool
}

// newTrialBook is the book of a run that carries over the running trials carried (their starts have
// landed; no future of this run follows them) and the decisions made for them.
func newTrialBook(carried []string, decided map[string]scheduler.Decision) *trialBook {
	b := &trialBook{running: map[string]bool{}, started: map[string]bool{}, releaseOnStart: map[string]bool{},
		followed: map[string]bool{}, decided: map[string]scheduler.Decision{}, held: map[string]scheduler.Boundary{}}
	for _, id := range carried {
		b.running[id] = true
		b.started[id] = true
	}
	for id, d := range decided {
		b.decided[id] = d
	}
	return b
}

// carry is what a continue-as-new hands the next run: the running trials in ID order and the
// decisions made for them (nil when none). Held questions are not carried: their trials ask again.
func (b *trialBook) carry() (running []string, decided map[string]scheduler.Decision) {
	if len(b.decided) > 0 {
		decided = make(map[string]scheduler.Decision, len(b.decided))
		for id, d := range b.decided {
			decided[id] = d
		}
	}
	return sortedKeys(b.running), decided
}

// launched books a trial whose start was just sent: it runs, this run follows it, its start is in
// flight.
func (b *trialBook) launched(id string) {
	b.running[id] = true
	b.followed[id] = true
	b.starting++
}

// startLanded books the landing of a trial's start and says whether to release it now (a standby
// trial released while its start was in flight).
func (b *trialBook) startLanded(id string) (release bool) {
	b.starting--
	b.started[id] = true
	release = b.releaseOnStart[id]
	delete(b.releaseOnStart, id)
	return release
}

// startFailed books a start that did not land; the trial is then recorded as ended (end).
func (b *trialBook) startFailed(id string) {
	b.starting--
	delete(b.releaseOnStart, id)
}

// startsInFlight is how many starts have not landed yet.
func (b *trialBook) startsInFlight() int { return b.starting }

// release says whether a standby trial can be released now, its start having landed; otherwise it is
// released once it lands (startLanded says so).
func (b *trialBook) release(id string) (now bool) {
	if b.started[id] {
		return true
	}
	b.releaseOnStart[id] = true
	return false
}

// hasStarted says whether a trial's start has landed, so that it can be signalled.
func (b *trialBook) hasStarted(id string) bool { return b.started[id] }

// end books a trial's end and says whether it was running: an end learnt twice (by signal and by
// future, or by a lookup) counts once. Its decision and held question go with it.
func (b *trialBook) end(id string) bool {
	if !b.running[id] {
		return false
	}
	delete(b.running, id)
	delete(b.decided, id)
	delete(b.held, id)
	b.ended = true
	return true
}

// runs says whether a trial is running.
func (b *trialBook) runs(id string) bool { return b.running[id] }

// landed says whether a trial is running and its start has landed.
func (b *trialBook) landed(id string) bool { return b.running[id] && b.started[id] }

// count is how many trials run (standby ones included).
func (b *trialBook) count() int { return len(b.running) }

// runningIDs are the running trials, in ID order.
func (b *trialBook) runningIDs() []string { return sortedKeys(b.running) }

// carriedOver says whether a running trial was carried over from an earlier run: no future of this
// run tells its end.
func (b *trialBook) carriedOver(id string) bool { return b.running[id] && !b.followed[id] }

// ask answers a trial's question at a segment boundary: with the decision made for that segment, or
// with a stop made between boundaries (which becomes that segment's answer), else with decide's (the
// scheduler's), which is then made (fresh: to be logged). A Wait is held, asked again by retake; a
// question from a trial that does not run is dropped. ok: d answers q.
func (b *trialBook) ask(q scheduler.Boundary, decide func(scheduler.Boundary) scheduler.Decision) (d scheduler.Decision, fresh, ok bool) {
	if !b.running[q.TrialID] {
		return scheduler.Decision{}, false, false
	}
	d, made := b.decided[q.TrialID]
	switch {
	case made && d.Action == scheduler.Stop && d.Segment < 0:
		d.Segment = q.Segment
	case !made || d.Segment != q.Segment:
		d = decide(q)
		if d.Action == scheduler.Wait {
			b.held[q.TrialID] = q
			return scheduler.Decision{}, false, false
		}
		b.decided[q.TrialID] = d
		fresh = true
	}
	delete(b.held, q.TrialID)
	return d, fresh, true
}

// retake takes the held questions to ask again, in trial ID order, dropping those whose trial ended.
func (b *trialBook) retake() []scheduler.Boundary {
	b.ended = false
	var out []scheduler.Boundary
	for _, id := range sortedKeys(b.held) {
		if !b.running[id] {
			delete(b.held, id)
			continue
		}
		out = append(out, b.held[id])
	}
	return out
}

// heldAnswerable says whether held questions may have an answer: a trial ended since they were last
// taken.
func (b *trialBook) heldAnswerable() bool { return b.ended && len(b.held) > 0 }

// stop books a stop the scheduler made between boundaries for a trial. known: the trial runs (the
// stop is made and logged); tell: it is not waiting at a boundary, so it is told by signal (a held
// question is answered with the stop when it is asked again).
func (b *trialBook) stop(id string, d scheduler.Decision) (known, tell bool) {
	if !b.running[id] {
		return false, false
	}
	b.decided[id] = d
	_, waiting := b.held[id]
	return true, !waiting
}

// passes says whether a decision point a trial passed inside a segment counts: the trial runs and is
// not being stopped.
func (b *trialBook) passes(id string) bool {
	d, decided := b.decided[id]
	return b.running[id] && !(decided && d.Action == scheduler.Stop)
}
