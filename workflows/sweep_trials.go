package workflows

import (
	"encoding/json"
	"fmt"
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

// carriedFirstCheck is how soon a run first looks up the trials it carries over: a trial that ended
// while the previous run was closing may be heard by neither run (its result too late for the closing
// run's future, its report in that run's last workflow task).
const carriedFirstCheck = 5 * time.Second

// startTrials starts children until the window is full. It goes on at once: followTrials learns of
// each start and end, so one workflow task can take in many starts and many ends.
//
// With the slot hand-off (Lanes), it first releases the standby trials waiting for room, and once the
// window is full it starts each running trial's successor as a standby trial behind it.
//
// It starts no more than startBudget allows: the rest start as earlier starts land.
func (s *sweepRun) startTrials(ctx workflow.Context) {
	s.releaseWaiting(ctx)
	// The trials to start are taken before any successor is reserved, so that a successor is not one
	// of the trials that start now.
	var batch []sweeps.Trial
	for n := min(s.state.Concurrency-s.active(), s.startBudget()); !s.state.Paused && len(batch) < n; {
		t, ok := s.state.Lanes.next(s.sched.Next)
		if !ok {
			break
		}
		if s.skipAtLaunch(ctx, t) {
			continue
		}
		batch = append(batch, t)
	}
	for _, t := range batch {
		s.launch(ctx, t, false)
	}
	// Until none is due: a standby trial started now may be due one behind it.
	for {
		due := s.state.Lanes.takeDue(s.book.landed, s.full(), s.startBudget())
		if len(due) == 0 {
			return
		}
		for _, t := range due {
			if !s.skipAtLaunch(ctx, t) {
				s.launch(ctx, t, true)
			}
		}
	}
}

// What one run of the sweep keeps in flight with the Temporal server. The server fails a workflow task
// that would take a run past 2,000 pending child workflows, signals or cancel requests (its
// limit.numPending*.error settings, fixed on Temporal Cloud; the task is retried and fails again, and
// the sweep stalls), and refuses a task completion over 4 MB (gRPC's limit), about 2,000 trial starts.
const (
	// maxPendingChildren bounds the trials a run has started and not heard the end of, standby ones
	// included (SweepInput.PendingChildren lowers it): standby trials start only while the running
	// ones leave room under it.
	maxPendingChildren = sweeps.MaxConcurrency
	// maxStartsInFlight bounds the trial starts a run has sent and not seen land; the next start
	// after a landing goes out in the workflow task that records it.
	maxStartsInFlight = 200
	// maxSignalsInFlight bounds the signals and cancel requests a run sends at once to its trials.
	maxSignalsInFlight = 500
)

// startBudget is how many trials may start now: under maxStartsInFlight starts in flight and
// maxPendingChildren trials running.
func (s *sweepRun) startBudget() int {
	pending := maxPendingChildren
	if n := s.in.PendingChildren; n > 0 {
		pending = min(n, pending)
	}
	return max(0, min(maxStartsInFlight-s.book.startsInFlight(), pending-s.book.count()))
}

// launch starts a trial (standby: waiting for a place) with its successor reserved, and follows it.
func (s *sweepRun) launch(ctx workflow.Context, t sweeps.Trial, standby bool) {
	next := s.state.Lanes.reserve(t.ID, s.sched.Next)
	f := s.startTrial(ctx, t, standby, next)
	s.book.launched(t.ID)
	if standby {
		s.state.Lanes.Standby[t.ID] = false
		if s.standbyParams == nil {
			s.standbyParams = map[string]map[string]any{}
		}
		s.standbyParams[t.ID] = t.Params
	}
	if s.following == nil {
		workflow.Go(ctx, s.followTrials)
	}
	s.following = append(s.following, &followed{id: t.ID, f: f})
}

// followed is a trial this run started, followed until it ends (followTrials); landed: its start has
// landed or failed.
type followed struct {
	id     string
	f      workflow.ChildWorkflowFuture
	landed bool
}

// followTrials follows every trial this run starts, in one coroutine: it waits until the start or the
// end of one of them is known and takes each in (followStep), in the order they were launched. The SDK
// steps every coroutine of a workflow in each pass of a workflow task, in replay too, so a coroutine per
// trial would make every task of the sweep cost as many steps as trials running and waiting on standby
// (at 2,000 running, 2,000 a pass), and the replay of a long history seconds. It waits on a context that
// a cancel does not reach: a cancelled sweep still records how each trial ended.
func (s *sweepRun) followTrials(ctx workflow.Context) {
	wait, _ := workflow.NewDisconnectedContext(ctx)
	for {
		if err := workflow.Await(wait, s.followReady); err != nil {
			return
		}
		s.followStep(ctx)
	}
}

// followReady says whether a followed trial's start or end is known and not yet taken in.
func (s *sweepRun) followReady() bool {
	for _, t := range s.following {
		if t.ready() {
			return true
		}
	}
	return false
}

func (t *followed) ready() bool {
	if !t.landed {
		return t.f.GetChildWorkflowExecution().IsReady()
	}
	return t.f.IsReady()
}

// followStep takes in every start and end known now, in launch order, and forgets the trials that
// ended. A trial launched meanwhile (none is, today) is looked at in the same step.
func (s *sweepRun) followStep(ctx workflow.Context) {
	s.followSteps++
	for i := 0; i < len(s.following); i++ {
		if t := s.following[i]; t.ready() && s.follow(ctx, t) {
			s.following[i] = nil
		}
	}
	kept := s.following[:0]
	for _, t := range s.following {
		if t != nil {
			kept = append(kept, t)
		}
	}
	clear(s.following[len(kept):])
	s.following = kept
}

// follow takes in what is known of trial t: its start (a start that failed records the trial failed),
// then its end, recording its summary from its result if its signal has not been taken in first; a
// trial that ends without a result (terminated by hand) counts as failed. It says whether t has ended.
func (s *sweepRun) follow(ctx workflow.Context, t *followed) bool {
	id, f := t.id, t.f
	if !t.landed {
		t.landed = true
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			s.book.startFailed(id)
			s.record(ctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeFailed,
				Error: "trial workflow did not start: " + err.Error()})
			return true
		}
		if s.book.startLanded(id) || s.startedInfeasible(id) {
			s.release(ctx, id)
		} else if held, _ := s.state.Lanes.standby(id); held {
			s.signalTrial(ctx, id, SignalHold, nil) // held while its start was in flight
		}
		if !f.IsReady() {
			return false
		}
	}
	var sum results.TrialSummary
	switch err := f.Get(ctx, &sum); {
	case err == nil && sum.TrialID == id:
		s.record(ctx, sum)
	case temporal.IsCanceledError(err):
		// Its report, with the steps it reached (or that it never started), comes first by signal; a
		// standby trial that has not reported never took its place as far as the sweep knows.
		s.drainDone(ctx)
		_, standby := s.state.Lanes.standby(id)
		s.record(ctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeCancelled, Unstarted: standby})
	case err != nil:
		s.record(ctx, results.TrialSummary{TrialID: id, Outcome: results.OutcomeFailed,
			Error: "trial workflow ended without reporting: " + err.Error()})
	}
	return true
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
			if s.book.runs(id) {
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

func (s *sweepRun) startTrial(ctx workflow.Context, t sweeps.Trial, standby bool, successor string) workflow.ChildWorkflowFuture {
	spec := &s.in.Spec
	attrs := []temporal.SearchAttributeUpdate{AttrSweepID.ValueSet(s.in.SweepID),
		AttrSweepName.ValueSet(spec.Name), AttrKind.ValueSet("trial")}
	if s.state.ParamsAttribute {
		attrs = append(attrs, AttrParams.ValueSet(paramKeywords(sweeps.ParamNames(spec), t.Params)))
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: TrialWorkflowID(s.in.SweepID, t.ID),
		TaskQueue:  ControlQueue,
		// Children outlive a continue-as-new of the sweep; cancel reaches them explicitly.
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		StaticSummary:         fmt.Sprintf("trial %s of %s: %s", t.ID, spec.Name, formatParams(sweeps.ParamNames(spec), t.Params)),
	})
	in := s.trialIn
	in.Trial, in.Standby, in.Successor = t, standby, successor
	if t.GPUClass != "" { // a confirm re-run: on its class's queue, never stopped at a rung
		in.TaskQueue, in.Rungs, in.AskAtBoundaries = sweeps.GPUClassQueue(t.GPUClass), nil, false
	}
	return workflow.ExecuteChildWorkflow(cctx, Trial, in)
}

