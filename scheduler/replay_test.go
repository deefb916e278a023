package scheduler_test

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// synthetic makes a grid of configs × seeds whose run (c, s) has reward level(c) + s at every one of its
// n records, one every total/n steps.
func synthetic(configs, seeds, n int, total int64, level func(c int) float64) *Grid {
	g := &Grid{Env: "synthetic", Steps: total}
	for s := 1; s <= seeds; s++ {
		g.Seeds = append(g.Seeds, int64(s))
	}
	for c := 0; c < configs; c++ {
		var runs []*Run
		for s := 1; s <= seeds; s++ {
			r := &Run{Config: c, Seed: int64(s)}
			for i := 1; i <= n; i++ {
				r.Steps = append(r.Steps, int64(i)*total/int64(n))
				r.Reward = append(r.Reward, metrics.Float(level(c)+float64(s)))
			}
			runs = append(runs, r)
		}
		g.Configs = append(g.Configs, runs)
	}
	return g
}

func TestWindowAndLast(t *testing.T) {
	r := &Run{Steps: []int64{100, 200, 300, 400, 1000}, Reward: []metrics.Float{1, 2, 3, metrics.Float(math.NaN()), 10}}
	if v, ok := r.Window(300); !ok || v != 3 {
		t.Errorf("Window(300) = %v %v, want 3 (the records in (270, 300])", v, ok)
	}
	if _, ok := r.Window(400); ok {
		t.Errorf("Window(400) has a value, want none: its only record in (360, 400] is NaN")
	}
	if v, ok := r.Window(1000); !ok || v != 10 {
		t.Errorf("Window(1000) = %v %v, want 10", v, ok)
	}
	if v, ok := r.Last(250); !ok || v != 2 {
		t.Errorf("Last(250) = %v %v, want 2", v, ok)
	}
	if _, ok := r.Last(50); ok {
		t.Error("Last before the first record has a value")
	}
}

// Ray's ASHA stops a trial at a rung when it is below the 75th percentile of those recorded there before
// it; the first to arrive always goes on.
func TestRayASHACutoff(t *testing.T) {
	g := synthetic(4, 1, 16, 16_000, func(c int) float64 { return float64(c) })
	rule := NewRayASHA()
	out := Replay(g, rule, []int{3, 2, 1, 0}, 1, 1000) // one at a time, best first
	// At rung 1, configs 2, 1 and 0 arrive after better ones: each below the 75th percentile, stopped.
	if out.UnitsPruned != 3 || len(out.Top) != 1 || out.Top[0] == 0 {
		t.Errorf("pruned %d, top %v; want 3 pruned and only config 3 trained to the end", out.UnitsPruned, out.Top)
	}
	if want := 1 - float64(16_000+3*1000)/float64(4*16_000); math.Abs(out.Saved-want) > 1e-9 {
		t.Errorf("saved %.4f, want %.4f", out.Saved, want)
	}
}

// W&B's hyperband stops a run whose value at its last band is worse than that band's threshold, the value
// at position ⌊n/3⌋ of the n runs' values there.
func TestWandBHyperbandThreshold(t *testing.T) {
	g := synthetic(3, 1, 30, 30_000, func(c int) float64 { return float64(10 * c) })
	out := Replay(g, NewWandBHyperband(), []int{2, 1, 0}, 1, 1000)
	// Band 3: config 2 alone (kept); config 1: values {20+1, 10+1}, threshold sorted[0] = 21 → 11 stopped.
	if out.UnitsPruned != 2 || len(out.Top) != 1 || out.Top[0] != 2 {
		t.Errorf("pruned %d, top %v; want configs 1 and 0 stopped", out.UnitsPruned, out.Top)
	}
}

// RL Zoo's MedianPruner prunes nothing before 10 trials completed.
func TestOptunaMedianStartup(t *testing.T) {
	g := synthetic(12, 1, 50, 500_000, func(c int) float64 { return float64(c) })
	order := []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	out := Replay(g, NewOptunaMedianRLZoo(g.Steps), order, 1, 2500)
	if out.UnitsPruned != 2 {
		t.Errorf("pruned %d, want the 2 worst (after the 10 startup trials completed)", out.UnitsPruned)
	}
}

