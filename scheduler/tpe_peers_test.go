package scheduler_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// samplerParam is one parameter as scripts/optuna-sampler.py declares it to Optuna: a float range
// (suggest_float, log-scaled when Log) or a list of values (suggest_categorical).
type samplerParam struct {
	Name    string    `json:"name"`
	Low     *float64  `json:"low,omitempty"`
	High    *float64  `json:"high,omitempty"`
	Log     bool      `json:"log,omitempty"`
	Choices []float64 `json:"choices,omitempty"`
}

func floatParam(name string, low, high float64) samplerParam {
	return samplerParam{Name: name, Low: &low, High: &high}
}

// optunaSampler drives scripts/optuna-sampler.py: one process for every study of a benchmark.
type optunaSampler struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startOptunaSampler(t *testing.T) *optunaSampler {
	t.Helper()
	cmd := exec.Command(optunaPython, "../scripts/optuna-sampler.py")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &optunaSampler{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { s.in.Close(); _ = s.cmd.Wait() })
	return s
}

func (s *optunaSampler) send(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("optuna-sampler.py: %v", err)
	}
}

// search runs one study of budget trials with Optuna's sampler name and seed over space. score gives a
// suggestion's score (NaN: infeasible, told as a failed trial); Optuna minimizes, so a maximized score
// is told negated. It returns the suggestions in order with their scores.
func (s *optunaSampler) search(t *testing.T, name string, seed int64, budget int, space []samplerParam, maximize bool,
	score func(map[string]any) float64) []scheduler.Ran {
	t.Helper()
	s.send(t, map[string]any{"sampler": name, "seed": seed, "trials": budget, "space": space})
	out := make([]scheduler.Ran, 0, budget)
	for i := range budget {
		asked := s.ask(t, i, budget)
		p := make(map[string]any, len(asked.Params))
		for k, v := range asked.Params {
			p[k] = v
		}
		v := score(p)
		var told *float64
		if !math.IsNaN(v) {
			o := v
			if maximize {
				o = -v
			}
			told = &o
		}
		s.send(t, map[string]any{"value": told})
		out = append(out, scheduler.Ran{Config: i, Params: p, Score: v})
	}
	return out
}

// searchTask is one objective of TestTPEPeersBenchmark.
type searchTask struct {
	name     string
	params   string         // the spec's parameters
	space    []samplerParam // the same parameters, for Optuna
	seeds    []int64        // the search's seeds: a configuration's score is its IQM over them
	maximize bool
	budget   int
	// observe is one seed's observation of a configuration (nil: the run diverged), noisy where the
	// task is; truth its true value, on which the regret is measured; best the optimum.
	observe func(p map[string]any, seed int64, noise *rand.Rand) *float64
	truth   func(p map[string]any) float64
	best    float64
}

func (st searchTask) regret(inc scheduler.Ran) float64 {
	if inc.Params == nil {
		return math.Inf(1) // no feasible configuration yet
	}
	if st.maximize {
		return st.best - st.truth(inc.Params)
	}
	return st.truth(inc.Params) - st.best
}

func functionTask(fn testFunction, space []samplerParam) searchTask {
	return searchTask{name: fn.name, params: fn.params, space: space, seeds: []int64{1}, budget: 48,
		observe: func(p map[string]any, _ int64, noise *rand.Rand) *float64 {
			v := fn.f(p) + fn.noise*noise.NormFloat64()
			return &v
		},
		truth: fn.f, best: fn.min}
}

func gridSearchTask(t *testing.T, env string) searchTask {
	gt := loadGridTask(t, env)
	return searchTask{name: env + " (recorded grid)", params: gt.params, space: gt.space, seeds: []int64{1, 2}, maximize: true, budget: 32,
		observe: func(p map[string]any, seed int64, _ *rand.Rand) *float64 { return gt.obj(p, seed) },
		truth:   func(p map[string]any) float64 { return gt.truth[gridKey(floats(p))] }, best: gt.best}
}

