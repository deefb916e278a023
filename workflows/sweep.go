package workflows

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// SweepInput starts a sweep, or continues one that continued-as-new (State set).
type SweepInput struct {
	SweepID  string
	Spec     sweeps.Spec
	SpecYAML string // stored as spec.yaml by the plan step; dropped after it
	// Submission identifies the submission (rlsweep submit makes a random one): the plan step claims
	// the sweep's files for it and refuses a sweep ID whose files belong to another submission.
	Submission string `json:",omitempty"`
	// ContinueAsNewAfter caps the events of one run before it continues-as-new even if the server has
	// not suggested it yet; 0 means 8,000 (Temporal's hard limit is 51,200, our budget 10,240).
	ContinueAsNewAfter int
	// HeartbeatTimeout is handed to every trial; 0 means one minute.
	HeartbeatTimeout time.Duration
	// TrialCheckInterval is how often a run looks up the trials an earlier run started that have not
	// reported yet (CheckTrials); 0 means two minutes.
	TrialCheckInterval time.Duration `json:",omitempty"`
	// ResultsFlushInterval is how long a finished trial waits, at most, to be stored while the sweep
	// runs; 0 means resultsFlushEvery (a minute).
	ResultsFlushInterval time.Duration `json:",omitempty"`
	State                *SweepState   `json:",omitempty"`
}

// SweepState is what a sweep carries across continue-as-new: counts and references, never metrics.
type SweepState struct {
	Phase   string
	PlanKey string
	Total   int
	// Scheduler is the scheduler's state: which trial it starts next.
	Scheduler   scheduler.State
	Running     []string       // trial IDs started and not yet reported
	Counts      map[string]int // finished trials per outcome
	Pending     []results.TrialSummary
	Part        int // next results part number
	Paused      bool
	Concurrency int
	Leader      *results.TrialSummary
	Runs        int // how many runs this sweep has had (continue-as-new count + 1)
	Started     time.Time
	// Probes is the probe stage's report, once it has run.
	Probes *activities.ProbeReport `json:",omitempty"`
	// ParamsAttribute: trials carry AttrParams (the namespace has it registered).
	ParamsAttribute bool `json:",omitempty"`
	// LastFailure is the trial that failed last, its whole error kept, for status and watch.
	LastFailure *results.TrialSummary `json:",omitempty"`
}

// SweepStatus is what the status query returns.
type SweepStatus struct {
	SweepID     string
	Name        string
	Phase       string
	Total       int
	Started     int
	Running     []string
	Counts      map[string]int
	Paused      bool
	Concurrency int
	Leader      *results.TrialSummary
	Metric      sweeps.Metric
	Runs        int
	Since       time.Time
	// LastFailure is the trial that failed last, with its whole error; nil when none has.
	LastFailure *results.TrialSummary `json:",omitempty"`
}

// SweepResult is what a finished sweep returns.
type SweepResult struct {
	SweepID    string
	Status     string
	Total      int
	Counts     map[string]int
	ResultsKey string
	CSVKey     string
	// LastFailure is the trial that failed last, with its whole error; nil when none has.
	LastFailure *results.TrialSummary `json:",omitempty"`
}

// resultsBatch is how many finished trials the sweep holds before storing them.
const resultsBatch = 100

// resultsFlushEvery is how long a finished trial waits, at most, to be stored while the sweep runs, so
// `rlsweep results` and `report` show it even when no batch of resultsBatch fills.
const resultsFlushEvery = time.Minute

// Sweep plans a sweep, runs its probe stage, keeps a sliding window of Trial children running until
// every planned trial has finished, and writes the results. Pause, resume and concurrency are updates;
// cancelling the workflow cancels every running trial and keeps the results recorded so far.
func Sweep(ctx workflow.Context, in SweepInput) (*SweepResult, error) {
	s := &sweepRun{in: in, state: in.State}
	if s.state == nil {
		s.state = &SweepState{Phase: PhasePlanning, Counts: map[string]int{}, Concurrency: in.Spec.Concurrency,
			Started: workflow.Now(ctx)}
	}
	s.state.Runs++
	if err := s.registerHandlers(ctx); err != nil {
		return nil, err
	}
	sched, err := scheduler.New(&in.Spec, s.state.Scheduler)
	if err != nil {
		return s.fail(ctx, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrInvalidSpec, err))
	}
	s.sched = sched
	if s.state.Phase == PhasePlanning {
		if err := s.plan(ctx); err != nil {
			return s.fail(ctx, err)
		}
		if err := s.probe(ctx); err != nil {
			return s.fail(ctx, err)
		}
		s.state.Phase = PhaseRunning
	}
	return s.fanOut(ctx)
}

