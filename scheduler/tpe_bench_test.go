package scheduler_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// TestTPEBenchmark compares method bayes (TPE) with random and sobol at equal budgets, over 20
// sampler seeds, on Branin, Hartmann-6, their noisy variants, and the recorded PPO grids used as a
// lookup objective; and checks the re-run of the best configuration on a fresh seed. Deterministic
// (no timing). It prints tables; run it with
//
//	RLSWEEP_TPE_BENCH=1 go test -count=1 ./scheduler -run '^TestTPEBenchmark$' -v
func TestTPEBenchmark(t *testing.T) {
	if os.Getenv("RLSWEEP_TPE_BENCH") == "" {
		t.Skip("set RLSWEEP_TPE_BENCH=1 to run the benchmark")
	}
	checkpoints := []int{8, 16, 24, 32, 48}
	for _, fn := range []testFunction{braninFn(0), hartmannFn(0), braninFn(1), hartmannFn(0.1)} {
		fmt.Printf("\n%s: median simple regret (over 20 sampler seeds) after n configurations, one at a time unless said\n", fn.name)
		fmt.Printf("| method | %s |\n|---|%s\n", joinInts(checkpoints, " | "), strings.Repeat("---|", len(checkpoints)))
		for _, method := range []string{"bayes", "bayes-8", "random", "sobol"} {
			regrets := make([][]float64, len(checkpoints))
			conc := 1
			if method == "bayes-8" {
				method, conc = "bayes", 8
			}
			for seed := int64(1); seed <= 20; seed++ {
				extra := ""
				if method == "bayes" {
					extra = "bayes: {rerun_top: 0}\n"
				}
				s := scheduler.BayesSpec(t, method, 48, seed, "[1]", fn.params, extra)
				sch, err := scheduler.New(s, scheduler.State{})
				if err != nil {
					t.Fatal(err)
				}
				noise := rand.New(rand.NewPCG(uint64(seed), 99))
				rs, _ := scheduler.Drive(t, sch, s.Seeds, conc, func(p map[string]any, _ int64) *float64 {
					v := fn.f(p) + fn.noise*noise.NormFloat64()
					return &v
				})
				for k, n := range checkpoints {
					regrets[k] = append(regrets[k], fn.f(incumbent(rs, n, false).Params)-fn.min)
				}
			}
			row := make([]string, len(checkpoints))
			for k := range checkpoints {
				row[k] = fmt.Sprintf("%.3g", scheduler.MedianOf(regrets[k]))
			}
			name := methodName(method)
			if conc > 1 {
				name += fmt.Sprintf(", %d at once (constant liar)", conc)
			}
			fmt.Printf("| %s | %s |\n", name, strings.Join(row, " | "))
		}
	}
	for _, env := range []string{"CartPole-v1", "Pendulum-v1"} {
		benchGrid(t, env)
	}
}

func methodName(m string) string {
	if m == "bayes" {
		return "bayes (TPE)"
	}
	return m
}

func joinInts(xs []int, sep string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	return strings.Join(out, sep)
}

// incumbent is the configuration with the best search-time score among the first n (maximize: larger
// is better).
func incumbent(rs []scheduler.Ran, n int, maximize bool) scheduler.Ran {
	var best scheduler.Ran
	found := false
	for _, r := range rs[:min(n, len(rs))] {
		if math.IsNaN(r.Score) {
			continue
		}
		if !found || maximize && r.Score > best.Score || !maximize && r.Score < best.Score {
			best, found = r, true
		}
	}
	return best
}

type testFunction struct {
	name   string
	params string
	f      func(map[string]any) float64
	min    float64
	noise  float64
}

func braninFn(noise float64) testFunction {
	name := "Branin"
	if noise > 0 {
		name = fmt.Sprintf("Branin, Gaussian noise σ=%g on each observation", noise)
	}
	return testFunction{name: name, params: scheduler.BraninParams, f: scheduler.Branin, min: scheduler.BraninMin, noise: noise}
}

func hartmannFn(noise float64) testFunction {
	name := "Hartmann-6"
	if noise > 0 {
		name = fmt.Sprintf("Hartmann-6, Gaussian noise σ=%g on each observation", noise)
	}
	var params strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&params, "  x%d: {min: 0.0, max: 1.0}\n", i)
	}
	alpha := []float64{1.0, 1.2, 3.0, 3.2}
	a := [4][6]float64{{10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14}, {3, 3.5, 1.7, 10, 17, 8}, {17, 8, 0.05, 10, 0.1, 14}}
	p := [4][6]float64{{1312, 1696, 5569, 124, 8283, 5886}, {2329, 4135, 8307, 3736, 1004, 9991},
		{2348, 1451, 3522, 2883, 3047, 6650}, {4047, 8828, 8732, 5743, 1091, 381}}
	f := func(m map[string]any) float64 {
		sum := 0.0
		for i := range 4 {
			inner := 0.0
			for j := range 6 {
				x := scheduler.Num(m[fmt.Sprintf("x%d", j+1)])
				inner += a[i][j] * (x - p[i][j]*1e-4) * (x - p[i][j]*1e-4)
			}
			sum += alpha[i] * math.Exp(-inner)
		}
		return -sum
	}
	return testFunction{name: name, params: params.String(), f: f, min: -3.32237, noise: noise}
}

