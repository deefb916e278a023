package scheduler_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// pruneSpec is a grid of n configurations × seeds with segment ends 100, 300, 900, 2700 (the
// rungs of asha with min_steps 100, eta 3) unless et says otherwise.
func pruneSpec(t *testing.T, n int, seeds string, et string) *sweeps.Spec {
	t.Helper()
	return pruneSpecMetric(t, n, seeds, "{name: ret, goal: maximize}", et)
}

// pruneSpecMetric is pruneSpec with the metric as given (a list of objectives, say).
func pruneSpecMetric(t *testing.T, n int, seeds, metric, et string) *sweeps.Spec {
	t.Helper()
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprint(i + 1)
	}
	seg := "2700"
	if strings.Contains(et, "median") {
		seg = "100"
	}
	y := "name: p\ntrainer:\n  command: [python, train.py]\n  total_steps: 2700\n  segment_steps: " + seg + "\n" +
		"metric: " + metric + "\nseeds: " + seeds + "\nconcurrency: 100\nparameters:\n  q: {values: [" + strings.Join(vals, ", ") + "]}\n" +
		"early_terminate: " + et + "\n" +
		"order: listed\n" // the tests name the order configurations arrive in
	spec, err := sweeps.Decode(strings.NewReader(y), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec
}

func f(v float64) *float64 { return &v }

// startAll takes every trial of the plan.
func startAll(t *testing.T, s scheduler.Scheduler) []sweeps.Trial {
	var out []sweeps.Trial
	for {
		tr, ok := s.Next()
		if !ok {
			return out
		}
		out = append(out, tr)
	}
}

type arrive struct {
	config int
	seed   int64
	seg    int
	value  float64
	want   scheduler.Action
}

func run(t *testing.T, name string, s scheduler.Scheduler, steps []arrive) []scheduler.Decision {
	t.Helper()
	at := make([]arriveAt, len(steps))
	for i, a := range steps {
		at[i] = arriveAt{config: a.config, seed: a.seed, seg: a.seg, value: a.value, want: a.want}
	}
	return runAt(t, name, s, at)
}

const (
	C = scheduler.Continue
	S = scheduler.Stop
	W = scheduler.Wait
)

// asha: a configuration goes on from a rung only in the top max(1, ⌊n/eta⌋) of the n that reached
// it so far — while fewer than eta have, only the best so far; decisions use the windowed value, not
// the last one; a segment end that is not a rung is not judged.
func TestASHATopOneOverEta(t *testing.T) {
	spec := pruneSpec(t, 7, "[1]", "{type: asha, min_steps: 100, eta: 3}")
	if got := spec.SegmentEnds(); !reflect.DeepEqual(got, []int64{100, 300, 900, 2700}) {
		t.Fatalf("segment ends %v, want rungs 100, 300, 900 then 2700", got)
	}
	s, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.AsksAtBoundaries() {
		t.Fatal("asha does not ask at boundaries")
	}
	startAll(t, s)
	ds := run(t, "rung 0", s, []arrive{
		{0, 1, 0, 5, C},  // n=1: the best so far
		{1, 1, 0, 1, S},  // n=2 < eta: not the best so far
		{2, 1, 0, 3, S},  // n=3: keep 1 (5); 3 < 5
		{3, 1, 0, 0, S},  // n=4: keep 1
		{4, 1, 0, 10, C}, // n=5: the best
		{5, 1, 0, 2, S},  // n=6: keep 2 (10, 5)
		{6, 1, 0, 5, C},  // n=7: keep 2, ties with the cutoff go on
		{0, 1, 1, 7, C},  // rung 1: n=1
		{4, 1, 1, 6, S},  // n=2: not the best so far
		{0, 1, 3, 0, C},  // segment 3 ends at 2700: no decision
	})
	p := ds[2].Pruning
	if ds[2].Outcome != results.OutcomePruned || p == nil || p.Rule != "asha" || p.Rung != 0 || p.Step != 100 || *p.Value != 3 || *p.Cutoff != 5 || p.Peers != 2 {
		t.Errorf("stop of config 2 = %+v (pruning %+v), want pruned at rung 0 step 100, value 3, cutoff 5, 2 peers", ds[2], p)
	}
	if p := ds[1].Pruning; p == nil || *p.Cutoff != 5 || p.Peers != 1 {
		t.Errorf("stop of config 1 (pruning %+v), want cutoff 5 (the best so far), 1 peer", p)
	}
	if !strings.Contains(ds[5].Reason, "cutoff 5") {
		t.Errorf("reason %q, want the cutoff", ds[5].Reason)
	}
	st := s.(scheduler.PruningReporter).Pruning()
	if got := fmt.Sprint(st.Rule, " ", st.Rungs); got != "asha [{100 7 4} {300 2 1} {900 0 0}]" {
		t.Errorf("Pruning() = %s, want asha [{100 7 4} {300 2 1} {900 0 0}] (step, reached, stopped)", got)
	}
	// Asked again, the same answer.
	if d := s.AtBoundary(scheduler.Boundary{Config: 2, Seed: 1, Segment: 0, Windowed: f(100)}); d.Action != S {
		t.Errorf("config 2 asked again with another value: %s, want the recorded stop", d.Action)
	}
}

