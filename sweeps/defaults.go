package sweeps

import (
	"time"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
)

// Defaults for the keys a spec may leave out; docs/spec.md lists them for users.
const (
	DefaultMethod      = MethodGrid
	DefaultMetricName  = "reward"
	DefaultMetricGoal  = "maximize"
	DefaultPatience    = diagnostics.DefaultPatience
	DefaultConcurrency = 4
	DefaultTaskQueue   = "rlsweep-gpu"
	DefaultGPUs        = 1
	DefaultMaxAttempts = 3
	// DefaultMaxInfraRetries: retries of a segment after faults outside the trainer; with the back-off
	// (1 s doubling to a minute) about 25 minutes of a worker pool, server or store that keeps failing.
	DefaultMaxInfraRetries = 30
	DefaultSource          = metrics.SourceJSONL
	DefaultStallTimeout    = 10 * time.Minute
	DefaultGracePeriod     = 30 * time.Second
	// DefaultASHAEta is asha's reduction factor (Ray Tune's ASHA default); DefaultHyperbandEta is
	// W&B's hyperband default, kept for its configs.
	DefaultASHAEta      = 4
	DefaultHyperbandEta = 3

	DefaultRegressionTolerance  = 0.05
	DefaultRegressionConfidence = 0.95
	DefaultRegressionResamples  = 2000
	DefaultMinProbImprovement   = 0.75
	DefaultMaxNewFailures       = 0
)

// DefaultRegression is the regression section a spec without one gets.
func DefaultRegression() Regression {
	return Regression{Tolerance: DefaultRegressionTolerance, Confidence: DefaultRegressionConfidence,
		Resamples: DefaultRegressionResamples, MinProbImprovement: DefaultMinProbImprovement,
		MaxNewFailures: DefaultMaxNewFailures}
}

// regressionThresholds is the spec's regression section, or DefaultRegression when it has none.
func (s *Spec) regressionThresholds() Regression {
	if s.Regression == nil {
		return DefaultRegression()
	}
	return *s.Regression
}

// defaults returns a Spec holding every default, to be overwritten by what the YAML says.
func defaults() *Spec {
	return &Spec{
		Method: DefaultMethod,
		Seeds:  []int64{1},
		Metric: Metric{Name: DefaultMetricName, Goal: DefaultMetricGoal},
		Trainer: Trainer{
			Metrics:      MetricsSource{Source: DefaultSource},
			StallTimeout: DefaultStallTimeout,
			GracePeriod:  DefaultGracePeriod,
		},
		Probes:      Probes{Enabled: true},
		Diagnostics: Diagnostics{Enabled: true, Patience: DefaultPatience},
		Concurrency: DefaultConcurrency,
		Resources:   Resources{TaskQueue: DefaultTaskQueue, GPUs: DefaultGPUs},
		Retries:     Retries{MaxAttempts: DefaultMaxAttempts, MaxInfraRetries: DefaultMaxInfraRetries},
		Parameters:  []Parameter{},
	}
}

// applyLateDefaults fills the defaults that depend on other fields.
func applyLateDefaults(s *Spec) {
	if s.Trainer.SegmentSteps == 0 {
		s.Trainer.SegmentSteps = s.Trainer.TotalSteps
	}
	s.EarlyTerminate.fillDefaults(s.Trainer.TotalSteps)
	s.fillPBTDefaults()
	if s.Order == "" && s.Method == MethodGrid && s.EarlyTerminate != nil {
		s.Order = OrderShuffled
	}
	if s.Method == MethodBayes && s.StartupDefaulted() {
		s.BayesStartup = DefaultStartup(s.Trials)
	}
	if s.Diagnostics.Actions == 0 && s.Trainer.Builtin != "" {
		s.Diagnostics.Actions = trainer.BuiltinEnvActions(s.Trainer.Env)
	}
}

// WarmupSteps is the number of environment steps before "sustained" diagnostics may stop a trial:
// diagnostics.warmup_steps, or the engine's default for trainer.total_steps when that is 0.
func (s *Spec) WarmupSteps() int64 {
	if s.Diagnostics.WarmupSteps > 0 {
		return s.Diagnostics.WarmupSteps
	}
	return diagnostics.DefaultWarmup(s.Trainer.TotalSteps)
}

// SegmentEnds lists the step at which each TrainSegment stops, in order; the last is total_steps.
// With early_terminate in pause mode they are the multiples of segment_steps and every decision step of
// the pruner (Spec.DecisionSteps), merged; in stop mode the multiples of segment_steps alone (the
// trial is judged as its metric stream passes each decision point).
func (s *Spec) SegmentEnds() []int64 {
	t := s.Trainer
	if t.TotalSteps <= 0 {
		return nil
	}
	if s.EarlyTerminate != nil && s.PruneMode() == PrunePause {
		return mergeSteps(s.plainSegmentEnds(), s.DecisionSteps())
	}
	if s.PBT != nil {
		return mergeSteps(s.plainSegmentEnds(), s.PBTReadySteps())
	}
	return s.plainSegmentEnds()
}

// plainSegmentEnds are the multiples of segment_steps below total_steps, then total_steps.
func (s *Spec) plainSegmentEnds() []int64 {
	t := s.Trainer
	seg := t.SegmentSteps
	if seg <= 0 || seg > t.TotalSteps {
		seg = t.TotalSteps
	}
	ends := make([]int64, 0, (t.TotalSteps+seg-1)/seg)
	for end := seg; ; end += seg {
		if end >= t.TotalSteps {
			return append(ends, t.TotalSteps)
		}
		ends = append(ends, end)
	}
}
