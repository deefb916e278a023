package scheduler_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/diagnostics"
)

// The peers' pruners by their own code: scripts/optuna-replay.py drives Optuna's MedianPruner (as RL
// Baselines3 Zoo sets it up), SuccessiveHalvingPruner and HyperbandPruner over a recorded grid with
// Replay's clock and arrival orders; the Go side judges what they completed with Outcome.judge.

const optunaPython = "/usr/bin/python3"

// optunaAvailable says why the replay cannot run Optuna, or "" when /usr/bin/python3 imports it.
func optunaAvailable() string {
	out, err := exec.Command(optunaPython, "-c", "import optuna").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s cannot import optuna (%v: %s); install it with: apt-get install python3-optuna",
			optunaPython, err, strings.TrimSpace(string(out)))
	}
	return ""
}

// optunaResult is what scripts/optuna-replay.py writes.
type optunaResult struct {
	Optuna      string         `json:"optuna"`
	Pruner      string         `json:"pruner"`
	Settings    map[string]any `json:"settings"`
	Grouped     bool           `json:"grouped"`
	Evaluations int            `json:"evaluations"`
	Every       int64          `json:"every"`
	Orders      []struct {
		StepsUsed   int64   `json:"steps_used"`
		StepsFull   int64   `json:"steps_full"`
		Saved       float64 `json:"saved"`
		UnitsEnded  int     `json:"units_ended"`
		UnitsPruned int     `json:"units_pruned"`
		Completed   []struct {
			Config int     `json:"config"`
			Seeds  []int64 `json:"seeds"`
			Value  float64 `json:"value"`
		} `json:"completed"`
	} `json:"orders"`
}

// ReplayOptuna replays Optuna's pruner (median-rlzoo, sha or hyperband) over the grid recorded in file
// (loaded as g) in each of orders, slots runs at once, quantum steps a tick, with evaluations a run (0:
// RL Zoo's, one every 100,000 steps), and judges each order's
// completed units as Replay does. It checks that the script saw the grid as Load does: the same full
// budget, and for every completed unit the value Go computes (the windowed objective at the budget,
// the IQM over seeds when grouped).
func ReplayOptuna(g *Grid, file, pruner string, grouped bool, evaluations int, orders [][]int, slots int, quantum int64) ([]Outcome, *optunaResult, error) {
	dir, err := os.MkdirTemp("", "optuna-replay")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	in := map[string]any{"orders": orders, "slots": slots, "quantum": quantum}
	if evaluations > 0 {
		in["evaluations"] = evaluations
	}
	cfg, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, nil, err
	}
	args := []string{"../scripts/optuna-replay.py", "--grid", file, "--config", cfgPath, "--pruner", pruner}
	if grouped {
		args = append(args, "--grouped")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(optunaPython, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %v: %s", optunaPython, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var res optunaResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, nil, fmt.Errorf("optuna-replay.py output: %w", err)
	}
	if len(res.Orders) != len(orders) {
		return nil, nil, fmt.Errorf("optuna-replay.py answered %d orders, want %d", len(res.Orders), len(orders))
	}
	var full int64
	for _, runs := range g.Configs {
		full += int64(len(runs)) * g.Steps
	}
	name := fmt.Sprintf("Optuna %s %s (per run)", res.Optuna, pruner)
	if grouped {
		name = fmt.Sprintf("Optuna %s %s (seeds grouped)", res.Optuna, pruner)
	}
	var outs []Outcome
	for i, o := range res.Orders {
		if o.StepsFull != full || o.StepsUsed > full || o.StepsUsed <= 0 {
			return nil, nil, fmt.Errorf("order %d: the script used %d of %d steps, want at most %d of %d", i, o.StepsUsed, o.StepsFull, full, full)
		}
		out := Outcome{Rule: name, StepsUsed: o.StepsUsed, StepsFull: full, Saved: 1 - float64(o.StepsUsed)/float64(full),
			UnitsEnded: o.UnitsEnded, UnitsPruned: o.UnitsPruned}
		done := map[int][]*Run{}
		for _, c := range o.Completed {
			if c.Config < 0 || c.Config >= len(g.Configs) {
				return nil, nil, fmt.Errorf("order %d: completed configuration %d, the grid has %d", i, c.Config, len(g.Configs))
			}
			var runs []*Run
			var vals []float64
			for _, s := range c.Seeds {
				for _, r := range g.Configs[c.Config] {
					if r.Seed == s {
						runs = append(runs, r)
						if v, ok := r.Windowed(g.Steps); ok {
							vals = append(vals, v)
						}
					}
				}
			}
			if len(runs) != len(c.Seeds) || len(vals) == 0 {
				return nil, nil, fmt.Errorf("order %d: completed configuration %d seeds %v: not in the grid, or no value", i, c.Config, c.Seeds)
			}
			if want := diagnostics.IQM(vals); math.Abs(c.Value-want) > 1e-9*math.Max(1, math.Abs(want)) {
				return nil, nil, fmt.Errorf("order %d: configuration %d seeds %v told %v, Go's windowed value is %v", i, c.Config, c.Seeds, c.Value, want)
			}
			done[c.Config] = append(done[c.Config], runs...)
		}
		out.judge(g, done)
		outs = append(outs, out)
	}
	return outs, &res, nil
}