// hyperband strict is W&B's band threshold: from the second arrival on, the top ⌊n/eta⌋+1 go on.
func TestHyperbandStrict(t *testing.T) {
	spec := pruneSpec(t, 4, "[1]", "{type: hyperband, max_iter: 27, s: 3, strict: true}")
	// One iteration is 2700/27 = 100 steps; bands 27/3, 27/9, 27/27 = 9, 3, 1 iterations.
	if got := spec.DecisionSteps(); !reflect.DeepEqual(got, []int64{100, 300, 900}) {
		t.Fatalf("decision steps %v, want 100, 300, 900", got)
	}
	s, _ := scheduler.New(spec, scheduler.State{})
	startAll(t, s)
	run(t, "strict", s, []arrive{
		{0, 1, 0, 5, C}, // n=1: keep 1
		{1, 1, 0, 4, S}, // n=2: keep 1 (5)
		{2, 1, 0, 6, C}, // n=3: keep 2
		{3, 1, 0, 5, C}, // n=4: keep 2 (6, 5)
	})
}

// median: no decision before min_trials other configurations have a value at the step; then below
// the others' median stops. Its segment ends before min_steps decide nothing.
func TestMedianWarmup(t *testing.T) {
	spec := pruneSpec(t, 5, "[1]", "{type: median, min_steps: 200, min_trials: 2}")
	s, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	startAll(t, s)
	run(t, "median", s, []arrive{
		{0, 1, 0, 9, C}, // step 100 < min_steps
		{1, 1, 0, 1, C},
		{2, 1, 0, 0, C},
		{0, 1, 1, 9, C}, // step 200: 0 others
		{1, 1, 1, 1, C}, // 1 other
		{2, 1, 1, 3, S}, // 2 others: median 5
		{3, 1, 1, 5, C}, // median of 9, 1, 3 = 3
		{4, 1, 1, 2, S}, // median of 9, 1, 3, 5 = 4
	})
}

// Seeds are judged together: the first seed to reach a rung waits for its running siblings, the
// configuration's value is the IQM over them, and all its seeds get the same answer; a sibling that
// ends releases the wait; a seed that starts after its configuration was decided gets the decision.
func TestSeedsJudgedTogether(t *testing.T) {
	spec := pruneSpec(t, 3, "[1, 2]", "{type: asha, min_steps: 100, eta: 2}")
	s, _ := scheduler.New(spec, scheduler.State{})
	for range 5 { // 0-s1, 0-s2, 1-s1, 1-s2, 2-s1: 2-s2 not started yet
		s.Next()
	}
	run(t, "seeds", s, []arrive{
		{0, 1, 0, 10, W},
		{0, 1, 0, 10, W}, // asked again: still waiting
		{1, 1, 0, 1, W},
		{0, 2, 0, 0, C}, // config 0 = IQM(10, 0) = 5: n=1
		{0, 1, 0, 10, C},
		{1, 2, 0, 2, S}, // config 1 = 1.5, n=2: keep 1 (5)
		{1, 1, 0, 1, S},
		{2, 1, 0, 9, C}, // 2-s2 has not started: not waited for; n=3, keep 1: 9
	})
	s.Next() // 2-s2 starts late
	run(t, "late seed", s, []arrive{{2, 2, 0, -100, C}})
	// A sibling that ends releases the wait.
	run(t, "rung 1", s, []arrive{{0, 1, 1, 3, W}})
	s.Finished(results.TrialSummary{TrialID: "0-s2", Config: 0, Seed: 2, Outcome: results.OutcomeFailed})
	run(t, "released", s, []arrive{{0, 1, 1, 3, C}})
}

