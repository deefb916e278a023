package workflows

import (
	"errors"
	"slices"
	"sort"
	"time"

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
	// HeartbeatTimeout is handed to every trial; 0 means sweeps.DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// TrialCheckInterval is how often a run looks up the trials an earlier run started that have not
	// reported yet (CheckTrials); 0 means two minutes.
	TrialCheckInterval time.Duration `json:",omitempty"`
	// ResultsFlushInterval is how long a finished trial waits, at most, to be stored while the sweep
	// runs; 0 means resultsFlushEvery (a minute).
	ResultsFlushInterval time.Duration `json:",omitempty"`
	// PendingChildren bounds the trial workflows a run keeps open at once, standby ones included; 0
	// means 2,000, the Temporal server's limit on one workflow's pending children (tests lower it).
	PendingChildren int `json:",omitempty"`
	// NoReport: the results are written without report.html, which the caller draws once itself (a
	// Regression, with its comparison).
	NoReport bool        `json:",omitempty"`
	State    *SweepState `json:",omitempty"`
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
	// Pruning: with early_terminate, how many configurations reached each decision step and how
	// many were stopped there.
	Pruning *scheduler.PruningStatus `json:",omitempty"`
	// PBT: with method pbt, its members, exploits, replacements and the ready step reached.
	PBT *scheduler.PBTStatus `json:",omitempty"`
	// Standby: trials started and waiting for a place (the slot hand-off); not in Running.
	Standby []string `json:",omitempty"`
	// Confirm says which configurations a sweep with confirm re-runs on other GPU classes (or that
	// none qualified); "" before they are picked.
	Confirm string `json:",omitempty"`
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
	// Summary says in one line how the sweep ended: its outcome, the counts, and its best configuration
	// or, when no trial scored, the last failure (the memo's summary).
	Summary string `json:",omitempty"`
	// Best is the best configuration and its objective, as `rlsweep results --top` ranks it; nil when no
	// trial scored.
	Best *activities.BestConfig `json:",omitempty"`
	// Confirm is what a sweep with confirm re-ran on other GPU classes (SweepStatus.Confirm).
	Confirm string `json:",omitempty"`
	// Took is how long the sweep ran, from its start to its end, as "1h2m3s"; TookSeconds the same in
	// seconds.
	Took        string  `json:",omitempty"`
	TookSeconds float64 `json:",omitempty"`
}

