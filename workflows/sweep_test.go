package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

func TestSweepSlidingWindowResultsAndLeader(t *testing.T) {
	qs := []float64{5, 9, 1, 7, 3, 8, 2, 6, 4, 0}
	for _, tt := range []struct {
		goal   string
		leader string
	}{
		{"maximize", "5-s1"}, // q 9 (1-s1) diverged; 8 is the best completed
		{"minimize", "2-s1"}, // q 0 (9-s1) failed; 1 is the best completed
	} {
		t.Run(tt.goal, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c%4+1) * time.Minute })
			fakes.outcome = func(c int) string {
				switch c {
				case 1:
					return results.OutcomeDiverged
				case 9:
					return results.OutcomeFailed
				}
				return ""
			}
			fakes.register(env)
			var res resultsRecorder
			res.mock(env, len(qs))
			var mid workflows.SweepStatus
			env.RegisterDelayedCallback(func() { mid = queryStatus(t, env) }, 150*time.Second)

			env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 3, tt.goal)))

			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("sweep error: %v", err)
			}
			if fakes.maxAtOnce != 3 {
				t.Errorf("at most %d trials ran at once, want exactly the concurrency, 3", fakes.maxAtOnce)
			}
			if len(fakes.reportedBySignal) != 0 {
				t.Errorf("trials %v reported by signal, want none: the sweep follows its own trials by their futures", fakes.reportedBySignal)
			}
			starts := fakes.startCounts()
			byID, times := res.recorded()
			for i := range qs {
				id := fmt.Sprintf("%d-s1", i)
				if starts[id] != 1 || times[id] != 1 {
					t.Errorf("trial %s started %d times and recorded %d times, want once each", id, starts[id], times[id])
				}
			}
			if len(byID) != len(qs) {
				t.Errorf("%d trials recorded, want %d", len(byID), len(qs))
			}
			if len(res.writes) != 1 || res.writes[0].Status != workflows.PhaseCompleted || res.writes[0].SweepID != "sweep/unit/abc" {
				t.Errorf("WriteResults calls = %+v, want one for sweep/unit/abc with status completed", res.writes)
			}
			var out workflows.SweepResult
			if err := env.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			wantCounts := map[string]int{"completed": 8, "diverged": 1, "failed": 1}
			if out.Status != workflows.PhaseCompleted || out.Total != len(qs) || fmt.Sprint(out.Counts) != fmt.Sprint(wantCounts) ||
				out.ResultsKey != "r.json" || out.CSVKey != "r.csv" {
				t.Errorf("result = %+v, want completed, %d trials, counts %v, keys r.json and r.csv", out, len(qs), wantCounts)
			}
			final := queryStatus(t, env)
			if final.Leader == nil || final.Leader.TrialID != tt.leader {
				t.Errorf("leader = %+v, want %s", final.Leader, tt.leader)
			}
			if final.Phase != workflows.PhaseCompleted || final.Started != len(qs) || len(final.Running) != 0 {
				t.Errorf("final status = %+v, want completed with all %d started, none running", final, len(qs))
			}
			// At 2m30s: trials 0 (1m) and 1 (2m) have ended; 2 (3m), 3 (started at 1m) and 4 (at 2m) run.
			if mid.Phase != workflows.PhaseRunning || mid.Total != len(qs) || mid.Started != 5 ||
				fmt.Sprint(mid.Running) != "[2-s1 3-s1 4-s1]" || mid.Concurrency != 3 || mid.Runs != 1 || mid.Paused ||
				finishedCount(mid.Counts) != 2 {
				t.Errorf("status at 2m30s = %+v, want running, 5 started, [2-s1 3-s1 4-s1] running, 2 finished", mid)
			}
		})
	}
}