// replayRow is one line of TestPruneReplay's table for a rule's outcomes over the orders.
func replayRow(env, name string, outs []Outcome) string {
	var saved []float64
	var ranks []int
	inTop3, infeasible, lost := 0, 0, 0
	for _, out := range outs {
		saved = append(saved, out.Saved)
		if out.BestInTop3 {
			inTop3++
		}
		if out.BestRank == 0 {
			lost++
		} else {
			ranks = append(ranks, out.BestRank)
		}
		infeasible += out.Infeasible
	}
	sort.Float64s(saved)
	sort.Ints(ranks)
	rank := "never completed"
	if len(ranks) > 0 {
		rank = fmt.Sprintf("%d (%d–%d)", ranks[len(ranks)/2], ranks[0], ranks[len(ranks)-1])
		if lost > 0 {
			rank += fmt.Sprintf(", not completed in %d", lost)
		}
	}
	return fmt.Sprintf("| %s | %s | %.1f%% (%.1f–%.1f%%) | %d of %d | %s | %d |", env, name,
		100*saved[len(saved)/2], 100*saved[0], 100*saved[len(saved)-1], inTop3, len(outs), rank, infeasible)
}

// TestPruneReplayOptuna (docs/BENCHMARKS.md, "Prune replay", Optuna's own pruners): Optuna's
// MedianPruner as RL Zoo sets it up, SuccessiveHalvingPruner and HyperbandPruner replayed by
// scripts/optuna-replay.py over each recorded grid in TestPruneReplay's 10 arrival orders (8 runs at
// once, steps/200 a tick), per run and with seeds grouped, at RL Zoo's evaluations (one every 100,000
// steps) and, for SuccessiveHalving and Hyperband, at one every 25,000, beside the Go model of RL Zoo's median
// (OptunaMedianRLZoo) on the same orders. The Go model must agree with Optuna's own MedianPruner in
// every order: the same env-steps used and the same configurations completed.
func TestPruneReplayOptuna(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Optuna in /usr/bin/python3 20 times (about a minute on 2 cores); run without -short")
	}
	if why := optunaAvailable(); why != "" {
		t.Skip(why)
	}
	files, _ := filepath.Glob("testdata/ppo-grid/*.jsonl.gz")
	if len(files) == 0 {
		t.Fatal("no recorded grid in scheduler/testdata/ppo-grid (go run ./scripts/ppo-grid)")
	}
	var lines []string
	for _, f := range files {
		g, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if !g.OneBudget() {
			continue // a grid with a total_steps axis: not a pruning grid
		}
		var runOrders, configOrders [][]int
		var model []Outcome
		for seed := uint64(1); seed <= 10; seed++ {
			runOrders = append(runOrders, Order(g, false, seed))
			configOrders = append(configOrders, Order(g, true, seed))
			model = append(model, Replay(g, NewOptunaMedianRLZoo(g.Steps), runOrders[len(runOrders)-1], 8, g.Steps/200))
		}
		lines = append(lines, replayRow(g.Env, "Go model: "+NewOptunaMedianRLZoo(g.Steps).Name(), model))
		// RL Zoo's schedule (one evaluation every 100,000 steps) for the three; SuccessiveHalving and
		// Hyperband also at one every 25,000 (RL Zoo's --eval-freq default outside a search).
		type replay struct {
			pruner      string
			evaluations int
		}
		dense := int(g.Steps / 25_000)
		for _, r := range []replay{{"median-rlzoo", 0}, {"sha", 0}, {"hyperband", 0}, {"sha", dense}, {"hyperband", dense}} {
			for _, grouped := range []bool{false, true} {
				orders := runOrders
				if grouped {
					orders = configOrders
				}
				outs, res, err := ReplayOptuna(g, f, r.pruner, grouped, r.evaluations, orders, 8, g.Steps/200)
				if err != nil {
					t.Fatalf("%s, %s: %v", g.Env, r.pruner, err)
				}
				settings, _ := json.Marshal(res.Settings)
				mode := "per run"
				if grouped {
					mode = "seeds grouped"
				}
				lines = append(lines, replayRow(g.Env, fmt.Sprintf("Optuna %s %s %s, %d evaluations (%s)",
					res.Optuna, r.pruner, settings, res.Evaluations, mode), outs))
				if r.pruner != "median-rlzoo" || grouped {
					continue
				}
				for i := range outs {
					if outs[i].StepsUsed != model[i].StepsUsed || fmt.Sprint(outs[i].Top) != fmt.Sprint(model[i].Top) {
						t.Errorf("%s order %d: Optuna's MedianPruner as RL Zoo used %d steps and completed %v; the Go model (OptunaMedianRLZoo) %d and %v",
							g.Env, i+1, outs[i].StepsUsed, outs[i].Top, model[i].StepsUsed, model[i].Top)
					}
				}
			}
		}
	}
	t.Log("\n| grid | rule | env-steps saved, median (range) | best in top 3 | best configuration's rank, median (range) | infeasible configurations trained to the end |\n|---|---|---|---|---|---|\n" +
		strings.Join(lines, "\n"))
}

// RL Zoo's TrialEvalCallback reports its evaluations as Optuna steps 1, 2, …, and MedianPruner skips
// only the steps below n_warmup_steps (n_evaluations // 3, 1 for 5 evaluations): a trial below the
// median is pruned at its first evaluation, once the clock has passed it (100,000 steps: at 100,000 with
// 2,500 steps a tick, at 102,000 with 3,000).
func TestOptunaMedianFirstEvaluation(t *testing.T) {
	g := synthetic(12, 1, 50, 500_000, func(c int) float64 { return float64(c) })
	for _, tc := range []struct{ quantum, at int64 }{{2500, 100_000}, {3000, 102_000}} {
		out := Replay(g, NewOptunaMedianRLZoo(g.Steps), []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 1, tc.quantum)
		if want := 10*500_000 + 2*tc.at; out.UnitsPruned != 2 || out.StepsUsed != want {
			t.Errorf("%d steps a tick: pruned %d, used %d steps; want the 2 worst pruned at the first evaluation (%d steps), %d steps",
				tc.quantum, out.UnitsPruned, out.StepsUsed, tc.at, want)
		}
	}
}
