package workflows_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/workflows"
)

// mockProbes makes RunProbe fail the probes in failing (and skip the continuous ones), and RecordProbes
// report the lowest failure as the ladder would. It returns the probes run.
func mockProbes(env *testsuite.TestWorkflowEnvironment, failing map[string]bool) func() []string {
	var mu sync.Mutex
	var ran []string
	env.OnActivity(acts.RunProbe, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ProbeInput) (*activities.ProbeResult, error) {
			mu.Lock()
			ran = append(ran, in.Probe)
			mu.Unlock()
			r := &activities.ProbeResult{Probe: activities.ProbeID(in.Probe[:1]), Passed: !failing[in.Probe]}
			r.Level = int(in.Probe[0] - '0')
			if strings.HasSuffix(in.Probe, "c") {
				r.Probe, r.Skipped, r.Passed = r.Probe+"c", true, false
			}
			return r, nil
		})
	env.OnActivity(acts.RecordProbes, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecordProbesInput) (*activities.ProbeReport, error) {
			rep := &activities.ProbeReport{Passed: true, Results: in.Results, Diagnosis: "all pass"}
			for _, r := range in.Results {
				if !r.Passed && !r.Skipped && rep.Passed {
					rep.Passed, rep.Failed, rep.Diagnosis = false, r.Probe, "probe "+string(r.Probe)+" fails: the bug is in what it adds"
				}
			}
			return rep, nil
		})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ran...)
	}
}

func TestSweepProbeStage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		failing map[string]bool
	}{
		{"pass", nil},
		{"probe 3 fails", map[string]bool{"3": true, "5": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
			fakes.register(env)
			var res resultsRecorder
			res.mock(env, 2)
			ran := mockProbes(env, tt.failing)
			spec := sweepSpec(t, []float64{1, 2}, 2, "maximize")
			spec.Probes.Enabled = true

			env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))

			if got := len(ran()); got != 10 {
				t.Errorf("probes run: got %d (%v), want 10", got, ran())
			}
			st := queryStatus(t, env)
			err := env.GetWorkflowError()
			if tt.failing == nil {
				if err != nil || st.Phase != workflows.PhaseCompleted || len(fakes.startCounts()) != 2 {
					t.Errorf("got error %v, phase %s, %d trials started; want a completed sweep of 2", err, st.Phase, len(fakes.startCounts()))
				}
				return
			}
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != workflows.ErrProbeFailed {
				t.Fatalf("sweep error: got %v, want a %s failure", err, workflows.ErrProbeFailed)
			}
			if !strings.Contains(appErr.Error(), "probe 3 fails") || !strings.Contains(appErr.Error(), "no trial started") {
				t.Errorf("failure message %q does not give the diagnosis", appErr.Error())
			}
			var rep activities.ProbeReport
			if err := appErr.Details(&rep); err != nil || rep.Failed != "3" {
				t.Errorf("failure details: got %+v (%v), want the report naming probe 3", rep, err)
			}
			if st.Phase != workflows.PhaseProbeFailed {
				t.Errorf("phase: got %s, want %s", st.Phase, workflows.PhaseProbeFailed)
			}
			if n := len(fakes.startCounts()); n != 0 {
				t.Errorf("trials started: got %d, want 0", n)
			}
			v, err := env.QueryWorkflow(workflows.QueryProbes)
			if err != nil {
				t.Fatal(err)
			}
			var q activities.ProbeReport
			if err := v.Get(&q); err != nil || q.Failed != "3" {
				t.Errorf("probes query: got %+v (%v), want probe 3 failed", q, err)
			}
		})
	}
}
