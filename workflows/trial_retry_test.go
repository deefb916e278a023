package workflows_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// The TrainSegment activity bounds its retries itself (it tells trainer failures from infrastructure
// faults): the Trial hands it retries.max_attempts and retries.max_infra_retries (their defaults for 0),
// and the server's own limit is only a backstop above both. A trainer failure the activity no longer
// retries fails the trial with its message (an activity that kept failing retryably stops at the
// backstop); the counts of its segments add up in the summary.
func TestTrialHandsTheRetryBoundsToTheActivity(t *testing.T) {
	tests := []struct {
		maxAttempts, maxInfra     int
		wantFailures, wantInfra   int
		wantServerMaximumAttempts int32
	}{{1, 5, 1, 5, 7}, {4, 0, 4, sweeps.DefaultMaxInfraRetries, int32(4 + sweeps.DefaultMaxInfraRetries + 1)},
		{0, 0, sweeps.DefaultMaxAttempts, sweeps.DefaultMaxInfraRetries, int32(sweeps.DefaultMaxAttempts + sweeps.DefaultMaxInfraRetries + 1)}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.maxAttempts, "/", tt.maxInfra), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var rec recorder
			env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
					rec.add(ctx, in)
					if in.Segment == 0 {
						return &activities.SegmentResult{LastStep: in.StopAtStep, TrainerFailures: 1, InfraRetries: 2, RetrainedSteps: 300}, nil
					}
					return nil, temporal.NewApplicationError("trainer exited with status 3", activities.ErrTrainerCrashed)
				})
			in := trialInput(20000, 10000, tt.maxAttempts)
			in.MaxInfraRetries = tt.maxInfra
			env.ExecuteWorkflow(workflows.Trial, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error %v, want a failed summary", err)
			}
			calls := rec.get()
			if want := 1 + int(tt.wantServerMaximumAttempts); len(calls) != want {
				t.Fatalf("TrainSegment called %d times, want %d (segment 0, then segment 1 up to the backstop)", len(calls), want)
			}
			for _, c := range calls {
				if c.in.MaxTrainerFailures != tt.wantFailures || c.in.MaxInfraRetries != tt.wantInfra {
					t.Errorf("segment %d: MaxTrainerFailures %d, MaxInfraRetries %d; want %d, %d",
						c.in.Segment, c.in.MaxTrainerFailures, c.in.MaxInfraRetries, tt.wantFailures, tt.wantInfra)
				}
			}
			var sum results.TrialSummary
			if err := env.GetWorkflowResult(&sum); err != nil {
				t.Fatal(err)
			}
			if sum.Outcome != results.OutcomeFailed || sum.StopRule != "" || !strings.Contains(sum.Error, "trainer exited with status 3") {
				t.Errorf("summary = %+v, want failed with the activity's message", sum)
			}
			if sum.TrainerFailures != 1 || sum.InfraRetries != 2 || sum.RetrainedSteps != 300 {
				t.Errorf("summary counts = %d trainer failures, %d infra retries, %d steps re-trained; want 1, 2, 300",
					sum.TrainerFailures, sum.InfraRetries, sum.RetrainedSteps)
			}
		})
	}
}

// A segment that ends as cancelled while nobody cancelled the trial (the server ended its attempt) fails
// the trial: only a cancel request makes a trial cancelled, and only then does it say so to its sweep.
func TestTrialSegmentCancelledWithoutRequestFails(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			return nil, temporal.NewCanceledError()
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(20000, 10000, 3))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatalf("workflow error %v, want a failed summary", err)
	}
	if sum.Outcome != results.OutcomeFailed || !strings.Contains(sum.Error, "canceled") {
		t.Errorf("summary = outcome %s, error %q; want failed, naming the cancellation", sum.Outcome, sum.Error)
	}
}
