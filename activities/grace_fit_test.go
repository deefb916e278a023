package activities_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
)

// The worker refuses, for good, a segment whose trainer's grace period does not end 2 s before its
// heartbeat timeout (a sweep started without rlsweep submit, which refuses it first): cut off from the
// server it could not stop the trainer before the retry elsewhere. No trainer starts.
func TestTrainSegmentRefusesAGracePeriodThatDoesNotFit(t *testing.T) {
	f := newFixture(t)
	in := f.input(1000, nil)
	in.Trainer.GracePeriod = 3 * time.Second
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(f.acts.TrainSegment)
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			HeartbeatTimeout: 4 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5}})
		return workflow.ExecuteActivity(ctx, f.acts.TrainSegment, in).Get(ctx, nil)
	})
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrInvalidSpec || !app.NonRetryable() ||
		!strings.Contains(app.Message(), "trainer.grace_period: got 3s with a heartbeat timeout of 4s, want less than 2s") {
		t.Fatalf("segment error %v, want a non-retryable %s naming trainer.grace_period", err, activities.ErrInvalidSpec)
	}
}
