package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/scheduler"
)

// answerBoundaries answers every trial waiting at a segment boundary (SignalSegmentEnd) with the
// scheduler's decision (SignalSegmentDecision). A trial asks only when the scheduler asks at
// boundaries; a question from a trial this sweep does not run (it ended meanwhile) is dropped. The
// book (trialBook.ask) answers a question it has an answer to and asks the scheduler the others. A
// question the scheduler answers Wait (a pruner waiting for the trial's running siblings) is held in
// the book and asked again here after other trials' questions and ends; a run that continues-as-new
// drops what it holds, and the trial asks again (askAgainAfter), answered from the carried state.
func (s *sweepRun) answerBoundaries(ctx workflow.Context) {
	var fs []workflow.Future
	answer := func(q scheduler.Boundary) {
		d, fresh, ok := s.book.ask(q, s.sched.AtBoundary)
		if !ok {
			return
		}
		if fresh {
			s.state.logDecision(q.TrialID, q.Step, d)
		}
		fs = append(fs, workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, q.TrialID), "",
			SignalSegmentDecision, d))
	}
	var q scheduler.Boundary
	for s.boundaryCh.ReceiveAsync(&q) {
		answer(q)
		q = scheduler.Boundary{}
	}
	for _, q := range s.book.retake() {
		answer(q)
	}
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("segment decision not delivered", "error", err)
		}
	}
}

// DecisionReplace is the action of a decision-log entry for a trial added in place of another.
const DecisionReplace = "replace"
