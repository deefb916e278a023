package diagnostics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// Synthetic runs shaped like the real runs the rules must get right, labelled: each names the runs of
// the corpus of real logs it stands for (their ids in diagnostics/corpus/manifest.tsv; the logs are other
// people's data and stay outside the repository, where make diagnostics-corpus replays them). The curves
// are made here, with fixed seeds.

// feed feeds records to a fresh engine with cfg and returns the first stop, if any.
func feed(t *testing.T, cfg Config, records []metrics.Record) (Verdict, bool) {
	t.Helper()
	e := newEngine(t, cfg)
	for _, r := range records {
		if v := e.Observe(r); v.Level == Stop {
			return v, true
		}
	}
	return Verdict{}, false
}

// series builds n records at steps i·stepSize, each with the values f returns for iteration i.
func series(n int, stepSize int64, f func(i int) map[string]float64) []metrics.Record {
	out := make([]metrics.Record, n)
	for i := range n {
		out[i] = metrics.Record{Step: int64(i) * stepSize, Values: f(i)}
	}
	return out
}

// A solved CartPole: every episode returns 500, the value loss is ~0 and explained variance is noise
// (one stopped trial showed reward 500, value_loss 0.00000, explained_variance −1.53). Nothing stops it,
// even with value_anticorrelated set to stop. Stands for: examples/cartpole.yaml's trials, sb3clip_cartpole_v1_3.
func TestSolvedCartPoleIsNotStopped(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	records := series(400, 512, func(i int) map[string]float64 {
		reward, vl := 20+float64(i)*4, 40.0/float64(i+1)
		if i >= 120 {
			reward, vl = 500, 1e-6*rng.Float64()
		}
		return map[string]float64{metrics.Reward: reward, metrics.ValueLoss: vl, metrics.ExplainedVariance: -3 * rng.Float64(),
			metrics.Entropy: 0.3, metrics.ClipFraction: 0.05}
	})
	for _, level := range []string{"", LevelStop} {
		cfg := Config{TotalSteps: 500_000, WarmupSteps: 50_000,
			Rules: map[string]RuleConfig{RuleValueAnticorrelated: {Level: level}}}
		if v, stopped := feed(t, cfg, records); stopped {
			t.Errorf("value_anticorrelated level %q: stopped %v, want no stop", level, v)
		}
	}
}

// A run at its best return is not diverging: a sustained clip_excess only warns while the objective
// holds its gain, and stops once it has fallen.
func TestDoingWellOnlyWarns(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, Patience: 3, Rules: map[string]RuleConfig{RuleClipExcess: {Level: LevelStop}}})
	step := int64(0)
	obs := func(reward, clip float64) Verdict {
		step++
		return e.Observe(rec(step, metrics.Reward, reward, metrics.ClipFraction, clip))
	}
	for range 5 {
		obs(10, 0.1)
	}
	for range 10 {
		obs(100, 0.1)
	}
	for i := range 10 {
		if v := obs(98, 0.9); v.Level == Stop {
			t.Fatalf("record %d at reward 98 of a best 100: got %v, want a warning only", i, v)
		}
	}
	var v Verdict
	for i := 0; i < 10 && v.Level != Stop; i++ {
		v = obs(20, 0.9)
	}
	if v.Level != Stop || v.Rule != RuleClipExcess {
		t.Errorf("clip_excess after the reward fell to 20: got %v, want a stop", v)
	}
}

