package workflows_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

func confirmSpec(t *testing.T) sweeps.Spec {
	t.Helper()
	spec, err := sweeps.Decode(strings.NewReader(`name: unit
trainer: {command: [train], total_steps: 1000}
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
parameters:
  lr: {values: [0.1, 0.2]}
resources: {gpu_class: h100}
confirm: {gpu_classes: [a100], top: 1}
probes: {enabled: false}
concurrency: 2
`), "unit.yaml")
	if err == nil {
		err = spec.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	return *spec
}

// confirmEnv is a test environment for confirmSpec's sweep: fake trials of a minute each and the
// results activities recorded.
func confirmEnv() (*testsuite.TestWorkflowEnvironment, *fakeTrials, *resultsRecorder) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes.register(env)
	res := &resultsRecorder{}
	res.mock(env, 2)
	return env, fakes, res
}

// Once both search trials ended, the pick's configuration re-runs on the a100 queue, asked at no
// boundary; a continue-as-new while it runs carries the pick and the note.
func TestSweepConfirmReRunsThePickOnItsClass(t *testing.T) {
	env, fakes, _ := confirmEnv()
	env.OnActivity(acts.PickConfirm, mock.Anything, mock.Anything).Return(
		[]sweeps.Trial{{Config: 1, Params: map[string]any{"lr": 0.2}}}, nil)
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 90*time.Second)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(confirmSpec(t)))
	next := continuedInput(t, env)
	st := next.State
	if st == nil || st.Scheduler.Confirm == nil || len(st.Scheduler.Confirm.Trials) != 1 || st.Scheduler.Confirm.Next != 1 {
		t.Fatalf("carried state %+v, want the one re-run picked and started", st)
	}
	if st.ConfirmNote != "confirm: configurations 1 re-run on a100" || st.Lanes != nil {
		t.Errorf("carried note %q, lanes %+v; want the note and no hand-off", st.ConfirmNote, st.Lanes)
	}
	fakes.mu.Lock()
	defer fakes.mu.Unlock()
	var rerun *workflows.TrialInput
	for i, in := range fakes.inputs {
		if in.Trial.ID == "1-s1-a100" {
			rerun = &fakes.inputs[i]
		} else if in.TaskQueue != "rlsweep-gpu-h100" {
			t.Errorf("search trial %s on %s, want rlsweep-gpu-h100", in.Trial.ID, in.TaskQueue)
		}
	}
	if rerun == nil || rerun.TaskQueue != "rlsweep-gpu-a100" || rerun.AskAtBoundaries || len(rerun.Rungs) > 0 ||
		rerun.Trial.GPUClass != "a100" || rerun.Trial.Params["lr"] != 0.2 {
		t.Fatalf("re-run input %+v, want 1-s1-a100 on rlsweep-gpu-a100, lr 0.2, never asked at a boundary", rerun)
	}
}

// A pick that fails for good confirms nothing: the sweep completes on the search's results and its
// summary says why.
func TestSweepConfirmPickFailureKeepsTheSearch(t *testing.T) {
	env, _, res := confirmEnv()
	env.OnActivity(acts.PickConfirm, mock.Anything, mock.Anything).Return(nil,
		temporal.NewNonRetryableApplicationError("read results: store unreachable", "Store", errors.New("down")))
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(confirmSpec(t)))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("sweep failed: %v", err)
	}
	var out workflows.SweepResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != workflows.PhaseCompleted || out.Total != 2 ||
		!strings.Contains(out.Summary, "confirm: not run: picking the best configurations failed: read results: store unreachable") {
		t.Errorf("result %s, total %d, summary %q; want completed, 2 trials, the failed pick", out.Status, out.Total, out.Summary)
	}
	if len(res.writes) != 1 {
		t.Errorf("results written %d times, want once", len(res.writes))
	}
}
