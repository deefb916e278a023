package ppo

import (
	"github.com/rlsweep/rlsweep/metrics"
)

// Metrics is one iteration's report: every canonical metric of docs/trainer-contract.md plus a few custom ones.
// Losses, entropy, approx KL, clip fraction and grad norm are means over the minibatches of the
// update; the advantage statistics are over the whole batch before normalisation.
type Metrics struct {
	Step      int64 // environment steps so far
	Iteration int

	Reward, EpisodeLength float64 // means over the last 100 finished episodes (raw rewards)
	Episodes              int     // episodes in that window; 0 means none has finished yet

	ValueLoss, PolicyLoss, Entropy float64
	ActionStd, ActionStdMin        float64 // Gaussian policies only: mean and min σ over action dims
	ApproxKL, ClipFraction         float64
	ExplainedVariance              float64
	GradNorm                       float64 // before clipping
	LearningRate, FPS              float64
	AdvantageMean, AdvantageStd    float64
	AdvantageAbsMax                float64

	Continuous  bool // the policy is Gaussian
	StdClamped  int  // action dims whose σ sits at the StdMin floor
	KLStop      bool // the update stopped early on TargetKL
	Minibatches int  // minibatch updates evaluated
}

// Value is one named metric value.
type Value struct {
	Name  string
	Value float64
}

// Values returns the metrics under their canonical names (diagnostics package), in canonical order,
// followed by custom keys. reward and episode_length are left out until an episode has finished, and
// action_std and action_std_min for categorical policies, where they have no meaning; everything
// else is always present, NaN included (explained variance of constant returns).
func (m Metrics) Values() []Value {
	vs := make([]Value, 0, 24)
	if m.Episodes > 0 {
		vs = append(vs, Value{metrics.Reward, m.Reward}, Value{metrics.EpisodeLength, m.EpisodeLength})
	}
	vs = append(vs, Value{metrics.ValueLoss, m.ValueLoss}, Value{metrics.PolicyLoss, m.PolicyLoss},
		Value{metrics.Entropy, m.Entropy})
	if m.Continuous {
		vs = append(vs, Value{metrics.ActionStd, m.ActionStd}, Value{metrics.ActionStdMin, m.ActionStdMin})
	}
	vs = append(vs,
		Value{metrics.ApproxKL, m.ApproxKL}, Value{metrics.ClipFraction, m.ClipFraction},
		Value{metrics.ExplainedVariance, m.ExplainedVariance}, Value{metrics.GradNorm, m.GradNorm},
		Value{metrics.LearningRate, m.LearningRate}, Value{metrics.FPS, m.FPS},
		Value{metrics.AdvantageMean, m.AdvantageMean}, Value{metrics.AdvantageStd, m.AdvantageStd},
		Value{metrics.AdvantageAbsMax, m.AdvantageAbsMax},
		Value{"iteration", float64(m.Iteration)}, Value{"episodes", float64(m.Episodes)},
		Value{"kl_early_stop", b2f(m.KLStop)})
	if m.Continuous {
		vs = append(vs, Value{"action_std_clamped", float64(m.StdClamped)})
	}
	return vs
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
