package diagnostics

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// Synthetic runs shaped like the misses of real SB3, ML-Agents and classic-control runs (discrete and
// continuous; progress.csv's smoothed means and monitor.csv's per-episode returns) and the healthy runs
// beside them that the same rules must leave alone. Fixed seeds.

// wantStop feeds records and checks the first stop is by rule (or no stop, for rule "").
func wantStop(t *testing.T, name string, cfg Config, records []metrics.Record, rule string) Verdict {
	t.Helper()
	v, stopped := feed(t, cfg, records)
	switch {
	case rule == "" && stopped:
		t.Errorf("%s: stopped %v, want no stop", name, v)
	case rule != "" && (!stopped || v.Rule != rule):
		t.Errorf("%s: got %v (stopped %v), want a %s stop", name, v, stopped, rule)
	}
	return v
}

// A categorical policy that never learns: MountainCar's return is −200 in every episode (no success, so
// every advantage is 0) and the entropy stays at log(3). Stopped by never_learned_entropy once half the
// run is behind it, whether the number of actions is known or not; the same run whose return takes off
// at 30 % of its steps, or whose entropy falls to a third of its maximum, is not.
func TestCategoricalNeverLearned(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, step = 200, 2048
	mountainCar := func(takeOff int, entropyEnd float64) []metrics.Record {
		return series(n, step, func(i int) map[string]float64 {
			reward := -200.0
			if takeOff > 0 && i >= takeOff {
				reward = -200 + math.Min(90, float64(i-takeOff)*3) + 5*rng.NormFloat64()
			}
			h := math.Log(3) + (entropyEnd-math.Log(3))*float64(i)/n - 0.01*rng.Float64()
			return map[string]float64{metrics.Reward: reward, metrics.Entropy: h, metrics.ValueLoss: 1e-3,
				metrics.ApproxKL: 1e-4, metrics.ClipFraction: 0}
		})
	}
	cfg := Config{TotalSteps: n * step}
	v := wantStop(t, "flat return, entropy at its maximum", cfg, mountainCar(0, math.Log(3)), RuleNeverLearnedEntropy)
	if v.Step < n*step/2 {
		t.Errorf("never_learned_entropy stopped at step %d, before half the run (%d)", v.Step, n*step/2)
	}
	cfg.Actions = 3
	wantStop(t, "flat return, entropy at log(3), 3 actions known", cfg, mountainCar(0, math.Log(3)), RuleNeverLearnedEntropy)
	cfg.Actions = 16 // log(16) = 2.77: an entropy of 1.1 is far from its maximum
	wantStop(t, "flat return, entropy well below log(16)", cfg, mountainCar(0, math.Log(3)), "")
	cfg.Actions = 0
	wantStop(t, "return takes off at 30 %", cfg, mountainCar(60, math.Log(3)), "")
	wantStop(t, "entropy falls to a third", cfg, mountainCar(0, math.Log(3)/3), "")
}

// A categorical policy's entropy that collapsed far below its maximum is judged against that maximum: an
// SB3 policy over ~1,800 actions (entropy 7.49 at the start) that sits at 0.03 with its return pinned at
// −100 is stopped by entropy_collapse (the 0.01 limit alone would never see it); the same entropy on a
// two-action policy (maximum 0.69) is not below 1 % of it.
func TestEntropyCollapseAgainstItsMaximum(t *testing.T) {
	pinned := func(h0 float64) []metrics.Record {
		return series(200, 500, func(i int) map[string]float64 {
			h := h0
			if i > 0 {
				h = 0.03
			}
			return map[string]float64{metrics.Reward: -100, metrics.Entropy: h, metrics.ValueLoss: 0, metrics.ApproxKL: 0}
		})
	}
	cfg := Config{TotalSteps: 200 * 500, Rules: map[string]RuleConfig{RuleNeverLearnedEntropy: {Level: LevelOff}}}
	wantStop(t, "entropy 7.49 → 0.03", cfg, pinned(7.49), RuleEntropyCollapse)
	wantStop(t, "entropy 0.69 → 0.03", cfg, pinned(0.69), "")
}