// benchGrid searches a recorded PPO grid as a lookup objective: a trial of a configuration on a seed
// scores that run's windowed final reward (nil when rlsweep's diagnostics stopped it: diverged). The
// search runs on seeds 1 and 2; a configuration's true value is its IQM over every recorded seed (the
// grid's ranking, Score); the re-run searches on seeds 1–3 and confirms on seed 4.
func benchGrid(t *testing.T, env string) {
	gt := loadGridTask(t, env)
	g, truth, best, params := gt.grid, gt.truth, gt.best, gt.params
	within := func(v float64) bool { return best-v <= 0.05*math.Abs(best) }
	close := 0
	for _, v := range truth {
		if within(v) {
			close++
		}
	}
	fmt.Printf("\n%s grid (%d configurations × seeds %v, %d steps): best IQM %.4g; %d configurations within 5%% of it\n",
		env, len(g.Configs), g.Seeds, g.Steps, best, close)
	obj := gt.obj
	checkpoints := []int{4, 8, 12, 16, 24, 32}
	fmt.Printf("median simple regret (grid best IQM − the incumbent's IQM over every recorded seed, incumbent by its score on seeds 1–2), 20 sampler seeds\n")
	fmt.Printf("| method | %s | within 5%% by 24 (of 10 seeds) |\n|---|%s---|\n", joinInts(checkpoints, " | "), strings.Repeat("---|", len(checkpoints)))
	for _, method := range []string{"bayes", "random", "sobol"} {
		regrets := make([][]float64, len(checkpoints))
		hits := 0
		for seed := int64(1); seed <= 20; seed++ {
			extra := ""
			if method == "bayes" {
				extra = "bayes: {rerun_top: 0}\n"
			}
			s := scheduler.BayesSpec(t, method, 32, seed, "[1, 2]", params, extra)
			s.Metric.Goal = sweeps.GoalMaximize
			sch, err := scheduler.New(s, scheduler.State{})
			if err != nil {
				t.Fatal(err)
			}
			rs, _ := scheduler.Drive(t, sch, s.Seeds, 1, obj)
			for k, n := range checkpoints {
				regrets[k] = append(regrets[k], best-truth[gridKey(floats(incumbent(rs, n, true).Params))])
			}
			if seed <= 10 && within(truth[gridKey(floats(incumbent(rs, 24, true).Params))]) {
				hits++
			}
		}
		row := make([]string, len(checkpoints))
		for k := range checkpoints {
			row[k] = fmt.Sprintf("%.3g", scheduler.MedianOf(regrets[k]))
		}
		fmt.Printf("| %s | %s | %d |\n", methodName(method), strings.Join(row, " | "), hits)
	}
	// The re-run: 24 configurations searched on seeds 1–3 (the product reports an interval from
	// results.MinIntervalSeeds seeds on), the best 3 run again on seed 4. Is the confirmed
	// configuration's (the search's best) value on seed 4 inside the 95% interval of its search-time
	// score?
	tIn, bIn, pIn := 0, 0, 0
	var lines []string
	for seed := int64(1); seed <= 10; seed++ {
		s := scheduler.BayesSpec(t, "bayes", 24, seed, "[1, 2, 3]", params, "bayes: {rerun_top: 3, rerun_seeds: [4]}\n")
		s.Metric.Goal = sweeps.GoalMaximize
		sch, err := scheduler.New(s, scheduler.State{})
		if err != nil {
			t.Fatal(err)
		}
		rs, all := scheduler.Drive(t, sch, s.Seeds, 1, obj)
		top := incumbent(rs, 24, true)
		var xs []float64
		rerun := math.NaN()
		for _, tr := range all {
			if tr.Config != top.Config {
				continue
			}
			v := obj(tr.Params, tr.Seed)
			if v == nil {
				continue
			}
			if tr.Seed == 4 {
				rerun = *v
			} else {
				xs = append(xs, *v)
			}
		}
		lo, hi := tInterval(xs)
		blo, bhi := bootstrapInterval(xs)
		// results.json's confirmation of it: the product's interval.
		var sums []results.TrialSummary
		for _, tr := range all {
			sum := results.TrialSummary{TrialID: tr.ID, Config: tr.Config, Seed: tr.Seed, Params: tr.Params, Outcome: results.OutcomeCompleted}
			if sum.Objective = obj(tr.Params, tr.Seed); sum.Objective == nil {
				sum.Outcome = results.OutcomeDiverged
			}
			sums = append(sums, sum)
		}
		plo, phi := math.NaN(), math.NaN()
		for _, c := range results.Confirmations(sums, s.Seeds, true, nil) {
			if c.Config == top.Config && c.SearchLow != nil {
				plo, phi = *c.SearchLow, *c.SearchHigh
				if c.Inside != nil && *c.Inside {
					pIn++
				}
			}
		}
		if rerun >= lo && rerun <= hi {
			tIn++
		}
		if rerun >= blo && rerun <= bhi {
			bIn++
		}
		lines = append(lines, fmt.Sprintf("| %d | %v | %.4g | [%.4g, %.4g] | [%.4g, %.4g] | [%.4g, %.4g] | %.4g |", seed, top.Params, diagnostics.IQM(xs), plo, phi, lo, hi, blo, bhi, rerun))
	}
	fmt.Printf("re-run: the search's best configuration (24 configurations on seeds 1–3) run again on seed 4\n")
	fmt.Printf("| sampler seed | configuration | search-time IQM | 95%% prediction interval (results.json's) | 95%% t interval of the mean | 95%% bootstrap interval | re-run (seed 4) |\n|---|---|---|---|---|---|---|\n")
	fmt.Println(strings.Join(lines, "\n"))
	fmt.Printf("re-run inside the prediction interval in %d of 10, the t interval of the mean in %d of 10, the bootstrap interval in %d of 10\n", pIn, tIn, bIn)
}

