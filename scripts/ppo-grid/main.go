// Command ppo-grid records a full grid of the built-in PPO trainer — every configuration on several
// seeds, each run to its whole budget — as a compact curve file that pruning and search strategies are
// replayed on (the prune-replay and search benchmarks): the reward curve of every run at every record,
// and the verdict of rlsweep's diagnostics with their default settings (the first rule that would have
// stopped the run, and the warnings).
//
//	go run ./scripts/ppo-grid -rlsweep ./rlsweep -env CartPole-v1 -out testdata/ppo-grid -jobs 2
//
// The grids are defined below, each under its name (-env), which names the output file
// (<name>.jsonl.gz); the output file records the grid with the command, the trainer's version and the
// date, so a file says how to make it again.
//
// An axis named total_steps (BudgetParam) varies the training budget: each run trains to its own
// configuration's total_steps (rlsweep train --steps, the trainer's RLSWEEP_TOTAL_STEPS, so its
// learning rate anneals over that budget), its diagnostics are judged with that budget, and its params
// record it. The grid's steps is then the largest budget; a grid without the axis trains every run to
// its steps.
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
)

// BudgetParam is the grid axis that sets a run's training budget in place of the grid's steps.
const BudgetParam = "total_steps"

// grid is one environment's grid: every combination of the values, on every seed.
type grid struct {
	Name   string               `json:"name,omitempty"` // the grid's name when it is not Env's (the file's name)
	Env    string               `json:"env"`
	Steps  int64                `json:"steps"`
	Seeds  []int64              `json:"seeds"`
	Params map[string][]float64 `json:"params"`
}

var grids = map[string]grid{
	// 48 configurations over the five axes of the search benchmarks, 5 seeds each. CartPole-v1 at
	// 100,000 steps: at 500,000 most configurations reach its cap of 500 and tie, which tells no method
	// apart. Pendulum-v1 at 200,000 steps with 8 or 32 environments.
	"CartPole-v1": {Env: "CartPole-v1", Steps: 100_000, Seeds: []int64{1, 2, 3, 4, 5}, Params: map[string][]float64{
		"lr": {3e-4, 1e-3, 3e-3}, "clip": {0.1, 0.3}, "num_envs": {4, 16}, "ent_coef": {0, 0.01}, "gae_lambda": {0.9, 0.98}}},
	"Pendulum-v1": {Env: "Pendulum-v1", Steps: 200_000, Seeds: []int64{1, 2, 3, 4, 5}, Params: map[string][]float64{
		"lr": {3e-4, 1e-3, 3e-3}, "clip": {0.1, 0.3}, "num_envs": {8, 32}, "ent_coef": {0, 0.01}, "gae_lambda": {0.9, 0.98}}},
	"Acrobot-v1": {Env: "Acrobot-v1", Steps: 500_000, Seeds: []int64{1, 2, 3, 4, 5}, Params: map[string][]float64{
		"lr": {3e-4, 1e-3, 3e-3}, "clip": {0.1, 0.3}, "num_envs": {4, 16}, "ent_coef": {0, 0.01}, "gae_lambda": {0.9, 0.98}}},
	// γ 0.99 on every configuration: at the continuous default (0.95) the car never learns to leave
	// the valley and every configuration settles at a return of 0, which tells no method apart.
	"MountainCarContinuous-v0": {Env: "MountainCarContinuous-v0", Steps: 500_000, Seeds: []int64{1, 2, 3, 4, 5}, Params: map[string][]float64{
		"lr": {3e-4, 1e-3, 3e-3}, "clip": {0.1, 0.3}, "num_envs": {4, 16}, "ent_coef": {0, 0.01}, "gae_lambda": {0.9, 0.98},
		"gamma": {0.99}}},
	// 36 configurations, 5 seeds each, with the budget as an axis: learning rate × number of environments
	// × total steps, the rest at the trainer's defaults. Recorded for searches that count what a
	// configuration costs in env-steps (its budget × seeds) and trade return against env-steps to a
	// threshold.
	"Pendulum-v1-budget": {Name: "Pendulum-v1-budget", Env: "Pendulum-v1", Steps: 200_000, Seeds: []int64{1, 2, 3, 4, 5},
		Params: map[string][]float64{"lr": {3e-4, 1e-3, 3e-3}, "num_envs": {4, 8, 16, 32}, BudgetParam: {50_000, 100_000, 200_000}}},
}