// sweepRun is one run of the Sweep workflow.
type sweepRun struct {
	in    SweepInput
	state *SweepState
	// sched decides which trial starts next and whether a trial goes on at a segment boundary.
	sched   scheduler.Scheduler
	doneCh  workflow.ReceiveChannel
	running map[string]bool
	// starting counts the trials started whose start is not yet confirmed.
	starting int
	// flushDue: resultsFlushEvery has passed since a trial finished and was not stored.
	flushDue bool
}

// carriedFirstCheck is how soon a run first looks up the trials it carries over: a trial that ended
// while the previous run was closing may be heard by neither run (its result too late for the closing
// run's future, its report in that run's last workflow task).
const carriedFirstCheck = 5 * time.Second

func (s *sweepRun) lightOptions(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ControlQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			MaximumAttempts: 20, NonRetryableErrorTypes: []string{activities.ErrInvalidSpec}},
		Summary: summary,
	})
}

func (s *sweepRun) plan(ctx workflow.Context) error {
	var res activities.PlanResult
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "plan"), (*activities.Activities).Plan,
		activities.PlanInput{SweepID: s.in.SweepID, Spec: s.in.Spec, SpecYAML: s.in.SpecYAML, Submission: s.in.Submission}).Get(ctx, &res)
	if err != nil {
		return err
	}
	s.state.PlanKey, s.state.Total, s.state.ParamsAttribute = res.PlanKey, res.Trials, res.ParamsAttribute
	s.in.SpecYAML = ""
	return nil
}

// probe is the probe stage: it runs before any trial, and a failure ends the sweep before a GPU is
// used (runProbes, workflows/probe.go).
func (s *sweepRun) probe(ctx workflow.Context) error {
	if !s.in.Spec.Probes.Enabled {
		return nil
	}
	s.state.Phase = PhaseProbing
	return s.runProbes(ctx)
}

// fanOut keeps up to Concurrency trials running until all have reported.
func (s *sweepRun) fanOut(ctx workflow.Context) (*SweepResult, error) {
	s.doneCh = workflow.GetSignalChannel(ctx, SignalTrialDone)
	s.running = map[string]bool{}
	for _, id := range s.state.Running {
		s.running[id] = true
	}
	if carried := s.state.Running; len(carried) > 0 {
		workflow.Go(ctx, func(gctx workflow.Context) { s.checkCarried(gctx, carried) })
	}
	workflow.Go(ctx, s.flushTimer)
	for !s.allDone() {
		s.startTrials(ctx)
		if s.shouldContinueAsNew(ctx) {
			return s.endAfterStore(ctx, s.continueAsNew(ctx))
		}
		// allDone: the last running trial may end without a report (its watcher records it), and then
		// nothing else would wake the sweep.
		err := workflow.Await(ctx, func() bool {
			return s.doneCh.Len() > 0 || s.canStart() || s.allDone() || s.shouldContinueAsNew(ctx) || s.flushDue
		})
		if err != nil { // cancelled
			return s.cancel(ctx)
		}
		s.drainDone(ctx)
		if len(s.state.Pending) >= resultsBatch || s.flushDue {
			s.flushDue = false
			if err := s.flushResults(ctx); err != nil {
				return s.endAfterStore(ctx, err)
			}
		}
	}
	phase := PhaseCompleted
	if n := s.sched.Total(); n > 0 && s.state.Counts[results.OutcomeFailed] == n {
		phase = PhaseFailed // every trial failed: the sweep did too
	}
	res, err := s.finish(ctx, phase)
	if err != nil {
		return s.endAfterStore(ctx, err)
	}
	return res, nil
}