// The seed guard: past the first rung a configuration below the cutoff goes on while its seeds
// cannot tell it from the cutoff (IQM + t·s/√n reaches it, Student's one-sided 95% quantile: 6.314 for
// two seeds); the first rung judges the IQM alone.
func TestSeedsWithinNoiseSpareTheirConfiguration(t *testing.T) {
	spec := pruneSpec(t, 4, "[1, 2]", "{type: asha, min_steps: 100, eta: 2}")
	s, _ := scheduler.New(spec, scheduler.State{})
	startAll(t, s)
	run(t, "spared", s, []arrive{
		{0, 1, 0, 10, W},
		{0, 2, 0, 10, C}, // config 0 = 10: n=1
		{1, 1, 0, 12, W},
		{1, 2, 0, 12, C}, // config 1 = 12: n=2, the best
		{2, 1, 0, 4, W},
		{2, 2, 0, 12, S}, // config 2 = IQM(4, 12) = 8 < 12 (n=3, keep 1): the first rung judges the IQM alone
		{3, 1, 0, 13, W},
		{3, 2, 0, 13, C}, // config 3 = 13: n=4, keep 2
		{0, 1, 1, 20, W},
		{0, 2, 1, 20, C}, // rung 1: config 0 = 20, n=1
		{1, 1, 1, 17, W},
		{1, 2, 1, 19, C}, // config 1 = 18 < 20 (n=2, keep 1), but 18 + 6.314·1 ≥ 20: within its seeds' noise
		{3, 1, 1, 15, W},
		{3, 2, 1, 16, S}, // config 3 = 15.5 < 20 (n=3, keep 1) and 15.5 + 6.314·0.5 < 20
	})
	st := s.State().Pruner.Configs
	if r := st["1"]; len(r.Spared) != 1 || r.Spared[0] != 1 || r.Stopped {
		t.Errorf("config 1's record = %+v, want it spared at rung 1", r)
	}
	if r := st["2"]; len(r.Spared) != 0 || !r.Stopped {
		t.Errorf("config 2's record = %+v, want it stopped at rung 0, not spared", r)
	}
}

// The seed guard spares a configuration only among the first 2·keep + 1 at the step (asha keeps the
// top keep = max(1, ⌊n/eta⌋) of the n so far): the same seeds within noise of the cutoff go on ranked
// third of three and stop ranked fourth of five (keep 1 either way).
func TestSeedGuardBoundedByRank(t *testing.T) {
	spec := pruneSpec(t, 5, "[1, 2]", "{type: asha, min_steps: 100, eta: 3}")
	s, _ := scheduler.New(spec, scheduler.State{})
	startAll(t, s)
	var rung0 []arrive
	for c := range 5 { // ascending: each the best so far, all go on
		rung0 = append(rung0, arrive{c, 1, 0, float64(c), W}, arrive{c, 2, 0, float64(c), C})
	}
	run(t, "rung 0", s, rung0)
	run(t, "rung 1", s, []arrive{
		{0, 1, 1, 20, W},
		{0, 2, 1, 20, C},
		{1, 1, 1, 21, W},
		{1, 2, 1, 21, C}, // the best so far
		{2, 1, 1, 10, W},
		{2, 2, 1, 28, C}, // 19 < 21 (n=3, keep 1), 19 + 6.314·12.7 ≥ 21, third: spared
		{3, 1, 1, 22, W},
		{3, 2, 1, 22, C}, // the best so far
		{4, 1, 1, 10, W},
		{4, 2, 1, 28, S}, // 19 < 22 (n=5, keep 1), within its seeds' noise as config 2 was, but fourth
	})
	st := s.State().Pruner.Configs
	if r := st["2"]; len(r.Spared) != 1 || r.Spared[0] != 1 || r.Stopped {
		t.Errorf("config 2's record = %+v, want it spared at rung 1", r)
	}
	if r := st["4"]; len(r.Spared) != 0 || !r.Stopped {
		t.Errorf("config 4's record = %+v, want it stopped at rung 1, not spared", r)
	}
}

