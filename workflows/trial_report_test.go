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
	"github.com/rlsweep/rlsweep/workflows"
)

// trialParent runs a Trial as its child, asks it to report (as Sweep does before a continue-as-new) and
// returns the summary the child signals.
func trialParent(ctx workflow.Context, in workflows.TrialInput) (*results.TrialSummary, error) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "child-trial"})
	f := workflow.ExecuteChildWorkflow(cctx, workflows.Trial, in)
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return nil, err
	}
	if err := workflow.SignalExternalWorkflow(ctx, "child-trial", "", workflows.SignalReportToSweep, nil).Get(ctx, nil); err != nil {
		return nil, err
	}
	var sum results.TrialSummary
	workflow.GetSignalChannel(ctx, workflows.SignalTrialDone).Receive(ctx, &sum)
	if err := f.Get(ctx, nil); err != nil {
		return nil, err
	}
	return &sum, nil
}

func TestTrialSignalsParent(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(workflows.Trial)
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(42)}, nil
		})
	env.ExecuteWorkflow(trialParent, trialInput(20000, 10000, 3))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.TrialID != "3-s7" || sum.Outcome != results.OutcomeCompleted || sum.Objective == nil || *sum.Objective != 42 {
		t.Errorf("signalled summary = %+v, want trial 3-s7 completed with objective 42", sum)
	}
}

// parentOf runs one Trial as its child and counts the trial-done reports it receives by signal; with
// ask it asks the trial to report (as a sweep does at a continue-as-new) while the trial trains.
func parentOf(in workflows.TrialInput, ask bool) func(ctx workflow.Context) (int, error) {
	return func(ctx workflow.Context) (int, error) {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "trial-under-test"})
		f := workflow.ExecuteChildWorkflow(cctx, workflows.Trial, in)
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			return 0, err
		}
		if ask {
			_ = workflow.Sleep(ctx, time.Second)
			_ = workflow.SignalExternalWorkflow(ctx, "trial-under-test", "", workflows.SignalReportToSweep, nil).Get(ctx, nil)
		}
		_ = f.Get(ctx, nil)
		_ = workflow.Sleep(ctx, time.Second) // let a report sent at the end land
		reports := 0
		var sum results.TrialSummary
		for workflow.GetSignalChannel(ctx, workflows.SignalTrialDone).ReceiveAsync(&sum) {
			reports++
		}
		return reports, nil
	}
}

// A trial reports by signal only once asked: the sweep that started it follows it by its future.
func TestTrialReportsBySignalOnlyWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		name string
		ask  bool
		want int
	}{
		{"followed by its future", false, 0},
		{"asked at a continue-as-new", true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
			env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
				&activities.SegmentResult{LastStep: 1000}, nil).After(time.Minute)
			env.ExecuteWorkflow(parentOf(trialInput(1000, 1000, 1), tt.ask))
			var reports int
			if err := env.GetWorkflowResult(&reports); err != nil {
				t.Fatal(err)
			}
			if reports != tt.want {
				t.Errorf("the parent received %d reports by signal, want %d", reports, tt.want)
			}
		})
	}
}