// floorCollapse is a return that starts at the task's floor (0: a random policy's score), climbs to 100
// by a quarter of the run, holds, and from fallAt falls to what is left × 100 (never below 0). noise is
// the per-record noise at the top: 2 for a smoothed mean (progress.csv), 40 for per-episode returns
// (monitor.csv), whose spread grows with the level (a random Breakout policy scores 0–3, a trained one
// 5–25); it is a tenth of that at the floor.
func floorCollapse(seed uint64, n int, fallAt int, left, noise float64) []metrics.Record {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	return series(n, 1000, func(i int) map[string]float64 {
		level := 100 * math.Min(1, float64(i)/(float64(n)/4))
		if fallAt > 0 && i >= fallAt {
			level = 100 * (left + (1-left)*math.Max(0, 1-float64(i-fallAt)/20))
		}
		sd := noise * (0.1 + 0.9*level/100)
		return map[string]float64{metrics.Reward: math.Max(0, level+sd*rng.NormFloat64()), metrics.ValueLoss: 1}
	})
}

// A collapse whose start is the task's floor: the return loses 99 % of its gain but cannot go below the
// start. Stopped by policy_collapse, on a smoothed mean and on per-episode returns judged by their long
// windows; the same runs without the fall, per-episode noise included, are not.
func TestCollapseFromTheFloor(t *testing.T) {
	cfg := Config{TotalSteps: 2000 * 1000}
	wantStop(t, "smoothed, 99 % of the gain lost", cfg, floorCollapse(1, 2000, 1000, 0.01, 2), RulePolicyCollapse)
	wantStop(t, "per-episode, 99 % of the gain lost", cfg, floorCollapse(2, 2000, 1000, 0.01, 40), RulePolicyCollapse)
	for seed := uint64(3); seed < 8; seed++ {
		wantStop(t, "smoothed, no fall", cfg, floorCollapse(seed, 2000, 0, 0, 2), "")
		wantStop(t, "per-episode, no fall", cfg, floorCollapse(seed, 2000, 0, 0, 40), "")
	}
}

// A partial collapse: half the gain lost and still down long after. Stopped by partial_collapse (and not
// by policy_collapse, which wants 90 % lost); a run that loses 80 % of its gain for a tenth of the run and
// climbs back (an rsl_rl biped that falls over for 150 of 2,000 iterations), a noisy plateau whose
// windows swing by half the gain, and a run holding 75 % of its gain are not.
func TestPartialCollapse(t *testing.T) {
	cfg := Config{TotalSteps: 2000 * 1000}
	v := wantStop(t, "half the gain lost for the second half", cfg, floorCollapse(11, 2000, 1000, 0.45, 2), RulePartialCollapse)
	if v.Step >= 1900*1000 {
		t.Errorf("partial_collapse at step %d: too late to save anything", v.Step)
	}
	wantStop(t, "per-episode, 60 % of the gain lost", cfg, floorCollapse(12, 2000, 800, 0.4, 40), RulePartialCollapse)
	wantStop(t, "a quarter of the gain lost", cfg, floorCollapse(13, 2000, 1000, 0.75, 2), "")
	rng := rand.New(rand.NewPCG(14, 15))
	dip := series(2000, 1000, func(i int) map[string]float64 {
		level := 150 * math.Min(1, float64(i)/250)
		if i >= 300 && i < 450 {
			level = 30
		}
		return map[string]float64{metrics.Reward: level + 10*rng.NormFloat64(), metrics.ValueLoss: 1}
	})
	wantStop(t, "a deep dip that recovers", cfg, dip, "")
	plateau := series(2000, 1000, func(i int) map[string]float64 {
		level := 80 * math.Min(1, float64(i)/300)
		return map[string]float64{metrics.Reward: level + 20*math.Sin(float64(i)/40) + 8*rng.NormFloat64(), metrics.ValueLoss: 1}
	})
	wantStop(t, "a plateau swinging by half its gain", cfg, plateau, "")
}

