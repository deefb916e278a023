package scheduler_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// arriveAt is one seed at one segment end with its windowed return and progress.
type arriveAt struct {
	config int
	seed   int64
	seg    int
	value  float64
	target int64   // the step it reached the target; 0 not yet
	secs   float64 // training seconds so far
	want   scheduler.Action
}

func runAt(t *testing.T, name string, s scheduler.Scheduler, steps []arriveAt) []scheduler.Decision {
	t.Helper()
	var out []scheduler.Decision
	for i, a := range steps {
		// The last value says the opposite of the windowed one, which is what pruning compares.
		d := s.AtBoundary(scheduler.Boundary{TrialID: sweeps.TrialID(a.config, a.seed), Config: a.config, Seed: a.seed,
			Segment: a.seg, Windowed: f(a.value), Objective: f(-1e9), TargetStep: a.target, Seconds: a.secs})
		if d.Action != a.want || d.Segment != a.seg {
			t.Errorf("%s: arrival %d (config %d seed %d segment %d return %g target %d seconds %g) = %+v, want %s",
				name, i, a.config, a.seed, a.seg, a.value, a.target, a.secs, d, a.want)
		}
		out = append(out, d)
	}
	return out
}

// With several objectives asha keeps each rung's Pareto front: a configuration worse in return but
// first to the target goes on where asha on return alone stops it, and a configuration dominated by
// one before it stops; beyond the front, the top 1/eta by rank and crowding go on.
func TestASHAKeepsTheRungsFront(t *testing.T) {
	const metric = "[{name: ret}, {name: env_steps, target: 100}]"
	spec := pruneSpecMetric(t, 6, "[1]", metric, "{type: asha, min_steps: 100, eta: 3}")
	if got := spec.SegmentEnds(); !reflect.DeepEqual(got, []int64{100, 300, 900, 2700}) {
		t.Fatalf("segment ends %v, want rungs 100, 300, 900 then 2700", got)
	}
	s, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, s)
	ds := runAt(t, "rung 0", s, []arriveAt{
		{0, 1, 0, 50, 0, 0, C},  // alone
		{1, 1, 0, 20, 80, 0, C}, // lower return, reached the target: on the front
		{2, 1, 0, 10, 0, 0, S},  // dominated by 0 (and 1)
		{3, 1, 0, 60, 0, 0, C},  // best return: on the front (0 leaves it)
		{4, 1, 0, 55, 0, 0, S},  // dominated by 3; rank 2 with 0, ⌊5/3⌋ = 1 kept
		{5, 1, 0, 15, 90, 0, S}, // dominated by 1 (reached sooner, higher return)
	})
	p := ds[2].Pruning
	if ds[2].Outcome != results.OutcomePruned || p == nil || p.Rule != "asha" || p.Rung != 0 || p.Cutoff != nil || p.Peers != 2 || *p.Value != 10 {
		t.Errorf("stop of config 2 = %+v (pruning %+v), want pruned at rung 0, value 10, no cutoff, 2 peers", ds[2], p)
	}
	for _, want := range []string{"ret 10", "env_steps_to_target never", "off the front of the 3 configurations", "rank 2"} {
		if !strings.Contains(ds[2].Reason, want) {
			t.Errorf("reason %q lacks %q", ds[2].Reason, want)
		}
	}

	// The same arrivals on return alone: config 1 stops.
	single := pruneSpecMetric(t, 6, "[1]", "{name: ret}", "{type: asha, min_steps: 100, eta: 3}")
	s1, _ := scheduler.New(single, scheduler.State{})
	startAll(t, s1)
	runAt(t, "return alone", s1, []arriveAt{{0, 1, 0, 50, 0, 0, C}, {1, 1, 0, 20, 80, 0, S}})
}