func tInterval(xs []float64) (float64, float64) {
	if len(xs) < 2 {
		return math.NaN(), math.NaN()
	}
	mean, sd := 0.0, 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	sd = math.Sqrt(sd / float64(len(xs)-1))
	tq := map[int]float64{1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}[len(xs)-1]
	half := tq * sd / math.Sqrt(float64(len(xs)))
	return mean - half, mean + half
}

func bootstrapInterval(xs []float64) (float64, float64) {
	return diagnostics.StratifiedBootstrapCI([][]float64{xs}, func(s [][]float64) float64 { return diagnostics.IQM(s[0]) },
		2000, 0.95, rand.New(rand.NewPCG(1, 2)))
}

func floats(p map[string]any) map[string]float64 {
	out := map[string]float64{}
	for k, v := range p {
		out[k] = scheduler.Num(v)
	}
	return out
}

func gridKey(p map[string]float64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p)) {
		fmt.Fprintf(&b, "%s=%g;", k, p[k])
	}
	return b.String()
}

// gridTask is a recorded PPO grid as a search objective: its parameters (as a spec lists them, and as
// Optuna's samplers get them: one list of values each), each configuration's runs, and its true value
// (the IQM over every recorded seed, Score; −Inf when infeasible) with the grid's best.
type gridTask struct {
	grid   *Grid
	params string
	space  []samplerParam
	byKey  map[string][]*Run
	truth  map[string]float64
	best   float64
}

func loadGridTask(t *testing.T, env string) *gridTask {
	t.Helper()
	g, err := Load(filepath.Join("testdata", "ppo-grid", env+".jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	gt := &gridTask{grid: g, byKey: map[string][]*Run{}, truth: map[string]float64{}, best: math.Inf(-1)}
	// The parameters and their values, from the runs.
	values := map[string]map[float64]bool{}
	for _, runs := range g.Configs {
		for k, v := range runs[0].Params {
			if values[k] == nil {
				values[k] = map[float64]bool{}
			}
			values[k][v] = true
		}
		gt.byKey[gridKey(runs[0].Params)] = runs
	}
	var params strings.Builder
	for _, n := range slices.Sorted(maps.Keys(values)) {
		xs := slices.Sorted(maps.Keys(values[n]))
		vs := make([]string, len(xs))
		for i, x := range xs {
			vs[i] = fmt.Sprintf("%g", x)
		}
		fmt.Fprintf(&params, "  %s: {values: [%s]}\n", n, strings.Join(vs, ", "))
		gt.space = append(gt.space, samplerParam{Name: n, Choices: xs})
	}
	gt.params = params.String()
	for k, runs := range gt.byKey {
		if v, ok := Score(runs, runs[0].Budget); ok {
			gt.truth[k] = v
			gt.best = math.Max(gt.best, v)
		} else {
			gt.truth[k] = math.Inf(-1)
		}
	}
	return gt
}

// obj is the recorded run of configuration p on seed: its windowed final reward, nil when rlsweep's
// diagnostics stopped it (diverged).
func (gt *gridTask) obj(p map[string]any, seed int64) *float64 {
	for _, r := range gt.byKey[gridKey(floats(p))] {
		if r.Seed == seed {
			if v, ok := r.Final(r.Budget); ok {
				return &v
			}
			return nil
		}
	}
	panic(fmt.Sprintf("no run of %v on seed %d", p, seed))
}
