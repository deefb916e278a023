package metrics

// Canonical metric names (docs/trainer-contract.md). Trainers report them under these keys in JSON lines, or under a
// framework's own tags mapped by a preset.
const (
	Reward            = "reward"
	EpisodeLength     = "episode_length"
	ValueLoss         = "value_loss"
	PolicyLoss        = "policy_loss"
	Entropy           = "entropy"
	ActionStd         = "action_std"
	ActionStdMin      = "action_std_min"
	ApproxKL          = "approx_kl"
	ClipFraction      = "clip_fraction"
	ExplainedVariance = "explained_variance"
	GradNorm          = "grad_norm"
	LearningRate      = "learning_rate"
	FPS               = "fps"
	AdvantageMean     = "advantage_mean"
	AdvantageStd      = "advantage_std"
	AdvantageAbsMax   = "advantage_abs_max"
)

// CanonicalMetrics lists every canonical metric name in the order reports show them.
var CanonicalMetrics = []string{
	Reward, EpisodeLength, ValueLoss, PolicyLoss, Entropy, ActionStd, ActionStdMin, ApproxKL,
	ClipFraction, ExplainedVariance, GradNorm, LearningRate, FPS, AdvantageMean, AdvantageStd,
	AdvantageAbsMax,
}

// Record is one training iteration as a trainer reported it: the environment steps so far, every
// numeric value it carried (canonical names and custom keys alike; NaN and ±Inf kept as they are), and
// the checkpoint it announced, if any, relative to RLSWEEP_CHECKPOINT_DIR.
type Record struct {
	Step       int64              `json:"step"`
	Values     map[string]float64 `json:"values,omitempty"`
	Checkpoint string             `json:"checkpoint,omitempty"`
}

// Value returns the named value and whether the record carries it.
func (r Record) Value(name string) (float64, bool) {
	v, ok := r.Values[name]
	return v, ok
}