// Training seconds are an objective too: a faster configuration with a lower return is on the front.
// seed_failure_rate counts the seeds that ended failed; gpu_seconds is seconds times resources.gpus.
func TestASHAFrontWithCosts(t *testing.T) {
	const metric = "[{name: ret}, {name: gpu_seconds}, {name: seed_failure_rate}]"
	spec := pruneSpecMetric(t, 4, "[1, 2]", metric, "{type: asha, min_steps: 100, eta: 4}")
	s, _ := scheduler.New(spec, scheduler.State{})
	startAll(t, s)
	// Config 3's seed 2 fails before any rung: its failure share at the rung is 1/2.
	s.Finished(results.TrialSummary{TrialID: "3-s2", Config: 3, Seed: 2, Outcome: results.OutcomeFailed})
	ds := runAt(t, "rung 0", s, []arriveAt{
		{0, 1, 0, 50, 0, 10, W}, {0, 2, 0, 52, 0, 12, C},
		{1, 1, 0, 40, 0, 4, W}, {1, 2, 0, 41, 0, 5, C}, // slower return, faster: on the front
		{2, 1, 0, 30, 0, 20, W}, {2, 2, 0, 31, 0, 21, S}, // dominated by both
		// Config 0's return and seconds (IQMs 51 and 11), but half its seeds failed: dominated by 0.
		{3, 1, 0, 51, 0, 11, S},
	})
	if !strings.Contains(ds[6].Reason, "seed_failure_rate") || !strings.Contains(ds[6].Reason, "gpu_seconds 11") {
		t.Errorf("reason %q, want the vector with gpu_seconds 11 and the failure share", ds[6].Reason)
	}
	// The same arrivals without the failure share: config 3 ties config 0 and goes on.
	ties := pruneSpecMetric(t, 4, "[1, 2]", "[{name: ret}, {name: gpu_seconds}]", "{type: asha, min_steps: 100, eta: 4}")
	s2, _ := scheduler.New(ties, scheduler.State{})
	startAll(t, s2)
	s2.Finished(results.TrialSummary{TrialID: "3-s2", Config: 3, Seed: 2, Outcome: results.OutcomeFailed})
	runAt(t, "no failure share", s2, []arriveAt{{0, 1, 0, 50, 0, 10, W}, {0, 2, 0, 52, 0, 12, C}, {3, 1, 0, 51, 0, 11, C}})
	v, _ := json.Marshal(s.State())
	if !strings.Contains(string(v), `"failed":[2]`) {
		t.Errorf("state %s, want config 3's failed seed", v)
	}
}

// A configuration off the front whose seeds cannot tell its return from what would put it back is
// spared past the first rung, as on one objective.
func TestASHAFrontSeedGuard(t *testing.T) {
	const metric = "[{name: ret}, {name: env_steps, target: 1000}]"
	spec := pruneSpecMetric(t, 2, "[1, 2, 3]", metric, "{type: asha, min_steps: 100, eta: 3}")
	s, _ := scheduler.New(spec, scheduler.State{})
	startAll(t, s)
	runAt(t, "rungs", s, []arriveAt{
		{0, 1, 0, 10, 0, 0, W}, {0, 2, 0, 11, 0, 0, W}, {0, 3, 0, 12, 0, 0, C},
		{1, 1, 0, 13, 0, 0, W}, {1, 2, 0, 14, 0, 0, W}, {1, 3, 0, 15, 0, 0, C}, // 1 dominates 0 here
		{1, 1, 1, 20, 0, 0, W}, {1, 2, 1, 21, 0, 0, W}, {1, 3, 1, 22, 0, 0, C},
		// IQM 17, below 21 but its seeds spread over 10: spared.
		{0, 1, 1, 7, 0, 0, W}, {0, 2, 1, 17, 0, 0, W}, {0, 3, 1, 27, 0, 0, C},
	})
	// Tightly below: stopped.
	s2, _ := scheduler.New(spec, scheduler.State{})
	startAll(t, s2)
	runAt(t, "tight", s2, []arriveAt{
		{0, 1, 0, 10, 0, 0, W}, {0, 2, 0, 11, 0, 0, W}, {0, 3, 0, 12, 0, 0, C},
		{1, 1, 0, 13, 0, 0, W}, {1, 2, 0, 14, 0, 0, W}, {1, 3, 0, 15, 0, 0, C},
		{1, 1, 1, 20, 0, 0, W}, {1, 2, 1, 21, 0, 0, W}, {1, 3, 1, 22, 0, 0, C},
		{0, 1, 1, 16.9, 0, 0, W}, {0, 2, 1, 17, 0, 0, W}, {0, 3, 1, 17.1, 0, 0, S},
	})
}

