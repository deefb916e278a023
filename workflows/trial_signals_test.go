package workflows_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/workflows"
)

// warnings records the lines logged at Warn or Error.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) Debug(string, ...any) {}
func (w *warnings) Info(string, ...any)  {}
func (w *warnings) Warn(msg string, kv ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprint("WARN ", msg, kv))
}
func (w *warnings) Error(msg string, kv ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprint("ERROR ", msg, kv))
}

// Signals that come too late to matter are taken as the trial ends, not left for the SDK to warn of as
// unhandled: a stop the sweep sent as the trial's segment ended, a worker's release of a trial the
// sweep had released, a second request to report. The trial ends as it would have without them.
func TestTrialEndsWithoutUnhandledSignals(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	var log warnings
	s.SetLogger(&log)
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(1), CheckpointKey: "ck"}, nil
		}).After(time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalRelease, workflows.Release{FromSweep: true})
	}, time.Second)
	for _, at := range []time.Duration{10 * time.Second, 20 * time.Second} {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(workflows.SignalRelease, workflows.Release{}) // the worker's, after the sweep's
		}, at)
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalStopTrial, scheduler.Decision{Action: scheduler.Stop, Reason: "late"})
		env.SignalWorkflow(workflows.SignalHold, nil)
	}, 30*time.Second)
	in := trialInput(1000, 1000, 1)
	in.Standby = true // released by the sweep at 1 s; AskAtBoundaries unset: no stop is listened for
	env.ExecuteWorkflow(workflows.Trial, in)
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeCompleted || sum.Segments != 1 {
		t.Errorf("trial %s after %d segments, want completed after 1", sum.Outcome, sum.Segments)
	}
	if len(log.lines) > 0 {
		t.Errorf("logged at Warn or Error:\n%s", strings.Join(log.lines, "\n"))
	}
}
