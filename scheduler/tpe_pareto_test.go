package scheduler

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// paretoSpec is bayesSpec with a metric list (YAML flow sequence) in place of the single metric.
func paretoSpec(t testing.TB, method string, trials int, seed int64, seeds, params, extra, metric string) *sweeps.Spec {
	t.Helper()
	y := fmt.Sprintf("name: tpe\ntrainer: {command: [t], total_steps: 1000}\nmetric: %s\nmethod: %s\ntrials: %d\nsampler_seed: %d\nseeds: %s\nparameters:\n%s%s",
		metric, method, trials, seed, seeds, params, extra)
	s, err := sweeps.Decode(strings.NewReader(y), "tpe.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return s
}

// driveSummaries runs a sweep's scheduler with up to conc trials at once, each ending (oldest first)
// with the summary sum gives it; it returns the trials it started, in order.
func driveSummaries(t testing.TB, s Scheduler, conc int, sum func(sweeps.Trial) results.TrialSummary) []sweeps.Trial {
	t.Helper()
	var running, all []sweeps.Trial
	for steps := 0; ; steps++ {
		if steps > 1_000_000 {
			t.Fatal("drive does not end")
		}
		for len(running) < conc {
			tr, ok := s.Next()
			if !ok {
				break
			}
			running, all = append(running, tr), append(all, tr)
		}
		if len(running) == 0 {
			if !s.Done() {
				t.Fatal("nothing runs, nothing can start, and the scheduler is not done")
			}
			return all
		}
		tr := running[0]
		running = running[1:]
		s.Finished(sum(tr))
	}
}

// The good group of a sweep with several objectives: whole fronts first; the front the group's
// boundary falls in by greedy hypervolume subset selection; the rest by crowding distance, then
// configuration number.
func TestParetoOrder(t *testing.T) {
	s := paretoSpec(t, "bayes", 8, 1, "[1]", braninParams, "",
		"[{name: reward, goal: maximize}, {name: env_steps, goal: minimize}]")
	sch, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	b := sch.(*bayes)
	b.vectors = map[int][]float64{0: {10, 100}, 1: {5, 50}, 2: {1, 10}, 3: {9.9, 100.5}}
	// Scaled over the four (minimized, 0 best, 1 worst): 0 (0, 0.9945), 1 (0.5556, 0.4420), 2 (1, 0),
	// 3 (0.0111, 1); 3 is dominated by 0. Alone up to (1.1, 1.1), 1 covers 0.358, 0 0.116 and 2 0.110;
	// beside 1, 0 adds 0.0587 and 2 0.0442. Crowding: 0 and 2 are the front's extremes (+Inf).
	for _, c := range []struct {
		good int
		want []int
	}{
		{1, []int{1, 0, 2, 3}}, // the front does not fit: greedy selection picks 1 first
		{2, []int{1, 0, 2, 3}}, // then 0
		{3, []int{0, 2, 1, 3}}, // the whole front fits: by crowding
		{4, []int{0, 2, 1, 3}},
	} {
		if got := b.paretoOrder([]int{0, 1, 2, 3}, c.good); !slices.Equal(got, c.want) {
			t.Errorf("good group of %d: order %v, want %v", c.good, got, c.want)
		}
	}
}

// paretoTrial is a synthetic trial of a two-parameter space with three objectives: reward
// (maximize), steps to a reward of 1 and the seed failure rate. x trades reward against steps; c
// "bad" diverges on seed 2, and c "fragile" collapses by the end on seed 1.
func paretoTrial(tr sweeps.Trial) results.TrialSummary {
	x := num(tr.Params["x"])
	sum := results.TrialSummary{TrialID: tr.ID, Config: tr.Config, Seed: tr.Seed, Params: tr.Params,
		Outcome: results.OutcomeCompleted, Steps: 1000, WallSeconds: 10 + x}
	if tr.Params["c"] == "bad" && tr.Seed == 2 {
		sum.Outcome = results.OutcomeDiverged
		sum.Stop = &results.Verdict{Rule: "nan_loss", Step: 300}
		sum.Steps = 300
		return sum
	}
	v := 2*x + 0.1*float64(tr.Seed)
	if tr.Params["c"] == "bad" {
		v += 1 // the infeasible value dominates every feasible one in reward
	}
	sum.Objective = &v
	if v >= 1 {
		sum.TargetStep = int64(200 + 800*x)
	}
	if tr.Params["c"] == "fragile" && tr.Seed == 1 {
		sum.End = &results.Verdict{Rule: "collapsed_at_end", Step: 1000}
	}
	return sum
}

const paretoParams = "  x: {min: 0.0, max: 1.0}\n  c: {values: [good, bad, fragile]}\n"
const paretoMetric = "[{name: reward, goal: maximize}, {name: env_steps, goal: minimize, target: 1}, {name: seed_failure_rate, goal: minimize}]"

// With several objectives, a configuration's result is the vector results.Objectives gives it; one
// with a diverged seed is infeasible and never in the estimator's good group, however good its reward;
// a sweep resumed from its State, through JSON, after every event hands out the same trials.
func TestParetoBayes(t *testing.T) {
	s := paretoSpec(t, "bayes", 24, 3, "[1, 2]", paretoParams, "bayes: {startup_trials: 6, rerun_top: 2}\n", paretoMetric)
	whole, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	want := driveSummaries(t, whole, 3, paretoTrial)
	b := whole.(*bayes)
	var sums []results.TrialSummary
	for _, tr := range want {
		if slices.Contains(s.Seeds, tr.Seed) {
			sums = append(sums, paretoTrial(tr))
		}
	}
	points := results.Objectives(s, sums)
	infeasible := 0
	for _, p := range points {
		r := b.st.Configs[p.Config]
		switch {
		case p.Why == results.WhyDiverged:
			infeasible++
			if r.Result != BayesInfeasible {
				t.Errorf("configuration %d with a diverged seed: %s, want infeasible", p.Config, r.Result)
			}
		case r.Result != BayesCompleted || !reflect.DeepEqual(b.vectors[p.Config], []float64(p.Values)):
			t.Errorf("configuration %d: %s %v, want completed with results.Objectives's %v", p.Config, r.Result, b.vectors[p.Config], p.Values)
		}
	}
	if infeasible == 0 {
		t.Fatal("no configuration diverged: the test checks nothing of infeasibility")
	}
	checkGood(t, b)
	for _, c := range b.st.Rerun {
		if b.st.Configs[c].Result != BayesCompleted {
			t.Errorf("re-run of configuration %d, %s", c, b.st.Configs[c].Result)
		}
	}
	if len(b.st.Rerun) != 2 {
		t.Errorf("re-run %v, want 2 configurations", b.st.Rerun)
	}

	// Resumed after every event, its state through JSON.
	resume := func(sch Scheduler) Scheduler {
		t.Helper()
		raw, err := json.Marshal(sch.State())
		if err != nil {
			t.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		next, err := New(s, st)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	sch, _ := New(s, State{})
	var running, got []sweeps.Trial
	for {
		for len(running) < 3 {
			tr, ok := sch.Next()
			if !ok {
				break
			}
			running, got = append(running, tr), append(got, tr)
			sch = resume(sch)
		}
		if len(running) == 0 {
			break
		}
		tr := running[0]
		running = running[1:]
		sch.Finished(paretoTrial(tr))
		sch = resume(sch)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed after every event: %d trials, want the %d of one run, the same", len(got), len(want))
	}
}

// checkGood checks that no suggestion's good group of b holds a configuration not completed (none is
// pruned here) or not yet known, and says whether one would have without the cap on the group.
func checkGood(t *testing.T, b *bayes) (capped bool) {
	t.Helper()
	for i := range len(b.st.Configs) + 1 {
		ranked, good := b.split(i)
		capped = capped || good < TPEGood(len(ranked))
		for _, x := range ranked[:good] {
			for c, r := range b.st.Configs {
				if reflect.DeepEqual(x, b.points[c]) && (r.Result != BayesCompleted || r.Known < 0 || r.Known > i) {
					t.Errorf("suggestion %d: configuration %d (%s, known at %d) in the good group", i, c, r.Result, r.Known)
				}
			}
		}
	}
	return capped
}

// When fewer configurations are completed than the good group would hold, the group is the completed
// ones: an infeasible or running configuration is never good.
func TestParetoGoodCapped(t *testing.T) {
	s := paretoSpec(t, "bayes", 30, 4, "[1, 2]", paretoParams, "bayes: {startup_trials: 2, rerun_top: 0}\n", paretoMetric)
	sch, _ := New(s, State{})
	driveSummaries(t, sch, 4, func(tr sweeps.Trial) results.TrialSummary {
		sum := paretoTrial(tr)
		if num(tr.Params["x"]) > 0.1 && tr.Seed == 2 { // most configurations diverge
			sum.Outcome, sum.Objective, sum.Stop = results.OutcomeDiverged, nil, &results.Verdict{Rule: "nan_loss"}
		}
		return sum
	})
	if !checkGood(t, sch.(*bayes)) {
		t.Error("no suggestion had fewer completed configurations than its good group: the test checks nothing")
	}
}

// A sweep with one objective keeps in its state what it always kept of a seed: seed, outcome,
// objective; several objectives add what the vector needs.
func TestBayesSeedState(t *testing.T) {
	one := bayesSpec(t, "bayes", 4, 1, "[1, 2]", paretoParams, "bayes: {startup_trials: 2, rerun_top: 0}\n")
	sch, _ := New(one, State{})
	driveSummaries(t, sch, 1, paretoTrial)
	raw, _ := json.Marshal(sch.State())
	for _, key := range []string{"steps", "target_step", "wall_seconds", "collapsed", "sibling_diverged"} {
		if strings.Contains(string(raw), `"`+key+`"`) {
			t.Errorf("one objective: the state has %q: %s", key, raw)
		}
	}
	several := paretoSpec(t, "bayes", 4, 1, "[1, 2]", paretoParams, "bayes: {startup_trials: 2, rerun_top: 0}\n", paretoMetric)
	sch, _ = New(several, State{})
	driveSummaries(t, sch, 1, paretoTrial)
	raw, _ = json.Marshal(sch.State())
	for _, key := range []string{"steps", "wall_seconds"} {
		if !strings.Contains(string(raw), `"`+key+`"`) {
			t.Errorf("several objectives: the state lacks %q: %s", key, raw)
		}
	}
}

// frontsUpTo ranks as results.ParetoRanks does, peeling no further than need, and says where need
// falls; the lazy greedy subset selection picks what computing every gain anew picks.
func TestParetoFrontsAndGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n, d := 1+rng.IntN(40), 2+rng.IntN(2)
		ref := make([]float64, d)
		pts := make([][]float64, n)
		for k := range pts {
			pts[k] = make([]float64, d)
			for i := range pts[k] {
				pts[k][i] = float64(rng.IntN(8)) / 7 // on a lattice: ties and duplicates
				ref[i] = 1.1
			}
		}
		need := rng.IntN(n + 2)
		want := results.ParetoRanks(pts)
		got, boundary, take := frontsUpTo(pts, need)
		deepest := slices.Max(got)
		below := func(r int) int { // points the full sorting ranks better than r
			c := 0
			for _, w := range want {
				if w < r {
					c++
				}
			}
			return c
		}
		for k := range pts {
			if got[k] > 0 && got[k] != want[k] || got[k] == 0 && want[k] <= deepest {
				t.Fatalf("trial %d: point %d rank %d, ParetoRanks %d (peeled to %d)", trial, k, got[k], want[k], deepest)
			}
		}
		switch {
		case need == 0 && deepest != 0:
			t.Fatalf("trial %d: need 0, peeled to rank %d", trial, deepest)
		case need > 0 && below(deepest) >= need:
			t.Fatalf("trial %d: need %d, peeled to rank %d, past it", trial, need, deepest)
		case need > 0 && below(deepest+1) < min(need, n):
			t.Fatalf("trial %d: need %d, peeled to rank %d, short of it", trial, need, deepest)
		case boundary > 0 && (boundary != deepest || below(boundary)+take != need || below(boundary+1) <= need):
			t.Fatalf("trial %d: need %d, boundary %d take %d", trial, need, boundary, take)
		case boundary == 0 && need > 0 && below(deepest+1) != min(need, n):
			t.Fatalf("trial %d: need %d, no boundary, yet rank %d holds %d", trial, need, deepest, below(deepest+1))
		}
		lazy := greedySubset(pts, ref, need, func(a, c int) bool { return a < c })
		var eager []int
		var chosen [][]float64
		used := make([]bool, n)
		for len(eager) < min(need, n) {
			best, bestGain := -1, 0.0
			for k := range pts {
				if used[k] {
					continue
				}
				if g := gain(pts[k], chosen, ref); best < 0 || g > bestGain {
					best, bestGain = k, g
				}
			}
			used[best], eager, chosen = true, append(eager, best), append(chosen, pts[best])
		}
		if !slices.Equal(lazy, eager) {
			t.Fatalf("trial %d: lazy greedy picks %v, eager %v", trial, lazy, eager)
		}
	}
}

// BenchmarkBayesResume measures what a sweep of method bayes spends remaking its suggestions after a
// continue-as-new (New from its State), with every configuration ended, one and three objectives, on 2
// seeds and on 5 (from 3 seeds on, results.Objectives would add bootstrap intervals): workflow code,
// which the Temporal Go SDK's deadlock detector expects to yield within a second.
func BenchmarkBayesResume(b *testing.B) {
	for _, metric := range []string{"{name: reward, goal: maximize}", paretoMetric} {
		for _, seeds := range []string{"[1, 2]", "[1, 2, 3, 4, 5]"} {
			for _, n := range []int{100, 300, 1000} {
				objectives := strings.Count(metric, "name:")
				if objectives > 1 && n > sweeps.MaxParetoBayesTrials {
					continue
				}
				b.Run(fmt.Sprintf("objectives=%d/seeds=%d/trials=%d", objectives, strings.Count(seeds, ",")+1, n), func(b *testing.B) {
					benchmarkResume(b, paretoSpec(b, "bayes", n, 3, seeds, paretoParams, "bayes: {rerun_top: 0}\n", metric))
				})
			}
		}
	}
}

// benchmarkResume drives the sweep of s to its end and times New from its State.
func benchmarkResume(b *testing.B, s *sweeps.Spec) {
	b.Helper()
	sch, err := New(s, State{})
	if err != nil {
		b.Fatal(err)
	}
	driveSummaries(b, sch, 4, paretoTrial)
	st := sch.State()
	b.ResetTimer()
	for range b.N {
		if _, err := New(s, st); err != nil {
			b.Fatal(err)
		}
	}
}