// The state of a pruner of several objectives survives a continue-as-new as JSON, a never (+Inf)
// in its vectors included, and decides as an uninterrupted one does.
func TestASHAFrontStateRoundTrip(t *testing.T) {
	const metric = "[{name: ret}, {name: env_steps, target: 100}, {name: wall_seconds}]"
	spec := pruneSpecMetric(t, 6, "[1, 2]", metric, "{type: asha, min_steps: 100, eta: 3}")
	var arrivals []arriveAt
	for seg := range 3 {
		for c := range 6 {
			for _, seed := range []int64{1, 2} {
				v := float64((c*7+int(seed)*3+seg*5)%11) + float64(seg)
				var target int64
				if (c+seg)%3 == 0 {
					target = int64(50 + 10*c)
				}
				arrivals = append(arrivals, arriveAt{c, seed, seg, v, target, float64(10 + (c*5)%7 + seg*10), ""})
			}
		}
	}
	checkRoundTrip(t, spec, arrivals, []int{1, 7, 13, 20, 30}, func(cut int, state []byte) {
		if cut == 20 && !strings.Contains(string(state), `"+Inf"`) {
			t.Errorf("state %s: want a never in a vector", state)
		}
	})
}

// median with several objectives is refused by the pruner as by the spec.
func TestMedianRefusesSeveralObjectives(t *testing.T) {
	objs := []sweeps.Objective{{Name: "ret", Goal: "maximize"}, {Name: "env_steps", Goal: "minimize"}}
	_, err := scheduler.NewPruner(scheduler.PrunerConfig{Rule: "median", MinTrials: 1, Objectives: objs}, scheduler.PrunerState{})
	if err == nil || !strings.Contains(err.Error(), "median with 2 objectives") {
		t.Errorf("NewPruner = %v, want median with 2 objectives refused", err)
	}
}

// In stop mode the seeds' progress travels with their passes, an ahead step's included: a
// configuration that reached the target is kept on the front at both steps its seeds passed before
// its first was decided.
func TestPassCarriesProgressAhead(t *testing.T) {
	objs := []sweeps.Objective{{Name: "ret", Goal: "maximize"}, {Name: "env_steps", Goal: "minimize", Target: f(5)}}
	pr, err := scheduler.NewPruner(scheduler.PrunerConfig{Rule: "asha", Steps: []int64{100, 300}, Eta: 2, Objectives: objs}, scheduler.PrunerState{})
	if err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		pr.Started(c, 1)
		pr.Started(c, 2)
	}
	// Configuration 0: high return, never at the target.
	for k := range 2 {
		for seed := int64(1); seed <= 2; seed++ {
			pr.PassWith(0, seed, k, f(10), scheduler.Progress{Seconds: 5})
		}
	}
	// Configuration 1: lower return, at the target by step 80; seed 1 passes both steps first.
	at := scheduler.Progress{TargetStep: 80, Seconds: 5}
	pr.PassWith(1, 1, 0, f(4), at)
	pr.PassWith(1, 1, 1, f(5), at)
	pr.PassWith(1, 2, 1, f(5), at)
	if v := pr.PassWith(1, 2, 0, f(4), at); !v.Decided || !v.Continue || v.Vector[1] != 80 {
		t.Fatalf("verdict at step 100 %+v, want decided, go on, env_steps to target 80", v)
	}
	r := pr.State().Configs["1"]
	if len(r.Vectors) != 2 || r.Vectors[1][1] != 80 || r.Stopped {
		t.Fatalf("configuration 1: vectors %v, stopped %v; want both steps decided with the target step, going on", r.Vectors, r.Stopped)
	}
	// On return alone it stops at step 100.
	one, _ := scheduler.NewPruner(scheduler.PrunerConfig{Rule: "asha", Steps: []int64{100, 300}, Eta: 2}, scheduler.PrunerState{})
	for c := range 2 {
		one.Started(c, 1)
		one.Started(c, 2)
	}
	one.Pass(0, 1, 0, f(10))
	one.Pass(0, 2, 0, f(10))
	one.Pass(1, 1, 0, f(4))
	if v := one.Pass(1, 2, 0, f(4)); v.Continue {
		t.Fatalf("return alone: %+v, want stopped", v)
	}
}
