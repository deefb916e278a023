package workflows

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// feed is a scheduler's Next over the trial IDs given.
func feed(ids ...string) func() (sweeps.Trial, bool) {
	return func() (sweeps.Trial, bool) {
		if len(ids) == 0 {
			return sweeps.Trial{}, false
		}
		t := sweeps.Trial{ID: ids[0]}
		ids = ids[1:]
		return t, true
	}
}

// runs is the lookup of the running set m.
func runs(m map[string]bool) func(string) bool { return func(id string) bool { return m[id] } }

func ids(ts []sweeps.Trial) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// The lanes' bookkeeping on its own, no workflow: a window of two places, trials a and b holding them,
// successors reserved from the scheduler, started standby up to standbyDepth deep while the window is
// full, and handed over or released as trials end.
// Across a continue-as-new, trials report out of order: a trial that ended while the run closed can
// report after the standby trial that took its place. That standby trial ended having trained, so the
// trial ahead of it had left its place: it no longer counts as holding one, and the window is full,
// not over-full, so standby trials are still due behind the trial now holding the place.
func TestLanesEndsOutOfOrder(t *testing.T) {
	l := &Lanes{Successor: map[string]string{"a": "b", "b": "c"}, Standby: map[string]bool{"b": false, "c": false},
		Queue: []sweeps.Trial{{ID: "d"}}}
	running := map[string]bool{"a": true, "b": true, "c": true}
	if got := l.active(len(running)); got != 1 {
		t.Fatalf("active = %d, want 1 (a)", got)
	}
	// b reports first: it trained (its trainer ran 1 s) and handed its place to c.
	l.ended(results.TrialSummary{TrialID: "b", HandedOff: true, Steps: 1000, WallSeconds: 1})
	delete(running, "b")
	l.Successor["c"] = "d"
	if got := l.active(len(running)); got != 1 {
		t.Errorf("after b's report: active = %d, want 1 (c; a left its place before b trained)", got)
	}
	if got := l.due(runs(running), true, -1); !slices.Equal(got, []string{"d"}) {
		t.Errorf("after b's report: due = %v, want [d] behind c, none behind a", got)
	}
	// a's report arrives: nothing changes but the book.
	l.ended(results.TrialSummary{TrialID: "a", HandedOff: true, Steps: 1000, WallSeconds: 1})
	delete(running, "a")
	if got := l.active(len(running)); got != 1 || len(l.Vacated) != 0 {
		t.Errorf("after a's report: active = %d, vacated %v, want 1 and none", got, l.Vacated)
	}
	// A standby trial that ends without having trained (its start failed, it was cancelled or skipped)
	// says nothing of the trial ahead of it.
	l = &Lanes{Successor: map[string]string{"a": "b"}, Standby: map[string]bool{"b": false}}
	l.ended(results.TrialSummary{TrialID: "b", Outcome: results.OutcomeFailed, Error: "trial workflow did not start"})
	if got := l.active(1); got != 1 || len(l.Vacated) != 0 {
		t.Errorf("a standby trial that never trained ended: active = %d, vacated %v, want 1 (a) and none", got, l.Vacated)
	}
}

