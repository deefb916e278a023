package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// sweepSpec is a grid over q (one configuration per value, one seed), so trial "<i>-s1" has q = qs[i].
func sweepSpec(t *testing.T, qs []float64, concurrency int, goal string) sweeps.Spec {
	t.Helper()
	vals := make([]string, len(qs))
	for i, q := range qs {
		vals[i] = fmt.Sprint(q)
	}
	y := fmt.Sprintf(`name: unit
trainer: {command: [train], total_steps: 1000}
metric: {name: reward, goal: %s}
method: grid
seeds: [1]
parameters:
  q: {values: [%s]}
probes: {enabled: false}
concurrency: %d
`, goal, strings.Join(vals, ", "), concurrency)
	spec, err := sweeps.Decode(strings.NewReader(y), "unit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return *spec
}

// fakeTrials stands in for the Trial workflow: trial i trains for durations[i] of workflow time, then
// reports to its parent by signal as Trial does. It records how many trials run at once.
type fakeTrials struct {
	durations func(config int) time.Duration
	outcome   func(config int) string // "" means completed
	silent    map[string]bool         // trials that end without reporting

	reportedBySignal map[string]bool // trials that sent their report by signal
	asked            map[string]bool // trials the sweep asked to report by signal

	mu        sync.Mutex
	running   map[string]bool
	maxAtOnce int
	starts    map[string]int
	cancelled map[string]bool
	inputs    []workflows.TrialInput
	params    map[string][]string // each trial's RlsweepParams search attribute, when it has one
}

func newFakeTrials(d func(int) time.Duration) *fakeTrials {
	return &fakeTrials{durations: d, running: map[string]bool{}, starts: map[string]int{}, cancelled: map[string]bool{},
		reportedBySignal: map[string]bool{}, asked: map[string]bool{}}
}

func (f *fakeTrials) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterWorkflowWithOptions(f.trial, workflow.RegisterOptions{Name: "Trial"})
}

func (f *fakeTrials) trial(ctx workflow.Context, in workflows.TrialInput) (*results.TrialSummary, error) {
	id := in.Trial.ID
	f.mu.Lock()
	f.running[id] = true
	f.starts[id]++
	f.inputs = append(f.inputs, in)
	f.maxAtOnce = max(f.maxAtOnce, len(f.running))
	if kws, ok := workflow.GetTypedSearchAttributes(ctx).GetKeywordList(workflows.AttrParams); ok {
		if f.params == nil {
			f.params = map[string][]string{}
		}
		f.params[id] = kws
	}
	f.mu.Unlock()

	askedCh := workflow.GetSignalChannel(ctx, workflows.SignalReportToSweep)
	workflow.Go(ctx, func(gctx workflow.Context) {
		var v any
		askedCh.Receive(gctx, &v)
		f.mu.Lock()
		f.asked[id] = true
		f.mu.Unlock()
	})
	err := workflow.Sleep(ctx, f.durations(in.Trial.Config))
	q := toFloat(in.Trial.Params["q"])
	sum := results.TrialSummary{TrialID: id, Config: in.Trial.Config, Seed: in.Trial.Seed, Params: in.Trial.Params,
		Outcome: results.OutcomeCompleted, Objective: &q, Steps: in.Trainer.TotalSteps, Segments: 1}
	if f.outcome != nil && f.outcome(in.Trial.Config) != "" {
		sum.Outcome = f.outcome(in.Trial.Config)
	}
	if sum.Outcome == results.OutcomeFailed {
		sum.Objective = nil
		sum.Error = "trial " + id + ": trainer exited with status 2 at step 0; log tail:\ncause of " + id
	}
	f.mu.Lock()
	delete(f.running, id)
	if err != nil {
		f.cancelled[id] = true
		sum.Outcome, sum.Objective = results.OutcomeCancelled, nil
	}
	silent := f.silent[id]
	f.mu.Unlock()
	if silent {
		return nil, errors.New("killed by hand")
	}
	// As Trial does: report by signal when the sweep asked for a report, or when cancelled.
	f.mu.Lock()
	asked := f.asked[id]
	f.mu.Unlock()
	if asked || err != nil {
		f.mu.Lock()
		f.reportedBySignal[id] = true
		f.mu.Unlock()
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		parent := workflow.GetInfo(ctx).ParentWorkflowExecution
		_ = workflow.SignalExternalWorkflow(dctx, parent.ID, "", workflows.SignalTrialDone, sum).Get(dctx, nil)
	}
	return &sum, err
}