// TestTPEPeersBenchmark (docs/BENCHMARKS.md, "Bayesian search against Optuna") compares method bayes
// (rlsweep's TPE) with method random and with Optuna 3.1's own samplers — TPESampler with its
// defaults, TPESampler(multivariate=True) and RandomSampler, run by scripts/optuna-sampler.py, and the
// two TPE samplers again with Optuna's later fix of their truncated normal density applied — at
// equal budgets over 30 sampler seeds: Branin, Hartmann-6 and their noisy variants, and the recorded
// PPO grids of CartPole-v1, Pendulum-v1, Acrobot-v1 and MountainCarContinuous-v0 as lookup objectives (a configuration's search-time score is
// its IQM over seeds 1–2, its true value the IQM over every recorded seed). One budget unit is one
// configuration evaluated on the search's seeds, a configuration Optuna suggests again included. It
// prints the median simple regret after n configurations with a distribution-free 95% interval of the
// median at 16 and 32, and one-sided Mann–Whitney p-values for "rlsweep's TPE has lower regret". Deterministic
// (no timing); run it with
//
//	RLSWEEP_TPE_BENCH=1 go test -count=1 ./scheduler -run '^TestTPEPeersBenchmark$' -v
func TestTPEPeersBenchmark(t *testing.T) {
	if os.Getenv("RLSWEEP_TPE_BENCH") == "" {
		t.Skip("set RLSWEEP_TPE_BENCH=1 to run the benchmark")
	}
	if why := optunaAvailable(); why != "" {
		t.Skip(why)
	}
	const samplerSeeds = 30
	hartmann := make([]samplerParam, 6)
	for i := range hartmann {
		hartmann[i] = floatParam(fmt.Sprintf("x%d", i+1), 0, 1)
	}
	branin := []samplerParam{floatParam("x1", -5, 10), floatParam("x2", 0, 15)}
	tasks := []searchTask{
		functionTask(braninFn(0), branin), functionTask(hartmannFn(0), hartmann),
		functionTask(braninFn(1), branin), functionTask(hartmannFn(0.1), hartmann),
		gridSearchTask(t, "CartPole-v1"), gridSearchTask(t, "Pendulum-v1"), gridSearchTask(t, "Acrobot-v1"),
		gridSearchTask(t, "MountainCarContinuous-v0"),
	}
	methods := []string{"bayes", "random", "optuna:tpe", "optuna:tpe-multivariate", "optuna:random",
		"optuna:tpe-fixed", "optuna:tpe-multivariate-fixed"}
	opt := startOptunaSampler(t)
	for _, task := range tasks {
		checkpoints := []int{8, 16, 24, 32, 48}
		if task.budget < 48 {
			checkpoints = []int{4, 8, 16, 24, 32}
		}
		regrets := map[string][][]float64{}
		repeats := map[string][]int{}
		for _, m := range methods {
			regrets[m] = make([][]float64, len(checkpoints))
			for seed := int64(1); seed <= samplerSeeds; seed++ {
				rs := runSearch(t, opt, task, m, seed)
				for k, n := range checkpoints {
					regrets[m][k] = append(regrets[m][k], task.regret(incumbent(rs, n, task.maximize)))
				}
				repeats[m] = append(repeats[m], repeated(rs))
			}
		}
		printPeersTable(task, methods, checkpoints, regrets, repeats)
	}
}

