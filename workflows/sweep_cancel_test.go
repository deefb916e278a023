package workflows_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/workflows"
)

func TestSweepCancelWhilePlanning(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes.register(env)
	env.OnActivity(acts.Plan, mock.Anything, mock.Anything).Return(&activities.PlanResult{Trials: 2}, nil).After(time.Hour)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{1, 2}, 2, "maximize")))

	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("sweep error %v, want a CanceledError", err)
	}
	if st := queryStatus(t, env); st.Phase != workflows.PhaseCancelled || st.Started != 0 {
		t.Errorf("status = %+v, want cancelled with no trial started", st)
	}
	if n := len(fakes.startCounts()); n != 0 {
		t.Errorf("%d trials started, want none", n)
	}
}

func TestSweepCancel(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Trial 0 takes 10 minutes, the others an hour: at 30 minutes 0 has completed, 1 and 2 run.
	fakes := newFakeTrials(func(c int) time.Duration {
		if c == 0 {
			return 10 * time.Minute
		}
		return time.Hour
	})
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 6)
	cancelledChildren := map[string]bool{}
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, _ converter.EncodedValue, err error) {
		if temporal.IsCanceledError(err) {
			cancelledChildren[info.WorkflowExecution.ID] = true
		}
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, 30*time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{0, 1, 2, 3, 4, 5}, 2, "maximize")))

	var canceled *temporal.CanceledError
	err := env.GetWorkflowError()
	if !errors.As(err, &canceled) {
		t.Fatalf("sweep error %v, want a CanceledError", err)
	}
	var out *workflows.SweepResult // the test environment hands details back as the workflow's values
	if !canceled.HasDetails() || canceled.Details(&out) != nil || out == nil {
		t.Fatalf("cancelled sweep carries no SweepResult")
	}
	if out.Status != workflows.PhaseCancelled || out.Counts["completed"] != 1 || out.Counts["cancelled"] != 2 {
		t.Errorf("result = %+v, want cancelled with 1 completed and 2 cancelled", out)
	}
	// 3-s1, 4-s1 and 5-s1 waited as standby trials (behind 1-s1, 2-s1 and 3-s1): cancelled too, never
	// trained, not recorded.
	if got := fmt.Sprint(sortedSet(cancelledChildren)); got != "[sweep/unit/abc/trial/1-s1 sweep/unit/abc/trial/2-s1 sweep/unit/abc/trial/3-s1 sweep/unit/abc/trial/4-s1 sweep/unit/abc/trial/5-s1]" {
		t.Errorf("children cancelled: %s, want trials 1-s1 and 2-s1 and the standby 3-s1, 4-s1 and 5-s1", got)
	}
	if got := fmt.Sprint(sortedStrings(fakes.released)); got != "[0-s1 1-s1 2-s1]" {
		t.Errorf("trials that trained: %s, want 0-s1, 1-s1 and 2-s1 only", got)
	}
	if starts := fakes.startCounts(); len(starts) != 6 {
		t.Errorf("trials started: %v, want 0-s1 to 5-s1", starts)
	}
	byID, times := res.recorded()
	if len(times) != 3 {
		t.Errorf("trials recorded: %v, want 0-s1, 1-s1 and 2-s1 only", times)
	}
	// The test environment ends a cancelled child at once without running its code, so trials 1 and 2
	// never signal (on a real server they do: see testdata/sweep-cancelled.json and integration/): the
	// sweep records them as cancelled from their cancelled completion, without waiting out its grace.
	for id, want := range map[string]string{"0-s1": "completed", "1-s1": "cancelled", "2-s1": "cancelled"} {
		if byID[id].Outcome != want || times[id] != 1 {
			t.Errorf("trial %s recorded %d times as %q, want once as %q", id, times[id], byID[id].Outcome, want)
		}
	}
	if got := byID["1-s1"].Error; got != "" {
		t.Errorf("trial 1-s1 error %q, want none: its cancelled completion is its report", got)
	}
	if len(res.writes) != 1 || res.writes[0].Status != workflows.PhaseCancelled {
		t.Errorf("WriteResults calls = %+v, want one with status cancelled", res.writes)
	}
}