// endAfterStore ends the run once storing results returned err (a continue-as-new's error when it
// succeeded): a cancel that came meanwhile ends it as a cancel does (cancelledWhileStoring), a failure
// fails it (failAndStop).
func (s *sweepRun) endAfterStore(ctx workflow.Context, err error) (*SweepResult, error) {
	if s.cancelledWhileStoring(ctx) {
		return s.cancel(ctx)
	}
	if err != nil && !workflow.IsContinueAsNewError(err) {
		return s.failAndStop(ctx, err)
	}
	return nil, err
}

// failAndStop ends a sweep that cannot go on after fan-out: its running trials are cancelled (each
// stops its trainer, which checkpoints; nobody would hear their results) and it fails with phase
// failed.
func (s *sweepRun) failAndStop(ctx workflow.Context, err error) (*SweepResult, error) {
	_, reqs := s.requestCancelRunning(ctx)
	for _, f := range reqs {
		_ = f.Get(ctx, nil) // one that has closed meanwhile needs no cancel
	}
	return s.fail(ctx, err)
}

// requestCancelRunning sends a cancel request to every running trial, in ID order, once the starts in
// flight have landed (a cancel request needs the trial to exist), and returns the IDs and the requests.
func (s *sweepRun) requestCancelRunning(ctx workflow.Context) ([]string, []workflow.Future) {
	_ = workflow.Await(ctx, func() bool { return s.starting == 0 })
	ids := sortedKeys(s.running)
	reqs := make([]workflow.Future, len(ids))
	for i, id := range ids {
		reqs[i] = workflow.RequestCancelExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, id), "")
	}
	return ids, reqs
}

// cancelledWhileStoring says whether the sweep was cancelled while it stored results, in which case
// it ends as a cancel does — every trial stopped, what is pending stored, results written — instead of
// failing with its results unstored. Pending is trimmed only after a part is stored, so nothing is
// lost. The abandoned RecordResults may still be writing its part: what is pending goes to the next
// part number, so a late write cannot overwrite it; a trial in both parts counts once
// (LoadTrialSummaries keeps one record per trial).
func (s *sweepRun) cancelledWhileStoring(ctx workflow.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	s.state.Part++
	return true
}

// flushTimer marks a flush due resultsFlushEvery after a finished trial is first left unstored, so
// the loop stores the pending results even when no batch fills (a small sweep, or its last trials).
func (s *sweepRun) flushTimer(ctx workflow.Context) {
	every := s.in.ResultsFlushInterval
	if every <= 0 {
		every = resultsFlushEvery
	}
	for {
		if err := workflow.Await(ctx, func() bool { return len(s.state.Pending) > 0 && !s.flushDue }); err != nil {
			return
		}
		if err := workflow.Sleep(ctx, every); err != nil {
			return // cancelled, or the run is closing
		}
		s.flushDue = len(s.state.Pending) > 0
	}
}

// allDone says whether the scheduler will start no more trials and every started one has finished.
func (s *sweepRun) allDone() bool {
	return s.sched.Done() && len(s.running) == 0
}

// canStart says whether a trial may start now: the sweep is not paused, the window has room and the
// scheduler has a trial ready.
func (s *sweepRun) canStart() bool {
	if s.state.Paused || len(s.running) >= s.state.Concurrency {
		return false
	}
	_, ok := s.sched.Peek()
	return ok
}

// startTrials starts children until the window is full. It goes on at once: a goroutine per trial
// learns of its start and of its end, so one workflow task can take in many starts and many ends.
func (s *sweepRun) startTrials(ctx workflow.Context) {
	for s.canStart() {
		t, _ := s.sched.Next()
		f := s.startTrial(ctx, t)
		s.running[t.ID] = true
		s.starting++
		workflow.Go(ctx, func(gctx workflow.Context) { s.followTrial(gctx, t.ID, f) })
	}
}