// The replay benchmark on the recorded grids (docs/BENCHMARKS.md, "Prune replay"): each rule over 10
// random arrival orders, 8 runs at once; rlsweep's rules in both early_terminate modes, pause (a seed
// waits at each decision step for its siblings) and stop (ReplayStop: seeds train on past it and are
// stopped together once their configuration is decided).
func TestPruneReplay(t *testing.T) {
	// RLSWEEP_REPLAY_FIRST_RUNG=D puts asha's first rung at total/D on every grid (docs/BENCHMARKS.md,
	// "First rung placement"); the default is asha's own, total/64.
	firstRung, _ := strconv.ParseInt(os.Getenv("RLSWEEP_REPLAY_FIRST_RUNG"), 10, 64)
	for _, g := range recordedGrids(t) {
		asha := "{type: asha}"
		if firstRung > 0 {
			asha = fmt.Sprintf("{type: asha, min_steps: %d}", g.Steps/firstRung)
			t.Logf("asha: early_terminate %s", asha)
		}
		best := g.Best()
		t.Logf("%s: %d configurations × %d seeds, %d steps; best configuration %d (%v)", g.Env, len(g.Configs), len(g.Seeds),
			g.Steps, best[0], g.Configs[best[0]][0].Params)
		type replayer struct {
			name string
			run  func(seed uint64) (Outcome, StopOutcome) // one order's outcome (and, in stop mode, its overshoot)
		}
		peer := func(mk func() Rule) replayer {
			return replayer{mk().Name(), func(seed uint64) (Outcome, StopOutcome) {
				rule := mk()
				return Replay(g, rule, Order(g, rule.Seeds(), seed), 8, g.Steps/200), StopOutcome{}
			}}
		}
		rs := []replayer{
			peer(func() Rule { return NewRayASHA() }),
			peer(func() Rule { return NewOptunaMedianRLZoo(g.Steps) }),
			peer(func() Rule { return NewWandBHyperband() }),
			peer(func() Rule {
				r, err := NewRayASHAAtRungs(asha, g.Steps, 4, false)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}),
			peer(func() Rule {
				r, err := NewRayASHAAtRungs(asha, g.Steps, 4, true)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}),
		}
		for _, et := range []string{asha, "{type: median}"} {
			if _, err := NewPruning(et, g.Steps); err != nil {
				t.Fatalf("early_terminate %s: %v", et, err)
			}
			rs = append(rs, replayer{"rlsweep " + ruleName(et) + " (pause)", func(seed uint64) (Outcome, StopOutcome) {
				rule, _ := NewPruning(et, g.Steps)
				return Replay(g, rule, Order(g, rule.Seeds(), seed), 8, g.Steps/200), StopOutcome{}
			}}, replayer{"rlsweep " + ruleName(et) + " (stop)", func(seed uint64) (Outcome, StopOutcome) {
				out, err := ReplayStop(g, et, Order(g, true, seed), 8, g.Steps/200)
				if err != nil {
					t.Fatalf("stop mode, early_terminate %s: %v", et, err)
				}
				return out.Outcome, out
			}})
		}
		var lines, notes []string
		for _, r := range rs {
			var saved []float64
			var ranks []int
			inTop3, inNoise, infeasible, divergedAfter, lost := 0, 0, 0, 0, 0
			var regrets []float64
			var over, late, lateSteps, full int64
			for seed := uint64(1); seed <= 10; seed++ {
				out, so := r.run(seed)
				if out.StepsUsed > out.StepsFull || out.Saved < 0 {
					t.Fatalf("%s: used %d of %d steps", r.name, out.StepsUsed, out.StepsFull)
				}
				saved = append(saved, out.Saved)
				if out.BestInTop3 {
					inTop3++
				}
				if out.PickInNoise {
					inNoise++
				}
				regrets = append(regrets, out.PickRegret)
				if out.BestRank == 0 {
					lost++
				} else {
					ranks = append(ranks, out.BestRank)
				}
				infeasible += out.Infeasible
				divergedAfter += so.DivergedAfter
				over, late, lateSteps, full = over+so.Overshoot, late+int64(so.Late), lateSteps+so.LateSteps, full+out.StepsFull
			}
			sort.Float64s(saved)
			sort.Ints(ranks)
			med := saved[len(saved)/2]
			// The targets rlsweep's rules are held to on every recorded grid: the env-steps saved
			// (savedTarget), in how many of the 10 orders the pick lies within the best configuration's
			// noise (pickTarget), and never a configuration with a diverged seed trained to the end.
			rl := strings.HasPrefix(r.name, "rlsweep")
			stop := strings.HasSuffix(r.name, "(stop)")
			// A configuration whose seed diverged only after a sibling had completed (stop mode) is
			// counted, but no rule could have stopped that sibling.
			if rl && (inNoise < pickTarget(g, r.name) || med < savedTarget(r.name) || infeasible > divergedAfter) {
				t.Errorf("%s on %s: saved %.1f%% (want %.0f%%), pick within the best's noise in %d of 10 orders (want %d), %d infeasible configurations trained to the end (%d diverged after a sibling completed): below its target",
					r.name, g.Env, 100*med, 100*savedTarget(r.name), inNoise, pickTarget(g, r.name), infeasible, divergedAfter)
			}
			rank := "never completed"
			if len(ranks) > 0 {
				rank = fmt.Sprintf("%d (%d–%d)", ranks[len(ranks)/2], ranks[0], ranks[len(ranks)-1])
				if lost > 0 {
					rank += fmt.Sprintf(", not completed in %d", lost)
				}
			}
			sort.Float64s(regrets)
			lines = append(lines, fmt.Sprintf("| %s | %s | %.1f%% (%.1f–%.1f%%) | %d of 10 | %s | %d of 10 | %.3g (%.3g–%.3g) | %d |", g.Env, r.name,
				100*med, 100*saved[0], 100*saved[len(saved)-1], inTop3, rank, inNoise, regrets[len(regrets)/2], regrets[0], regrets[len(regrets)-1], infeasible))
			if stop {
				notes = append(notes, fmt.Sprintf("%s %s: overshoot %.2f%% of the full grid's env-steps; %d seeds started after their configuration was stopped (%.2f%%); %d configurations with a seed that diverged after a sibling completed",
					g.Env, r.name, 100*float64(over)/float64(full), late, 100*float64(lateSteps)/float64(full), divergedAfter))
			}
		}
		t.Log("\n| grid | rule | env-steps saved, median (range) | best in top 3 | best configuration's rank, median (range) | pick within the best's noise | pick's regret, median (range) | infeasible configurations trained to the end |\n|---|---|---|---|---|---|---|---|\n" +
			strings.Join(lines, "\n") + "\n\n" + strings.Join(notes, "\n"))
	}
}