// runSearch is one search of task by method with sampler seed seed: the configurations in the order
// the method chose them, each with its search-time score (NaN: infeasible).
func runSearch(t *testing.T, opt *optunaSampler, task searchTask, method string, seed int64) []scheduler.Ran {
	noise := rand.New(rand.NewPCG(uint64(seed), 99))
	observe := func(p map[string]any, s int64) *float64 { return task.observe(p, s, noise) }
	if name, ok := strings.CutPrefix(method, "optuna:"); ok {
		return opt.search(t, name, seed, task.budget, task.space, task.maximize, func(p map[string]any) float64 {
			sums := make([]results.TrialSummary, len(task.seeds))
			for i, s := range task.seeds {
				sums[i] = results.TrialSummary{Seed: s, Outcome: results.OutcomeCompleted}
				if sums[i].Objective = observe(p, s); sums[i].Objective == nil {
					sums[i].Outcome = results.OutcomeDiverged
				}
			}
			if v, ok := results.ConfigScore(sums); ok {
				return v
			}
			return math.NaN()
		})
	}
	extra := ""
	if method == "bayes" {
		extra = "bayes: {rerun_top: 0}\n"
	}
	seeds := make([]string, len(task.seeds))
	for i, s := range task.seeds {
		seeds[i] = fmt.Sprint(s)
	}
	s := scheduler.BayesSpec(t, method, task.budget, seed, "["+strings.Join(seeds, ", ")+"]", task.params, extra)
	if task.maximize {
		s.Metric.Goal = sweeps.GoalMaximize
	}
	sch, err := scheduler.New(s, scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := scheduler.Drive(t, sch, s.Seeds, 1, observe)
	return rs
}

// repeated counts the configurations a search evaluated again (the same parameters as an earlier one).
func repeated(rs []scheduler.Ran) int {
	seen := map[string]bool{}
	n := 0
	for _, r := range rs {
		k := gridKey(floats(r.Params))
		if seen[k] {
			n++
		}
		seen[k] = true
	}
	return n
}

func printPeersTable(task searchTask, methods []string, checkpoints []int, regrets map[string][][]float64, repeats map[string][]int) {
	fmt.Printf("\n%s: median simple regret over %d sampler seeds after n configurations (95%% interval of the median at 16 and 32)\n",
		task.name, len(regrets[methods[0]][0]))
	fmt.Printf("| method | %s | repeated configurations, median (max) |\n|---|%s---|\n", joinInts(checkpoints, " | "), strings.Repeat("---|", len(checkpoints)))
	for _, m := range methods {
		row := make([]string, len(checkpoints))
		for k, n := range checkpoints {
			row[k] = fmt.Sprintf("%.3g", scheduler.MedianOf(regrets[m][k]))
			if n == 16 || n == 32 {
				lo, hi := medianInterval(regrets[m][k])
				row[k] += fmt.Sprintf(" [%.3g, %.3g]", lo, hi)
			}
		}
		reps := slices.Clone(repeats[m])
		sort.Ints(reps)
		fmt.Printf("| %s | %s | %d (%d) |\n", peerMethodName(m), strings.Join(row, " | "), reps[len(reps)/2], reps[len(reps)-1])
	}
	fmt.Printf("one-sided Mann–Whitney p, rlsweep's TPE has lower regret than:\n| n | %s |\n|---|%s\n",
		strings.Join(mapNames(methods[1:]), " | "), strings.Repeat("---|", len(methods)-1))
	for k, n := range checkpoints {
		if n != 16 && n != 32 {
			continue
		}
		ps := make([]string, len(methods)-1)
		for i, m := range methods[1:] {
			ps[i] = fmt.Sprintf("%.3g", mannWhitneyLess(regrets["bayes"][k], regrets[m][k]))
		}
		fmt.Printf("| %d | %s |\n", n, strings.Join(ps, " | "))
	}
}

func mapNames(ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = peerMethodName(m)
	}
	return out
}

func peerMethodName(m string) string {
	switch m {
	case "bayes":
		return "rlsweep bayes (TPE)"
	case "random":
		return "rlsweep random"
	case "optuna:tpe":
		return "Optuna TPESampler (defaults)"
	case "optuna:tpe-multivariate":
		return "Optuna TPESampler (multivariate)"
	case "optuna:random":
		return "Optuna RandomSampler"
	case "optuna:tpe-fixed":
		return "Optuna TPESampler (defaults), density fixed"
	case "optuna:tpe-multivariate-fixed":
		return "Optuna TPESampler (multivariate), density fixed"
	}
	return m
}

