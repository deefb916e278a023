package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/results"
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
			s.logDecision(q.TrialID, q.Step, d)
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

// logDecision adds a decision that changes a trial's course (a stop or an exploit) to the decision
// log, numbered in the order the sweep made it; it is stored with the next results part.
func (s *sweepRun) logDecision(trialID string, step int64, d scheduler.Decision) {
	if d.Action != scheduler.Stop && d.Action != scheduler.Exploit {
		return
	}
	s.state.Decisions = append(s.state.Decisions, results.Decision{Seq: s.state.DecisionSeq, TrialID: trialID,
		Segment: d.Segment, Step: step, Action: string(d.Action), Outcome: d.Outcome, Reason: d.Reason, Pruning: d.Pruning,
		ResumeFrom: d.ResumeFrom, Params: d.Params})
	s.state.DecisionSeq++
}

// logReplacement adds a trial a scheduler added in place of one that ended (a pbt member replacing a
// diverged one) to the decision log, as action replace.
func (s *sweepRun) logReplacement(r scheduler.Replacement) {
	s.state.Decisions = append(s.state.Decisions, results.Decision{Seq: s.state.DecisionSeq, TrialID: r.Member,
		Segment: -1, Step: r.ResumeStep, Action: DecisionReplace, Reason: r.Reason, ResumeFrom: r.ResumeFrom, Params: r.Params,
		Replaces: r.Replaces, Parent: r.Parent})
	s.state.DecisionSeq++
}

// DecisionReplace is the action of a decision-log entry for a trial added in place of another.
const DecisionReplace = "replace"