// In stop mode every seed trains on past a decision step: with both seeds of four configurations
// running at once, the three worse configurations are stopped as their seeds pass asha's first rung
// (1,000 steps), each seed at the step the clock had reached (1,200), 200 past the record that passed.
func TestReplayStopOvershoot(t *testing.T) {
	g := synthetic(4, 2, 64, 64_000, func(c int) float64 { return float64(10 * c) })
	out, err := ReplayStop(g, "{type: asha}", []int{3, 2, 1, 0}, 8, 300)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2*64_000 + 6*1_200); out.StepsUsed != want || out.Overshoot != 6*200 {
		t.Errorf("used %d steps with an overshoot of %d, want %d and %d", out.StepsUsed, out.Overshoot, want, 6*200)
	}
	if len(out.Top) != 1 || out.Top[0] != 3 || out.BestRank != 1 || out.UnitsPruned != 6 || out.Late != 0 {
		t.Errorf("top %v, best ranked %d, %d seeds stopped, %d late; want config 3 alone, ranked 1, 6 stopped, none late",
			out.Top, out.BestRank, out.UnitsPruned, out.Late)
	}
}

// savedTarget is the share of the grid's env-steps rlsweep's rule (named as TestPruneReplay names it)
// must save, median over the 10 orders: asha 70% in pause mode and 60% in stop mode, median 40% and
// 35% (measured 2026-11-28, docs/BENCHMARKS.md: asha 72–88% and 61–82%, median 52–57% and 39–48%).
func savedTarget(rule string) float64 {
	asha, pause := strings.Contains(rule, "asha"), strings.HasSuffix(rule, "(pause)")
	switch {
	case asha && pause:
		return 0.70
	case asha:
		return 0.60
	case pause:
		return 0.40
	}
	return 0.35
}

// pickTarget is in how many of 10 arrival orders rlsweep's rule (named as TestPruneReplay names it) must
// pick a configuration within the full grid's best one's noise (Outcome.PickInNoise): 10 for median in
// pause mode, 9 otherwise; 6 for asha on Acrobot-v1. Acrobot's best configurations learn late: at
// asha's first rungs (total/64 and total/16) their values are noise, and every successive-halving rule
// replayed there loses them in most orders (Ray's ASHA rule at the same rungs keeps a pick within the
// noise in 4–5 of 10, W&B's hyperband in 0); rlsweep's asha keeps one in 6 (pause) and 7 (stop).
func pickTarget(g *Grid, rule string) int {
	switch {
	case strings.Contains(rule, "median") && strings.HasSuffix(rule, "(pause)"):
		return 10
	case strings.Contains(rule, "asha") && g.Env == "Acrobot-v1":
		return 6
	}
	return 9
}
