package workflows

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
)

// A segment that failed for good hands its trial the counts and the step its last heartbeat carried:
// every trainer failure type, and a segment whose worker went silent (heartbeat timeout).
func TestAddFailedCounts(t *testing.T) {
	hb := activities.Heartbeat{Step: 4096, TrainerFailures: 2, InfraRetries: 1, Retrained: 512}
	for _, c := range []struct {
		name string
		err  error
		want results.TrialSummary
	}{
		{"crash", temporal.NewApplicationError("boom", activities.ErrTrainerCrashed, hb),
			results.TrialSummary{Steps: 4096, TrainerFailures: 2, InfraRetries: 1, RetrainedSteps: 512}},
		{"checkpoint unreadable", temporal.NewNonRetryableApplicationError("bad", activities.ErrCheckpointUnreadable, nil, hb),
			results.TrialSummary{Steps: 4096, TrainerFailures: 2, InfraRetries: 1, RetrainedSteps: 512}},
		{"heartbeat timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil, hb),
			results.TrialSummary{Steps: 4096, TrainerFailures: 2, InfraRetries: 1, RetrainedSteps: 512}},
		{"timeout without a heartbeat", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil),
			results.TrialSummary{Steps: 100}},
		{"another error type", temporal.NewApplicationError("x", "SomethingElse", hb), results.TrialSummary{Steps: 100}},
	} {
		sum := results.TrialSummary{Steps: 100}
		addFailedCounts(&sum, c.err)
		if sum.Steps != c.want.Steps || sum.TrainerFailures != c.want.TrainerFailures || sum.InfraRetries != c.want.InfraRetries ||
			sum.RetrainedSteps != c.want.RetrainedSteps {
			t.Errorf("%s: steps %d, trainer failures %d, infra retries %d, retrained %d; want %+v", c.name,
				sum.Steps, sum.TrainerFailures, sum.InfraRetries, sum.RetrainedSteps, c.want)
		}
	}
}