// Sweep plans a sweep, runs its probe stage, keeps a sliding window of Trial children running until
// every planned trial has finished, and writes the results. Pause, resume and concurrency are updates;
// cancelling the workflow cancels every running trial and keeps the results recorded so far.
func Sweep(ctx workflow.Context, in SweepInput) (*SweepResult, error) {
	s := &sweepRun{in: in, state: in.State, load: taskLoad{fromHistory: workflow.IsReplaying(ctx)}}
	if s.state == nil {
		s.state = &SweepState{Phase: PhasePlanning, Counts: map[string]int{}, Concurrency: in.Spec.Concurrency,
			Started: workflow.Now(ctx)}
	}
	s.state.Runs++
	s.book = newTrialBook(s.state.Running, s.state.Decided)
	if err := s.registerHandlers(ctx); err != nil {
		return nil, err
	}
	sched, err := newScheduler(&in.Spec, s.state.Scheduler)
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

// newScheduler makes the scheduler of a sweep's spec (tests put another in its place).
var newScheduler = scheduler.New

// sweepRun is one run of the Sweep workflow.
type sweepRun struct {
	in    SweepInput
	state *SweepState
	// sched decides which trial starts next and whether a trial goes on at a segment boundary.
	sched  scheduler.Scheduler
	doneCh workflow.ReceiveChannel
	// boundaryCh receives the trials' questions at segment ends.
	boundaryCh workflow.ReceiveChannel
	// rungCh receives the decision points trials passed inside a segment (takePasses).
	rungCh workflow.ReceiveChannel
	// book: which trials run, started, are followed, decided and held (trialBook).
	book *trialBook
	// trialIn is what every trial starts with but its own trial, place and successor (trialInput).
	trialIn TrialInput
	// flushDue: resultsFlushEvery has passed since a trial finished and was not stored.
	flushDue bool
	// standbyParams: the parameters of the standby trials this run started; planned: every planned
	// trial's, made from the plan when a carried standby trial's are needed (trialParams). skipSent:
	// the standby trials told not to train (skipStandby).
	standbyParams map[string]map[string]any
	planned       map[string]map[string]any
	skipSent      map[string]bool
	// runStart: this run's history and finished trials when its fan-out began (runMark), from which
	// shouldContinueAsNew judges what each trial ending costs this run.
	runStart runMark
	// following: the trials this run started and has not seen end, in launch order (followTrials);
	// nil until the first launch starts the coroutine that follows them.
	following []*followed
	// followSteps counts the steps in which followTrials took in a start or an end.
	followSteps int
	// load: whether this worker took the run up by replaying its history, and in which workflow task
	// (closeOutsideReplay). Not workflow state: it differs between executions and is read only
	// inside a side effect.
	load taskLoad
}

// taskLoad is how the run came to be in this worker's memory: fromHistory, replayed from its history
// (a worker that had not cached it, or that evicted it after a failed workflow task); liveAt, the
// history length of the first workflow task past the replay (0 until one has been seen).
type taskLoad struct {
	fromHistory bool
	liveAt      int
}

// see notes the workflow task ctx is in, once it is past the replay.
func (l *taskLoad) see(ctx workflow.Context) {
	if l.liveAt == 0 && !workflow.IsReplaying(ctx) {
		l.liveAt = workflow.GetInfo(ctx).GetCurrentHistoryLength()
	}
}

// replayedNow says whether the workflow task ctx is in is the one that replayed the run's history.
func (l *taskLoad) replayedNow(ctx workflow.Context) bool {
	l.see(ctx)
	return l.fromHistory && workflow.GetInfo(ctx).GetCurrentHistoryLength() == l.liveAt
}

// runMark is where a run of the sweep stood: its history's length and size, and the trials finished.
type runMark struct {
	events, bytes, finished int
}

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
	s.state.ParamsAttribute = res.ParamsAttribute
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
	s.boundaryCh = workflow.GetSignalChannel(ctx, SignalSegmentEnd)
	s.rungCh = workflow.GetSignalChannel(ctx, SignalRungPassed)
	s.trialIn = trialInput(&s.in, s.sched)
	s.runStart = s.mark(ctx)
	if s.state.Lanes == nil && handsOff(&s.in.Spec) && !s.confirming() {
		s.state.Lanes = &Lanes{}
	}
	if l := s.state.Lanes; l != nil {
		if l.Successor == nil {
			l.Successor = map[string]string{}
		}
		if l.Standby == nil {
			l.Standby = map[string]bool{}
		}
	}
	s.skipStandby(ctx) // carried standby trials an earlier run's bound makes infeasible
	if carried := s.state.Running; len(carried) > 0 {
		workflow.Go(ctx, func(gctx workflow.Context) { s.checkCarried(gctx, carried) })
	}
	workflow.Go(ctx, s.flushTimer)
	for !s.allDone() {
		if s.confirmDue() {
			if err := s.pickConfirm(ctx); err != nil {
				return s.endAfterStore(ctx, err)
			}
		}
		s.startTrials(ctx)
		if s.shouldContinueAsNew(ctx) {
			return s.endAfterStore(ctx, s.continueAsNew(ctx))
		}
		// allDone: the last running trial may end without a report (its watcher records it), and then
		// nothing else would wake the sweep.
		err := workflow.Await(ctx, func() bool {
			return s.doneCh.Len() > 0 || s.boundaryCh.Len() > 0 || s.rungCh.Len() > 0 || s.canStart() || s.allDone() || s.confirmDue() ||
				s.shouldContinueAsNew(ctx) || s.flushDue || s.book.heldAnswerable()
		})
		if err != nil { // cancelled
			return s.cancel(ctx)
		}
		s.drainDone(ctx)
		s.takePasses(ctx)
		s.answerBoundaries(ctx)
		if len(s.state.Pending) >= resultsBatch || s.flushDue {
			s.flushDue = false
			if err := s.flushResults(ctx); err != nil {
				return s.endAfterStore(ctx, err)
			}
		}
	}
	phase := PhaseCompleted
	if n := s.sched.Total(); n > 0 && allFailed(s.state.Counts, n) {
		phase = PhaseFailed // every trial failed (or ran out of memory): the sweep did too
	}
	res, err := s.finish(ctx, phase)
	if err != nil {
		return s.endAfterStore(ctx, err)
	}
	if phase == PhaseFailed {
		// The workflow fails too (the Web UI shows it failed), its result in the failure's details.
		return nil, temporal.NewNonRetryableApplicationError(res.Summary, ErrAllTrialsFailed, nil, res)
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
	s.requestCancelRunning(ctx) // one that has closed meanwhile needs no cancel
	return s.fail(ctx, err)
}

// allDone says whether the scheduler will start no more trials and every started one has finished.
func (s *sweepRun) allDone() bool {
	return s.sched.Done() && s.book.count() == 0 && !s.state.Lanes.queued()
}

// canStart says whether startTrials would start or release a trial now: the sweep is not paused, the
// window has room and a trial is ready (a standby trial waiting, a reserved one, the scheduler's
// next), or a standby trial is due behind a running one.
//
// A start needs startBudget; releasing a waiting standby trial is a signal and does not.
func (s *sweepRun) canStart() bool {
	if s.room() && (s.state.Lanes.queued() || s.schedPeek() || s.state.Lanes.waiting()) &&
		(s.startBudget() > 0 || s.state.Lanes.waiting()) {
		return true
	}
	return s.startBudget() > 0 && s.state.Lanes.anyDue(s.book.landed, s.full())
}

// schedPeek says whether the scheduler has a trial to give out now. Not free of effects for every
// scheduler (a bayes sweep's proposal is drawn on the first look): callers keep the order of their
// looks the same in every run of the workflow.
func (s *sweepRun) schedPeek() bool {
	_, ok := s.sched.Peek()
	return ok
}

func (s *sweepRun) shouldContinueAsNew(ctx workflow.Context) bool {
	s.load.see(ctx) // evaluated in every workflow task, through fanOut's Await
	info := workflow.GetInfo(ctx)
	limit := canLimit(s.in.ContinueAsNewAfter, s.book.count())
	if info.GetCurrentHistoryLength() >= limit {
		return true
	}
	return info.GetContinueAsNewSuggested() && !endsWithin(s.runStart, s.mark(ctx), s.sched.Total(), limit)
}

// mark is where this run stands now (runMark).
func (s *sweepRun) mark(ctx workflow.Context) runMark {
	info := workflow.GetInfo(ctx)
	return runMark{events: info.GetCurrentHistoryLength(), bytes: info.GetCurrentHistorySize(), finished: s.state.finished()}
}

// endsWithin says whether the trials of total not finished yet would finish within the run that began
// at start and stands at now, while its history stays under limit events and historySizeBudget bytes,
// at twice what each trial that finished in the run has cost it so far (total 0: not known, so no).
// The server suggests a new run well before either (at 4,096 events or 4 MB by default); a sweep near
// its end then finishes in the run it is in, instead of closing it for its last few trials: a run that
// closes holds back the trials that have no standby trial waiting until the next run has started them.
func endsWithin(start, now runMark, total, limit int) bool {
	ended := now.finished - start.finished
	if total <= 0 || ended < minEndedToProject {
		return false
	}
	left := float64(max(0, total-now.finished))
	perTrial := func(at, from int) float64 { return float64(at-from) / float64(ended) }
	return float64(now.events)+projectMargin*left*perTrial(now.events, start.events) < float64(limit) &&
		float64(now.bytes)+projectMargin*left*perTrial(now.bytes, start.bytes) < historySizeBudget
}

// A run projects its end (endsWithin) from at least minEndedToProject trials finished in it, at
// projectMargin times their cost, and keeps its history under historySizeBudget bytes (the server
// warns at 10 MB and stops a workflow at 50 MB).
const (
	minEndedToProject = 20
	projectMargin     = 2
	historySizeBudget = 8 << 20
)

// Closing a run (continueAsNew) asks every running trial to report (askForReports: two events each)
// and takes in the starts in flight, a results part and the trials that end meanwhile; historyBudget
// is what a run may reach in all, under the 10,240 events at which the server warns.
const (
	historyBudget = 9600
	closingEvents = 2 // per running trial
)

// canLimit is the history length at which a run continues-as-new: configured (0: defaultCANMaxEvent),
// lowered so that closing with running trials stays under historyBudget (at 2,000 running, 5,600).
func canLimit(configured, running int) int {
	limit := configured
	if limit <= 0 {
		limit = defaultCANMaxEvent
	}
	return min(limit, historyBudget-closingEvents*running)
}

// continueAsNew stores what has finished and carries the running set over; the running children keep
// signalling the sweep's workflow ID, which the new run answers.
func (s *sweepRun) continueAsNew(ctx workflow.Context) error {
	// Every start command must have been taken by the server before this run closes.
	if err := workflow.Await(ctx, func() bool { return s.book.startsInFlight() == 0 }); err != nil {
		return err
	}
	if err := s.awaitEnded(ctx, s.askForReports(ctx)); err != nil {
		return err
	}
	s.drainDone(ctx)
	s.takePasses(ctx)
	s.answerBoundaries(ctx)
	if err := s.flushResults(ctx); err != nil {
		return err
	}
	if err := s.closeOutsideReplay(ctx); err != nil {
		return err
	}
	s.state.Running, s.state.Decided = s.book.carry()
	s.state.Scheduler = s.sched.State()
	in := s.in
	in.State = s.state
	return workflow.NewContinueAsNewError(ctx, Sweep, in)
}

// closeOutsideReplay takes in the trials that ended and waits for the update handlers, then, when the
// workflow task it is in is the one that replayed the run's history, waits for the next task and does
// it again, so that the run closes in a workflow task of its own. The server refuses a task that closes
// the run when an event (a trial's end, a signal) arrived while the worker processed it
// (UnhandledCommand), and the worker then drops the run from its cache and replays the whole history in
// the next task (BenchmarkReplayLongSweepRun: 0.24–0.29 s for 4,269 events on 2 idle cores, more beside
// running trials) while trials keep ending, so every replaying attempt to close is refused again until
// no trial is left running to end (the standby trials run dry and every place waits). A task that only
// starts a timer is never refused, and the next task, brought by the next trial's end or the timer,
// runs on the cached run in milliseconds. Whether this is the replaying task is recorded as a side
// effect: another worker replaying the history later takes the same path. It waits at most
// maxCloseWaits times: a worker that caches no run replays every task.
func (s *sweepRun) closeOutsideReplay(ctx workflow.Context) error {
	for waits := 0; ; waits++ {
		s.drainDone(ctx)
		// followTrials takes in this task's starts and ends first: only those of a later task end the
		// wait below.
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && !s.followReady() }); err != nil {
			return err
		}
		var replayed bool
		if err := workflow.SideEffect(ctx, func(ctx workflow.Context) any { return s.load.replayedNow(ctx) }).Get(&replayed); err != nil {
			return err
		}
		if !replayed || waits == maxCloseWaits {
			return nil
		}
		// Until a trial's end or start arrives (doneCh, followTrials), or a millisecond's timer fires:
		// either brings the next task. The timer is there for a run that no event would wake; the dev
		// server fires so short a timer about a second late, and at a trial's end a second is every
		// standby trial's margin.
		seen := s.followSteps
		if _, err := workflow.AwaitWithTimeout(ctx, time.Millisecond, func() bool {
			return s.doneCh.Len() > 0 || s.followSteps != seen
		}); err != nil {
			return err
		}
	}
}