// toFloat reads a grid value, which the spec decoder keeps as an int when it is written as one.
func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("q: got %T", v))
}

func (f *fakeTrials) startCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.starts {
		out[k] = v
	}
	return out
}

// resultsRecorder records what the result activities were given.
type resultsRecorder struct {
	recordDelay     time.Duration // workflow time each RecordResults call takes
	paramsAttribute bool          // what Plan says of the namespace's RlsweepParams

	mu     sync.Mutex
	parts  []activities.RecordResultsInput
	writes []activities.WriteResultsInput
	plans  int
}

func (r *resultsRecorder) mock(env *testsuite.TestWorkflowEnvironment, total int) {
	env.OnActivity(acts.Plan, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PlanInput) (*activities.PlanResult, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.plans++
			if in.SpecYAML == "" {
				return nil, errors.New("plan: no spec.yaml to store")
			}
			return &activities.PlanResult{PlanKey: "sweeps/" + in.SweepID + "/plan.json", Trials: total,
				ParamsAttribute: r.paramsAttribute}, nil
		})
	env.OnActivity(acts.RecordResults, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecordResultsInput) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.parts = append(r.parts, in)
			return nil
		}).After(r.recordDelay)
	env.OnActivity(acts.WriteResults, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WriteResultsInput) (*activities.WriteResultsResult, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.writes = append(r.writes, in)
			return &activities.WriteResultsResult{ResultsKey: "r.json", CSVKey: "r.csv"}, nil
		})
}

// recorded returns every trial handed to RecordResults, by ID, with how often each was handed over.
func (r *resultsRecorder) recorded() (map[string]results.TrialSummary, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byID, times := map[string]results.TrialSummary{}, map[string]int{}
	for i, p := range r.parts {
		if p.Part != r.parts[0].Part+i {
			panic(fmt.Sprintf("results part %d stored as part %d", r.parts[0].Part+i, p.Part))
		}
		for _, s := range p.Trials {
			byID[s.TrialID] = s
			times[s.TrialID]++
		}
	}
	return byID, times
}

// continuedInput is the input a sweep that continued-as-new handed to its next run.
func continuedInput(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.SweepInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("sweep error %v, want a ContinueAsNewError", err)
	}
	var next workflows.SweepInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	return next
}

func sweepInput(spec sweeps.Spec) workflows.SweepInput {
	return workflows.SweepInput{SweepID: "sweep/unit/abc", Spec: spec, SpecYAML: "name: unit\n"}
}

func queryStatus(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.SweepStatus {
	t.Helper()
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	if err != nil {
		t.Fatalf("query status: %v", err)
	}
	var st workflows.SweepStatus
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

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
	if err := env.GetWorkflowError(); err != nil {
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

// A sweep in which every trial failed ends failed, not completed, its results written all the same;
// status and the result carry the last failure's whole error. One trial that did not fail is enough
// for completed.
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
			env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{1, 2, 3}, 3, "maximize")))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var out workflows.SweepResult
			if err := env.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			st := queryStatus(t, env)
			if out.Status != tt.want || st.Phase != tt.want || len(res.writes) != 1 || res.writes[0].Status != tt.want {
				t.Errorf("result %q, status %q, WriteResults %+v; want %s", out.Status, st.Phase, res.writes, tt.want)
			}
			// Trial 2 ends last (3 minutes).
			const cause = "trial 2-s1: trainer exited with status 2 at step 0; log tail:\ncause of 2-s1"
			for what, lf := range map[string]*results.TrialSummary{"status": st.LastFailure, "result": out.LastFailure} {
				if lf == nil || lf.TrialID != "2-s1" || lf.Error != cause {
					t.Errorf("%s's last failure = %+v, want 2-s1 with %q", what, lf, cause)
				}
			}
		})
	}
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