// trialInput is what every trial of sweep in starts with, made once per run: the trainer, the metric,
// the bounds, the segment ends (sweeps.Spec.SegmentEnds, which the trial trains by) and, for a
// scheduler (sched) that judges trials inside segments, the decision points.
func trialInput(sw *SweepInput, sched scheduler.Scheduler) TrialInput {
	spec := &sw.Spec
	in := TrialInput{
		SweepID: sw.SweepID, Trainer: spec.Trainer, Diagnostics: spec.Diagnostics,
		Metric: spec.Metric, StepsTarget: spec.StepsTarget(), TaskQueue: spec.Resources.TrialQueue(), GPUs: &spec.Resources.GPUs, MaxAttempts: spec.Retries.MaxAttempts,
		MaxInfraRetries:  spec.Retries.MaxInfraRetries,
		HeartbeatTimeout: sw.HeartbeatTimeout, AskAtBoundaries: sched.AsksAtBoundaries(),
		SegmentEnds: spec.SegmentEnds(), RungUnit: spec.RungUnit(),
	}
	if _, ok := sched.(scheduler.Passer); ok && spec.EarlyTerminate != nil {
		in.Rungs = spec.DecisionSteps()
	}
	return in
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
	if !s.book.end(sum.TrialID) {
		return
	}
	s.fillRerun(&sum)
	s.state.Lanes.ended(sum)
	if sum.Unstarted && s.state.Phase == PhaseCancelling {
		return // a standby trial the cancel reached before its place: it never ran
	}
	bound := false
	if sum.Outcome == results.OutcomeOOM && !sum.Unstarted {
		s.adviseOOM(&sum)
		bound = s.state.learnOOM(s.classOf(sum.GPUClass), s.in.Spec.MemoryParam(), sum)
	}
	sum.HandedOff, sum.Unstarted = false, false
	s.sched.Finished(sum)
	if r, ok := s.sched.(scheduler.Replacer); ok {
		for _, rp := range r.Replacements() {
			s.state.logReplacement(rp)
		}
	}
	if in, ok := s.sched.(scheduler.Interrupter); ok {
		s.interrupt(ctx, in.Interrupt())
	}
	s.state.tally(sum, s.in.Spec.Metric.Goal)
	workflow.SetCurrentDetails(ctx, s.state.details(s.sched.Total(), s.active(), s.in.Spec.Metric.Name))
	if bound {
		s.skipStandby(ctx)
	}
}

