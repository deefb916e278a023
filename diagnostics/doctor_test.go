package diagnostics

import (
	"math"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// run builds n records at steps 0, 1000, ... with metric values from f.
func run(n int, f func(i int) map[string]float64) []metrics.Record { return series(n, 1000, f) }

func healthy(i int) map[string]float64 {
	return map[string]float64{metrics.ExplainedVariance: 0.8, metrics.ActionStd: 0.5, metrics.ActionStdMin: 0.3, metrics.GradNorm: 1,
		metrics.AdvantageAbsMax: 5, metrics.ClipFraction: 0.1, metrics.Entropy: -0.5, metrics.Reward: float64(i)}
}

// with returns healthy metrics with one value changed from record `from` on.
func with(metric string, v float64, from int) func(int) map[string]float64 {
	return func(i int) map[string]float64 {
		m := healthy(i)
		if i >= from {
			m[metric] = v
		}
		return m
	}
}

func TestDiagnoseDecisionTree(t *testing.T) {
	tests := []struct {
		name      string
		records   []metrics.Record
		wantCause string
		wantEv    Evidence
	}{
		{"healthy", run(40, healthy), CauseTaskDesign, Evidence{}},
		{"value function", run(40, with(metrics.ExplainedVariance, -0.2, 30)), CauseValueFunction, Evidence{metrics.ExplainedVariance, -0.2, 30000}},
		{"std collapsed", run(40, with(metrics.ActionStdMin, 0.001, 30)), CausePolicyDied, Evidence{metrics.ActionStdMin, 0.001, 30000}},
		{"categorical entropy collapsed", run(40, func(i int) map[string]float64 {
			e := 1.0
			if i >= 30 {
				e = 0.005 - float64(i-30)*1e-4
			}
			return map[string]float64{metrics.Entropy: e, metrics.ClipFraction: 0.1}
		}), CausePolicyDied, Evidence{metrics.Entropy, metrics.Float(0.005 - 9e-4), 39000}},
		{"grad norm above limit", run(40, with(metrics.GradNorm, 2e4, 30)), CauseGradients, Evidence{metrics.GradNorm, 2e4, 30000}},
		{"advantages", run(40, with(metrics.AdvantageAbsMax, 150, 30)), CauseRewardScale, Evidence{metrics.AdvantageAbsMax, 150, 30000}},
		{"too fast", run(40, with(metrics.ClipFraction, 0.35, 30)), CauseTooFast, Evidence{metrics.ClipFraction, 0.35, 30000}},
		{"not moving", run(40, with(metrics.ClipFraction, 0, 30)), CauseNotMoving, Evidence{metrics.ClipFraction, 0, 30000}},
		// Only a third of the window has negative EV: not enough.
		{"minority ignored", run(40, with(metrics.ExplainedVariance, -0.2, 36)), CauseTaskDesign, Evidence{}},
		// Gaussian entropy below 0.01 is healthy.
		{"gaussian entropy", run(40, with(metrics.Entropy, -2, 0)), CauseTaskDesign, Evidence{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diagnose(tt.records)
			if len(got) != 1 || got[0].Cause != tt.wantCause || got[0].Rank != 1 {
				t.Fatalf("Diagnose = %+v, want one %s finding ranked 1", got, tt.wantCause)
			}
			if tt.wantEv.Metric != "" && (len(got[0].Evidence) != 1 || got[0].Evidence[0] != tt.wantEv) {
				t.Errorf("evidence = %+v, want %+v", got[0].Evidence, tt.wantEv)
			}
			if got[0].Advice == "" || got[0].Summary == "" {
				t.Errorf("finding %+v lacks summary or advice", got[0])
			}
		})
	}
}

func TestDiagnoseGradGrowth(t *testing.T) {
	rs := run(40, func(i int) map[string]float64 {
		m := healthy(i)
		m[metrics.GradNorm] = math.Pow(1.2, float64(i))
		return m
	})
	got := Diagnose(rs)
	if got[0].Cause != CauseGradients || len(got[0].Evidence) != 2 {
		t.Errorf("Diagnose = %+v, want gradients with early and late evidence", got)
	}
}

func TestDiagnoseRanksStopsFirst(t *testing.T) {
	rs := run(40, with(metrics.ClipFraction, 0.4, 20))
	stop := Verdict{Level: Stop, Rule: RuleNonFinite, Metric: metrics.ValueLoss, Value: math.NaN(), Step: 39000, Advice: "a"}
	warn := Verdict{Level: Warn, Rule: RuleKLSpike, Metric: metrics.ApproxKL, Value: 1, Step: 38000}
	got := Diagnose(rs, warn, stop, stop)
	if len(got) != 2 {
		t.Fatalf("Diagnose = %+v, want the stop and the clip finding", got)
	}
	if got[0].Rule != RuleNonFinite || got[0].Cause != CauseDiverged || got[0].Rank != 1 {
		t.Errorf("first = %+v, want the non_finite stop ranked 1", got[0])
	}
	if got[1].Cause != CauseTooFast || got[1].Rank != 2 {
		t.Errorf("second = %+v, want too_fast ranked 2", got[1])
	}
}

func TestDiagnoseMergesStopWithItsTreeNode(t *testing.T) {
	rs := run(40, with(metrics.ExplainedVariance, -0.9, 20))
	stop := Verdict{Level: Stop, Rule: RuleValueAnticorrelated, Metric: metrics.ExplainedVariance, Value: -0.9, Step: 24000}
	got := Diagnose(rs, stop)
	if len(got) != 1 || got[0].Rule != RuleValueAnticorrelated || got[0].Cause != CauseValueFunction {
		t.Errorf("Diagnose = %+v, want one value_function finding from the verdict", got)
	}
}

func TestDiagnoseShortRun(t *testing.T) {
	if got := Diagnose(nil); len(got) != 1 || got[0].Cause != CauseTaskDesign {
		t.Errorf("Diagnose(nil) = %+v, want task_design", got)
	}
	if got := Diagnose(run(3, with(metrics.ClipFraction, 0.9, 0))); got[0].Cause != CauseTooFast {
		t.Errorf("Diagnose(3 records) = %+v, want too_fast", got)
	}
}

// A legged run whose noise std climbs 1.0 → 2.5 while the reward stays near 0 is explained by its
// runaway noise first, not by a generic task-design line.
func TestDiagnoseNoiseRunaway(t *testing.T) {
	rs := run(400, func(i int) map[string]float64 {
		return map[string]float64{metrics.Reward: 0.01 * math.Sin(float64(i)), metrics.ActionStd: 1 + 1.5*float64(i)/400, metrics.ValueLoss: 1e-5}
	})
	f := Diagnose(rs)
	if f[0].Cause != CauseNoiseRunaway || f[0].Advice != Advice(RuleNeverLearned) {
		t.Errorf("first finding = %+v, want %s with never_learned's advice", f[0], CauseNoiseRunaway)
	}
	// A run whose std grows while its reward climbs is not running away.
	rs = run(400, func(i int) map[string]float64 {
		return map[string]float64{metrics.Reward: float64(i), metrics.ActionStd: 1 + 1.5*float64(i)/400}
	})
	if f := Diagnose(rs); f[0].Cause == CauseNoiseRunaway {
		t.Errorf("std growing with the reward: got %+v, want no noise_runaway finding", f[0])
	}
}

// A solved CartPole returns 500 every episode; its explained variance is noise and says nothing of the
// value function.
func TestDiagnoseSolvedTaskHasNoValueFunctionFinding(t *testing.T) {
	rs := run(100, func(i int) map[string]float64 {
		return map[string]float64{metrics.Reward: 500, metrics.ExplainedVariance: -1.53, metrics.ValueLoss: 1e-6, metrics.Entropy: 0.2, metrics.ClipFraction: 0.05}
	})
	for _, f := range Diagnose(rs) {
		if f.Cause == CauseValueFunction {
			t.Errorf("solved task: got %+v, want no value_function finding", f)
		}
	}
}

// A value loss that grew from 18 to 1.6e6 is the run's first unhealthy signal, not "task design".
func TestDiagnoseValueLossGrowth(t *testing.T) {
	rs := run(200, func(i int) map[string]float64 {
		return map[string]float64{metrics.ValueLoss: 18 * math.Pow(1.6e6/18, float64(i)/199), metrics.Reward: -4 - 68*float64(i)}
	})
	f := Diagnose(rs)
	if f[0].Cause != CauseValueFunction || !strings.Contains(f[0].Summary, "value loss blew up") {
		t.Errorf("first finding = %+v, want the value loss blowing up", f[0])
	}
}