// A cancel that arrives while a results part is being stored ends the sweep cancelled with every
// finished trial stored and results written; it used to fail the sweep with the part's 100 trials lost.
func TestSweepCancelWhileStoringResultsLosesNothing(t *testing.T) {
	qs := make([]float64, 300)
	for i := range qs {
		qs[i] = float64(i)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The first 100 finish at 1 minute; their part takes 2 minutes to store; the cancel comes at 2.
	newFakeTrials(func(c int) time.Duration {
		if c < 100 {
			return time.Minute
		}
		return time.Hour
	}).register(env)
	res := resultsRecorder{recordDelay: 2 * time.Minute}
	res.mock(env, len(qs))
	// Standby trials end at once when the sweep's context is cancelled; the test environment sends the
	// sweep's explicit request to a closed child to the mock.
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(errors.New("workflow execution already completed"))
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 100, "maximize")))
	byID := cancelledResult(t, env, &res)
	for i := range 100 {
		if id := fmt.Sprintf("%d-s1", i); byID[id].Outcome != results.OutcomeCompleted {
			t.Fatalf("trial %s stored as %+v, want completed (%d trials stored)", id, byID[id], len(byID))
		}
	}
}

// The same at a continue-as-new: the cancel comes while the run stores its results before closing.
func TestSweepCancelWhileContinuingAsNewLosesNothing(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Hour })
	fakes.register(env)
	res := resultsRecorder{recordDelay: 2 * time.Minute}
	res.mock(env, 8)
	// The sweep's cancel reaches its children through its context too; a standby trial ends at once,
	// and the test environment sends the sweep's explicit request to a closed child to the mock.
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(errors.New("workflow execution already completed"))
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 90*time.Minute)
	env.RegisterDelayedCallback(env.CancelWorkflow, 91*time.Minute)
	in := sweepInput(sweepSpec(t, []float64{0, 1, 2, 3, 4, 5, 6, 7}, 3, "maximize"))
	in.ResultsFlushInterval = 1000 * time.Hour // only the store before the continue-as-new
	env.ExecuteWorkflow(workflows.Sweep, in)
	byID := cancelledResult(t, env, &res)
	if byID["0-s1"].Outcome != results.OutcomeCompleted {
		t.Errorf("trial 0-s1 (done at 60 minutes) stored as %+v, want completed", byID["0-s1"])
	}
	for _, id := range []string{"1-s1", "2-s1", "3-s1"} {
		if byID[id].Outcome != results.OutcomeCancelled {
			t.Errorf("trial %s (running at the cancel) stored as %+v, want cancelled", id, byID[id])
		}
	}
}

// A trial carried over from an earlier run that closed unheard (asked to report after it had ended) is
// looked up when the sweep is cancelled, since the cancel request cannot reach it: it is stored with its
// result at once, not as cancelled after the 10-minute wait for reports.
func TestSweepCancelLooksUpClosedCarriedTrial(t *testing.T) {
	env, res, in := closedCarriedTrial(t)
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(errors.New("workflow execution already completed"))
	start := env.Now()
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Second) // before the first carried check
	env.ExecuteWorkflow(workflows.Sweep, in)
	byID := cancelledResult(t, env, res)
	if got := byID["4-s1"]; got.Outcome != results.OutcomeCompleted || got.Objective == nil || *got.Objective != 4 {
		t.Errorf("carried trial 4-s1 stored as %+v, want completed with objective 4", got)
	}
	if took := env.Now().Sub(start); took > 5*time.Minute {
		t.Errorf("the cancel took %v of workflow time, want no wait for a report that cannot come", took)
	}
}

// A sweep that cannot store its results after fan-out fails with phase failed, and its running trials
// are cancelled: started with the abandon close policy, they would otherwise train on with no sweep to
// report to, while status said running. Here the store before a continue-as-new fails for good.
func TestSweepFailingAtContinueAsNewStopsItsTrials(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Hour }).register(env)
	env.OnActivity(acts.Plan, mock.Anything, mock.Anything).Return(&activities.PlanResult{PlanKey: "p", Trials: 4}, nil)
	env.OnActivity(acts.RecordResults, mock.Anything, mock.Anything).Return(
		temporal.NewNonRetryableApplicationError("store gone", "StoreGone", nil))
	cancelledChildren := map[string]bool{}
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, _ converter.EncodedValue, err error) {
		if temporal.IsCanceledError(err) {
			cancelledChildren[info.WorkflowExecution.ID] = true
		}
	})
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 90*time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{0, 1, 2, 3}, 2, "maximize")))
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "store gone") {
		t.Fatalf("sweep error %v, want the store's failure", err)
	}
	if st := queryStatus(t, env); st.Phase != workflows.PhaseFailed {
		t.Errorf("phase %q after the sweep failed, want %q", st.Phase, workflows.PhaseFailed)
	}
	// At 90 minutes trial 0 has completed and trials 1 and 2 run, 3 waits as a standby trial behind 1.
	if got := fmt.Sprint(sortedSet(cancelledChildren)); got != "[sweep/unit/abc/trial/1-s1 sweep/unit/abc/trial/2-s1 sweep/unit/abc/trial/3-s1]" {
		t.Errorf("children cancelled: %s, want the running trials 1-s1 and 2-s1 and the standby 3-s1", got)
	}
}

