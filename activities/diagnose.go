package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// DivergedDetails rides on a TrialDiverged failure: the verdict, where the dump is and where the
// attempt ran (a divergence that only some GPUs or precision settings show is told by it).
type DivergedDetails struct {
	Rule     string
	Verdict  diagnostics.Verdict
	DumpKey  string
	Hardware *results.Hardware `json:",omitempty"`
}

// newEngine builds the rules engine for a segment from the sweep's diagnostics settings; nil when
// diagnostics are off.
func newEngine(in SegmentInput) (*diagnostics.Engine, error) {
	d := in.Diagnostics
	if !d.Enabled {
		return nil, nil
	}
	cfg := diagnostics.Config{WarmupSteps: d.WarmupSteps, Patience: d.Patience, TotalSteps: in.Trainer.TotalSteps,
		Actions: d.Actions, Objective: in.Metric, Goal: in.Goal, TargetKL: targetKL(in.Trial.Params), Rules: map[string]diagnostics.RuleConfig{}}
	for name, o := range d.Rules {
		if name == diagnostics.RuleStalled {
			continue // judged by time in the activity
		}
		cfg.Rules[name] = diagnostics.RuleConfig{Threshold: o.Threshold, Level: o.Level, Patience: o.Patience}
	}
	return diagnostics.NewEngine(cfg)
}

// targetKL finds the trainer's KL target among its parameters, if it has one.
func targetKL(params map[string]any) float64 {
	for _, k := range []string{"target_kl", "desired_kl"} {
		switch v := params[k].(type) {
		case float64:
			return v
		case int64:
			return float64(v)
		}
	}
	return 0
}

// stallTimeout is the time without a record after which a trial is killed and retried; the stalled
// rule set to "off" disables it.
func stallTimeout(in SegmentInput) time.Duration {
	if o, ok := in.Diagnostics.Rules[diagnostics.RuleStalled]; ok && o.Level == diagnostics.LevelOff {
		return 0
	}
	return in.Trainer.StallTimeout
}

// diverged writes divergence.json and returns the non-retryable TrialDiverged failure.
func (r *segmentRun) diverged(ctx context.Context, v diagnostics.Verdict, detected, killed time.Time) error {
	m := r.a.masker()
	d := &sweepstore.Divergence{SweepID: r.in.SweepID, TrialID: r.in.Trial.ID, Verdict: v, Warnings: r.engine.Warnings(),
		LastHealthyCkpt: r.hb.CheckpointKey, LastHealthyStep: r.hb.CheckpointStep, Records: r.records.Recent(m),
		LogTail: runner.TailFile(r.logPath, 8192, m), DetectedAt: detected.UTC(), KilledAt: killed.UTC(),
		DetectionToKillMS: float64(killed.Sub(detected).Microseconds()) / 1000}
	key, err := r.a.sweepStore().WriteDivergence(ctx, d)
	if err != nil {
		return err
	}
	r.result.DumpKey = key
	msg := fmt.Sprintf("trial %s diverged: %s", r.in.Trial.ID, v)
	return temporal.NewNonRetryableApplicationError(msg, ErrTrialDiverged, nil,
		DivergedDetails{Rule: v.Rule, Verdict: v, DumpKey: key, Hardware: r.hardware()})
}