// Trials carry their parameter values as the RlsweepParams search attribute exactly when Plan found it
// registered on the namespace; without it they start all the same.
func TestSweepTrialsCarryParamsWhereRegistered(t *testing.T) {
	qs := []float64{0.5, 3, 1e-05}
	for _, registered := range []bool{true, false} {
		t.Run(fmt.Sprint("registered=", registered), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
			fakes.register(env)
			res := resultsRecorder{paramsAttribute: registered}
			res.mock(env, len(qs))
			env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 2, "maximize")))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("sweep error: %v", err)
			}
			if got := len(fakes.startCounts()); got != len(qs) {
				t.Fatalf("%d trials started, want %d", got, len(qs))
			}
			want := map[string][]string{"0-s1": {"q=0.5"}, "1-s1": {"q=3"}, "2-s1": {"q=1e-05"}}
			if !registered {
				want = nil
			}
			if len(fakes.params) != len(want) {
				t.Fatalf("RlsweepParams %v, want %v", fakes.params, want)
			}
			for id, kws := range want {
				if !slices.Equal(fakes.params[id], kws) {
					t.Errorf("trial %s RlsweepParams %q, want %q", id, fakes.params[id], kws)
				}
			}
		})
	}
}

// RlsweepParams stays within what the server accepts whatever the parameters: each keyword at most 255
// bytes and valid UTF-8, the encoded list under the 2 KiB value limit, parameters kept in spec order.
func TestSweepParamsAttributeBounded(t *testing.T) {
	var params strings.Builder
	long := strings.Repeat("é", 200) // 400 bytes
	for i := range 20 {
		fmt.Fprintf(&params, "  p%02d: {value: \"\\\"%s%d\"}\n", i, long, i) // a quote to escape, then 400 bytes
	}
	y := "name: unit\ntrainer: {command: [train], total_steps: 1000}\nseeds: [1]\nparameters:\n" + params.String() +
		"probes: {enabled: false}\n"
	spec, err := sweeps.Decode(strings.NewReader(y), "unit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes.register(env)
	res := resultsRecorder{paramsAttribute: true}
	res.mock(env, 1)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(*spec))
	// The fake trial has no q to score, so it fails, and so does the sweep: the attribute was set at its start.
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); err != nil && !(errors.As(err, &app) && app.Type() == workflows.ErrAllTrialsFailed) {
		t.Fatalf("sweep error: %v", err)
	}
	kws := fakes.params["0-s1"]
	encoded, _ := json.Marshal(kws)
	if len(kws) == 0 || len(kws) == 20 || len(encoded) > 2048 {
		t.Fatalf("RlsweepParams has %d of 20 keywords, %d bytes encoded; want some left out and at most 2048", len(kws), len(encoded))
	}
	for i, kw := range kws {
		if len(kw) > 255 || !utf8.ValidString(kw) || !strings.HasPrefix(kw, fmt.Sprintf("p%02d=\"é", i)) {
			t.Errorf("keyword %d: %d bytes, valid UTF-8 %v, %.12q...; want p%02d=\"é... within 255 bytes", i, len(kw), utf8.ValidString(kw), kw, i)
		}
	}
}

