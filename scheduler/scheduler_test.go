package scheduler_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// testdata/plans.json holds, for a grid, a random and a sobol spec, the trials sweeps.Plan gave before
// the scheduler existed, in the order the Sweep workflow started them (plan order).
type golden struct {
	Spec   string         `json:"spec"`
	Trials []sweeps.Trial `json:"trials"`
}

func loadGolden(t *testing.T) map[string]golden {
	t.Helper()
	b, err := os.ReadFile("testdata/plans.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// canonical is a trial list as JSON reads it back, so int64 and float64 values compare as stored.
func canonical(t *testing.T, trials []sweeps.Trial) []any {
	t.Helper()
	b, err := json.Marshal(trials)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlannedOrderUnchanged(t *testing.T) {
	g := loadGolden(t)
	for _, tt := range []struct {
		method string
		cut    int // a continue-as-new after this many starts
	}{
		{sweeps.MethodGrid, 0}, {sweeps.MethodGrid, 7},
		{sweeps.MethodRandom, 0}, {sweeps.MethodRandom, 13},
		{sweeps.MethodSobol, 0}, {sweeps.MethodSobol, 1},
	} {
		want := g[tt.method]
		spec, err := sweeps.Decode(strings.NewReader(want.Spec), tt.method)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scheduler.New(spec, scheduler.State{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Total() != len(want.Trials) || s.AsksAtBoundaries() {
			t.Errorf("%s: total %d, asks at boundaries %v; want %d, false", tt.method, s.Total(), s.AsksAtBoundaries(), len(want.Trials))
		}
		var got []sweeps.Trial
		for !s.Done() {
			if tt.cut > 0 && len(got) == tt.cut {
				// The next run resumes from the carried state, itself carried as JSON.
				b, _ := json.Marshal(s.State())
				var st scheduler.State
				if err := json.Unmarshal(b, &st); err != nil {
					t.Fatal(err)
				}
				if s, err = scheduler.New(spec, st); err != nil {
					t.Fatal(err)
				}
			}
			peeked, _ := s.Peek()
			tr, ok := s.Next()
			if !ok || peeked.ID != tr.ID {
				t.Fatalf("%s: Next said none ready before Done", tt.method)
			}
			got = append(got, tr)
			s.Finished(results.TrialSummary{TrialID: tr.ID, Outcome: results.OutcomeCompleted})
		}
		if _, ok := s.Next(); ok {
			t.Errorf("%s: Next gave a trial after Done", tt.method)
		}
		if !reflect.DeepEqual(canonical(t, got), canonical(t, want.Trials)) {
			t.Errorf("%s (continue-as-new after %d): trials differ from the recorded plan:\ngot  %v\nwant %v", tt.method, tt.cut, got, want.Trials)
		}
	}
}

// The planned scheduler continues every trial at every boundary.
func TestPlannedContinuesAlways(t *testing.T) {
	spec, err := sweeps.Decode(strings.NewReader(loadGolden(t)[sweeps.MethodGrid].Spec), "grid")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scheduler.New(spec, scheduler.State{})
	bad := -1.0
	for _, b := range []scheduler.Boundary{{TrialID: "0-s5", Segment: 0, Step: 100}, {TrialID: "1-s5", Segment: 3, Objective: &bad}} {
		if d := s.AtBoundary(b); d.Action != scheduler.Continue {
			t.Errorf("AtBoundary(%+v) = %+v, want continue", b, d)
		}
	}
}

func TestNewRejects(t *testing.T) {
	spec, err := sweeps.Decode(strings.NewReader(loadGolden(t)[sweeps.MethodGrid].Spec), "grid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scheduler.New(spec, scheduler.State{Next: 25}); err == nil || !strings.Contains(err.Error(), "next 25, want a plan index in [0, 24]") {
		t.Errorf("New with next 25 of 24 trials: %v, want an error naming it", err)
	}
	other := *spec
	other.Method = "asha"
	if _, err := scheduler.New(&other, scheduler.State{}); err == nil || !strings.Contains(err.Error(), `method: got "asha"`) {
		t.Errorf("New of method asha: %v, want an error naming the method", err)
	}
}

func gridSpec(t *testing.T, extra string) *sweeps.Spec {
	t.Helper()
	s, err := sweeps.Decode(strings.NewReader(`name: target
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 10000}
parameters:
  lr: {values: [1.0e-4, 3.0e-4, 1.0e-3, 3.0e-3]}
`+extra), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// metric.target: once a trial completes with its objective at or beyond the target, no new trial
// starts; a trial that failed, or completed short of it, changes nothing; the state carries it across a
// continue-as-new.
func TestPlannedStopsAtTarget(t *testing.T) {
	for _, tt := range []struct {
		goal       string
		below, hit float64
	}{{sweeps.GoalMaximize, 150, 200}, {sweeps.GoalMinimize, 0.5, 0.1}} {
		s := gridSpec(t, "metric: {name: reward, goal: "+tt.goal+"}\n")
		target := map[string]float64{sweeps.GoalMaximize: 195, sweeps.GoalMinimize: 0.2}[tt.goal]
		s.Metric.Target = &target
		sc, err := scheduler.New(s, scheduler.State{})
		if err != nil {
			t.Fatal(err)
		}
		finish := func(outcome string, v float64) {
			tr, ok := sc.Next()
			if !ok {
				t.Fatalf("%s: no trial to start", tt.goal)
			}
			sc.Finished(results.TrialSummary{TrialID: tr.ID, Outcome: outcome, Objective: &v})
		}
		finish(results.OutcomeCompleted, tt.below)
		finish(results.OutcomeFailed, tt.hit) // a failed trial's number counts for nothing
		if _, ok := sc.Peek(); !ok || sc.Done() {
			t.Fatalf("%s: stopped before any completed trial reached the target", tt.goal)
		}
		finish(results.OutcomeCompleted, tt.hit)
		if _, ok := sc.Peek(); ok || !sc.Done() {
			t.Errorf("%s: a trial reached the target %g and another would start", tt.goal, target)
		}
		again, err := scheduler.New(s, sc.State())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := again.Peek(); ok || !again.Done() {
			t.Errorf("%s: after a continue-as-new the target is forgotten", tt.goal)
		}
	}
}

// W&B's run_cap on a grid: the first run_cap trials in plan order start, and the sweep is done then.
func TestPlannedRunCap(t *testing.T) {
	s := gridSpec(t, "")
	s.RunCap = 3
	sc, err := scheduler.New(s, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	for {
		tr, ok := sc.Next()
		if !ok {
			break
		}
		started = append(started, tr.ID)
	}
	if len(started) != 3 || sc.Total() != 3 || !sc.Done() {
		t.Errorf("started %v, total %d, done %v; want the first 3 of the grid's 4", started, sc.Total(), sc.Done())
	}
}
