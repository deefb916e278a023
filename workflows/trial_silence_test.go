package workflows_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// Each segment learns whether an earlier one's records carried the objective (SegmentInput.ObjectiveSeen):
// segment 0's carry none (it ends before the warm-up, with a warning), segment 1's carry it, segment 2
// is told so.
func TestTrialTellsSegmentsTheObjectiveWasSeen(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var rec recorder
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			rec.add(ctx, in)
			res := &activities.SegmentResult{LastStep: in.StopAtStep, Records: 5, CheckpointKey: "ck"}
			if in.Segment == 0 {
				res.MetricMissing = []string{"charts/episodic_return"}
			} else {
				res.Objective = ptr(1)
			}
			return res, nil
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(30000, 10000, 2))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	var seen []bool
	for _, c := range rec.get() {
		seen = append(seen, c.in.ObjectiveSeen)
	}
	if len(seen) != 3 || seen[0] || seen[1] || !seen[2] {
		t.Errorf("ObjectiveSeen per segment = %v, want [false false true]", seen)
	}
	if sum.Outcome != results.OutcomeCompleted || len(sum.Warnings) != 0 {
		t.Errorf("outcome %s, warnings %q; want completed and segment 0's warning dropped", sum.Outcome, sum.Warnings)
	}
}

// A segment that fails because its trainer reported nothing usable (no record, or no objective past the
// warm-up) is not retried, and the trial ends failed with the activity's message — never completed.
func TestTrialFailsWhenNothingUsableIsReported(t *testing.T) {
	for _, typ := range []string{activities.ErrNoMetrics, activities.ErrObjectiveMissing} {
		t.Run(typ, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var rec recorder
			msg := "trial 3-s7: " + typ + ` message; did you mean "charts/episodic_return"?`
			env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
					rec.add(ctx, in)
					return nil, temporal.NewNonRetryableApplicationError(msg, typ, nil, activities.Heartbeat{TrainerFailures: 1})
				})
			env.ExecuteWorkflow(workflows.Trial, trialInput(30000, 10000, 3))
			var sum results.TrialSummary
			if err := env.GetWorkflowResult(&sum); err != nil {
				t.Fatal(err)
			}
			if n := len(rec.get()); n != 1 {
				t.Errorf("%d attempts, want 1 (never retried)", n)
			}
			if sum.Outcome != results.OutcomeFailed || !strings.Contains(sum.Error, msg) || sum.Objective != nil {
				t.Errorf("outcome %s, error %q, objective %v; want failed with the message and no objective", sum.Outcome, sum.Error, sum.Objective)
			}
		})
	}
}