// A sweep in which every trial failed ends failed, not completed, its results written all the same:
// the workflow fails too (the Web UI shows it failed) with a non-retryable AllTrialsFailed error whose
// message says why and whose details are the result; status, the result and the memo carry the
// outcome and the last failure's error. One trial that did not fail is enough for completed, with the
// best configuration and its objective in the result and the memo.
func TestSweepEveryTrialFailedFails(t *testing.T) {
	for _, tt := range []struct {
		name   string
		failed func(int) bool
		want   string
	}{
		{"all failed", func(int) bool { return true }, workflows.PhaseFailed},
		{"one completed", func(c int) bool { return c != 1 }, workflows.PhaseCompleted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Minute })
			fakes.outcome = func(c int) string {
				if tt.failed(c) {
					return results.OutcomeFailed
				}
				return ""
			}
			fakes.register(env)
			var res resultsRecorder
			res.mock(env, 3)
			memo := map[string]any{}
			env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
				for k, v := range args.Get(0).(map[string]any) {
					memo[k] = v
				}
			}).Return(nil)
			env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{1, 2, 3}, 3, "maximize")))
			var out workflows.SweepResult
			werr := env.GetWorkflowError()
			if tt.want == workflows.PhaseFailed {
				var app *temporal.ApplicationError
				if !errors.As(werr, &app) || app.Type() != workflows.ErrAllTrialsFailed || !app.NonRetryable() {
					t.Fatalf("sweep error %v, want a non-retryable %s failure", werr, workflows.ErrAllTrialsFailed)
				}
				if !strings.Contains(app.Message(), "all 3 trials failed") || !strings.Contains(app.Message(), "trial 2-s1: trainer exited with status 2") {
					t.Errorf("failure message %q, want the count and the last failure", app.Message())
				}
				if err := app.Details(&out); err != nil {
					t.Fatalf("failure details: %v, want the sweep's result", err)
				}
			} else {
				if werr != nil {
					t.Fatal(werr)
				}
				if err := env.GetWorkflowResult(&out); err != nil {
					t.Fatal(err)
				}
			}
			st := queryStatus(t, env)
			if out.Status != tt.want || st.Phase != tt.want || len(res.writes) != 1 || res.writes[0].Status != tt.want {
				t.Errorf("result %q, status %q, WriteResults %+v; want %s", out.Status, st.Phase, res.writes, tt.want)
			}
			if memo[workflows.MemoOutcome] != tt.want || memo[workflows.MemoSummary] != out.Summary || out.Summary == "" {
				t.Errorf("memo %v, result summary %q; want outcome %s and the result's summary", memo, out.Summary, tt.want)
			}
			// Workflow time: the last trial ends at 3 minutes.
			// The memo's trial count is the trials the sweep ran, for `rlsweep list`.
			if memo[workflows.MemoTrials] != 3 {
				t.Errorf("memo trials %v, want 3 (the trials run)", memo[workflows.MemoTrials])
			}
			if out.Took != "3m0s" || out.TookSeconds != 180 || memo[workflows.MemoTook] != "3m0s" {
				t.Errorf("took %q (%v s), memo %v; want 3m0s, 180 s", out.Took, out.TookSeconds, memo[workflows.MemoTook])
			}
			// Trial 2 ends last (3 minutes).
			const cause = "trial 2-s1: trainer exited with status 2 at step 0; log tail:\ncause of 2-s1"
			for what, lf := range map[string]*results.TrialSummary{"status": st.LastFailure, "result": out.LastFailure} {
				if lf == nil || lf.TrialID != "2-s1" || lf.Error != cause {
					t.Errorf("%s's last failure = %+v, want 2-s1 with %q", what, lf, cause)
				}
			}
			switch tt.want {
			case workflows.PhaseFailed:
				const want = "failed: all 3 trials failed; last failure: trial 2-s1: trainer exited with status 2 at step 0; log tail:"
				if out.Summary != want || out.Best != nil || memo[workflows.MemoBest] != nil {
					t.Errorf("summary %q, best %+v, memo best %v; want %q and no best", out.Summary, out.Best, memo[workflows.MemoBest], want)
				}
			default:
				const want = "completed: 3 trials (1 completed, 2 failed); best config 1 (q=2): reward 2, mean over 1 seed"
				b := out.Best
				if out.Summary != want || b == nil || b.Config != 1 || b.Objective != 2 || b.Seeds != 1 || b.Metric != "reward" || !bestIs(memo[workflows.MemoBest], b) {
					t.Errorf("summary %q, best %+v, memo best %v; want %q and config 1 best", out.Summary, b, memo[workflows.MemoBest], want)
				}
			}
		})
	}
}

// bestIs says whether a memo's best configuration is want.
func bestIs(memo any, want *activities.BestConfig) bool {
	got, ok := memo.(*activities.BestConfig)
	return ok && got != nil && want != nil && got.Config == want.Config && got.Objective == want.Objective &&
		got.Seeds == want.Seeds && fmt.Sprint(got.Params) == fmt.Sprint(want.Params)
}

// A trial workflow that ends without its report (terminated by hand) counts as failed, whether trials
// are still to start (1-s1) or it is the last one running (2-s1: nothing else would wake the sweep).
func TestSweepTrialEndingWithoutReportIsFailed(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Minute })
	fakes.silent = map[string]bool{"1-s1": true, "2-s1": true}
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 3)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{1, 2, 3}, 2, "maximize")))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, _ := res.recorded()
	for _, id := range []string{"1-s1", "2-s1"} {
		if got := byID[id]; got.Outcome != results.OutcomeFailed || !strings.Contains(got.Error, "killed by hand") {
			t.Errorf("trial %s recorded as %+v, want failed with the workflow's error", id, got)
		}
	}
	if len(byID) != 3 {
		t.Errorf("%d trials recorded, want 3", len(byID))
	}
}

