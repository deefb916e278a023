package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// bayesSpec decodes a spec of method (bayes, random or sobol) over the given parameters section.
func bayesSpec(t testing.TB, method string, trials int, seed int64, seeds, params, extra string) *sweeps.Spec {
	t.Helper()
	y := fmt.Sprintf("name: tpe\ntrainer: {command: [t], total_steps: 1000}\nmetric: {name: reward, goal: minimize}\nmethod: %s\ntrials: %d\nsampler_seed: %d\nseeds: %s\nparameters:\n%s%s",
		method, trials, seed, seeds, params, extra)
	s, err := sweeps.Decode(strings.NewReader(y), "tpe.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return s
}

// ran is one configuration a drive started: its parameters, in start order, and the score its
// seeds gave (NaN: infeasible).
type ran struct {
	Config int
	Params map[string]any
	Score  float64
}

// drive runs a sweep's scheduler with up to conc trials at once, each ending (oldest first) with the
// objective obj gives for its parameters and seed (nil: the trial diverged). It returns the
// configurations of the search (the spec's seeds) in start order, and the trials it started.
func drive(t testing.TB, s Scheduler, seeds []int64, conc int, obj func(map[string]any, int64) *float64) ([]ran, []sweeps.Trial) {
	t.Helper()
	var running, all []sweeps.Trial
	byConfig := map[int]*ran{}
	var order []int
	ended := map[int][]results.TrialSummary{}
	for steps := 0; ; steps++ {
		if steps > 1_000_000 {
			t.Fatal("drive does not end")
		}
		for len(running) < conc {
			tr, ok := s.Next()
			if !ok {
				break
			}
			running = append(running, tr)
			all = append(all, tr)
			if _, ok := byConfig[tr.Config]; !ok && slices.Contains(seeds, tr.Seed) {
				byConfig[tr.Config] = &ran{Config: tr.Config, Params: tr.Params, Score: math.NaN()}
				order = append(order, tr.Config)
			}
		}
		if len(running) == 0 {
			if !s.Done() {
				t.Fatal("nothing runs, nothing can start, and the scheduler is not done")
			}
			break
		}
		tr := running[0]
		running = running[1:]
		sum := results.TrialSummary{TrialID: tr.ID, Config: tr.Config, Seed: tr.Seed, Params: tr.Params, Outcome: results.OutcomeCompleted}
		if v := obj(tr.Params, tr.Seed); v != nil {
			sum.Objective = v
		} else {
			sum.Outcome = results.OutcomeDiverged
		}
		s.Finished(sum)
		if slices.Contains(seeds, tr.Seed) {
			ended[tr.Config] = append(ended[tr.Config], sum)
			if len(ended[tr.Config]) == len(seeds) {
				if v, ok := results.ConfigScore(ended[tr.Config]); ok {
					byConfig[tr.Config].Score = v
				}
			}
		}
	}
	out := make([]ran, len(order))
	for i, c := range order {
		out[i] = *byConfig[c]
	}
	return out, all
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	panic(fmt.Sprintf("%T", v))
}

func branin(p map[string]any) float64 {
	x1, x2 := num(p["x1"]), num(p["x2"])
	a, b, c, r, s, tt := 1.0, 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 6.0, 10.0, 1/(8*math.Pi)
	return a*math.Pow(x2-b*x1*x1+c*x1-r, 2) + s*(1-tt)*math.Cos(x1) + s
}

var braninSeeds = 10

const braninMin = 0.397887
const braninParams = "  x1: {min: -5.0, max: 10.0}\n  x2: {min: 0.0, max: 15.0}\n"

// bestAfter is the smallest score among the first n configurations.
func bestAfter(rs []ran, n int) float64 {
	best := math.Inf(1)
	for _, r := range rs[:min(n, len(rs))] {
		if !math.IsNaN(r.Score) {
			best = math.Min(best, r.Score)
		}
	}
	return best
}

// TestTPEBranin: over 10 sampler seeds, TPE's best Branin value after 40 configurations (10 of them
// random start-up) is closer to the optimum than random search's: median regret below 0.6 × random's,
// better in at least 6 seeds.
func TestTPEBranin(t *testing.T) {
	obj := func(p map[string]any, _ int64) *float64 { v := branin(p); return &v }
	var tpe, rnd []float64
	wins := 0
	for seed := int64(1); seed <= int64(braninSeeds); seed++ {
		sb := bayesSpec(t, "bayes", 40, seed, "[1]", braninParams, "bayes: {rerun_top: 0}\n")
		b, err := New(sb, State{})
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := drive(t, b, sb.Seeds, 1, obj)
		sr := bayesSpec(t, "random", 40, seed, "[1]", braninParams, "")
		r, err := New(sr, State{})
		if err != nil {
			t.Fatal(err)
		}
		rr, _ := drive(t, r, sr.Seeds, 1, obj)
		a, c := bestAfter(rb, 40)-braninMin, bestAfter(rr, 40)-braninMin
		tpe, rnd = append(tpe, a), append(rnd, c)
		if a < c {
			wins++
		}
		for _, x := range rb {
			if v := num(x.Params["x1"]); v < -5 || v > 10 {
				t.Errorf("x1 = %v, outside [-5, 10]", v)
			}
			if v := num(x.Params["x2"]); v < 0 || v > 15 {
				t.Errorf("x2 = %v, outside [0, 15]", v)
			}
		}
	}
	mt, mr := medianOf(tpe), medianOf(rnd)
	t.Logf("median regret after 40: TPE %.4f, random %.4f; TPE better in %d of %d", mt, mr, wins, braninSeeds)
	if !(mt < 0.6*mr) || wins < braninSeeds*6/10 {
		t.Errorf("median regret TPE %.4f, random %.4f, TPE better in %d of %d: want TPE below 0.6 × random's and better in 6 of 10", mt, mr, wins, braninSeeds)
	}
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// TestTPEDeterministic: the same spec and the same order of results give the same configurations;
// another sampler_seed gives others.
func TestTPEDeterministic(t *testing.T) {
	obj := func(p map[string]any, _ int64) *float64 { v := branin(p); return &v }
	run := func(seed int64) []ran {
		s := bayesSpec(t, "bayes", 20, seed, "[1, 2]", braninParams, "")
		b, err := New(s, State{})
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := drive(t, b, s.Seeds, 3, obj)
		return rs
	}
	a, b, c := run(5), run(5), run(6)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with sampler_seed 5 differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("sampler_seeds 5 and 6 gave the same configurations")
	}
	// The start-up configurations (startup_trials left out: a third of 20) are method random's.
	startup := bayesSpec(t, "bayes", 20, 5, "[1, 2]", braninParams, "").BayesSettings().StartupTrials
	if startup != 6 {
		t.Fatalf("startup_trials left out with trials 20 = %d, want 6", startup)
	}
	s := bayesSpec(t, "random", 10, 5, "[1, 2]", braninParams, "")
	plan, _ := sweeps.Plan(s)
	for i := range startup {
		if !reflect.DeepEqual(a[i].Params, plan[2*i].Params) {
			t.Errorf("start-up configuration %d = %v, want method random's %v", i, a[i].Params, plan[2*i].Params)
		}
	}
}

// TestTPENoDuplicatesPending: on a discrete space of 24 configurations, with 8 trials running and none
// ended (the constant liar at work), every suggestion is new; once all 24 are taken the search ends
// though its budget is 40.
func TestTPENoDuplicatesPending(t *testing.T) {
	params := "  a: {values: [x, y, z]}\n  b: {values: [1, 2]}\n  n: {min: 1, max: 4, distribution: int_uniform}\n"
	s := bayesSpec(t, "bayes", 40, 3, "[1]", params, "bayes: {startup_trials: 2, rerun_top: 0}\n")
	b, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	rs, _ := drive(t, b, s.Seeds, 8, func(p map[string]any, _ int64) *float64 {
		calls++
		v := float64(calls)
		return &v
	})
	seen := map[string]bool{}
	for _, r := range rs {
		k := sweeps.ConfigKey(r.Params)
		if seen[k] {
			t.Errorf("configuration %v suggested twice", r.Params)
		}
		seen[k] = true
	}
	if len(rs) != 24 || !b.Done() {
		t.Errorf("%d configurations, done %v; want all 24 and done", len(rs), b.Done())
	}
}

// TestTPEConditional: a dimension active only under one value of a categorical parent is sampled
// only when the parent takes it, and the estimator learns the parent's good value.
func TestTPEConditional(t *testing.T) {
	space := []Dim{{Choices: 3, Parent: -1}, {Parent: 0, When: []int{1}}, {Parent: -1}}
	rng := rand.New(rand.NewPCG(1, 2))
	var ranked [][]float64
	var scores []float64
	dup := func([]float64) bool { return false }
	for i := range 60 {
		var x []float64
		if i < 10 {
			x = []float64{float64(rng.IntN(3)), rng.Float64(), rng.Float64()}
			if x[0] != 1 {
				x[1] = math.NaN()
			}
		} else {
			var ok bool
			if x, ok = Suggest(space, ranked, rng, dup); !ok {
				t.Fatal("no suggestion")
			}
		}
		if active := x[0] == 1; active == math.IsNaN(x[1]) {
			t.Fatalf("point %v: the conditional dimension is active %v, want %v", x, !math.IsNaN(x[1]), active)
		}
		for _, d := range []int{1, 2} {
			if !math.IsNaN(x[d]) && (x[d] < 0 || x[d] > 1) {
				t.Fatalf("point %v: coordinate %d outside [0, 1]", x, d)
			}
		}
		// Best: parent 1 with the child near 0.8, then the rest by x[2].
		score := math.Abs(x[2] - 0.3)
		if x[0] == 1 {
			score -= 1 - math.Abs(x[1]-0.8)
		}
		at, _ := slices.BinarySearch(scores, score)
		scores = slices.Insert(scores, at, score)
		ranked = slices.Insert(ranked, at, x)
	}
	ones := 0
	for _, x := range ranked[:10] {
		if x[0] == 1 {
			ones++
		}
	}
	if ones < 8 {
		t.Errorf("%d of the best 10 points take the parent's good value, want at least 8", ones)
	}
}

// TestBayesResume: a scheduler resumed from its State (a continue-as-new) hands out the same trials
// as one that never stopped.
func TestBayesResume(t *testing.T) {
	params := braninParams + "  c: {values: [a, b, c]}\n"
	s := bayesSpec(t, "bayes", 16, 9, "[1, 2]", params, "bayes: {startup_trials: 4, rerun_top: 2}\n")
	obj := func(p map[string]any, seed int64) *float64 {
		if p["c"] == "c" && seed == 2 {
			return nil // diverged: infeasible
		}
		v := branin(p) + float64(seed)
		return &v
	}
	whole, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	_, want := drive(t, whole, s.Seeds, 3, obj)
	// Drive again, rebuilding the scheduler from its State after every event.
	b, _ := New(s, State{})
	var running, got []sweeps.Trial
	for {
		for len(running) < 3 {
			tr, ok := b.Next()
			if !ok {
				break
			}
			running, got = append(running, tr), append(got, tr)
			if b, err = New(s, b.State()); err != nil {
				t.Fatal(err)
			}
		}
		if len(running) == 0 {
			break
		}
		tr := running[0]
		running = running[1:]
		sum := results.TrialSummary{TrialID: tr.ID, Config: tr.Config, Seed: tr.Seed, Outcome: results.OutcomeCompleted}
		if v := obj(tr.Params, tr.Seed); v != nil {
			sum.Objective = v
		} else {
			sum.Outcome = results.OutcomeDiverged
		}
		b.Finished(sum)
		if b, err = New(s, b.State()); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed after every event: %d trials, want the %d of one run, the same", len(got), len(want))
	}
	if len(want) != 16*2+2*len(s.BayesSettings().RerunSeeds) {
		t.Errorf("%d trials, want 16 configurations × 2 seeds and the re-run's 2 × 2", len(want))
	}
	// The re-run runs the two best scored configurations on fresh seeds.
	st := b.State().Bayes
	for _, c := range st.Rerun {
		if st.Configs[c].Result != BayesCompleted {
			t.Errorf("re-run of configuration %d, %s", c, st.Configs[c].Result)
		}
	}
}

// Total is the budget until the search ends early or the re-run is chosen, then what ran: a sweep
// whose every configuration is infeasible re-runs none, and its Total is the search's trials (so a
// sweep whose every trial failed ends failed).
func TestBayesTotal(t *testing.T) {
	s := bayesSpec(t, "bayes", 6, 1, "[1, 2]", braninParams, "bayes: {startup_trials: 2, rerun_top: 3}\n")
	b, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Total(); got != 6*2+3*2 {
		t.Errorf("Total before any result = %d, want the budget 18", got)
	}
	drive(t, b, s.Seeds, 4, func(map[string]any, int64) *float64 { return nil })
	if got := b.Total(); got != 12 || !b.Done() {
		t.Errorf("Total after every configuration diverged = %d (done %v), want 12 and done", got, b.Done())
	}
	small := bayesSpec(t, "bayes", 10, 1, "[1]", "  a: {values: [x, y]}\n", "bayes: {rerun_top: 1}\n")
	b, _ = New(small, State{})
	drive(t, b, small.Seeds, 1, func(map[string]any, int64) *float64 { v := 1.0; return &v })
	if got := b.Total(); got != 2+1 {
		t.Errorf("Total of a 2-configuration space = %d, want 2 and the re-run's 1", got)
	}
}

// With early_terminate, the pruner of bayes sweeps is the pruning scheduler's: a configuration it
// stops ranks below every completed one, by its value at its last decision step, and above the
// infeasible ones; a re-run seed is never pruned.
func TestBayesPrunedRanking(t *testing.T) {
	s := bayesSpec(t, "bayes", 3, 1, "[1, 2]", braninParams,
		"bayes: {startup_trials: 3, rerun_top: 1}\nearly_terminate: {type: asha, min_steps: 100, eta: 2}\n")
	s.Trainer.SegmentSteps = 100
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	sch, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	b := sch.(*bayes)
	if !b.AsksAtBoundaries() {
		t.Fatal("a bayes sweep with early_terminate does not ask at boundaries")
	}
	for range 6 {
		if _, ok := b.Next(); !ok {
			t.Fatal("fewer than 6 trials")
		}
	}
	at := func(c int, seed int64, v float64) Decision {
		return b.AtBoundary(Boundary{TrialID: sweeps.TrialID(c, seed), Config: c, Seed: seed, Segment: 0, Step: 100, Windowed: &v})
	}
	at(0, 1, 5) // minimize: 5 is better than 10
	if d := at(0, 2, 5); d.Action != Continue {
		t.Fatalf("configuration 0 at its first rung: %+v, want continue", d)
	}
	at(1, 1, 10)
	d := at(1, 2, 10)
	if d.Action != Stop || d.Outcome != results.OutcomePruned {
		t.Fatalf("configuration 1 below configuration 0 at the rung: %+v, want pruned", d)
	}
	end := func(c int, seed int64, outcome string, v *float64) {
		b.Finished(results.TrialSummary{TrialID: sweeps.TrialID(c, seed), Config: c, Seed: seed, Outcome: outcome, Objective: v, Pruning: d.Pruning})
	}
	twenty := 20.0
	end(1, 1, results.OutcomePruned, nil)
	end(1, 2, results.OutcomePruned, nil)
	end(2, 1, results.OutcomeDiverged, nil)
	end(2, 2, results.OutcomeCancelled, nil)
	end(0, 1, results.OutcomeCompleted, &twenty)
	end(0, 2, results.OutcomeCompleted, &twenty)
	st := b.State().Bayes.Configs
	// minimize: scores are oriented, so configuration 0's 20 is −20 and configuration 1's rung value
	// −10: numerically better, and still ranked below the completed configuration.
	if st[0].Result != BayesCompleted || st[0].Score != -20 || st[1].Result != BayesPruned || st[1].Score != -10 || st[2].Result != BayesInfeasible {
		t.Errorf("results %+v, want 0 completed (−20), 1 pruned (−10), 2 infeasible", st)
	}
	ranked := b.ranked(3)
	for i, c := range []int{0, 1, 2} {
		if !reflect.DeepEqual(ranked[i], b.points[c]) {
			t.Errorf("rank %d is not configuration %d", i, c)
		}
	}
	tr, ok := b.Next()
	if !ok || tr.Config != 0 || tr.Seed != 3 {
		t.Fatalf("re-run trial %+v, want configuration 0 on seed 3", tr)
	}
	if d := b.AtBoundary(Boundary{TrialID: tr.ID, Config: 0, Seed: 3, Segment: 0, Step: 100, Windowed: new(float64)}); d.Action != Continue {
		t.Errorf("re-run trial at a rung: %+v, want continue", d)
	}
}

// Every distribution a spec can give is searched, and every suggestion lies in its parameter's
// support: ranges within their bounds, integers and q_ values rounded, values from their list.
func TestBayesEveryDistribution(t *testing.T) {
	params := `  u: {min: -2.0, max: 3.0}
  lg: {min: 0.0001, max: 0.1, distribution: log_uniform}
  n: {min: 1, max: 9, distribution: int_uniform}
  qu: {min: 0.0, max: 1.0, distribution: q_uniform, q: 0.25}
  qlv: {min: 1.0, max: 100.0, distribution: q_log_uniform_values, q: 5}
  inv: {min: 0.01, max: 1.0, distribution: inv_log_uniform_values}
  nrm: {distribution: normal, mu: 1.0, sigma: 2.0}
  ln: {distribution: log_normal, mu: 0.0, sigma: 1.0}
  bt: {distribution: beta, a: 2.0, b: 5.0}
  qb: {distribution: q_beta, a: 2.0, b: 2.0, q: 0.1}
  ord: {values: [16, 32, 64, 128]}
  cat: {values: [relu, tanh, elu]}
  w: {values: [a, b], probabilities: [0.9, 0.1]}
  k: {value: 7}
`
	s := bayesSpec(t, "bayes", 40, 2, "[1]", params, "bayes: {startup_trials: 5, rerun_top: 0}\n")
	b, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	if d := b.(*bayes).space; d[10].Choices != 0 || d[11].Choices != 3 || d[12].Choices != 2 {
		t.Errorf("dimensions %+v: want the ordered list numeric, the others categorical", d)
	}
	rs, _ := drive(t, b, s.Seeds, 4, func(p map[string]any, _ int64) *float64 {
		v := math.Abs(num(p["u"])-1) + math.Abs(math.Log10(num(p["lg"]))+2)
		return &v
	})
	if len(rs) != 40 {
		t.Fatalf("%d configurations, want 40", len(rs))
	}
	in := func(x, lo, hi float64) bool { return x >= lo && x <= hi }
	multiple := func(x, q float64) bool { return math.Abs(x/q-math.Round(x/q)) < 1e-9 }
	for _, r := range rs {
		p := r.Params
		bad := func(name string) { t.Errorf("%s = %v (%T) outside its support", name, p[name], p[name]) }
		if !in(num(p["u"]), -2, 3) {
			bad("u")
		}
		if !in(num(p["lg"]), 0.0001, 0.1) {
			bad("lg")
		}
		if n, ok := p["n"].(int64); !ok || n < 1 || n > 9 {
			bad("n")
		}
		if x := num(p["qu"]); !in(x, 0, 1) || !multiple(x, 0.25) {
			bad("qu")
		}
		if x, ok := p["qlv"].(int64); !ok || x%5 != 0 || x < 0 || x > 100 {
			bad("qlv")
		}
		if !in(num(p["inv"]), 0.01, 1) {
			bad("inv")
		}
		if x := num(p["nrm"]); math.IsNaN(x) || math.IsInf(x, 0) {
			bad("nrm")
		}
		if x := num(p["ln"]); !(x > 0) || math.IsInf(x, 0) {
			bad("ln")
		}
		if !in(num(p["bt"]), 0, 1) {
			bad("bt")
		}
		if x := num(p["qb"]); !in(x, 0, 1) || !multiple(x, 0.1) {
			bad("qb")
		}
		if !slices.Contains([]int64{16, 32, 64, 128}, p["ord"].(int64)) {
			bad("ord")
		}
		if !slices.Contains([]any{"relu", "tanh", "elu"}, p["cat"]) {
			bad("cat")
		}
		if p["w"] != "a" && p["w"] != "b" {
			bad("w")
		}
		if p["k"] != int64(7) {
			bad("k")
		}
	}
	// The search moves towards u = 1 and lg = 0.01.
	best := incumbentOf(rs)
	if math.Abs(num(best.Params["u"])-1) > 0.5 || math.Abs(math.Log10(num(best.Params["lg"]))+2) > 0.5 {
		t.Errorf("best of 40: u %v, lg %v; want near 1 and 0.01", best.Params["u"], best.Params["lg"])
	}
}

func incumbentOf(rs []ran) ran {
	best := rs[0]
	for _, r := range rs {
		if r.Score < best.Score {
			best = r
		}
	}
	return best
}

// A bayes sweep with early_terminate in stop mode (W&B's bayes + hyperband on a plain script) hands
// the passes of its trials to the pruner: a configuration below the cutoff is interrupted.
func TestBayesPassesPrune(t *testing.T) {
	s := bayesSpec(t, "bayes", 3, 1, "[1]", braninParams,
		"bayes: {startup_trials: 3, rerun_top: 1}\nearly_terminate: {type: asha, min_steps: 100, eta: 2, mode: stop}\n")
	sch, err := New(s, State{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := sch.(Passer)
	if !ok {
		t.Fatal("a bayes sweep is not a Passer")
	}
	for range 2 {
		if _, ok := sch.Next(); !ok {
			t.Fatal("fewer than 2 trials")
		}
	}
	five, ten := 5.0, 10.0 // minimize
	p.Passed(Pass{TrialID: sweeps.TrialID(0, 1), Config: 0, Seed: 1, Point: 100, Windowed: &five})
	p.Passed(Pass{TrialID: sweeps.TrialID(1, 1), Config: 1, Seed: 1, Point: 100, Windowed: &ten})
	got := sch.(Interrupter).Interrupt()
	if len(got) != 1 || got[0].TrialID != sweeps.TrialID(1, 1) || got[0].Decision.Outcome != results.OutcomePruned {
		t.Fatalf("interruptions %+v, want configuration 1 pruned", got)
	}
}