// takePasses takes in every decision point a running trial's metric stream passed inside a segment
// (SignalRungPassed) and stops, through the scheduler's interruptions, the trials of the
// configurations that decided.
func (s *sweepRun) takePasses(ctx workflow.Context) {
	passer, ok := s.sched.(scheduler.Passer)
	var p activities.RungPassed
	for s.rungCh.ReceiveAsync(&p) {
		if ok && s.book.passes(p.TrialID) {
			passer.Passed(scheduler.Pass{TrialID: p.TrialID, Config: p.Config, Seed: p.Seed, Point: p.Point, Step: p.Step, Windowed: p.Windowed,
				TargetStep: p.TargetStep, Seconds: p.Seconds})
		}
		p = activities.RungPassed{}
	}
	if in, ok := s.sched.(scheduler.Interrupter); ok {
		s.interrupt(ctx, in.Interrupt())
	}
}

// interrupt sends each running trial of stops its decision (SignalStopTrial) without waiting for
// the delivery: a trial that ended meanwhile cannot be told, and needs not.
func (s *sweepRun) interrupt(ctx workflow.Context, stops []scheduler.Interruption) {
	for _, st := range stops {
		// Made once: a question the trial asks, or has asked, at a boundary is answered with it; a
		// held one when it is asked again (answerBoundaries).
		known, tell := s.book.stop(st.TrialID, st.Decision)
		if known {
			s.state.logDecision(st.TrialID, 0, st.Decision)
		}
		if !tell {
			continue
		}
		s.signalTrial(ctx, st.TrialID, SignalStopTrial, st.Decision)
	}
}

// signalTrial sends a running trial a signal without waiting for its delivery: a trial that ended
// meanwhile cannot be told, and needs not; the failure is logged.
func (s *sweepRun) signalTrial(ctx workflow.Context, id, name string, arg any) {
	f := workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, id), "", name, arg)
	workflow.Go(ctx, func(gctx workflow.Context) {
		if err := f.Get(gctx, nil); err != nil {
			workflow.GetLogger(gctx).Warn("signal not delivered", "signal", name, "trial", id, "error", err)
		}
	})
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