// A configuration with a diverged seed is infeasible: its other seeds stop at their next decision,
// as diverged, even if their values are the best; with stop_diverged_configs false they are judged
// as usual.
func TestDivergedConfigInfeasible(t *testing.T) {
	for _, stopDiverged := range []bool{true, false} {
		spec := pruneSpec(t, 2, "[1, 2]", fmt.Sprintf("{type: asha, min_steps: 100, eta: 2, stop_diverged_configs: %v}", stopDiverged))
		s, _ := scheduler.New(spec, scheduler.State{})
		startAll(t, s)
		run(t, "waits", s, []arrive{{0, 1, 0, 100, W}})
		s.Finished(results.TrialSummary{TrialID: "0-s2", Config: 0, Seed: 2, Outcome: results.OutcomeDiverged, StopRule: "nan_loss"})
		// The running sibling is to be stopped at once, not only at its next rung.
		stops := s.(scheduler.Interrupter).Interrupt()
		if got := fmt.Sprint(len(stops)); stopDiverged && (len(stops) != 1 || stops[0].TrialID != "0-s1" || stops[0].Decision.Action != S ||
			stops[0].Decision.Outcome != results.OutcomeDiverged || !stops[0].Decision.Pruning.SiblingDiverged) || !stopDiverged && got != "0" {
			t.Errorf("stop_diverged_configs %v: Interrupt() = %+v", stopDiverged, stops)
		}
		if again := s.(scheduler.Interrupter).Interrupt(); len(again) != 0 {
			t.Errorf("Interrupt() again = %+v, want each stop once", again)
		}
		want := C
		if stopDiverged {
			want = S
		}
		ds := run(t, fmt.Sprintf("stop_diverged_configs %v", stopDiverged), s, []arrive{{0, 1, 0, 100, want}})
		if stopDiverged && (ds[0].Outcome != results.OutcomeDiverged || ds[0].Pruning == nil || !ds[0].Pruning.SiblingDiverged) {
			t.Errorf("stop of 0-s1 = %+v, want outcome diverged, sibling diverged", ds[0])
		}
	}
}

// A continue-as-new mid-sweep resumes from State carried as JSON and decides as an uninterrupted
// scheduler does, a seed waiting at the cut included.
func TestPrunerStateRoundTrip(t *testing.T) {
	spec := pruneSpec(t, 6, "[1, 2]", "{type: asha, min_steps: 100, eta: 3}")
	var arrivals []arriveAt
	for seg := range 3 {
		for c := range 6 {
			for _, seed := range []int64{1, 2} {
				arrivals = append(arrivals, arriveAt{c, seed, seg, float64((c*7+int(seed)*3+seg*5)%11) + float64(seg), 0, 0, ""})
			}
		}
	}
	checkRoundTrip(t, spec, arrivals, []int{1, 7, 13, 20}, nil)
}

