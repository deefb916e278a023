package workflows

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
)

// A segment that died out of memory ends its trial "oom" with the whole message, the step it reached,
// no trainer failure counted and where it ran; the sweep keeps it as its last failure, and a sweep whose
// trials all failed or ran out of memory failed.
func TestTrialOOM(t *testing.T) {
	hw := &results.Hardware{Host: "gpu-box", GPUs: []results.GPU{{ID: "0", Name: "NVIDIA GeForce RTX 4090", MemoryMiB: 24564}}}
	err := temporal.NewNonRetryableApplicationError("trial 0-s1: out of memory on NVIDIA GeForce RTX 4090 ...",
		activities.ErrTrainerOOM, nil, activities.Heartbeat{Step: 2048, InfraRetries: 1, Hardware: hw})
	outcome, rule, msg, stop := classify(err)
	if outcome != results.OutcomeOOM || rule != "" || stop != nil || !strings.HasPrefix(msg, "trial 0-s1: out of memory") {
		t.Errorf("classify = %q, %q, %q, %v; want oom with the message", outcome, rule, msg, stop)
	}
	sum := results.TrialSummary{TrialID: "0-s1", Steps: 100}
	addFailedCounts(&sum, err)
	if sum.Steps != 2048 || sum.TrainerFailures != 0 || sum.InfraRetries != 1 || sum.Hardware == nil || sum.Hardware.Host != "gpu-box" {
		t.Errorf("summary = %+v, want step 2048, no trainer failure, 1 infra retry and the hardware", sum)
	}
	st := SweepState{Counts: map[string]int{}}
	sum.Outcome = results.OutcomeOOM
	st.tally(sum, "maximize")
	if st.LastFailure == nil || st.LastFailure.TrialID != "0-s1" || st.Counts[results.OutcomeOOM] != 1 {
		t.Errorf("state = %+v, want the oom trial counted and kept as the last failure", st)
	}
	if !allFailed(map[string]int{results.OutcomeOOM: 2, results.OutcomeFailed: 1}, 3) || allFailed(map[string]int{results.OutcomeOOM: 2, results.OutcomeCompleted: 1}, 3) {
		t.Error("allFailed: want true for failed and oom trials only, false with one completed")
	}
}