func sortedSet(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func finishedCount(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

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

// updateCall is an update sent to the sweep and how it ended; the test environment answers updates
// asynchronously, so the outcome is read once the workflow has run.
type updateCall struct {
	name    string
	args    []any
	wantErr string // "" means it must be accepted and completed
	done    bool
	status  *workflows.SweepStatus
	err     error
}

func (u *updateCall) send(env *testsuite.TestWorkflowEnvironment) {
	env.UpdateWorkflow(u.name, "", &testsuite.TestUpdateCallback{
		OnReject: func(err error) { u.err, u.done = err, true },
		OnComplete: func(v any, err error) {
			u.status, _ = v.(*workflows.SweepStatus)
			u.err, u.done = err, true
		},
	}, u.args...)
}

func (u *updateCall) check(t *testing.T) {
	t.Helper()
	switch {
	case !u.done:
		t.Errorf("%s %v: neither rejected nor completed", u.name, u.args)
	case u.wantErr == "" && u.err != nil:
		t.Errorf("%s %v: rejected with %v, want accepted", u.name, u.args, u.err)
	case u.wantErr == "" && u.status == nil:
		t.Errorf("%s %v: accepted without returning the status", u.name, u.args)
	case u.wantErr != "" && (u.err == nil || !strings.Contains(u.err.Error(), u.wantErr)):
		t.Errorf("%s %v: error %v, want one containing %q", u.name, u.args, u.err, u.wantErr)
	}
}

func TestSweepUpdates(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Ten trials of ten minutes each, two at a time.
	fakes := newFakeTrials(func(int) time.Duration { return 10 * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 10)

	// Each update at its own minute, so that each validator sees the state the previous one left.
	calls := []struct {
		at time.Duration
		u  *updateCall
	}{
		{1 * time.Minute, &updateCall{name: workflows.UpdateConcurrency, args: []any{0}, wantErr: "concurrency: got 0, want 1 to 500"}},
		{2 * time.Minute, &updateCall{name: workflows.UpdateConcurrency, args: []any{501}, wantErr: "concurrency: got 501, want 1 to 500"}},
		{3 * time.Minute, &updateCall{name: workflows.UpdateResume, wantErr: "resume: sweep is not paused"}},
		{4 * time.Minute, &updateCall{name: workflows.UpdatePause}},
		{5 * time.Minute, &updateCall{name: workflows.UpdatePause, wantErr: "pause: sweep is already paused"}},
		{31 * time.Minute, &updateCall{name: workflows.UpdateConcurrency, args: []any{4}}},
		{31*time.Minute + time.Second, &updateCall{name: workflows.UpdateResume}},
		{31*time.Minute + 2*time.Second, &updateCall{name: workflows.UpdateResume, wantErr: "resume: sweep is not paused"}},
	}
	for _, c := range calls {
		env.RegisterDelayedCallback(func() { c.u.send(env) }, c.at)
	}
	var paused, whilePaused, resumed workflows.SweepStatus
	env.RegisterDelayedCallback(func() { paused = queryStatus(t, env) }, 6*time.Minute)
	// Trials 0 and 1 end at 10m; paused, the sweep starts none in their place.
	env.RegisterDelayedCallback(func() { whilePaused = queryStatus(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { resumed = queryStatus(t, env) }, 32*time.Minute)

	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, "maximize")))

	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		c.u.check(t)
	}
	if st := calls[3].u.status; st == nil || !st.Paused {
		t.Errorf("pause returned %+v, want a paused status", st)
	}
	if st := calls[5].u.status; st == nil || st.Concurrency != 4 {
		t.Errorf("set-concurrency 4 returned %+v, want concurrency 4", st)
	}
	if !paused.Paused || paused.Started != 2 {
		t.Errorf("after pause: %+v, want paused with 2 started", paused)
	}
	if !whilePaused.Paused || whilePaused.Started != 2 || len(whilePaused.Running) != 0 || whilePaused.Counts["completed"] != 2 {
		t.Errorf("while paused: %+v, want 2 started, 2 completed, none running", whilePaused)
	}
	if resumed.Paused || resumed.Concurrency != 4 || resumed.Started != 6 || len(resumed.Running) != 4 {
		t.Errorf("after resume: %+v, want concurrency 4 with 4 more trials running", resumed)
	}
	if fakes.maxAtOnce != 4 {
		t.Errorf("at most %d trials ran at once, want 4 (the new concurrency)", fakes.maxAtOnce)
	}
}

func TestSweepContinueAsNewCarriesState(t *testing.T) {
	qs := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Trial i runs i+1 minutes; with concurrency 3, by 3m30s trials 0, 1 and 2 have ended (at 1, 2 and
	// 3 minutes) and 3, 4 and 5 (started in their place) run.
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, len(qs))
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 3*time.Minute+30*time.Second)

	in := sweepInput(sweepSpec(t, qs, 3, "maximize"))
	in.ResultsFlushInterval = 1000 * time.Hour // only the store before the continue-as-new
	env.ExecuteWorkflow(workflows.Sweep, in)

	next := continuedInput(t, env)
	st := next.State
	if st == nil {
		t.Fatal("continued-as-new input has no State")
	}
	byID, _ := res.recorded()
	var recorded []string
	for id := range byID {
		recorded = append(recorded, id)
	}
	sort.Strings(recorded)
	if st.Scheduler.Next != 6 || fmt.Sprint(st.Running) != "[3-s1 4-s1 5-s1]" || fmt.Sprint(st.Counts) != "map[completed:3]" ||
		len(st.Pending) != 0 || st.Part != 1 || st.Runs != 1 || st.Phase != workflows.PhaseRunning ||
		st.Leader == nil || st.Leader.TrialID != "2-s1" || st.Concurrency != 3 || st.Total != len(qs) {
		t.Errorf("carried state = %+v, want scheduler next 6, Running [3-s1 4-s1 5-s1], 3 completed, Pending flushed as part 0, leader 2-s1", st)
	}
	fakes.mu.Lock()
	asked := fmt.Sprint(fakes.asked)
	fakes.mu.Unlock()
	if asked != "map[3-s1:true 4-s1:true 5-s1:true]" {
		t.Errorf("trials asked to report by signal: %s, want the three running at the continue-as-new", asked)
	}
	if fmt.Sprint(recorded) != "[0-s1 1-s1 2-s1]" || len(res.parts) != 1 {
		t.Errorf("recorded before continue-as-new: %v in %d parts, want [0-s1 1-s1 2-s1] in one", recorded, len(res.parts))
	}
	if next.SpecYAML != "" || next.SweepID != in.SweepID || next.Spec.Name != "unit" {
		t.Errorf("carried input: SweepID %q, SpecYAML %q, spec %q; want the same sweep, spec.yaml dropped", next.SweepID, next.SpecYAML, next.Spec.Name)
	}

	// The next run: the trials still running report to it, and it starts the two never started.
	t.Run("next run", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
		fakes.register(env)
		var res2 resultsRecorder
		res2.mock(env, len(qs))
		for i, id := range st.Running {
			q := float64(3 + i)
			sum := results.TrialSummary{TrialID: id, Outcome: results.OutcomeCompleted, Objective: &q}
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTrialDone, sum) }, time.Duration(i+1)*time.Minute)
		}
		env.ExecuteWorkflow(workflows.Sweep, next)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if starts := fakes.startCounts(); fmt.Sprint(starts) != "map[6-s1:1 7-s1:1]" {
			t.Errorf("the next run started %v, want 6-s1 and 7-s1 only", starts)
		}
		if res2.plans != 0 {
			t.Errorf("the next run planned again (%d Plan calls), want none", res2.plans)
		}
		byID, _ := res2.recorded()
		var out workflows.SweepResult
		if err := env.GetWorkflowResult(&out); err != nil {
			t.Fatal(err)
		}
		if len(byID) != 5 || out.Counts["completed"] != 8 || len(res2.parts) == 0 || res2.parts[0].Part != 1 {
			t.Errorf("next run recorded %d trials from part %v, result %+v; want the 5 remaining from part 1, 8 completed in all",
				len(byID), res2.parts, out)
		}
		if final := queryStatus(t, env); final.Runs != 2 || final.Leader == nil || final.Leader.TrialID != "7-s1" {
			t.Errorf("final status %+v, want run 2 with leader 7-s1", final)
		}
	})
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
	if got := fmt.Sprint(sortedSet(cancelledChildren)); got != "[sweep/unit/abc/trial/1-s1 sweep/unit/abc/trial/2-s1]" {
		t.Errorf("children cancelled: %s, want trials 1-s1 and 2-s1", got)
	}
	if starts := fakes.startCounts(); len(starts) != 3 {
		t.Errorf("trials started: %v, want 0-s1, 1-s1 and 2-s1 only", starts)
	}
	byID, times := res.recorded()
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

