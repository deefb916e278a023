package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
)

func heldIDs(held map[string]scheduler.Boundary) map[string]bool {
	ids := make(map[string]bool, len(held))
	for id := range held {
		ids[id] = true
	}
	return ids
}

// answerBoundaries answers every trial waiting at a segment boundary (SignalSegmentEnd) with the
// scheduler's decision (SignalSegmentDecision). A trial asks only when the scheduler asks at
// boundaries; a question from a trial this sweep does not run (it ended meanwhile) is dropped. A
// question the scheduler answers Wait (a pruner waiting for the trial's running siblings) is held in
// s.held and asked again here after other trials' questions and ends; a run that continues-as-new
// drops what it holds, and the trial asks again (askAgainAfter), answered from the carried state.
func (s *sweepRun) answerBoundaries(ctx workflow.Context) {
	var fs []workflow.Future
	answer := func(b scheduler.Boundary) {
		d, ok := s.decided[b.TrialID]
		switch {
		case ok && d.Action == scheduler.Stop && d.Segment < 0:
			// Stopped between boundaries (interrupt) before its question was answered: the stop is
			// its answer, made once.
			d.Segment = b.Segment
		case !ok || d.Segment != b.Segment:
			d = s.sched.AtBoundary(b)
			if d.Action == scheduler.Wait {
				s.held[b.TrialID] = b
				return
			}
			s.decided[b.TrialID] = d
			s.logDecision(b.TrialID, b.Step, d)
		}
		delete(s.held, b.TrialID)
		fs = append(fs, workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, b.TrialID), "",
			SignalSegmentDecision, d))
	}
	var b scheduler.Boundary
	for s.boundaryCh.ReceiveAsync(&b) {
		if s.running[b.TrialID] {
			answer(b)
		}
		b = scheduler.Boundary{}
	}
	s.ended = false
	for _, id := range sortedKeys(heldIDs(s.held)) {
		if !s.running[id] {
			delete(s.held, id)
			continue
		}
		answer(s.held[id])
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
