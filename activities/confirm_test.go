package activities

import (
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// PickBest takes the leaderboard's order and skips a configuration with a seed that diverged, failed
// or ran out of memory, and the re-runs themselves.
func TestPickBest(t *testing.T) {
	obj := func(v float64) *float64 { return &v }
	tr := func(id string, cfg int, outcome string, o *float64) results.TrialSummary {
		return results.TrialSummary{TrialID: id, Config: cfg, Params: map[string]any{"lr": float64(cfg)}, Precision: "tf32", Outcome: outcome, Objective: o}
	}
	res := &results.SweepResults{Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}, Params: []string{"lr"}, Trials: []results.TrialSummary{
		tr("0-s1", 0, results.OutcomeCompleted, obj(50)), tr("0-s2", 0, results.OutcomeDiverged, nil), // best mean, but diverged
		tr("1-s1", 1, results.OutcomeCompleted, obj(10)), tr("1-s2", 1, results.OutcomeCompleted, obj(12)),
		tr("2-s1", 2, results.OutcomeCompleted, obj(30)), tr("2-s2", 2, results.OutcomeCompleted, obj(32)),
		tr("3-s1", 3, results.OutcomeCompleted, obj(40)), tr("3-s2", 3, results.OutcomeOOM, nil),
		tr("4-s1", 4, results.OutcomeFailed, nil),
		{TrialID: "1-s1-a100", Config: 1, GPUClass: "a100", Outcome: results.OutcomeCompleted, Objective: obj(99)},
	}}
	best := PickBest(res, 2)
	if len(best) != 2 || best[0].Config != 2 || best[1].Config != 1 || best[0].Precision != "tf32" || best[0].Params["lr"] != 2.0 {
		t.Fatalf("PickBest = %+v, want configurations 2 then 1 with their parameters and precision", best)
	}
	if got := PickBest(res, 5); len(got) != 2 {
		t.Errorf("PickBest(5) = %d configurations, want the 2 that qualify", len(got))
	}
}