// A humanoid locomotion run (rsl_rl-style: per-iteration records, reward from about −6 to +21 over 1,400
// iterations) whose reward dips below its first values early on, while episodes lengthen and penalties
// accumulate, and rises for the rest of the run. No rule may stop it. Stands for: h1gym_h1flat_oct19.
func TestEarlyDipThenClimbIsNotStopped(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	records := series(1400, 24*4096, func(i int) map[string]float64 {
		var reward float64
		switch {
		case i < 40: // a small early rise while the robot learns not to fall at once
			reward = -6 + 0.05*float64(i)
		case i < 250: // episodes lengthen, penalties accumulate: below the start
			reward = -4 - 4*math.Sin(math.Pi*float64(i-40)/210)
		default:
			reward = -4 + 25*(1-math.Exp(-float64(i-250)/300))
		}
		std := 1.0 - 0.5*float64(i)/1400
		return map[string]float64{metrics.Reward: reward + 0.3*rng.NormFloat64(), metrics.ActionStd: std,
			metrics.ValueLoss: 0.05 + 0.02*rng.Float64(), metrics.EpisodeLength: 20 + float64(i)/2}
	})
	if v, stopped := feed(t, Config{TotalSteps: 1400 * 24 * 4096}, records); stopped {
		t.Errorf("stopped %v, want no stop", v)
	}
	// The same run with a std that drifts up to 1.6 during the dip, as exploration grows before it
	// settles: never_learned must not take the dip for a run that never learned either.
	for i := range records {
		records[i].Values[metrics.ActionStd] = 1 + 0.6*math.Min(1, float64(i)/250) - 0.5*math.Max(0, float64(i-250)/1150)
	}
	if v, stopped := feed(t, Config{TotalSteps: 1400 * 24 * 4096}, records); stopped {
		t.Errorf("std rising during the dip: stopped %v, want no stop", v)
	}
}

// legged_gym's most common failed run: Policy/mean_noise_std climbs steadily from 1.0 to 2.5 while the
// reward stays pinned near 0. never_learned stops it; a healthy run whose std shrinks, and one whose std
// grows while its reward climbs, are left alone. Stands for: feil_Sep02_12_44_42, feil_Sep05_18_00_09
// (stopped); stoch_Jan04_11_14_21 (std 1.0 → 5.2 while the reward climbs to 33: left alone).
func TestNeverLearnedNoiseGrowing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cfg := Config{TotalSteps: 1500 * 1000}
	stuck := series(1500, 1000, func(i int) map[string]float64 {
		return map[string]float64{metrics.Reward: 0.02 * rng.NormFloat64(), metrics.ActionStd: 1 + 1.5*float64(i)/1500,
			metrics.ValueLoss: 1e-4}
	})
	v, stopped := feed(t, cfg, stuck)
	if !stopped || v.Rule != RuleNeverLearned {
		t.Fatalf("reward pinned at 0, std 1.0 → 2.5: got %v (stopped %v), want a never_learned stop", v, stopped)
	}
	if frac := float64(v.Step) / 1.5e6; frac > 0.75 {
		t.Errorf("stopped at %.0f%% of the run, want before 75%% (std reaches 2× at 67%%)", 100*frac)
	}
	decays := series(1500, 1000, func(i int) map[string]float64 {
		reward := 2 * math.Exp(-math.Pow(float64(i-150)/80, 2)) // a small peak, then back to 0
		return map[string]float64{metrics.Reward: reward + 0.02*rng.NormFloat64(), metrics.ActionStd: 1 + 1.5*float64(i)/1500}
	})
	// Its fall below the start is a collapse too: either rule may stop it first.
	if v, stopped := feed(t, cfg, decays); !stopped || v.Rule != RuleNeverLearned && v.Rule != RulePolicyCollapse {
		t.Errorf("reward decaying from a small peak, std growing: got %v (stopped %v), want never_learned or policy_collapse", v, stopped)
	}
	for name, f := range map[string]func(i int) map[string]float64{
		"std shrinks, reward climbs": func(i int) map[string]float64 {
			return map[string]float64{metrics.Reward: float64(i) / 50, metrics.ActionStd: 1 - 0.6*float64(i)/1500}
		},
		"std grows, reward climbs": func(i int) map[string]float64 {
			return map[string]float64{metrics.Reward: float64(i)/50 + rng.NormFloat64(), metrics.ActionStd: 1 + 2*float64(i)/1500}
		},
	} {
		if v, stopped := feed(t, cfg, series(1500, 1000, f)); stopped {
			t.Errorf("%s: stopped %v, want no stop", name, v)
		}
	}
}

