package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/workflows"
)

// stopCall is one StopSegment the trial sent: the attempt it names and the queue it went to.
type stopCall struct{ attempt, queue string }

// stopChannelEnv runs a trial whose one segment trains until it is cancelled, and records the
// StopSegment activities the trial sends.
func stopChannelEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, func() []stopCall) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	stopped := make(chan struct{}, 8)
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			select {
			case <-ctx.Done():
			case <-stopped:
			}
			return nil, temporal.NewCanceledError(activities.SegmentResult{LastStep: 500})
		})
	var mu sync.Mutex
	var calls []stopCall
	env.OnActivity(acts.StopSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, req activities.StopSegmentRequest) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, stopCall{req.Attempt, activity.GetInfo(ctx).TaskQueue})
			stopped <- struct{}{}
			return true, nil
		})
	// The test environment ends a cancelled activity at once and the trial with it: the StopSegment it
	// scheduled runs on after the workflow has returned.
	return env, func() []stopCall {
		deadline := time.Now().Add(time.Second)
		for {
			mu.Lock()
			got := append([]stopCall(nil), calls...)
			mu.Unlock()
			if len(got) > 0 || time.Now().After(deadline) {
				return got
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func announce(env *testsuite.TestWorkflowEnvironment, at time.Duration, attempt string) {
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(activities.SignalSegmentStarted, activities.SegmentStarted{StopQueue: "rlsweep-stop/host-a/1/ab", Attempt: attempt})
	}, at)
}

// A prune during a segment is sent to the stop queue the segment's attempt announced, naming that
// attempt, once; the trial ends pruned.
func TestPruneIsSentToTheAnnouncedStopQueue(t *testing.T) {
	env, calls := stopChannelEnv(t)
	announce(env, time.Second, "trial/run/5#1")
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalStopTrial, scheduler.Decision{Action: scheduler.Stop, Reason: "below the cutoff", Outcome: results.OutcomePruned})
	}, 2*time.Second)
	in := trialInput(2000, 1000, 1)
	in.AskAtBoundaries = true
	env.ExecuteWorkflow(workflows.Trial, in)
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomePruned {
		t.Errorf("trial %s, want pruned", sum.Outcome)
	}
	want := []stopCall{{"trial/run/5#1", "rlsweep-stop/host-a/1/ab"}}
	if got := calls(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("StopSegment calls %+v, want %+v", got, want)
	}
}

// A cancelled trial sends the stop too; an attempt announced after the cancellation (a retry that
// started meanwhile) is sent one as its announcement arrives, and an attempt already sent one is not
// sent another.
func TestCancelIsSentToEveryAttemptAnnounced(t *testing.T) {
	env, calls := stopChannelEnv(t)
	announce(env, time.Second, "trial/run/5#1")
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Second)
	announce(env, 3*time.Second, "trial/run/5#1")
	in := trialInput(2000, 1000, 1)
	env.ExecuteWorkflow(workflows.Trial, in)
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("trial ended with %v, want cancelled", err)
	}
	if got := calls(); len(got) != 1 || got[0].attempt != "trial/run/5#1" {
		t.Errorf("StopSegment calls %+v, want one, for attempt trial/run/5#1", got)
	}
}

// Without an announcement (a worker without a stop queue) a stop is the cancellation alone.
func TestStopWithoutAnnouncementSendsNothing(t *testing.T) {
	env, calls := stopChannelEnv(t)
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Second)
	env.ExecuteWorkflow(workflows.Trial, trialInput(2000, 1000, 1))
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("trial ended with %v, want cancelled", err)
	}
	if got := calls(); len(got) != 0 {
		t.Errorf("StopSegment calls %+v, want none", got)
	}
}
