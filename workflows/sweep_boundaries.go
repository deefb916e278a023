package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/scheduler"
)

func heldIDs(held map[string]scheduler.Boundary) map[string]bool {
	ids := make(map[string]bool, len(held))
	for id := range held {
		ids[id] = true
	}
	return ids
}

// decided is the scheduler's answer to a running trial's last boundary, kept to answer a repeated
// question the same way.
type decided struct {
	segment  int
	decision scheduler.Decision
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
		if !ok || d.segment != b.Segment {
			dec := s.sched.AtBoundary(b)
			if dec.Action == scheduler.Wait {
				s.held[b.TrialID] = b
				return
			}
			d = decided{segment: b.Segment, decision: dec}
			s.decided[b.TrialID] = d
		}
		delete(s.held, b.TrialID)
		fs = append(fs, workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, b.TrialID), "",
			SignalSegmentDecision, d.decision))
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
