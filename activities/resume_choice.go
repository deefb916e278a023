package activities

import "github.com/rlsweep/rlsweep/sweepstore"

// resumeChoice is what an attempt may resume from: the checkpoint the workflow handed the segment, the
// last one a previous attempt heartbeated, and the segment's stored resume point (resume.json). It
// decides from these alone which one the attempt resumes from, and at which step.
type resumeChoice struct {
	segment int
	// handed: SegmentInput.ResumeFrom ("" for the trial's start); handedStep: the step the previous
	// segment ended at, where it was written (the later of ResumeStep and StartStep).
	handed     string
	handedStep int64
	// heartbeat, heartbeatStep: the checkpoint the previous attempt last heartbeated ("" for none).
	heartbeat     string
	heartbeatStep int64
	// stored: the resume point stored for the trial; nil when there is none, it cannot be read, or the
	// attempt is the segment's first (which reads none).
	stored *sweepstore.ResumePoint
}

// newResumeChoice is the choice of an attempt of the segment in, whose previous attempt left prev.
func newResumeChoice(in SegmentInput, prev Heartbeat) resumeChoice {
	c := resumeChoice{segment: in.Segment, handed: in.ResumeFrom, handedStep: max(in.ResumeStep, in.StartStep)}
	if prev.CheckpointKey != "" {
		c.heartbeat, c.heartbeatStep = prev.CheckpointKey, prev.CheckpointStep
	}
	return c
}

// resumeFrom is the checkpoint an attempt resumes from and the step it resumes at ("" and 0: the
// segment's start, or the trial's).
type resumeFrom struct {
	key  string
	step int64
	// stored: the key is the stored resume point's, past the heartbeat's checkpoint; step is then the
	// point's step unless the point is the handed checkpoint (then handedStep).
	stored bool
}

// choose picks the latest of the three: the heartbeat's checkpoint over the handed one, and the stored
// resume point of this segment over both when it is past the heartbeat's step. A resume point past
// the segment's stop step is a checkpoint of the iteration that crossed it (trainers finish the
// iteration they are in): an attempt resuming there has nothing left to train. The handed checkpoint
// resumes at handedStep.
func (c resumeChoice) choose() resumeFrom {
	r := resumeFrom{key: c.handed, step: c.heartbeatStep}
	if c.heartbeat != "" {
		r.key = c.heartbeat
	}
	if p := c.stored; p != nil && p.Segment == c.segment && p.Step > c.heartbeatStep {
		r = resumeFrom{key: p.Key, step: p.Step, stored: true}
	}
	switch {
	case r.key == "":
		return resumeFrom{}
	case r.key == c.handed:
		r.step = c.handedStep
	}
	return r
}