// Divergence without NaN: the value loss grows from 18 to 1.6e6 while the reward falls from −4 to
// −13,600. value_loss_blowup stops it; a value loss that grows while the reward still climbs only warns.
// Stands for: drake_Dec10_02_21_08; go2rl_Apr28_14_34_30 (a jump at the best return, left alone).
func TestValueLossBlowupStopsWhenReturnFalls(t *testing.T) {
	cfg := Config{TotalSteps: 300 * 1000, WarmupSteps: 20_000, Rules: map[string]RuleConfig{RulePolicyCollapse: {Level: LevelOff}}}
	diverging := series(300, 1000, func(i int) map[string]float64 {
		g := math.Min(1, math.Max(0, float64(i-60)/200))
		return map[string]float64{metrics.ValueLoss: 18 * math.Pow(1.6e6/18, g), metrics.Reward: -4 - 13_596*g,
			metrics.EpisodeLength: 13 - 10*g}
	})
	v, stopped := feed(t, cfg, diverging)
	if !stopped || v.Rule != RuleValueLossBlowup {
		t.Fatalf("got %v (stopped %v), want a value_loss_blowup stop", v, stopped)
	}
	climbing := series(300, 1000, func(i int) map[string]float64 {
		return map[string]float64{metrics.ValueLoss: 18 * math.Pow(1.05, float64(i)), metrics.Reward: float64(i)}
	})
	if v, stopped := feed(t, cfg, climbing); stopped {
		t.Errorf("value loss growing with the return: stopped %v, want warnings only", v)
	}
}

// rsl_rl and ML-Agents report a NaN mean reward when no episode finished in the logging window: that is
// no divergence. An infinite value loss is. Stands for: issue_isaaclab1999_inf, issue_unitreerllab107_inf.
func TestEmptyWindowNaNRewardIsNotDivergence(t *testing.T) {
	records := series(50, 1000, func(i int) map[string]float64 {
		return map[string]float64{metrics.Reward: math.NaN(), metrics.EpisodeLength: math.NaN(), metrics.ValueLoss: 0.5}
	})
	if v, stopped := feed(t, Config{TotalSteps: 1e6}, records); stopped {
		t.Fatalf("NaN mean reward with no finished episode: stopped %v, want no stop", v)
	}
	records = append(records, rec(51_000, metrics.ValueLoss, math.Inf(1), metrics.Reward, math.NaN()))
	v, stopped := feed(t, Config{TotalSteps: 1e6}, records)
	if !stopped || v.Rule != RuleNonFinite || v.Metric != metrics.ValueLoss {
		t.Errorf("infinite value loss: got %v (stopped %v), want non_finite on value_loss", v, stopped)
	}
	if v, stopped := feed(t, Config{TotalSteps: 1e6}, []metrics.Record{rec(1, metrics.Reward, math.Inf(-1))}); !stopped || v.Rule != RuleNonFinite {
		t.Errorf("reward −Inf: got %v (stopped %v), want non_finite", v, stopped)
	}
}

// Pendulum (return about −1,200 for a random policy): a run whose KL spikes to 2–7 again and again, whose
// policy noise rises and whose return falls below where it started for the rest of the run is stopped by
// policy_collapse, naming kl_spike; the same fall without KL spikes, and KL spikes without a fall, are not.
// Stands for: no corpus run (none of its logs has KL spikes with such a fall): synthetic only.
func TestKLSpikesThenWorseThanStartIsACollapse(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pendulum := func(spikes, fall bool) []metrics.Record {
		return series(150, 2048, func(i int) map[string]float64 {
			reward, kl := -1200+80*rng.NormFloat64(), 0.01
			if i >= 40 {
				if spikes && i%6 == 0 {
					kl = 2 + 5*rng.Float64()
				}
				if fall {
					reward -= 400
				}
			}
			return map[string]float64{metrics.Reward: reward, metrics.ApproxKL: kl, metrics.Entropy: 1 + float64(i)/100}
		})
	}
	cfg := Config{TotalSteps: 150 * 2048}
	v, stopped := feed(t, cfg, pendulum(true, true))
	if !stopped || v.Rule != RulePolicyCollapse || !slices.Contains(v.Related, RuleKLSpike) {
		t.Errorf("KL spikes and a fall below the start: got %v (stopped %v), want policy_collapse related to kl_spike", v, stopped)
	}
	// Neither run ever improves while its entropy climbs: never_learned_entropy stops both from half the
	// run (that is its test's business); here only policy_collapse is judged.
	cfg.Rules = map[string]RuleConfig{RuleNeverLearnedEntropy: {Level: LevelOff}}
	for name, rs := range map[string][]metrics.Record{"a fall without KL spikes": pendulum(false, true), "KL spikes without a fall": pendulum(true, false)} {
		if v, stopped := feed(t, cfg, rs); stopped {
			t.Errorf("%s: stopped %v, want no stop", name, v)
		}
	}
}

