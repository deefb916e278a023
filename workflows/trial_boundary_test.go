package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/workflows"
)

type boundaryRun struct {
	Asked    int
	Outcome  string
	Segments int
}

// boundaryParent runs a Trial that asks at boundaries. It leaves the first question unanswered (as if
// lost at a continue-as-new); to the next it sends first a stale answer (another segment's stop), then
// continue.
func boundaryParent(ctx workflow.Context, in workflows.TrialInput) (*boundaryRun, error) {
	const id = "trial-at-boundary"
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id}), workflows.Trial, in)
	questions := workflow.GetSignalChannel(ctx, workflows.SignalSegmentEnd)
	run := &boundaryRun{}
	for finished := false; !finished; {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(questions, func(c workflow.ReceiveChannel, _ bool) {
			var b scheduler.Boundary
			c.Receive(ctx, &b)
			if run.Asked++; run.Asked == 1 {
				return
			}
			stale := scheduler.Decision{Segment: b.Segment + 7, Action: scheduler.Stop, Reason: "stale"}
			_ = workflow.SignalExternalWorkflow(ctx, id, "", workflows.SignalSegmentDecision, stale).Get(ctx, nil)
			goOn := scheduler.Decision{Segment: b.Segment, Action: scheduler.Continue}
			_ = workflow.SignalExternalWorkflow(ctx, id, "", workflows.SignalSegmentDecision, goOn).Get(ctx, nil)
		})
		sel.AddFuture(f, func(fu workflow.Future) {
			finished = true
			var sum results.TrialSummary
			_ = fu.Get(ctx, &sum)
			run.Outcome, run.Segments = sum.Outcome, sum.Segments
		})
		sel.Select(ctx)
	}
	return run, nil
}

func boundaryEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(1), CheckpointKey: "ck"}, nil
		}).After(time.Minute)
	return env
}

// A question that goes unanswered is asked again; an answer to another segment's question is dropped.
func TestTrialAsksAgainAndDropsStaleAnswers(t *testing.T) {
	env := boundaryEnv(t)
	in := trialInput(2000, 1000, 1)
	in.AskAtBoundaries = true
	env.ExecuteWorkflow(boundaryParent, in)
	var run boundaryRun
	if err := env.GetWorkflowResult(&run); err != nil {
		t.Fatal(err)
	}
	if run.Asked != 2 || run.Outcome != results.OutcomeCompleted || run.Segments != 2 {
		t.Errorf("asked %d times, trial %s after %d segments; want asked twice (once unanswered), completed after 2",
			run.Asked, run.Outcome, run.Segments)
	}
}

// A trial started by hand has no sweep to ask: it goes on.
func TestTrialWithoutParentDoesNotWaitAtBoundaries(t *testing.T) {
	env := boundaryEnv(t)
	in := trialInput(3000, 1000, 1)
	in.AskAtBoundaries = true
	env.ExecuteWorkflow(workflows.Trial, in)
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeCompleted || sum.Segments != 3 {
		t.Errorf("trial %s after %d segments, want completed after 3", sum.Outcome, sum.Segments)
	}
}