// The safety net for trials carried over from an earlier run: one that reports is recorded from its
// report; one that never reports (terminated by hand) is found closed by CheckTrials and recorded as
// failed, so the sweep ends instead of waiting forever.
func TestSweepCarriedOverTrialsAreChecked(t *testing.T) {
	qs := []float64{0, 1, 2, 3, 4}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(int) time.Duration { return time.Minute }).register(env)
	var res resultsRecorder
	res.mock(env, len(qs))
	var mu sync.Mutex
	var checks [][]string
	env.OnActivity(acts.CheckTrials, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CheckTrialsInput) (*activities.CheckTrialsResult, error) {
			mu.Lock()
			defer mu.Unlock()
			var ids []string
			out := &activities.CheckTrialsResult{}
			for _, r := range in.Trials {
				ids = append(ids, r.TrialID)
				if r.TrialID == "4-s1" {
					out.Ended = append(out.Ended, results.TrialSummary{TrialID: r.TrialID, Outcome: results.OutcomeFailed,
						Error: "trial workflow ended without reporting: terminated"})
				}
			}
			checks = append(checks, ids)
			return out, nil
		})
	in := sweepInput(sweepSpec(t, qs, 2, "maximize"))
	in.SpecYAML, in.TrialCheckInterval = "", 90*time.Second
	in.State = &workflows.SweepState{Phase: workflows.PhaseRunning, Total: len(qs), Scheduler: scheduler.State{Next: len(qs)},
		Running: []string{"3-s1", "4-s1"}, Counts: map[string]int{"completed": 3}, Part: 1, Concurrency: 2, Runs: 1}
	q := 3.0
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalTrialDone, results.TrialSummary{TrialID: "3-s1", Outcome: results.OutcomeCompleted, Objective: &q})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out workflows.SweepResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	byID, times := res.recorded()
	if out.Counts["completed"] != 4 || out.Counts["failed"] != 1 || byID["4-s1"].Outcome != results.OutcomeFailed ||
		times["3-s1"] != 1 || times["4-s1"] != 1 {
		t.Errorf("counts %v, recorded %v; want 3-s1 completed and 4-s1 failed, each recorded once", out.Counts, times)
	}
	// One check, 5 s into the run, of both; 4-s1 is found closed then, 3-s1 reports at 1 minute, and no
	// carried trial is left for a check at 95 s.
	if fmt.Sprint(checks) != "[[3-s1 4-s1]]" {
		t.Errorf("CheckTrials calls %v, want one, for [3-s1 4-s1]", checks)
	}
}

