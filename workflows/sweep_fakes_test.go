package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/report"
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
	alive     int // trial workflows running, standby ones included
	maxAlive  int
	starts    map[string]int
	inputs    []workflows.TrialInput
	params    map[string][]string // each trial's RlsweepParams search attribute, when it has one
	released  []string            // trials in the order they took a place
	noHandOff bool                // trials do not release their successors (the worker has no client)
}

func newFakeTrials(d func(int) time.Duration) *fakeTrials {
	return &fakeTrials{durations: d, running: map[string]bool{}, starts: map[string]int{},
		reportedBySignal: map[string]bool{}, asked: map[string]bool{}}
}

func (f *fakeTrials) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterWorkflowWithOptions(f.trial, workflow.RegisterOptions{Name: "Trial"})
}

func (f *fakeTrials) trial(ctx workflow.Context, in workflows.TrialInput) (*results.TrialSummary, error) {
	id := in.Trial.ID
	f.mu.Lock()
	f.starts[id]++
	f.inputs = append(f.inputs, in)
	f.alive++
	f.maxAlive = max(f.maxAlive, f.alive)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.alive--
		f.mu.Unlock()
	}()
	if in.Standby {
		released, skip := workflows.WaitForPlace(ctx)
		if !released {
			// As Trial does: a standby trial cancelled before its release never ran.
			sum := results.TrialSummary{TrialID: id, Outcome: results.OutcomeCancelled, Unstarted: true}
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			parent := workflow.GetInfo(ctx).ParentWorkflowExecution
			_ = workflow.SignalExternalWorkflow(dctx, parent.ID, "", workflows.SignalTrialDone, sum).Get(dctx, nil)
			return &sum, temporal.NewCanceledError()
		}
		if skip != "" {
			// As Trial does: released with the sweep's reason not to train, it ends oom untrained.
			return &results.TrialSummary{TrialID: id, Config: in.Trial.Config, Seed: in.Trial.Seed, Params: in.Trial.Params,
				Outcome: results.OutcomeOOM, Unstarted: true, Error: skip}, nil
		}
	}
	f.mu.Lock()
	f.running[id] = true
	f.released = append(f.released, id)
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
	q := 0.0
	if v, ok := in.Trial.Params["q"]; ok {
		q = toFloat(v)
	}
	sum := results.TrialSummary{TrialID: id, Config: in.Trial.Config, Seed: in.Trial.Seed, Params: in.Trial.Params,
		Outcome: results.OutcomeCompleted, Objective: &q, Steps: in.Trainer.TotalSteps, Segments: 1}
	if f.outcome != nil && f.outcome(in.Trial.Config) != "" {
		sum.Outcome = f.outcome(in.Trial.Config)
	}
	if sum.Outcome == results.OutcomeFailed {
		sum.Objective = nil
		sum.Error = "trial " + id + ": trainer exited with status 2 at step 0; log tail:\ncause of " + id
	}
	if sum.Outcome == results.OutcomeOOM {
		// As an attempt that died out of memory on an H100 reports it (activities' oomFailed).
		sum.Objective, sum.Steps = nil, 0
		sum.Hardware = &results.Hardware{GPUs: []results.GPU{{ID: "0", Name: "NVIDIA H100 80GB HBM3"}}}
		sum.Error = "trial " + id + ": out of memory on NVIDIA H100 80GB HBM3 at step 0 (PyTorch): the trainer exited with status 1; it matched:\n" +
			"  torch.OutOfMemoryError: CUDA out of memory\nfix: lower num_envs or the batch size. The same configuration runs out again."
	}
	f.mu.Lock()
	delete(f.running, id)
	if err != nil {
		sum.Outcome, sum.Objective = results.OutcomeCancelled, nil
	}
	successorStarted := f.starts[in.Successor] > 0
	f.mu.Unlock()
	// A successor not started yet: the worker's signal would find no workflow (the test environment
	// would ask its mock).
	// A trainer that died out of memory exited non-zero: the worker hands off only after status 0.
	if err == nil && in.Successor != "" && !f.noHandOff && successorStarted && sum.Outcome != results.OutcomeOOM {
		// As the worker does when the last trainer exits: release the standby trial behind it.
		herr := workflow.SignalExternalWorkflow(ctx, workflows.TrialWorkflowID(in.SweepID, in.Successor), "",
			workflows.SignalRelease, workflows.Release{}).Get(ctx, nil)
		sum.HandedOff = herr == nil
	}
	f.mu.Lock()
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
			return &activities.WriteResultsResult{ResultsKey: "r.json", CSVKey: "r.csv", Best: r.best(in.Spec)}, nil
		})
}

// best is the best configuration of the trials recorded so far, as WriteResults ranks them
// (report.Leaderboard's first row); nil when none scored.
func (r *resultsRecorder) best(spec sweeps.Spec) *activities.BestConfig {
	var trials []results.TrialSummary
	for _, p := range r.parts {
		trials = append(trials, p.Trials...)
	}
	rows := report.Leaderboard(results.New("sweep/unit/abc", &spec, "", trials, nil))
	if len(rows) == 0 || rows[0].Scored == 0 {
		return nil
	}
	b := rows[0]
	return &activities.BestConfig{Config: b.Config, Params: b.Params, Metric: spec.Metric.Name, Goal: spec.Metric.Goal,
		Objective: b.Mean, Seeds: b.Scored, Trials: b.Trials, Confirmed: b.Confirmed, Fresh: b.Fresh, FreshSeeds: b.FreshSeeds}
}

// decisions returns every decision handed to RecordResults, in the order of their parts, checking
// that parts are numbered in order.
func (r *resultsRecorder) decisions(t *testing.T) []results.Decision {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []results.Decision
	next := 0
	for _, p := range r.parts {
		if len(p.Decisions) == 0 {
			continue
		}
		if p.DecisionPart != next {
			t.Errorf("decision part %d stored as part %d", next, p.DecisionPart)
		}
		next++
		out = append(out, p.Decisions...)
	}
	return out
}

// recorded returns every trial handed to RecordResults, by ID, with how often each was handed over.
func (r *resultsRecorder) recorded() (map[string]results.TrialSummary, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byID, times := map[string]results.TrialSummary{}, map[string]int{}
	var parts []activities.RecordResultsInput // those that stored trials (some store decisions only)
	for _, p := range r.parts {
		if len(p.Trials) > 0 {
			parts = append(parts, p)
		}
	}
	for i, p := range parts {
		if p.Part != parts[0].Part+i {
			panic(fmt.Sprintf("results part %d stored as part %d", parts[0].Part+i, p.Part))
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
	in.State = &workflows.SweepState{Phase: workflows.PhaseRunning, Scheduler: scheduler.State{Next: 5}, Running: []string{"4-s1"},
		Counts: map[string]int{"completed": 4}, Part: 1, Concurrency: 2, Runs: 1}
	return env, res, in
}
