package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
)

// requestCancelRunning sends a cancel request to every running trial, in ID order, once the starts in
// flight have landed, at most maxSignalsInFlight at a time, and returns the trials with what each
// request answered (an error: the trial had closed already).
func (s *sweepRun) requestCancelRunning(ctx workflow.Context) ([]string, []error) {
	_ = workflow.Await(ctx, func() bool { return s.book.startsInFlight() == 0 })
	ids := s.book.runningIDs()
	errs := make([]error, len(ids))
	for from := 0; from < len(ids); from += maxSignalsInFlight {
		to := min(from+maxSignalsInFlight, len(ids))
		reqs := make([]workflow.Future, 0, to-from)
		for _, id := range ids[from:to] {
			reqs = append(reqs, workflow.RequestCancelExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, id), ""))
		}
		for i, f := range reqs {
			errs[from+i] = f.Get(ctx, nil)
		}
	}
	return ids, errs
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

// cancel asks every running trial to stop, waits for their reports (their trainers are stopped by
// then), and stores the results recorded so far.
func (s *sweepRun) cancel(ctx workflow.Context) (*SweepResult, error) {
	s.state.Phase = PhaseCancelling // status says so; pause and set-concurrency are refused from now on
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	ids, errs := s.requestCancelRunning(dctx)
	// A trial the request cannot reach has closed already. One started by this run is recorded by its
	// future; one carried over from an earlier run may have ended unheard (asked to report after it
	// closed), so its result is looked up rather than waited for.
	var closed []activities.TrialRef
	for i, err := range errs {
		if err != nil && s.book.carriedOver(ids[i]) {
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
		return s.book.count() == 0
	})
	if !ok {
		for _, id := range s.book.runningIDs() {
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