// An action std that grows several-fold after an early gain: the return climbs to 50 by a fifth of the
// run, then gives back 40 % of it while the std climbs 1 → 4 and keeps rising. never_learned does not
// judge it (half of the gain is held) and std_explosion waits for 10×; std_runaway stops it. The same
// std growth with a return that keeps climbing (a Go1 run whose std reaches 5 at a return of 32) is
// left alone.
func TestStdRunawayAfterEarlyGain(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n = 1000
	run := func(decay bool) []metrics.Record {
		return series(n, 1000, func(i int) map[string]float64 {
			reward := 50 * math.Min(1, float64(i)/200)
			if decay && i > 250 {
				reward = 50 - 20*math.Min(1, float64(i-250)/200)
			} else if !decay {
				reward = 50 * float64(i) / n
			}
			std := 1 + 4*float64(i)/n
			return map[string]float64{metrics.Reward: reward + rng.NormFloat64(), metrics.ActionStd: std, metrics.ValueLoss: 1}
		})
	}
	cfg := Config{TotalSteps: n * 1000}
	v := wantStop(t, "std 4× and rising, 40 % of the gain given back", cfg, run(true), RuleStdRunaway)
	if !strings.Contains(v.Advice, "ent_coef") {
		t.Errorf("std_runaway advice %q names no cause", v.Advice)
	}
	wantStop(t, "std 5× while the return climbs", cfg, run(false), "")
}

// Config.Actions must be a real action count.
func TestConfigActions(t *testing.T) {
	for _, a := range []int{-1, 1} {
		_, err := NewEngine(Config{Actions: a})
		if err == nil || !strings.Contains(err.Error(), "actions: got") {
			t.Errorf("Actions %d: got %v, want an error naming actions", a, err)
		}
	}
	if _, err := NewEngine(Config{Actions: 2}); err != nil {
		t.Errorf("Actions 2: %v", err)
	}
}

// A return that climbs steadily but slowly from a large negative level (an SB3 continuous Acrobot from
// −7,990 to −6,270, +340 by a fifth of the run) while its std grows 1 → 4.3 is learning: never_learned,
// whose bar is 10 % of |start| (800), must not stop it before the return passes the bar, nor
// std_runaway while it is at its best.
func TestSlowClimbWithGrowingStdIsNotStopped(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const n = 350
	run := series(n, 1000, func(i int) map[string]float64 {
		return map[string]float64{metrics.Reward: -7990 + 1720*float64(i)/n + 8*rng.NormFloat64(),
			metrics.ActionStd: 1 + 3.3*float64(i)/n, metrics.Entropy: 1.4 + 1.4*float64(i)/n, metrics.ValueLoss: 2}
	})
	wantStop(t, "slow climb, std 1 → 4.3", Config{TotalSteps: n * 1000}, run, "")
}

// An ML-Agents run whose per-summary return swings by ±2 around a climb from −2 to +3 while its
// entropy stays near its start (1.4 → 1.3) improved, though no five-record window passes a bar of
// three times that noise: never_learned_entropy must not stop it.
func TestNoisyClimbAtHighEntropyIsNotStopped(t *testing.T) {
	for seed := uint64(51); seed < 56; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed+1))
		const n = 100
		run := series(n, 50_000, func(i int) map[string]float64 {
			return map[string]float64{metrics.Reward: -2 + 5*float64(i)/n + 1.8*rng.NormFloat64(),
				metrics.Entropy: 1.4 - 0.1*float64(i)/n, metrics.ValueLoss: 0.5}
		})
		wantStop(t, "noisy climb at high entropy", Config{TotalSteps: n * 50_000}, run, "")
	}
}

// A logger's 100-episode buffer repeats its mean while no episode ends: a Go2 run (5,000-step episodes)
// reports exactly 0.5888 for 60 iterations after 17–43, then climbs to 52. A repeated value is no new
// level: policy_collapse's loss of the gain does not count it, and the run is not stopped; the same fall
// with values that move is a collapse.
func TestStaleRepeatedReturnIsNotACollapse(t *testing.T) {
	run := func(stale bool) []metrics.Record {
		return series(400, 1000, func(i int) map[string]float64 {
			level := math.Min(40, float64(i)/4)
			switch {
			case i >= 200 && i < 330 && stale:
				level = 0.5888
			case i >= 200 && i < 330:
				level = 0.5888 + 0.2*math.Sin(float64(i))
			case i >= 330:
				level = 50
			}
			return map[string]float64{metrics.Reward: level, metrics.ValueLoss: 1}
		})
	}
	cfg := Config{TotalSteps: 400 * 1000, Rules: map[string]RuleConfig{RulePartialCollapse: {Level: LevelOff}}}
	wantStop(t, "a stale, repeated return", cfg, run(true), "")
	wantStop(t, "the same fall, moving", cfg, run(false), RulePolicyCollapse)
}

