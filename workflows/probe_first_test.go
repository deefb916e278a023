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
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
	"github.com/rlsweep/rlsweep/workflows"
)

// An external trainer's probe stage runs probe 1 alone first. A fault there (no result, a crash, an
// invalid record: the trainer does not speak the protocol) ends the stage after that one run, the
// sweep probe_failed with the ladder's own diagnosis; a probe 1 that fails on its values, or passes,
// lets the other nine run. The built-in trainer runs all ten at once.
func TestSweepProbeStageStopsAfterFirstFault(t *testing.T) {
	for _, c := range []struct {
		name    string
		builtin bool
		first   probes.Result
		runs    int
		phase   string
		want    string
	}{
		{"no record", false, probes.Result{Probe: "1", Level: 1, Fault: probes.FaultNoRecord, Error: "the trainer exited 0 but wrote no record to RLSWEEP_PROBE_RESULT"},
			1, workflows.PhaseProbeFailed, "it exited 0 on probe 1, its first probe run, without writing a result to RLSWEEP_PROBE_RESULT"},
		{"crash", false, probes.Result{Probe: "1", Level: 1, Fault: probes.FaultCrashed, Error: "the trainer exited with status 1"},
			1, workflows.PhaseProbeFailed, "the trainer crashed on probe 1 (its first probe run: the stage stopped there and ran no other probe)"},
		{"learning failure", false, probes.Result{Probe: "1", Level: 1, Checks: []probes.Check{{Name: "V(0)", Measured: ptr(0), Expected: 1, Tolerance: 0.15}}},
			10, workflows.PhaseProbeFailed, "probe 1 fails"},
		{"passes", false, probes.Result{Probe: "1", Level: 1, Passed: true}, 10, workflows.PhaseCompleted, ""},
		{"builtin", true, probes.Result{Probe: "1", Level: 1, Passed: true}, 10, "", ""}, // its trials are not faked here
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
			fakes.register(env)
			var res resultsRecorder
			res.mock(env, 2)
			var mu sync.Mutex
			var ran []string
			env.OnActivity(acts.RunProbe, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.ProbeInput) (*activities.ProbeResult, error) {
					mu.Lock()
					defer mu.Unlock()
					ran = append(ran, in.Probe)
					if in.Probe == "1" {
						r := c.first
						return &r, nil
					}
					p, _ := probes.Lookup(probes.ID(in.Probe))
					return &activities.ProbeResult{Probe: p.ID, Level: p.Level, Skipped: strings.HasSuffix(in.Probe, "c"),
						Passed: !strings.HasSuffix(in.Probe, "c")}, nil
				})
			env.OnActivity(acts.RecordProbes, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.RecordProbesInput) (*activities.ProbeReport, error) {
					rep := probes.Diagnose(in.Results)
					return &rep, nil
				})
			spec := sweepSpec(t, []float64{1, 2}, 2, "maximize")
			spec.Probes.Enabled = true
			if c.builtin {
				b, err := sweeps.Decode(strings.NewReader(`name: unit
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
parameters:
  lr: {values: [0.001, 0.002]}
concurrency: 2
`), "unit.yaml")
				if err == nil {
					err = b.Validate()
				}
				if err != nil {
					t.Fatal(err)
				}
				spec = *b
			}
			env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
			if len(ran) != c.runs || ran[0] != "1" && !c.builtin {
				t.Errorf("probes run: %v, want %d, probe 1 first", ran, c.runs)
			}
			if st := queryStatus(t, env); c.phase != "" && st.Phase != c.phase {
				t.Errorf("phase %s, want %s", st.Phase, c.phase)
			}
			err := env.GetWorkflowError()
			if c.builtin {
				return
			}
			if c.want == "" {
				if err != nil {
					t.Errorf("sweep error: %v", err)
				}
				return
			}
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != workflows.ErrProbeFailed || !appErr.NonRetryable() {
				t.Fatalf("sweep error: got %v, want a non-retryable %s failure", err, workflows.ErrProbeFailed)
			}
			for _, w := range []string{"probe stage failed, no trial started", c.want} {
				if !strings.Contains(appErr.Error(), w) {
					t.Errorf("failure message lacks %q:\n%s", w, appErr.Error())
				}
			}
			if c.runs == 1 {
				for _, w := range []string{"docs/probes.md", "`probes: {enabled: false}`"} {
					if !strings.Contains(appErr.Error(), w) {
						t.Errorf("failure message lacks the fix %q:\n%s", w, appErr.Error())
					}
				}
			}
			if n := len(fakes.startCounts()); n != 0 {
				t.Errorf("trials started: got %d, want 0", n)
			}
		})
	}
}
