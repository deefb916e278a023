package workflows_test

import (
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// The summary line says how the sweep ended in one line: the counts, then the best configuration
// (confirmed on fresh seeds when it was), or the first line of the last failure, cut to a length the
// Web UI shows whole.
func TestEndSummary(t *testing.T) {
	fresh := 431.25
	long := strings.Repeat("é", 300)
	for _, tt := range []struct {
		name string
		res  workflows.SweepResult
		want string
	}{
		{"confirmed best", workflows.SweepResult{Status: workflows.PhaseCompleted, Total: 26, Counts: map[string]int{"completed": 26},
			Best: &activities.BestConfig{Config: 7, Params: map[string]any{"lr": 0.00025, "clip": 0.2}, Metric: "reward",
				Objective: 448.123456, Seeds: 3, Confirmed: true, Fresh: &fresh, FreshSeeds: 1}},
			"completed: 26 trials (26 completed); best config 7 (lr=0.00025 clip=0.2): reward 448.1, mean over 3 seeds, confirmed: 431.2 on 1 fresh seed"},
		{"cancelled part way", workflows.SweepResult{Status: workflows.PhaseCancelled, Total: 16,
			Counts: map[string]int{"completed": 5, "cancelled": 3}},
			"cancelled: 8 of 16 trials finished (5 completed, 3 cancelled)"},
		{"one trial failed", workflows.SweepResult{Status: workflows.PhaseFailed, Total: 1, Counts: map[string]int{"failed": 1},
			LastFailure: &results.TrialSummary{TrialID: "0-s1", Error: "trial 0-s1: " + long + "\nlog tail"}},
			"failed: its 1 trial failed; last failure: trial 0-s1: " + strings.Repeat("é", 114) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := workflows.EndSummary(&tt.res, []string{"lr", "clip"}); got != tt.want {
				t.Errorf("summary\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
