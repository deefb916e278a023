package scheduler_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// recordedGrids loads every recorded grid of testdata/ppo-grid (scripts/ppo-grid) whose runs share one
// budget (the pruning replays' grids), failing the test when there is none.
func recordedGrids(t *testing.T) []*Grid {
	t.Helper()
	files, _ := filepath.Glob("testdata/ppo-grid/*.jsonl.gz")
	if len(files) == 0 {
		t.Fatal("no recorded grid in scheduler/testdata/ppo-grid (go run ./scripts/ppo-grid)")
	}
	var grids []*Grid
	for _, f := range files {
		g, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if g.OneBudget() {
			grids = append(grids, g)
		}
	}
	if len(grids) == 0 {
		t.Fatal("no recorded grid of one budget in scheduler/testdata/ppo-grid (go run ./scripts/ppo-grid)")
	}
	return grids
}

// TestReplayOrderProof (docs/BENCHMARKS.md, "Prune replay", order): a grid listed with lr first and
// ascending (lr varying slowest, the other parameters as recorded) replayed in stop mode three ways:
// started in listed order (order listed), in the order the product's plan gives it (order shuffled,
// early_terminate's default, over 10 sampler seeds), and in 10 random orders. The planned order must
// save within 10 points of the random orders (median env-steps saved), with its pick within the full
// grid's best configuration's noise (Outcome.PickInNoise) in as many sampler seeds as pickTarget says.
func TestReplayOrderProof(t *testing.T) {
	var lines []string
	for _, g := range recordedGrids(t) {
		ascending := make([]int, len(g.Configs))
		for i := range ascending {
			ascending[i] = i
		}
		lr := func(c int) float64 { return g.Configs[c][0].Params["lr"] }
		sort.SliceStable(ascending, func(a, b int) bool { return lr(ascending[a]) < lr(ascending[b]) })
		for _, et := range []string{"{type: asha}", "{type: median}"} {
			listed, err := ReplayStop(g, et, ascending, 8, g.Steps/200)
			if err != nil {
				t.Fatal(err)
			}
			var planned, random []float64
			plannedInNoise, randomInNoise := 0, 0
			for seed := 1; seed <= 10; seed++ {
				p, err := ReplayStopPlanned(g, et, ascending, int64(seed), 8, g.Steps/200)
				if err != nil {
					t.Fatal(err)
				}
				r, err := ReplayStop(g, et, Order(g, true, uint64(seed)), 8, g.Steps/200)
				if err != nil {
					t.Fatal(err)
				}
				planned, random = append(planned, p.Saved), append(random, r.Saved)
				if p.PickInNoise {
					plannedInNoise++
				}
				if r.PickInNoise {
					randomInNoise++
				}
			}
			pm, rm := median(planned), median(random)
			rule := "rlsweep " + ruleName(et) + " (stop)"
			lines = append(lines, fmt.Sprintf("| %s | %s | %.1f%%, best ranked %d | %.1f%% (%.1f–%.1f%%), pick within the best's noise in %d of 10 | %.1f%% (%.1f–%.1f%%), pick within the best's noise in %d of 10 |",
				g.Env, rule, 100*listed.Saved, listed.BestRank, 100*pm, 100*slices.Min(planned), 100*slices.Max(planned), plannedInNoise,
				100*rm, 100*slices.Min(random), 100*slices.Max(random), randomInNoise))
			if want := pickTarget(g, rule); pm < rm-0.10 || plannedInNoise < want {
				t.Errorf("%s on %s listed lr-ascending, started in plan order: saved %.1f%% (random orders %.1f%%), pick within the best's noise in %d of 10 sampler seeds; want within 10 points and %d of 10",
					rule, g.Env, 100*pm, 100*rm, plannedInNoise, want)
			}
		}
	}
	t.Log("\n| grid | rule | listed order (lr ascending) | plan order (order shuffled), median (range) over 10 sampler seeds | random orders, median (range) |\n|---|---|---|---|---|\n" +
		strings.Join(lines, "\n"))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}
