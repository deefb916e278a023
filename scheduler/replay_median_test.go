package scheduler_test

import (
	"testing"
)

// TestMedianAtEqualSelection compares rlsweep's median rule with Optuna's MedianPruner as RL Zoo sets it
// up at equal selection: RL Zoo's two settings (n_startup_trials, n_warmup_steps) varied over a grid, so
// that some of its variants pick a configuration within the best's noise as often as rlsweep's median
// does; the most those variants save is what RL Zoo's rule saves at rlsweep's selection. Pause mode, 10
// arrival orders, 8 runs at once, as TestPruneReplay; the variants are the Go model of Optuna's
// MedianPruner that TestPruneReplayOptuna checks against Optuna's own at RL Zoo's setting. The test fails
// when a variant picks at least as well as rlsweep's median and saves more on a grid.
// docs/BENCHMARKS.md, "Median at equal selection".
func TestMedianAtEqualSelection(t *testing.T) {
	for _, g := range recordedGrids(t) {
		type row struct {
			name  string
			saved []float64
			picks int
		}
		replay := func(mk func() Rule) row {
			var r row
			for seed := uint64(1); seed <= 10; seed++ {
				rule := mk()
				r.name = rule.Name()
				out := Replay(g, rule, Order(g, rule.Seeds(), seed), 8, g.Steps/200)
				r.saved = append(r.saved, out.Saved)
				if out.PickInNoise {
					r.picks++
				}
			}
			return r
		}
		ours := replay(func() Rule {
			r, err := NewPruning("{type: median}", g.Steps)
			if err != nil {
				t.Fatal(err)
			}
			return r
		})
		t.Logf("| %s | rlsweep median (pause) | %s | %d of 10 |", g.Env, medianRange(ours.saved, "%.1f%%", 100), ours.picks)
		evals := int(max(1, g.Steps/100_000))
		var best, most *row // the variant saving most at rlsweep's selection; the best-picking one
		for _, startup := range []int{5, 10, 20, 30, 40} {
			for warmup := 0; warmup < evals; warmup++ {
				r := replay(func() Rule { return NewOptunaMedianWith(g.Steps, startup, warmup) })
				if most == nil || r.picks > most.picks || r.picks == most.picks && mid(r.saved) > mid(most.saved) {
					most = &r
				}
				mark := ""
				if r.picks >= ours.picks {
					if best == nil || mid(r.saved) > mid(best.saved) {
						best = &r
					}
					mark = " (picks as well)"
				}
				t.Logf("| %s | n_startup_trials %d, n_warmup_steps %d%s | %s | %d of 10 |", g.Env, startup, warmup, mark,
					medianRange(r.saved, "%.1f%%", 100), r.picks)
			}
		}
		if best == nil {
			t.Logf("%s: no variant of RL Zoo's setup picks within the best's noise in %d of 10 orders; the best picking, %s, in %d of 10, saving %.1f%% (rlsweep's median %.1f%%)",
				g.Env, ours.picks, most.name, most.picks, 100*mid(most.saved), 100*mid(ours.saved))
			continue
		}
		t.Logf("%s: at rlsweep's selection (%d of 10), RL Zoo's rule saves at most %.1f%% (%s); rlsweep's median %.1f%%",
			g.Env, ours.picks, 100*mid(best.saved), best.name, 100*mid(ours.saved))
		if mid(best.saved) > mid(ours.saved) {
			t.Errorf("%s: %s picks within the noise in %d of 10 orders and saves %.1f%%, more than rlsweep's median (%.1f%%, %d of 10)",
				g.Env, best.name, best.picks, 100*mid(best.saved), 100*mid(ours.saved), ours.picks)
		}
	}
}