// followTrial waits for a trial started in this run to start and to end, and records its summary
// from its result if its signal has not been taken in first; a trial that ends without a result
// (terminated by hand) counts as failed.
func (s *sweepRun) followTrial(ctx workflow.Context, id string, f workflow.ChildWorkflowFuture) {
	err := f.GetChildWorkflowExecution().Get(ctx, nil)
	s.starting--
	if err != nil {
		s.record(ctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeFailed,
			Error: "trial workflow did not start: " + err.Error()})
		return
	}
	var sum results.TrialSummary
	switch err := f.Get(ctx, &sum); {
	case err == nil && sum.TrialID == id:
		s.record(ctx, sum)
	case temporal.IsCanceledError(err):
		// Its report, with the steps it reached, normally comes first by signal.
		s.record(ctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeCancelled})
	case err != nil:
		s.record(ctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeFailed,
			Error: "trial workflow ended without reporting: " + err.Error()})
	}
}

// checkCarried is the safety net for the trials an earlier run started: this run has no future to
// learn their end from, only their report by signal. Every TrialCheckInterval it looks up the ones that
// have not reported (CheckTrials) and records each that has closed: with its result if it completed
// (its report had reached a closing run), as failed if it was terminated by hand.
func (s *sweepRun) checkCarried(ctx workflow.Context, carried []string) {
	every := s.in.TrialCheckInterval
	if every <= 0 {
		every = 2 * time.Minute
	}
	wait := min(every, carriedFirstCheck)
	for {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return // cancelled, or the run is closing
		}
		wait = every
		var refs []activities.TrialRef
		for _, id := range carried {
			if s.running[id] {
				refs = append(refs, activities.TrialRef{TrialID: id, WorkflowID: TrialWorkflowID(s.in.SweepID, id)})
			}
		}
		if len(refs) == 0 {
			return
		}
		if err := s.checkTrials(ctx, refs); err != nil {
			if ctx.Err() != nil {
				return
			}
			workflow.GetLogger(ctx).Warn("carried-over trials not checked", "error", err)
		}
	}
}

// checkTrials looks the trials up (CheckTrials) and records each that has closed.
func (s *sweepRun) checkTrials(ctx workflow.Context, refs []activities.TrialRef) error {
	var res activities.CheckTrialsResult
	err := workflow.ExecuteActivity(s.lightOptions(ctx, fmt.Sprintf("check %d carried-over trials", len(refs))),
		(*activities.Activities).CheckTrials, activities.CheckTrialsInput{SweepID: s.in.SweepID, Trials: refs}).Get(ctx, &res)
	if err != nil {
		return err
	}
	// A trial's own report, sent before it closed, is preferred to what its result says.
	s.drainDone(ctx)
	for _, sum := range res.Ended {
		s.record(ctx, sum)
	}
	return nil
}

func (s *sweepRun) startTrial(ctx workflow.Context, t sweeps.Trial) workflow.ChildWorkflowFuture {
	spec := s.in.Spec
	attrs := []temporal.SearchAttributeUpdate{AttrSweepID.ValueSet(s.in.SweepID),
		AttrSweepName.ValueSet(spec.Name), AttrKind.ValueSet("trial")}
	if s.state.ParamsAttribute {
		attrs = append(attrs, AttrParams.ValueSet(paramKeywords(sweeps.ParamNames(&spec), t.Params)))
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: TrialWorkflowID(s.in.SweepID, t.ID),
		TaskQueue:  ControlQueue,
		// Children outlive a continue-as-new of the sweep; cancel reaches them explicitly.
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		StaticSummary:         fmt.Sprintf("trial %s of %s: %s", t.ID, spec.Name, formatParams(sweeps.ParamNames(&spec), t.Params)),
	})
	return workflow.ExecuteChildWorkflow(cctx, Trial, TrialInput{
		SweepID: s.in.SweepID, Trial: t, Trainer: spec.Trainer, Diagnostics: spec.Diagnostics,
		Metric: spec.Metric, TaskQueue: spec.Resources.TrialQueue(), GPUs: &spec.Resources.GPUs, MaxAttempts: spec.Retries.MaxAttempts,
		HeartbeatTimeout: s.in.HeartbeatTimeout,
	})
}

func (s *sweepRun) drainDone(ctx workflow.Context) {
	var sum results.TrialSummary
	for s.doneCh.ReceiveAsync(&sum) {
		s.record(ctx, sum)
		sum = results.TrialSummary{}
	}
}