// maxCloseWaits bounds closeOutsideReplay's waits for a workflow task that did not replay.
const maxCloseWaits = 3

// askForReports tells every running trial to report its end by signal, which the next run answers,
// and returns the trials it could not tell: they ended meanwhile (awaitEnded).
func (s *sweepRun) askForReports(ctx workflow.Context) (ended []string) {
	for ids := range slices.Chunk(s.book.runningIDs(), maxSignalsInFlight) {
		var fs []workflow.Future
		for _, id := range ids {
			fs = append(fs, workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, id), "", SignalReportToSweep, nil))
		}
		for i, f := range fs {
			var gone *temporal.UnknownExternalWorkflowExecutionError
			if err := f.Get(ctx, nil); errors.As(err, &gone) {
				ended = append(ended, ids[i])
			}
		}
	}
	return ended
}

// awaitEnded waits, at most endedWait, until this run has taken in the end of each trial in ids that it
// started: a trial that ended before askForReports reached it reports to no one, and the server drops
// the end of a child whose parent run has closed. Carried without its end, it would count as running in
// the next run until that run's first CheckTrials (carriedFirstCheck) while the trial behind it took its
// place, and the sweep, seeing more trials hold places than its concurrency, would start no standby
// trial meanwhile: every place waits once the standby trials run dry. A trial carried over from an
// earlier run has no future here; the next run's CheckTrials finds it.
func (s *sweepRun) awaitEnded(ctx workflow.Context, ids []string) error {
	ids = slices.DeleteFunc(ids, s.book.carriedOver)
	if len(ids) == 0 {
		return nil
	}
	_, err := workflow.AwaitWithTimeout(ctx, endedWait, func() bool {
		return !slices.ContainsFunc(ids, s.book.runs)
	})
	return err
}

// endedWait bounds awaitEnded: a child's end reaches its parent within milliseconds while the server
// is up, and every trial that ends meanwhile adds to the closing run's history (at 2,000 running, about
// 30 a second); past it, the next run's CheckTrials finds the end.
const endedWait = 2 * time.Second

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
	s.upsertEndMemo(ctx, failureSummary(s.state.Phase, err), nil, s.took(ctx))
	return nil, err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
