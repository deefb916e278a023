package scheduler_test

import (
	"fmt"
	"slices"
	"testing"
)

// TestParetoPruneReplay replays asha over the four recorded grids of one budget with the three
// objectives of TestParetoSearch (return, env_steps to the grid's median return, seed_failure_rate):
// asha judging configurations on return alone, as a sweep of one objective does, against asha keeping
// each rung's Pareto front, as a sweep of several objectives does. Per rule and grid, over 10 arrival
// orders (8 runs at once, a configuration's 5 seeds together, Replay): the env-steps saved; the share
// of the grid front's hypervolume that the front of the configurations trained to the end covers
// (paretoTask.evaluate: scaled over the grid's feasible configurations, reference 1.1); and how many
// of the grid front's configurations were stopped. Each grid twice: the threshold at the median of its
// feasible configurations' returns, as TestParetoSearch sets it, and at their lower quartile, reached
// earlier. docs/BENCHMARKS.md, "Pareto pruning".
func TestParetoPruneReplay(t *testing.T) {
	for _, c := range []struct {
		env string
		q   float64
	}{{"CartPole-v1", -1}, {"Pendulum-v1", -1}, {"Acrobot-v1", -1}, {"MountainCarContinuous-v0", -1},
		{"CartPole-v1", 0.25}, {"Pendulum-v1", 0.25}, {"Acrobot-v1", 0.25}, {"MountainCarContinuous-v0", 0.25}} {
		env := c.env
		pt := loadParetoTaskAt(t, env, c.q)
		g := pt.gt.grid
		var gridFront []int
		_, keys := pt.evaluate(allKeys(pt))
		for c, runs := range g.Configs {
			if slices.Contains(keys, gridKey(runs[0].Params)) {
				gridFront = append(gridFront, c)
			}
		}
		t.Logf("%s: threshold %.4g, grid front %d configurations %v", env, pt.threshold, len(gridFront), gridFront)
		lostAlone := -1 // front configurations stopped with return alone, summed over the orders
		for _, metric := range []string{"", pt.metric} {
			var saved, shares []float64
			lost, atLeast90 := 0, 0
			name := ""
			for seed := uint64(1); seed <= 10; seed++ {
				rule, err := NewFrontPruning("{type: asha}", g.Steps, metric)
				if err != nil {
					t.Fatal(err)
				}
				name = rule.Name()
				out := Replay(g, rule, Order(g, true, seed), 8, g.Steps/200)
				var done []string
				for _, c := range out.Top {
					done = append(done, gridKey(g.Configs[c][0].Params))
				}
				share, _ := pt.evaluate(done)
				saved, shares = append(saved, out.Saved), append(shares, share)
				if share >= 0.9 {
					atLeast90++
				}
				lostHere := 0 // this order's
				for _, c := range gridFront {
					if !slices.Contains(out.Top, c) {
						lostHere++
					}
				}
				lost += lostHere
				if share < 1-1e-9 && len(gridFront) > 0 && lostHere == 0 {
					t.Errorf("%s order %d: share %.3f with every front configuration kept", env, seed, share)
				}
			}
			t.Logf("| %s | %s | %s | %s | %d of 10 | %d of %d |", env, name, medianRange(saved, "%.1f%%", 100),
				medianRange(shares, "%.3f", 1), atLeast90, lost, 10*len(gridFront))
			if metric == "" {
				lostAlone = lost
				continue
			}
			// What the test holds: keeping each rung's front stops no more of the grid's front than
			// judging return alone, and keeps at least 90% of its hypervolume in every order.
			if lost > lostAlone || atLeast90 < 10 {
				t.Errorf("%s (threshold %.4g): with 3 objectives %d front configurations stopped (return alone %d), %d of 10 orders at 90%% of the front's hypervolume",
					env, pt.threshold, lost, lostAlone, atLeast90)
			}
		}
	}
}

// allKeys are the keys of every configuration of the task's grid.
func allKeys(pt *paretoTask) []string {
	var out []string
	for _, runs := range pt.gt.grid.Configs {
		out = append(out, gridKey(runs[0].Params))
	}
	return out
}

// medianRange writes the median (mid) and range of xs, each times scale, in format.
func medianRange(xs []float64, format string, scale float64) string {
	return fmt.Sprintf(format+" ("+format+"–"+format+")", mid(xs)*scale, slices.Min(xs)*scale, slices.Max(xs)*scale)
}

// mid is the median of xs, the mean of the middle two for an even count.
func mid(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
