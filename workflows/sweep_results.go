package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/sweeps"
)

// resultsBatch is how many finished trials the sweep holds before storing them.
const resultsBatch = 100

// resultsFlushEvery is how long a finished trial waits, at most, to be stored while the sweep runs, so
// `rlsweep results` and `report` show it even when no batch of resultsBatch fills.
const resultsFlushEvery = time.Minute

// flushTimer marks a flush due resultsFlushEvery after a finished trial is first left unstored, so
// the loop stores the pending results even when no batch fills (a small sweep, or its last trials).
func (s *sweepRun) flushTimer(ctx workflow.Context) {
	every := s.in.ResultsFlushInterval
	if every <= 0 {
		every = resultsFlushEvery
	}
	for {
		if err := workflow.Await(ctx, func() bool { return s.state.unstored() && !s.flushDue }); err != nil {
			return
		}
		if err := workflow.Sleep(ctx, every); err != nil {
			return // cancelled, or the run is closing
		}
		s.flushDue = s.state.unstored()
	}
}

func (s *sweepRun) flushResults(ctx workflow.Context) error {
	n, nd := len(s.state.Pending), len(s.state.Decisions)
	if n == 0 && nd == 0 {
		return nil
	}
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "record results"), (*activities.Activities).RecordResults,
		activities.RecordResultsInput{SweepID: s.in.SweepID, Part: s.state.Part, Trials: s.state.Pending[:n],
			Decisions: s.state.Decisions[:nd], DecisionPart: s.state.DecisionPart}).Get(ctx, nil)
	if err != nil {
		return err
	}
	if n > 0 {
		s.state.Part++
	}
	if nd > 0 {
		s.state.DecisionPart++
	}
	// Trials that finished, and decisions made, while the part was being stored (their followers run
	// during the wait) stay pending for the next part.
	s.state.Pending = s.state.Pending[n:]
	s.state.Decisions = s.state.Decisions[nd:]
	return nil
}

// finish records the remaining results and writes results.json and results.csv.
func (s *sweepRun) finish(ctx workflow.Context, phase string) (*SweepResult, error) {
	s.state.Phase = PhaseReporting
	for s.state.unstored() {
		if err := s.flushResults(ctx); err != nil {
			return nil, err
		}
	}
	var wr activities.WriteResultsResult
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "write results"), (*activities.Activities).WriteResults,
		activities.WriteResultsInput{SweepID: s.in.SweepID, Spec: s.in.Spec, Status: phase,
			RungValues: s.sched.State().Pruner.RungValues(), NoReport: s.in.NoReport}).Get(ctx, &wr)
	if err != nil {
		return nil, err
	}
	s.state.Phase = phase
	if err := workflow.UpsertTypedSearchAttributes(ctx, AttrOutcome.ValueSet(phase)); err != nil {
		workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
	}
	took := s.took(ctx)
	res := &SweepResult{SweepID: s.in.SweepID, Status: phase, Total: s.sched.Total(), Counts: s.state.Counts,
		ResultsKey: wr.ResultsKey, CSVKey: wr.CSVKey, LastFailure: s.state.LastFailure, Best: wr.Best,
		Took: took.String(), TookSeconds: took.Seconds(), Confirm: s.state.ConfirmNote}
	res.Summary = endSummary(res, sweeps.ParamNames(&s.in.Spec))
	s.upsertEndMemo(ctx, res.Summary, res.Best, took)
	return res, nil
}