// The final write failing for good: the sweep fails with phase failed, not stuck at reporting.
func TestSweepFailingToWriteResultsRecordsFailed(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(int) time.Duration { return time.Minute }).register(env)
	env.OnActivity(acts.Plan, mock.Anything, mock.Anything).Return(&activities.PlanResult{PlanKey: "p", Trials: 2}, nil)
	env.OnActivity(acts.RecordResults, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(acts.WriteResults, mock.Anything, mock.Anything).Return(nil,
		temporal.NewNonRetryableApplicationError("store gone", "StoreGone", nil))
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{0, 1}, 2, "maximize")))
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("sweep succeeded, want the store's failure")
	}
	if st := queryStatus(t, env); st.Phase != workflows.PhaseFailed {
		t.Errorf("phase %q after the sweep failed, want %q", st.Phase, workflows.PhaseFailed)
	}
}

// While a cancelled sweep stops its trials and waits for their reports (up to 10 minutes), status says
// cancelling, and pause and set-concurrency are refused: they were accepted, and watch showed a
// healthy, paused sweep that was being torn down.
func TestSweepCancellingRefusesChanges(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(int) time.Duration { return time.Hour }).register(env)
	var res resultsRecorder
	res.mock(env, 5)
	env.OnActivity(acts.CheckTrials, mock.Anything, mock.Anything).Return(&activities.CheckTrialsResult{}, nil)
	env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
	in := sweepInput(sweepSpec(t, []float64{0, 1, 2, 3, 4}, 2, "maximize"))
	in.SpecYAML = ""
	// A carried-over trial that never reports: the cancel waits for it.
	in.State = &workflows.SweepState{Phase: workflows.PhaseRunning, Scheduler: scheduler.State{Next: 5}, Running: []string{"4-s1"},
		Counts: map[string]int{"completed": 4}, Part: 1, Concurrency: 2, Runs: 1}
	env.RegisterDelayedCallback(env.CancelWorkflow, 2*time.Second)
	pause := &updateCall{name: workflows.UpdatePause, wantErr: "pause: sweep is cancelling, want a sweep that is still running"}
	conc := &updateCall{name: workflows.UpdateConcurrency, args: []any{7}, wantErr: "set-concurrency: sweep is cancelling"}
	var st workflows.SweepStatus
	env.RegisterDelayedCallback(func() { pause.send(env) }, time.Minute)
	env.RegisterDelayedCallback(func() { conc.send(env) }, 2*time.Minute)
	env.RegisterDelayedCallback(func() { st = queryStatus(t, env) }, 3*time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, in)
	pause.check(t)
	conc.check(t)
	if st.Phase != workflows.PhaseCancelling || st.Paused || st.Concurrency != 2 {
		t.Errorf("status while cancelling: phase %q, paused %v, concurrency %d; want cancelling, not paused, 2", st.Phase, st.Paused, st.Concurrency)
	}
}

func sortedSet(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sortedStrings returns a sorted copy.
func sortedStrings(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

// cancelledResult checks that the sweep ended cancelled, having stored its results once, and returns
// every trial the stored parts hold (a trial in two parts, as after a cancel during a store, counts once).
func cancelledResult(t *testing.T, env *testsuite.TestWorkflowEnvironment, res *resultsRecorder) map[string]results.TrialSummary {
	t.Helper()
	var canceled *temporal.CanceledError
	if err := env.GetWorkflowError(); !errors.As(err, &canceled) {
		t.Fatalf("sweep error %v, want a CanceledError", err)
	}
	if len(res.writes) != 1 || res.writes[0].Status != workflows.PhaseCancelled {
		t.Errorf("WriteResults calls = %+v, want one with status cancelled", res.writes)
	}
	byID, _ := res.recorded()
	return byID
}