// A carried-over trial whose end the previous run missed while it was closing is found seconds into
// the new run, not after the two-minute check interval: in a 1,000-trial benchmark that race cost 120
// of 195 seconds.
func TestSweepCarriedTrialThatReportedUnheardIsFoundAtOnce(t *testing.T) {
	env, res, in := closedCarriedTrial(t)
	in.TrialCheckInterval = 0 // the default two minutes
	start := env.Now()
	env.ExecuteWorkflow(workflows.Sweep, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, _ := res.recorded()
	if got := byID["4-s1"]; got.Outcome != results.OutcomeCompleted || got.Objective == nil || *got.Objective != 4 {
		t.Errorf("carried trial 4-s1 stored as %+v, want completed with objective 4", got)
	}
	if took := env.Now().Sub(start); took > 10*time.Second {
		t.Errorf("the sweep took %v of workflow time to find its closed carried trial, want seconds", took)
	}
}

// closedCarriedTrial is a sweep run that carries over trial 4-s1, which has closed (completed, objective
// 4) without its end reaching the sweep; CheckTrials finds it so.
func closedCarriedTrial(t *testing.T) (*testsuite.TestWorkflowEnvironment, *resultsRecorder, workflows.SweepInput) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(int) time.Duration { return time.Hour }).register(env)
	res := &resultsRecorder{}
	res.mock(env, 5)
	q := 4.0
	env.OnActivity(acts.CheckTrials, mock.Anything, mock.Anything).Return(&activities.CheckTrialsResult{
		Ended: []results.TrialSummary{{TrialID: "4-s1", Outcome: results.OutcomeCompleted, Objective: &q}}}, nil)
	in := sweepInput(sweepSpec(t, []float64{0, 1, 2, 3, 4}, 2, "maximize"))
	in.SpecYAML = ""
	in.State = &workflows.SweepState{Phase: workflows.PhaseRunning, Total: 5, Scheduler: scheduler.State{Next: 5}, Running: []string{"4-s1"},
		Counts: map[string]int{"completed": 4}, Part: 1, Concurrency: 2, Runs: 1}
	return env, res, in
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
	// At 90 minutes trial 0 has completed and trials 1 and 2 run.
	if got := fmt.Sprint(sortedSet(cancelledChildren)); got != "[sweep/unit/abc/trial/1-s1 sweep/unit/abc/trial/2-s1]" {
		t.Errorf("children cancelled: %s, want the running trials 1-s1 and 2-s1", got)
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
	in.State = &workflows.SweepState{Phase: workflows.PhaseRunning, Total: 5, Scheduler: scheduler.State{Next: 5}, Running: []string{"4-s1"},
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