// mannWhitneyLess is the one-sided p-value of the Mann–Whitney U test that xs tends to be smaller
// than ys: the normal approximation with the tie correction and a continuity correction (both samples
// here have 30 values). 1 when every value ties.
func mannWhitneyLess(xs, ys []float64) float64 {
	type obs struct {
		v float64
		x bool
	}
	all := make([]obs, 0, len(xs)+len(ys))
	for _, v := range xs {
		all = append(all, obs{v, true})
	}
	for _, v := range ys {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n := float64(len(all))
	rankSum, ties := 0.0, 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // the mean of ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].x {
				rankSum += rank
			}
		}
		tc := float64(j - i)
		ties += tc*tc*tc - tc
		i = j
	}
	m1, m2 := float64(len(xs)), float64(len(ys))
	u := rankSum - m1*(m1+1)/2 // pairs where x is larger (ties half)
	mean := m1 * m2 / 2
	sd := math.Sqrt(m1 * m2 / 12 * ((n + 1) - ties/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (u - mean + 0.5) / sd // small u: xs smaller
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// medianInterval is a distribution-free 95% interval of the median of xs: the order statistics
// x(j) and x(n+1−j) with j the largest for which P(Binomial(n, ½) < j) ≤ 0.025.
func medianInterval(xs []float64) (float64, float64) {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	b := distuv.Binomial{N: float64(n), P: 0.5}
	j := 0
	for j < n && b.CDF(float64(j)) <= 0.025 {
		j++
	}
	if j == 0 {
		return s[0], s[n-1]
	}
	return s[j-1], s[n-j]
}

// The statistics the benchmark reports, checked against values computed by hand.
func TestPeersStatistics(t *testing.T) {
	// 30 values: P(B(30, ½) ≤ 9) = 0.0214, ≤ 10: 0.0494, so the interval is x(10), x(21).
	xs := make([]float64, 30)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	if lo, hi := medianInterval(xs); lo != 10 || hi != 21 {
		t.Errorf("medianInterval(1…30) = [%g, %g], want [10, 21]", lo, hi)
	}
	// Fully separated samples of 5: U = 0, z = (0 − 12.5 + 0.5)/√(25·11/12) = −2.507, p = 0.0061.
	if p := mannWhitneyLess([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}); math.Abs(p-0.0061) > 0.0002 {
		t.Errorf("separated samples: p = %.4f, want 0.0061", p)
	}
	if p := mannWhitneyLess([]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}); p < 0.99 {
		t.Errorf("reversed samples: p = %.4f, want about 1", p)
	}
	if p := mannWhitneyLess([]float64{0, 0, 0}, []float64{0, 0, 0}); p != 1 {
		t.Errorf("all tied: p = %g, want 1", p)
	}
}

// scripts/optuna-sampler.py answers the ask-and-tell protocol the benchmark speaks: every suggestion
// lies in its parameter's range or list, a failed trial is taken, and studies follow one another in
// one process.
func TestOptunaSamplerProtocol(t *testing.T) {
	if why := optunaAvailable(); why != "" {
		t.Skip(why)
	}
	opt := startOptunaSampler(t)
	space := []samplerParam{floatParam("x", -2, 3), {Name: "lr", Choices: []float64{1e-4, 3e-4, 1e-3}}}
	for _, name := range []string{"tpe", "tpe-multivariate", "random", "tpe-fixed", "tpe-multivariate-fixed"} {
		told := 0
		rs := opt.search(t, name, 7, 14, space, false, func(p map[string]any) float64 {
			told++
			if told == 3 {
				return math.NaN() // a failed trial
			}
			x := p["x"].(float64)
			return (x - 1) * (x - 1)
		})
		if len(rs) != 14 {
			t.Fatalf("%s: %d suggestions, want 14", name, len(rs))
		}
		for _, r := range rs {
			x, lr := r.Params["x"].(float64), r.Params["lr"].(float64)
			if x < -2 || x > 3 || !slices.Contains(space[1].Choices, lr) {
				t.Errorf("%s: suggestion %v outside the space", name, r.Params)
			}
		}
	}
}

// ask reads the study's suggestion i of budget: {"params": {...}}.
func (s *optunaSampler) ask(t *testing.T, i, budget int) (asked struct {
	Params map[string]float64 `json:"params"`
}) {
	t.Helper()
	if !s.out.Scan() {
		t.Fatalf("optuna-sampler.py ended after %d of %d trials: %v", i, budget, s.out.Err())
	}
	if err := json.Unmarshal(s.out.Bytes(), &asked); err != nil {
		t.Fatalf("optuna-sampler.py: %v: %s", err, s.out.Bytes())
	}
	return asked
}