// checkRoundTrip decides arrivals with a scheduler of spec, once straight through and once for each
// cut with a continue-as-new (its State through JSON) before that arrival, and wants the same
// decisions; check, when set, is given the JSON state at each cut. A stopped trial's later arrivals
// are dropped.
func checkRoundTrip(t *testing.T, spec *sweeps.Spec, arrivals []arriveAt, cuts []int, check func(cut int, state []byte)) {
	t.Helper()
	decide := func(cut int) []string {
		s, _ := scheduler.New(spec, scheduler.State{})
		startAll(t, s)
		stopped := map[string]bool{}
		var out []string
		for i, a := range arrivals {
			if i == cut {
				b, err := json.Marshal(s.State())
				if err != nil {
					t.Fatal(err)
				}
				if check != nil {
					check(cut, b)
				}
				var st scheduler.State
				if err := json.Unmarshal(b, &st); err != nil {
					t.Fatal(err)
				}
				if s, err = scheduler.New(spec, st); err != nil {
					t.Fatal(err)
				}
			}
			id := sweeps.TrialID(a.config, a.seed)
			if stopped[id] {
				continue
			}
			d := s.AtBoundary(scheduler.Boundary{TrialID: id, Config: a.config, Seed: a.seed, Segment: a.seg, Windowed: f(a.value),
				TargetStep: a.target, Seconds: a.secs})
			if d.Action == S {
				stopped[id] = true
				s.Finished(results.TrialSummary{TrialID: id, Config: a.config, Seed: a.seed, Outcome: results.OutcomePruned, Pruning: d.Pruning})
			}
			out = append(out, fmt.Sprintf("%s@%d %s", id, a.seg, d.Action))
		}
		return out
	}
	want := decide(-1)
	if all := strings.Join(want, " "); !strings.Contains(all, "stop") || !strings.Contains(all, "continue") {
		t.Fatalf("%v: the test does not test pruning", want)
	}
	for _, cut := range cuts {
		if got := decide(cut); !reflect.DeepEqual(got, want) {
			t.Errorf("continue-as-new before arrival %d:\ngot  %v\nwant %v", cut, got, want)
		}
	}
}

// Replay drives the pruner from recorded arrivals: a seed arriving at a later step while its
// configuration waits is held, a stopped seed's later arrivals are dropped, a diverged seed stops
// its configuration.
func TestReplay(t *testing.T) {
	cfg := scheduler.PrunerConfig{Rule: "asha", Steps: []int64{100, 300}, Eta: 2, StopDivergedConfigs: true}
	res, err := scheduler.Replay(cfg, []int64{1, 2}, []scheduler.Arrival{
		{Config: 0, Seed: 1, Step: 100, Value: 10},
		{Config: 0, Seed: 1, Step: 300, Value: 10}, // held until 0-s2 reaches 100
		{Config: 0, Seed: 2, Step: 100, Value: 8},
		{Config: 1, Seed: 1, Step: 100, Value: 1},
		{Config: 1, Seed: 2, Step: 100, Value: 1}, // config 1 stopped at 100
		{Config: 1, Seed: 1, Step: 300, Value: 99},
		{Config: 2, Seed: 1, Step: 100, Value: 50},
		{Config: 2, Seed: 2, Step: 200, Diverged: true},
		{Config: 0, Seed: 2, Step: 300, Value: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range res.Stopped {
		got[fmt.Sprintf("%d-s%d", k.Config, k.Seed)] = fmt.Sprintf("step %d diverged %v", v.Step, v.Diverged)
	}
	want := map[string]string{"1-s1": "step 100 diverged false", "1-s2": "step 100 diverged false", "2-s1": "step 100 diverged true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stopped %v, want %v", got, want)
	}
	if v := res.Values[0]; !reflect.DeepEqual(v, []float64{9, 9}) {
		t.Errorf("config 0 values %v, want [9 9] (the IQM of its seeds at each step)", v)
	}
}

// The pruner's state lists each configuration's compared values in configuration order, for
// results.json; configurations without a value are left out, and a nil state has none.
func TestPrunerStateRungValues(t *testing.T) {
	var none *scheduler.PrunerState
	if got := none.RungValues(); got != nil {
		t.Errorf("nil state: %v", got)
	}
	st := &scheduler.PrunerState{Configs: map[string]*scheduler.ConfigRecord{
		"10": {Values: []float64{3, math.Inf(-1)}}, "2": {Values: []float64{1.5}}, "4": {Started: []int64{1}},
	}}
	got := st.RungValues()
	if len(got) != 2 || got[0].Config != 2 || got[0].Values[0] != 1.5 || got[1].Config != 10 || !math.IsInf(got[1].Values[1], -1) {
		t.Errorf("RungValues = %+v, want configurations 2 and 10 with their values", got)
	}
	b, err := json.Marshal(got)
	if err != nil || !strings.Contains(string(b), `"values":[3,"-Inf"]`) {
		t.Errorf("JSON %s, %v: want -Inf as a string", b, err)
	}
}
