package scheduler_test

import (
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// A configuration judged in stop mode: its seeds pass decision steps without waiting, it is decided
// once every running seed has passed, and then every running seed of it is stopped, the ones that
// passed first included.
func TestPassDecidesWhenEverySeedHasPassed(t *testing.T) {
	spec := pruneSpec(t, 3, "[1, 2]", "{type: asha, min_steps: 100, eta: 3}")
	s, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, s)
	p := s.(scheduler.Passer)
	in := s.(scheduler.Interrupter)
	pass := func(config int, seed int64, point int64, v float64) []scheduler.Interruption {
		p.Passed(scheduler.Pass{TrialID: sweeps.TrialID(config, seed), Config: config, Seed: seed, Point: point, Step: point + 7, Windowed: f(v)})
		return in.Interrupt()
	}
	// Configurations 0 and 1 are good at step 100.
	for _, c := range []int{0, 1} {
		for _, seed := range []int64{1, 2} {
			if got := pass(c, seed, 100, 10+float64(c)); len(got) != 0 {
				t.Fatalf("config %d seed %d: stopped %v", c, seed, got)
			}
		}
	}
	// Configuration 2's first seed passes 100 and 300 before its sibling passes 100: nothing is
	// decided on one seed while the other runs.
	if got := pass(2, 1, 100, 1); len(got) != 0 {
		t.Fatalf("decided before the sibling passed: %v", got)
	}
	if got := pass(2, 1, 300, 1); len(got) != 0 {
		t.Fatalf("decided at an ahead step: %v", got)
	}
	// The sibling passes 100, below the cutoff too: the configuration stops, both seeds.
	got := pass(2, 2, 100, 2)
	if len(got) != 2 {
		t.Fatalf("interruptions %v, want both seeds of configuration 2", got)
	}
	for _, it := range got {
		d := it.Decision
		if d.Action != scheduler.Stop || d.Outcome != results.OutcomePruned || d.Pruning == nil || d.Pruning.Step != 100 || d.Pruning.Value == nil {
			t.Errorf("%s: decision %+v, want a prune at step 100 with its value", it.TrialID, d)
		}
	}
	// A seed of a stopped configuration that passes another point before its stop reached it is told
	// again, alone (the sweep drops passes of a trial it is stopping already).
	if got := pass(2, 1, 900, 1); len(got) != 1 || got[0].TrialID != sweeps.TrialID(2, 1) {
		t.Fatalf("interruptions %v, want seed 1 of configuration 2 alone", got)
	}
}

// A seed that ends (completes, fails) while a sibling has passed a step waits for nothing: the
// configuration is decided on the seeds that passed.
func TestPassSettlesWhenASiblingEnds(t *testing.T) {
	spec := pruneSpec(t, 3, "[1, 2]", "{type: asha, min_steps: 100, eta: 3}")
	s, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, s)
	p := s.(scheduler.Passer)
	in := s.(scheduler.Interrupter)
	for _, c := range []int{0, 1} {
		for _, seed := range []int64{1, 2} {
			p.Passed(scheduler.Pass{Config: c, Seed: seed, Point: 100, Windowed: f(10)})
		}
	}
	p.Passed(scheduler.Pass{Config: 2, Seed: 1, Point: 100, Windowed: f(1)})
	p.Passed(scheduler.Pass{Config: 2, Seed: 1, Point: 300, Windowed: f(1)})
	if got := in.Interrupt(); len(got) != 0 {
		t.Fatalf("decided early: %v", got)
	}
	s.Finished(results.TrialSummary{TrialID: sweeps.TrialID(2, 2), Config: 2, Seed: 2, Outcome: results.OutcomeFailed})
	got := in.Interrupt()
	if len(got) != 1 || got[0].TrialID != sweeps.TrialID(2, 1) {
		t.Fatalf("interruptions %v, want seed 1 of configuration 2 alone", got)
	}
}

// A configuration whose seeds have all passed two steps before the first is decided is decided at
// both, in order, and a good one goes on at both.
func TestPassCarriesAheadSteps(t *testing.T) {
	cfg := scheduler.PrunerConfig{Rule: "asha", Steps: []int64{100, 300}, Eta: 2}
	pr, err := scheduler.NewPruner(cfg, scheduler.PrunerState{})
	if err != nil {
		t.Fatal(err)
	}
	pr.Started(0, 1)
	pr.Started(0, 2)
	pr.Pass(0, 1, 0, f(5))
	pr.Pass(0, 1, 1, f(6))
	if v := pr.Pass(0, 2, 1, f(6)); v.Decided {
		t.Fatalf("decided at step 300 before step 100: %+v", v)
	}
	if v := pr.Pass(0, 2, 0, f(5)); !v.Decided || !v.Continue {
		t.Fatalf("verdict at step 100 %+v, want decided, go on", v)
	}
	if got := len(pr.State().Configs["0"].Values); got != 2 {
		t.Fatalf("decided at %d steps, want 2 (the step its seeds had passed was carried)", got)
	}
	if _, stopped := pr.Stopped(0); stopped {
		t.Fatal("the only configuration was stopped")
	}
}

// A seed that starts after its configuration was stopped is stopped when it passes the step the
// configuration was stopped at, not trained to the end; one of an infeasible configuration at its
// first pass, as diverged.
func TestPassStopsALateSeed(t *testing.T) {
	spec := pruneSpec(t, 3, "[1, 2]", "{type: asha, min_steps: 100, eta: 3}")
	s, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	p := s.(scheduler.Passer)
	in := s.(scheduler.Interrupter)
	// Seeds 1 of every configuration start; seeds 2 start later (the plan order is config-major, so
	// take the trials one by one and leave out the second seeds at first).
	trials := startAll(t, s)
	for _, tr := range trials {
		if tr.Seed == 2 {
			s.Finished(results.TrialSummary{TrialID: tr.ID, Config: tr.Config, Seed: 2, Outcome: results.OutcomeCancelled})
		}
	}
	p.Passed(scheduler.Pass{Config: 0, Seed: 1, Point: 100, Windowed: f(10)})
	p.Passed(scheduler.Pass{Config: 1, Seed: 1, Point: 100, Windowed: f(11)})
	p.Passed(scheduler.Pass{Config: 2, Seed: 1, Point: 100, Windowed: f(1)})
	if got := in.Interrupt(); len(got) != 1 || got[0].TrialID != sweeps.TrialID(2, 1) {
		t.Fatalf("interruptions %v, want configuration 2's running seed", got)
	}
	// A later seed of configuration 2 passes 100: it is stopped there.
	p.Passed(scheduler.Pass{Config: 2, Seed: 3, Point: 100, Windowed: f(50)})
	got := in.Interrupt()
	if len(got) != 1 || got[0].TrialID != sweeps.TrialID(2, 3) || got[0].Decision.Outcome != results.OutcomePruned {
		t.Fatalf("interruptions %v, want the late seed pruned", got)
	}
	// An infeasible configuration's late seed stops at its first pass, as diverged.
	s.Finished(results.TrialSummary{TrialID: sweeps.TrialID(1, 1), Config: 1, Seed: 1, Outcome: results.OutcomeDiverged})
	in.Interrupt()
	p.Passed(scheduler.Pass{Config: 1, Seed: 3, Point: 300, Windowed: f(50)})
	got = in.Interrupt()
	if len(got) != 1 || got[0].Decision.Outcome != results.OutcomeDiverged {
		t.Fatalf("interruptions %v, want the infeasible configuration's late seed stopped as diverged", got)
	}
}