// A return that is numerically zero for the whole run (an rl_games task whose mean return sat between
// 3e-12 and 2.5e-11 for 149 epochs while its entropy fell from 12.8 to 9.1) never learned: zero_return
// stops it once half the run is behind it. A sparse task whose first successes come at 40 % of the run,
// a return that is small but real (1e-4), and a minimised objective at zero (a loss at its best) are not
// stopped by it.
func TestZeroReturn(t *testing.T) {
	const n, step = 150, 65536
	run := func(reward func(i int) float64) []metrics.Record {
		return series(n, step, func(i int) map[string]float64 {
			return map[string]float64{metrics.Reward: reward(i), metrics.Entropy: 12.8 - 3.7*float64(i)/n,
				metrics.ValueLoss: 1e-5}
		})
	}
	cfg := Config{TotalSteps: n * step}
	tiny := func(i int) float64 { return 3e-12 + 2e-11*float64(i%7)/7 }
	v := wantStop(t, "return ~1e-11 for the whole run", cfg, run(tiny), RuleZeroReturn)
	if v.Step < n*step/2 {
		t.Errorf("zero_return stopped at step %d, before half the run (%d)", v.Step, n*step/2)
	}
	wantStop(t, "first successes at 40 %", cfg, run(func(i int) float64 {
		if i >= 60 && i%3 == 0 {
			return 0.05 * float64(i-59)
		}
		return 0
	}), "")
	wantStop(t, "a small but real return", cfg, run(func(i int) float64 { return 1e-4 * (1 + float64(i%5)) }), "")
	cfg.Objective, cfg.Goal = "loss", "minimize"
	flat := series(n, step, func(int) map[string]float64 { return map[string]float64{"loss": 0} })
	wantStop(t, "a minimised objective at zero", cfg, flat, "")
}

// A volatile run whose return falls to 4 % of its gain for 75 records and climbs back (an rl_games
// Bicopter run: 10,400 → 460 → 6,000, its long mean down for 41 records) is not stopped:
// policy_collapse's loss of the gain must hold for a whole long window. The same fall that stays down
// is stopped.
func TestDeepDipThatRecoversIsNotACollapse(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const n = 600
	run := func(recovers bool) []metrics.Record {
		return series(n, 65536, func(i int) map[string]float64 {
			level := math.Min(10000, 100*float64(i))
			switch {
			case i >= 250 && (i < 325 || !recovers):
				level = 400
			case i >= 325:
				level = 6000
			}
			return map[string]float64{metrics.Reward: level * (1 + 0.05*rng.NormFloat64()), metrics.ValueLoss: 1}
		})
	}
	cfg := Config{TotalSteps: n * 65536}
	wantStop(t, "a 75-record dip that recovers", cfg, run(true), "")
	wantStop(t, "the same fall, staying down", cfg, run(false), RulePolicyCollapse)
}

// A policy at its maximum entropy whose return sits flat for 55 % of the run and then climbs (an
// rl_games AllegroHand run flat at −13 for 60 % of its epochs) is not stopped by never_learned_entropy,
// which judges from 60 % of the run on.
func TestLateTakeOffAtMaximumEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const n = 200
	run := series(n, 1600, func(i int) map[string]float64 {
		reward := -13 + 0.5*rng.NormFloat64()
		if i >= 110 {
			reward += 0.3 * float64(i-110)
		}
		return map[string]float64{metrics.Reward: reward, metrics.Entropy: 22.7 - 0.001*float64(i), metrics.ValueLoss: 1}
	})
	wantStop(t, "flat for 55 %, then climbing", Config{TotalSteps: n * 1600}, run, "")
}
