package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/scheduler"
)

// decided is the scheduler's answer to a running trial's last boundary, kept to answer a repeated
// question the same way.
type decided struct {
	segment  int
	decision scheduler.Decision
}

// answerBoundaries answers every trial waiting at a segment boundary (SignalSegmentEnd) with the
// scheduler's decision (SignalSegmentDecision). A trial asks only when the scheduler asks at
// boundaries; a question from a trial this sweep does not run (it ended meanwhile) is dropped.
func (s *sweepRun) answerBoundaries(ctx workflow.Context) {
	var fs []workflow.Future
	var b scheduler.Boundary
	for s.boundaryCh.ReceiveAsync(&b) {
		if s.running[b.TrialID] {
			d, ok := s.decided[b.TrialID]
			if !ok || d.segment != b.Segment {
				d = decided{segment: b.Segment, decision: s.sched.AtBoundary(b)}
				s.decided[b.TrialID] = d
			}
			fs = append(fs, workflow.SignalExternalWorkflow(ctx, TrialWorkflowID(s.in.SweepID, b.TrialID), "",
				SignalSegmentDecision, d.decision))
		}
		b = scheduler.Boundary{}
	}
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("segment decision not delivered", "error", err)
		}
	}
}