// override replaces the grid's seeds (a comma-separated list; "" keeps them) and the values of the
// named axes ("name=v1,v2,..."), so a smaller grid can be recorded; the file's header records the grid
// as run.
func (g *grid) override(seeds string, axes []string) error {
	if seeds != "" {
		var list []int64
		for _, f := range strings.Split(seeds, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return fmt.Errorf("-seeds: got %q, want comma-separated integers such as 1,2", seeds)
			}
			list = append(list, n)
		}
		g.Seeds = list
	}
	params := make(map[string][]float64, len(g.Params)+len(axes))
	for k, v := range g.Params {
		params[k] = v
	}
	for _, a := range axes {
		name, values, ok := strings.Cut(a, "=")
		if !ok || (!slices.Contains(trainer.PPOParamNames(), name) && name != BudgetParam) {
			return fmt.Errorf("-param: got %q, want NAME=V1,V2,... with NAME one of %s or %s", a, strings.Join(trainer.PPOParamNames(), ", "), BudgetParam)
		}
		var list []float64
		for _, f := range strings.Split(values, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return fmt.Errorf("-param: got %q, want numbers after %s=, comma-separated", a, name)
			}
			if name == BudgetParam && (v < 1 || v != math.Trunc(v)) {
				return fmt.Errorf("-param: got %q, want whole numbers of steps after %s=", a, name)
			}
			list = append(list, v)
		}
		params[name] = list
	}
	g.Params = params
	if b := params[BudgetParam]; len(b) > 0 {
		g.Steps = int64(slices.Max(b))
	}
	return nil
}

// budget is the number of steps a configuration trains for: its total_steps, else the grid's steps.
func (g grid) budget(params map[string]float64) int64 {
	if v, ok := params[BudgetParam]; ok {
		return int64(v)
	}
	return g.Steps
}

// configs lists the grid's configurations in a fixed order (parameter names sorted, values as given).
func (g grid) configs() []map[string]float64 {
	names := make([]string, 0, len(g.Params))
	for k := range g.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	out := []map[string]float64{{}}
	for _, n := range names {
		var next []map[string]float64
		for _, c := range out {
			for _, v := range g.Params[n] {
				m := maps(c)
				m[n] = v
				next = append(next, m)
			}
		}
		out = next
	}
	return out
}

func maps(m map[string]float64) map[string]float64 {
	c := make(map[string]float64, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// run is one recorded run: a configuration on a seed.
type run struct {
	Config   int                `json:"config"`
	Params   map[string]float64 `json:"params"`
	Seed     int64              `json:"seed"`
	Steps    []int64            `json:"steps"`
	Reward   []metrics.Float    `json:"reward"`             // NaN and ±Inf as strings
	Stop     *stop              `json:"stop,omitempty"`     // the first stop verdict, if a rule would have stopped it
	Warnings map[string]int64   `json:"warnings,omitempty"` // each warning rule's first step
	Seconds  float64            `json:"seconds"`
}

type stop struct {
	Rule string `json:"rule"`
	Step int64  `json:"step"`
}

// header is the file's first line.
type header struct {
	Grid    grid      `json:"grid"`
	Command string    `json:"command"`
	Version string    `json:"version"`
	Date    time.Time `json:"date"`
	Runs    int       `json:"runs"`
}

func main() {
	bin := flag.String("rlsweep", "rlsweep", "the rlsweep binary whose built-in trainer is recorded")
	env := flag.String("env", "CartPole-v1", "environment: "+strings.Join(envNames(), ", "))
	out := flag.String("out", ".", "directory of the output file (<env>.jsonl.gz)")
	jobs := flag.Int("jobs", runtime.NumCPU(), "runs at once")
	steps := flag.Int64("steps", 0, "steps per run (0: the grid's); not with a total_steps axis")
	seeds := flag.String("seeds", "", "comma-separated seeds in place of the grid's, e.g. 1,2")
	var axes []string
	flag.Func("param", "NAME=V1,V2,...: the values of one grid axis in place of the grid's (repeatable; a name not in the grid adds an axis)", func(v string) error {
		axes = append(axes, v)
		return nil
	})
	flag.Parse()
	g, ok := grids[*env]
	if !ok {
		fail("-env: got %q, want one of %s", *env, strings.Join(envNames(), ", "))
	}
	if err := g.override(*seeds, axes); err != nil {
		fail("%v", err)
	}
	if *jobs < 1 {
		fail("-jobs: got %d, want at least 1", *jobs)
	}
	if *steps > 0 {
		if _, ok := g.Params[BudgetParam]; ok {
			fail("-steps: the grid has a %s axis, which sets each run's budget; change it with -param %s=...", BudgetParam, BudgetParam)
		}
		g.Steps = *steps
	}
	version := "unknown"
	if info, err := buildinfo.ReadFile(*bin); err == nil {
		version = info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				version = s.Value
			}
		}
	}
	configs := g.configs()
	type job struct {
		config int
		seed   int64
	}
	var todo []job
	for i := range configs {
		for _, s := range g.Seeds {
			todo = append(todo, job{i, s})
		}
	}
	runs := make([]run, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	var mu sync.Mutex
	done := 0
	for w := 0; w < *jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := todo[i]
				r, err := record(*bin, g, configs[j.config], j.seed)
				if err != nil {
					fail("config %d seed %d: %v", j.config, j.seed, err)
				}
				r.Config = j.config
				runs[i] = r
				mu.Lock()
				done++
				fmt.Fprintf(os.Stderr, "%d/%d config %d seed %d: final reward %.1f stop %v (%.0f s)\n",
					done, len(todo), j.config, j.seed, last(r.Reward), r.Stop, r.Seconds)
				mu.Unlock()
			}
		}()
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	path := filepath.Join(*out, *env+".jsonl.gz")
	if err := write(path, header{Grid: g, Command: "go run ./scripts/ppo-grid " + strings.Join(os.Args[1:], " "), Version: version,
		Date: time.Now().UTC().Truncate(time.Second), Runs: len(runs)}, runs); err != nil {
		fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d runs\n", path, len(runs))
}