// record counts a finished trial once, whichever way its end was learnt.
func (s *sweepRun) record(ctx workflow.Context, sum results.TrialSummary) {
	if !s.running[sum.TrialID] {
		return
	}
	delete(s.running, sum.TrialID)
	s.sched.Finished(sum)
	s.state.Counts[sum.Outcome]++
	s.state.Pending = append(s.state.Pending, sum)
	if sum.Outcome == results.OutcomeFailed {
		failed := sum
		failed.Last = nil
		s.state.LastFailure = &failed
	}
	if sum.Outcome == results.OutcomeCompleted && sum.Objective != nil && s.better(sum, s.state.Leader) {
		lead := sum
		lead.Last = nil
		s.state.Leader = &lead
	}
	workflow.SetCurrentDetails(ctx, s.details())
}

func (s *sweepRun) better(a results.TrialSummary, b *results.TrialSummary) bool {
	if b == nil || b.Objective == nil {
		return true
	}
	if s.in.Spec.Metric.Goal == "minimize" {
		return *a.Objective < *b.Objective
	}
	return *a.Objective > *b.Objective
}

func (s *sweepRun) details() string {
	done := 0
	for _, n := range s.state.Counts {
		done += n
	}
	d := fmt.Sprintf("%d/%d trials finished, %d running", done, s.sched.Total(), len(s.running))
	for _, o := range results.Outcomes {
		if n := s.state.Counts[o]; n > 0 {
			d += fmt.Sprintf(", %d %s", n, o)
		}
	}
	if l := s.state.Leader; l != nil {
		d += fmt.Sprintf("; leader %s %s=%.4g", l.TrialID, s.in.Spec.Metric.Name, *l.Objective)
	}
	return d
}

func (s *sweepRun) flushResults(ctx workflow.Context) error {
	n := len(s.state.Pending)
	if n == 0 {
		return nil
	}
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "record results"), (*activities.Activities).RecordResults,
		activities.RecordResultsInput{SweepID: s.in.SweepID, Part: s.state.Part, Trials: s.state.Pending}).Get(ctx, nil)
	if err != nil {
		return err
	}
	s.state.Part++
	// Trials that finished while the part was being stored (their followers run during the wait) stay
	// pending for the next part.
	s.state.Pending = s.state.Pending[n:]
	return nil
}

func (s *sweepRun) shouldContinueAsNew(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	limit := s.in.ContinueAsNewAfter
	if limit <= 0 {
		limit = defaultCANMaxEvent
	}
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= limit
}

// continueAsNew stores what has finished and carries the running set over; the running children keep
// signalling the sweep's workflow ID, which the new run answers.
func (s *sweepRun) continueAsNew(ctx workflow.Context) error {
	// Every start command must have been taken by the server before this run closes.
	if err := workflow.Await(ctx, func() bool { return s.starting == 0 }); err != nil {
		return err
	}
	s.askForReports(ctx)
	s.drainDone(ctx)
	if err := s.flushResults(ctx); err != nil {
		return err
	}
	s.drainDone(ctx)
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	s.state.Running = sortedKeys(s.running)
	s.state.Scheduler = s.sched.State()
	in := s.in
	in.State = s.state
	return workflow.NewContinueAsNewError(ctx, Sweep, in)
}

// askForReports tells every running trial to report its end by signal, which the next run answers.
// A trial that ended meanwhile cannot be told; its end reaches this run's future before the run closes,
// or else the next run's CheckTrials finds it.
func (s *sweepRun) askForReports(ctx workflow.Context) {
	var fs []workflow.Future
	for _, id := range sortedKeys(s.running) {
		fs = append(fs, workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, id), "", SignalReportToSweep, nil))
	}
	for _, f := range fs {
		_ = f.Get(ctx, nil)
	}
}