func TestLanesCore(t *testing.T) {
	var nilLanes *Lanes
	if nilLanes.active(3) != 3 || nilLanes.queued() || nilLanes.waiting() || nilLanes.reserve("a", feed("x")) != "" ||
		nilLanes.due(func(string) bool { return true }, true, -1) != nil || nilLanes.hold() != nil {
		t.Error("nil lanes: want every trial holding a place and nothing reserved, due or held")
	}
	if id, ok := nilLanes.popWaiting(); ok {
		t.Errorf("nil lanes popWaiting = %q", id)
	}
	nilLanes.ended(results.TrialSummary{TrialID: "a"}) // no panic

	more := feed("c", "d", "e", "f", "g", "h", "i")
	l := &Lanes{Successor: map[string]string{}, Standby: map[string]bool{}}
	running := map[string]bool{"a": true, "b": true}
	if got := l.reserve("a", more); got != "c" {
		t.Fatalf("reserve(a) = %q, want c", got)
	}
	if got := l.reserve("b", more); got != "d" {
		t.Fatalf("reserve(b) = %q, want d", got)
	}
	for _, c := range []struct {
		name  string
		full  bool
		limit int
		want  []string
	}{
		{"window not full", false, -1, nil},
		{"full", true, -1, []string{"c", "d"}},
		{"full, first only", true, 1, []string{"c"}},
	} {
		if got := l.due(runs(running), c.full, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("%s: due = %v, want %v", c.name, got, c.want)
		}
	}
	// c and d start as standby trials; their own successors are reserved behind them.
	started := l.takeDue(runs(running), true, -1)
	if fmt.Sprint(ids(started)) != "[c d]" || l.queued() {
		t.Fatalf("takeDue = %v, queue %v; want [c d] and an empty queue", ids(started), l.Queue)
	}
	for _, tr := range started {
		l.Standby[tr.ID] = false
		l.reserve(tr.ID, more)
	}
	// Their starts are in flight: nothing is due behind them until they land; d lands first.
	if got := l.due(runs(running), true, -1); got != nil {
		t.Errorf("before c and d land: due = %v, want none", got)
	}
	running["d"] = true
	if got := l.due(runs(running), true, -1); !slices.Equal(got, []string{"f"}) {
		t.Errorf("d landed, c not: due = %v, want [f]", got)
	}
	running["c"] = true
	if l.active(len(running)) != 2 {
		t.Errorf("active = %d, want 2 (c and d are standby)", l.active(len(running)))
	}
	// The chains go deeper: e behind c, f behind d, up to standbyDepth.
	if got := l.due(runs(running), true, -1); !slices.Equal(got, []string{"e", "f"}) {
		t.Errorf("second level: due = %v, want [e f]", got)
	}
	// a ends and the worker handed its place to c: c holds it now, no one waits.
	l.ended(results.TrialSummary{TrialID: "a", HandedOff: true})
	delete(running, "a")
	if _, ok := l.Standby["c"]; ok || l.waiting() {
		t.Errorf("after a handed off: standby %v, waiting %v; want c holding a place, none waiting", l.Standby, l.Waiting)
	}
	// The sweep is paused: d is held; b then ends without handing off: d waits for the sweep.
	if got := l.hold(); !slices.Equal(got, []string{"d"}) || !l.Standby["d"] {
		t.Errorf("hold = %v (standby %v), want [d] held", got, l.Standby)
	}
	if got := l.hold(); got != nil {
		t.Errorf("hold again = %v, want none", got)
	}
	l.ended(results.TrialSummary{TrialID: "b", HandedOff: true}) // held: the worker's hand-off does not count
	delete(running, "b")
	if !slices.Equal(l.Waiting, []string{"d"}) {
		t.Fatalf("waiting = %v, want [d]", l.Waiting)
	}
	if id, ok := l.popWaiting(); !ok || id != "d" || l.waiting() {
		t.Errorf("popWaiting = %q, %v; want d, then none", id, ok)
	}
	if _, standby := l.Standby["d"]; standby {
		t.Error("a released standby trial still counts as standby")
	}
	// A standby trial that ends is no longer waiting or standby.
	l.Standby["x"], l.Waiting = false, []string{"x"}
	l.ended(results.TrialSummary{TrialID: "x"})
	if l.waiting() || len(l.Standby) != 0 {
		t.Errorf("after x ended: waiting %v, standby %v; want neither", l.Waiting, l.Standby)
	}
	// next takes the reserved trials first, then the scheduler's.
	l.Queue = []sweeps.Trial{{ID: "q"}}
	if tr, _ := l.next(feed("s")); tr.ID != "q" {
		t.Errorf("next = %s, want the reserved q", tr.ID)
	}
	if tr, _ := l.next(feed("s")); tr.ID != "s" {
		t.Errorf("next = %s, want the scheduler's s", tr.ID)
	}
}