// legged_gym's divergence without NaN blows up within the warm-up: the value loss goes from 18 to 1.2e4 in
// the first 50 of 1,000 iterations while the return falls from −4 to −2,470, and on to 1.6e6 and −13,600.
// The reference is the run's first value losses, so the stop comes as the warm-up ends. An SB3 run whose
// value loss grows from 7 to 2,000 with its returns (4 → a noisy plateau of 65–100) is left alone.
// Stands for: drake_Dec09_23_58_26, drake_Dec10_14_06_28; sb3prog_wheel_oct15 (left alone).
func TestValueLossBlowupWithinWarmup(t *testing.T) {
	cfg := Config{TotalSteps: 1000}
	diverging := series(1000, 1, func(i int) map[string]float64 {
		g := math.Min(1, float64(i)/50)
		return map[string]float64{metrics.ValueLoss: 18 * math.Pow(1.2e4/18, g) * (1 + float64(i)/10), metrics.Reward: -4 - 2466*g - 11*float64(i),
			metrics.EpisodeLength: math.Max(3, 13-10*g)}
	})
	v, stopped := feed(t, cfg, diverging)
	if !stopped || v.Rule != RuleValueLossBlowup || v.Step > 110 {
		t.Fatalf("got %v (stopped %v), want value_loss_blowup right after the warm-up (step 100)", v, stopped)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	plateau := series(2500, 120, func(i int) map[string]float64 {
		level := 4 + 76*math.Min(1, float64(i)/300)
		return map[string]float64{metrics.Reward: level + 30*rng.NormFloat64(), metrics.ValueLoss: 7 + level*level/3*(1+0.5*rng.Float64())}
	})
	if v, stopped := feed(t, Config{TotalSteps: 300_000}, plateau); stopped {
		t.Errorf("value loss growing with a noisy, improving return: stopped %v, want no stop", v)
	}
}

// Acrobot-v1 (3 actions, −500 for a policy that never swings up): a near-uniform policy's first lucky
// episodes lift its return, it falls back to −500 while its entropy is still near log 3, and it learns
// later. With the actions known, neither policy_collapse nor partial_collapse stops it: it has learned
// nothing to lose. Without them (a Gaussian policy's entropy says nothing of the kind) the same records
// are stopped, by policy_collapse or partial_collapse. A categorical policy that did learn, its entropy half of log 3, and then fell
// back is stopped. Stands for: the recorded Acrobot-v1 grid's run lr 3e-4, clip 0.1, num_envs 4,
// ent_coef 0.01, gae_lambda 0.98, seed 2 (stopped at step 92,160, −95 at 500,000).
func TestNearUniformPolicyDoesNotCollapse(t *testing.T) {
	acrobot := func(learned bool) []metrics.Record {
		rng := rand.New(rand.NewPCG(3, 4))
		return series(240, 512, func(i int) map[string]float64 {
			reward, ent := -500.0, 1.08+0.01*rng.NormFloat64()
			switch {
			case i >= 10 && i < 50:
				reward = -400 + 15*rng.NormFloat64()
			case i >= 50:
				reward, ent = -498+rng.Float64(), 0.97+0.01*rng.NormFloat64()
			}
			if learned {
				if i >= 10 && i < 50 {
					reward = -120 + 15*rng.NormFloat64()
				}
				ent = 0.55 + 0.01*rng.NormFloat64()
			}
			return map[string]float64{metrics.Reward: reward, metrics.Entropy: ent}
		})
	}
	cfg := Config{TotalSteps: 500_000, Actions: 3}
	if v, stopped := feed(t, cfg, acrobot(false)); stopped {
		t.Errorf("near-uniform policy, actions 3: stopped %v, want no stop", v)
	}
	cfg.Actions = 0
	if v, stopped := feed(t, cfg, acrobot(false)); !stopped || v.Rule != RulePolicyCollapse && v.Rule != RulePartialCollapse {
		t.Errorf("near-uniform policy, actions unknown: got %v (stopped %v), want policy_collapse or partial_collapse", v, stopped)
	}
	cfg.Actions = 3
	if v, stopped := feed(t, cfg, acrobot(true)); !stopped || v.Rule != RulePolicyCollapse && v.Rule != RulePartialCollapse {
		t.Errorf("learned, then fell back, actions 3: got %v (stopped %v), want policy_collapse or partial_collapse", v, stopped)
	}
}