// cancel asks every running trial to stop, waits for their reports (their trainers are stopped by
// then), and stores the results recorded so far.
func (s *sweepRun) cancel(ctx workflow.Context) (*SweepResult, error) {
	s.state.Phase = PhaseCancelling // status says so; pause and set-concurrency are refused from now on
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	ids, reqs := s.requestCancelRunning(dctx)
	// A trial the request cannot reach has closed already. One started by this run is recorded by its
	// future; one carried over from an earlier run may have ended unheard (asked to report after it
	// closed), so its result is looked up rather than waited for.
	var closed []activities.TrialRef
	for i, f := range reqs {
		if err := f.Get(dctx, nil); err != nil && s.running[ids[i]] {
			closed = append(closed, activities.TrialRef{TrialID: ids[i], WorkflowID: TrialWorkflowID(s.in.SweepID, ids[i])})
		}
	}
	s.drainDone(dctx)
	if len(closed) > 0 {
		if err := s.checkTrials(dctx, closed); err != nil {
			workflow.GetLogger(ctx).Warn("closed trials not looked up", "error", err)
		}
	}
	// Trials report within their trainers' grace period; a trial that never does is recorded as cancelled.
	ok, _ := workflow.AwaitWithTimeout(dctx, 10*time.Minute, func() bool {
		s.drainDone(dctx)
		return len(s.running) == 0
	})
	if !ok {
		for _, id := range sortedKeys(s.running) {
			s.record(dctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeCancelled,
				Error: "no report from the trial after the sweep was cancelled"})
		}
	}
	res, err := s.finish(dctx, PhaseCancelled)
	if err != nil {
		return res, err
	}
	return res, temporal.NewCanceledError(res)
}

// finish records the remaining results and writes results.json and results.csv.
func (s *sweepRun) finish(ctx workflow.Context, phase string) (*SweepResult, error) {
	s.state.Phase = PhaseReporting
	for len(s.state.Pending) > 0 {
		if err := s.flushResults(ctx); err != nil {
			return nil, err
		}
	}
	var wr activities.WriteResultsResult
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "write results"), (*activities.Activities).WriteResults,
		activities.WriteResultsInput{SweepID: s.in.SweepID, Spec: s.in.Spec, Status: phase}).Get(ctx, &wr)
	if err != nil {
		return nil, err
	}
	s.state.Phase = phase
	if err := workflow.UpsertTypedSearchAttributes(ctx, AttrOutcome.ValueSet(phase)); err != nil {
		workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
	}
	return &SweepResult{SweepID: s.in.SweepID, Status: phase, Total: s.sched.Total(), Counts: s.state.Counts,
		ResultsKey: wr.ResultsKey, CSVKey: wr.CSVKey, LastFailure: s.state.LastFailure}, nil
}

func (s *sweepRun) fail(ctx workflow.Context, err error) (*SweepResult, error) {
	// Cancelled before fan-out (while planning): the sweep ends cancelled, not failed.
	if s.state.Phase != PhaseProbeFailed {
		s.state.Phase = PhaseFailed
	}
	if temporal.IsCanceledError(err) {
		s.state.Phase = PhaseCancelled
	}
	if uerr := workflow.UpsertTypedSearchAttributes(ctx, AttrOutcome.ValueSet(s.state.Phase)); uerr != nil {
		workflow.GetLogger(ctx).Warn("search attributes not updated", "error", uerr)
	}
	return nil, err
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Bounds of AttrParams: one "name=value" at most maxParamKeyword bytes (a SQL visibility keyword holds
// 255), all of them at most maxParamsBytes, JSON-encoded, under the server's 2 KiB per search attribute
// value (frontend.searchAttributesSizeOfValueLimit): a start whose attribute is too large would be
// refused, and the sweep would retry it forever.
const (
	maxParamKeyword = 255
	maxParamsBytes  = 1536
)

// paramKeywords is a trial's AttrParams value: "name=value" per parameter in spec order, values as
// formatParams writes them, each cut to maxParamKeyword bytes on a rune boundary; the parameters that
// no longer fit in maxParamsBytes are left out (the static summary and results.csv keep them all).
func paramKeywords(names []string, params map[string]any) []string {
	out := make([]string, 0, len(names))
	total := 0
	for _, n := range names {
		kw := fmt.Sprintf("%s=%v", n, params[n])
		if len(kw) > maxParamKeyword {
			cut := maxParamKeyword
			for cut > 0 && !utf8.RuneStart(kw[cut]) {
				cut--
			}
			kw = kw[:cut]
		}
		quoted, _ := json.Marshal(kw) // a string: cannot fail
		if total += len(quoted) + 1; total > maxParamsBytes {
			break
		}
		out = append(out, kw)
	}
	return out
}

func formatParams(names []string, params map[string]any) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%s=%v", n, params[n])
	}
	return out
}