func envNames() []string {
	var out []string
	for k := range grids {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func last(x []metrics.Float) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return float64(x[len(x)-1])
}

// record trains one configuration on one seed under the trainer contract and reads its records back.
func record(bin string, g grid, params map[string]float64, seed int64) (run, error) {
	dir, err := os.MkdirTemp("", "ppo-grid-")
	if err != nil {
		return run{}, err
	}
	defer os.RemoveAll(dir)
	metricsPath := filepath.Join(dir, "metrics.jsonl")
	steps := g.budget(params)
	args := []string{"train", "--env", g.Env, "--steps", fmt.Sprint(steps), "--seed", fmt.Sprint(seed)}
	for k, v := range params {
		if k != BudgetParam {
			args = append(args, "--set", fmt.Sprintf("%s=%g", k, v))
		}
	}
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = append(os.Environ(), trainer.EnvMetricsFile+"="+metricsPath, trainer.EnvCheckpointDir+"="+dir)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		return run{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, b)
	}
	r := run{Params: params, Seed: seed, Seconds: math.Round(time.Since(start).Seconds()*10) / 10}
	engine, err := diagnostics.NewEngine(diagnostics.Config{TotalSteps: steps, Objective: "reward", Goal: "maximize",
		Actions: trainer.BuiltinEnvActions(g.Env)}) // as a sweep of the built-in trainer judges it
	if err != nil {
		return run{}, err
	}
	f, err := os.Open(metricsPath)
	if err != nil {
		return run{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rec, err := metrics.ParseJSONLine(sc.Bytes())
		if err != nil {
			continue
		}
		reward, ok := rec.Values["reward"]
		if !ok {
			continue
		}
		r.Steps = append(r.Steps, rec.Step)
		r.Reward = append(r.Reward, metrics.Float(round4(reward)))
		v := engine.Observe(rec)
		switch {
		case v.Level == diagnostics.Stop && r.Stop == nil:
			r.Stop = &stop{Rule: v.Rule, Step: rec.Step}
		case v.Level == diagnostics.Warn:
			if r.Warnings == nil {
				r.Warnings = map[string]int64{}
			}
			if _, seen := r.Warnings[v.Rule]; !seen {
				r.Warnings[v.Rule] = rec.Step
			}
		}
	}
	return r, sc.Err()
}

// round4 keeps four significant digits: the curves' noise is far larger, and the file stays small.
func round4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

func write(path string, h header, runs []run) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "ppo-grid: "+format+"\n", a...)
	os.Exit(2)
}