func TestSweepPlanInvalidSpecFails(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(int) time.Duration { return time.Minute }).register(env)
	calls := 0
	env.OnActivity(acts.Plan, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.PlanInput) (*activities.PlanResult, error) {
			calls++
			return nil, temporal.NewApplicationError("bad template", activities.ErrInvalidSpec)
		})
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{1}, 1, "maximize")))
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != activities.ErrInvalidSpec {
		t.Fatalf("sweep error %v, want the plan's InvalidSpec failure", err)
	}
	if calls != 1 {
		t.Errorf("Plan called %d times, want 1 (InvalidSpec is not retried)", calls)
	}
}

// A trial that ends while a results part is being stored is neither lost nor stored twice: it stays
// pending for the next part (here carried across continue-as-new). CI caught 28 of 30 trials in
// results.json before this held.
func TestSweepTrialEndingDuringResultsFlushIsKept(t *testing.T) {
	qs := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Trial i runs i+1 minutes at concurrency 3: 3-s1 (started at 1m) ends at 5m, while the part
	// stored at continue-as-new (3m30s) takes two minutes.
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Minute })
	fakes.register(env)
	res := resultsRecorder{recordDelay: 2 * time.Minute}
	res.mock(env, len(qs))
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 3*time.Minute+30*time.Second)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 3, "maximize")))

	next := continuedInput(t, env)
	st := next.State
	_, times := res.recorded()
	for _, p := range st.Pending {
		times[p.TrialID]++
	}
	finished := 0
	for _, n := range st.Counts {
		finished += n
	}
	var kept []string
	for id, n := range times {
		if n != 1 {
			t.Errorf("trial %s stored or carried %d times, want once", id, n)
		}
		kept = append(kept, id)
	}
	sort.Strings(kept)
	if len(kept) != finished || fmt.Sprint(kept) != "[0-s1 1-s1 2-s1 3-s1]" {
		t.Errorf("stored or pending: %v; counted finished: %d (%v); want the same four trials", kept, finished, st.Counts)
	}
}

// resources.gpu_class sends every trial to its class's queue, with resources.gpus per trial.
func TestSweepTrialsTrainOnTheGPUClassQueue(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 2)
	spec := sweepSpec(t, []float64{1, 2}, 2, "maximize")
	spec.Resources.GPUClass, spec.Resources.GPUs = "h100", 2
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(fakes.inputs) != 2 {
		t.Fatalf("%d trials started, want 2", len(fakes.inputs))
	}
	for _, in := range fakes.inputs {
		if in.TaskQueue != "rlsweep-gpu-h100" || in.GPUs == nil || *in.GPUs != 2 {
			t.Errorf("trial %s: queue %q, GPUs %v; want rlsweep-gpu-h100 with 2 GPUs", in.Trial.ID, in.TaskQueue, in.GPUs)
		}
	}
}

// Finished trials are stored within resultsFlushEvery even when no batch of 100 fills, so `rlsweep
// results` and `report` show them while the sweep runs: a 60-trial sweep showed none until it ended.
func TestSweepStoresFinishedTrialsWithinAMinute(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(c int) time.Duration {
		if c < 50 {
			return time.Minute
		}
		return 10 * time.Hour
	}).register(env)
	var res resultsRecorder
	res.mock(env, 60)
	qs := make([]float64, 60)
	for i := range qs {
		qs[i] = float64(i)
	}
	stored := -1
	env.RegisterDelayedCallback(func() {
		byID, _ := res.recorded()
		stored = len(byID)
	}, 5*time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 60, "maximize")))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if stored != 50 {
		t.Errorf("trials stored 5 minutes in: %d, want the 50 that finished at 1 minute", stored)
	}
	byID, times := res.recorded()
	for id, n := range times {
		if n != 1 {
			t.Errorf("trial %s stored %d times, want once", id, n)
		}
	}
	if len(byID) != 60 {
		t.Errorf("%d trials stored in all, want 60", len(byID))
	}
}

func finishedCount(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}
