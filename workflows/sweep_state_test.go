package workflows

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
)

func obj(v float64) *float64 { return &v }

// tally counts each finished trial once per outcome, keeps it pending, keeps the last failure and the
// leader by the metric's goal (without their last records), and details says so in one line.
func TestSweepStateTally(t *testing.T) {
	last := map[string]float64{"reward": 1}
	ended := []results.TrialSummary{
		{TrialID: "0-s1", Outcome: results.OutcomeCompleted, Objective: obj(5), Last: last},
		{TrialID: "1-s1", Outcome: results.OutcomeFailed, Error: "first", Last: last},
		{TrialID: "2-s1", Outcome: results.OutcomeCompleted, Objective: obj(3), Last: last},
		{TrialID: "3-s1", Outcome: results.OutcomePruned, Objective: obj(1)}, // pruned: never the leader
		{TrialID: "4-s1", Outcome: results.OutcomeFailed, Error: "second"},
		{TrialID: "5-s1", Outcome: results.OutcomeCompleted}, // no objective: never the leader
	}
	for _, c := range []struct {
		goal, leader, details string
	}{
		{"maximize", "0-s1", "6/9 trials finished, 2 running, 3 completed, 1 pruned, 2 failed; leader 0-s1 reward=5"},
		{"minimize", "2-s1", "6/9 trials finished, 2 running, 3 completed, 1 pruned, 2 failed; leader 2-s1 reward=3"},
	} {
		st := &SweepState{Counts: map[string]int{}}
		for _, sum := range ended {
			st.tally(sum, c.goal)
		}
		if st.Leader == nil || st.Leader.TrialID != c.leader || st.Leader.Last != nil {
			t.Errorf("%s: leader %+v, want %s without its last records", c.goal, st.Leader, c.leader)
		}
		if f := st.LastFailure; f == nil || f.TrialID != "4-s1" || f.Error != "second" {
			t.Errorf("%s: last failure %+v, want 4-s1", c.goal, f)
		}
		if len(st.Pending) != len(ended) || st.finished() != len(ended) {
			t.Errorf("%s: %d pending, %d finished; want %d of each", c.goal, len(st.Pending), st.finished(), len(ended))
		}
		if got := st.details(9, 2, "reward"); got != c.details {
			t.Errorf("%s: details %q, want %q", c.goal, got, c.details)
		}
	}
}

// The decision log keeps the decisions that change a trial's course and the replacements, numbered in
// the order they were made; unstored says whether something waits to be stored.
func TestSweepStateDecisionLog(t *testing.T) {
	st := &SweepState{DecisionSeq: 7}
	if st.unstored() {
		t.Error("an empty state has something unstored")
	}
	for _, a := range []scheduler.Action{scheduler.Continue, scheduler.Stop, scheduler.Wait, scheduler.Exploit} {
		st.logDecision("a", 100, scheduler.Decision{Segment: 1, Action: a})
	}
	st.logReplacement(scheduler.Replacement{Member: "m2", Replaces: "m1", Parent: "m0", ResumeStep: 50})
	var got []string
	for _, d := range st.Decisions {
		got = append(got, fmt.Sprintf("%d %s %s", d.Seq, d.TrialID, d.Action))
	}
	if want := "7 a stop|8 a exploit|9 m2 replace"; strings.Join(got, "|") != want {
		t.Errorf("decision log %q, want %q", strings.Join(got, "|"), want)
	}
	if st.DecisionSeq != 10 || !st.unstored() {
		t.Errorf("next seq %d, unstored %v; want 10 and true", st.DecisionSeq, st.unstored())
	}
}

// Pause, resume and set-concurrency are refused once the sweep no longer runs, and when they would
// change nothing.
func TestSweepStateValidateChange(t *testing.T) {
	for _, c := range []struct {
		phase     string
		redundant bool
		want      string
	}{
		{PhaseRunning, false, ""},
		{PhasePlanning, false, ""},
		{PhaseRunning, true, "pause: sweep is already paused"},
		{PhaseCancelling, false, "pause: sweep is cancelling, want a sweep that is still running"},
		{PhaseCompleted, true, "pause: sweep is completed, want a sweep that is still running"},
	} {
		err := (&SweepState{Phase: c.phase}).validateChange("pause", c.redundant, "already paused")
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && got != c.want {
			t.Errorf("%s, redundant %v: %v, want %q", c.phase, c.redundant, err, c.want)
		}
	}
}
