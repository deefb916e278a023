package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// standbyTrial runs a standby Trial of two segments with signals sent at the given times, and returns
// when its first segment started (0: never) and what each segment was asked to hand off. Its parked
// first segment is never handed a place (as on a worker that does not serve the parked queue, or once
// it gave up waiting): it ends unhanded at once.
func standbyTrial(t *testing.T, signals map[time.Duration]func(*testsuite.TestWorkflowEnvironment), cancelAt time.Duration) (time.Duration, []string, *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	start := env.Now()
	var first time.Duration
	var handOffs []string
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			if in.Parked {
				return &activities.SegmentResult{Unhanded: true}, nil
			}
			if first == 0 {
				first = env.Now().Sub(start)
			}
			handOffs = append(handOffs, in.HandOffTo)
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(1), HandedOff: in.HandOffTo != ""}, nil
		})
	schedule(env, signals, cancelAt)
	env.ExecuteWorkflow(workflows.Trial, standbyInput())
	return first, handOffs, env
}

// schedule sends the signals at their times and cancels the workflow at cancelAt (0: never).
func schedule(env *testsuite.TestWorkflowEnvironment, signals map[time.Duration]func(*testsuite.TestWorkflowEnvironment), cancelAt time.Duration) {
	for at, f := range signals {
		env.RegisterDelayedCallback(func() { f(env) }, at)
	}
	if cancelAt > 0 {
		env.RegisterDelayedCallback(env.CancelWorkflow, cancelAt)
	}
}

// standbyInput is a standby trial of two segments whose successor is 9-s1.
func standbyInput() workflows.TrialInput {
	in := trialInput(2000, 1000, 3)
	in.Standby, in.Successor = true, "9-s1"
	return in
}

func release(fromSweep bool) func(*testsuite.TestWorkflowEnvironment) {
	return func(env *testsuite.TestWorkflowEnvironment) {
		env.SignalWorkflow(workflows.SignalRelease, workflows.Release{FromSweep: fromSweep})
	}
}

func hold(env *testsuite.TestWorkflowEnvironment) { env.SignalWorkflow(workflows.SignalHold, nil) }

// A standby trial trains once released, by the worker of the trial it waits for or by the sweep, and
// its last segment (only) releases its own successor.
func TestStandbyTrialWaitsForItsRelease(t *testing.T) {
	for _, fromSweep := range []bool{false, true} {
		t.Run(fmt.Sprintf("from sweep %v", fromSweep), func(t *testing.T) {
			first, handOffs, env := standbyTrial(t, map[time.Duration]func(*testsuite.TestWorkflowEnvironment){
				time.Hour: release(fromSweep)}, 0)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if first != time.Hour {
				t.Errorf("first segment started at %v, want at its release (1h)", first)
			}
			if fmt.Sprint(handOffs) != "[ 9-s1]" {
				t.Errorf("segments hand off to %q, want the last one only, to 9-s1", handOffs)
			}
			var sum results.TrialSummary
			if err := env.GetWorkflowResult(&sum); err != nil {
				t.Fatal(err)
			}
			if sum.Outcome != results.OutcomeCompleted || !sum.HandedOff || sum.Unstarted || sum.WallSeconds != 0 {
				t.Errorf("summary %+v, want completed, handed off, its wait not counted as its wall time", sum)
			}
		})
	}
}

// Once the sweep held it (paused, concurrency lowered), only the sweep's release starts it: a worker's
// hand-off that arrives afterwards is ignored.
func TestHeldStandbyTrialWaitsForTheSweep(t *testing.T) {
	first, _, env := standbyTrial(t, map[time.Duration]func(*testsuite.TestWorkflowEnvironment){
		time.Minute: hold, time.Hour: release(false), 2 * time.Hour: release(true)}, 0)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if first != 2*time.Hour {
		t.Errorf("first segment started at %v, want at the sweep's release (2h), not the worker's (1h)", first)
	}
}

// A standby trial cancelled before its release never trains and says so.
func TestStandbyTrialCancelledBeforeItsRelease(t *testing.T) {
	first, _, env := standbyTrial(t, nil, time.Hour)
	if first != 0 {
		t.Errorf("a segment started at %v, want none", first)
	}
	err := env.GetWorkflowError()
	if !temporal.IsCanceledError(err) {
		t.Fatalf("error %v, want cancelled", err)
	}
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err == nil && (!sum.Unstarted || sum.Outcome != results.OutcomeCancelled) {
		t.Errorf("summary %+v, want cancelled and unstarted", sum)
	}
}
