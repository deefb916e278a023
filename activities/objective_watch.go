package activities

import (
	"fmt"

	"github.com/rlsweep/rlsweep/diagnostics"
)

// objectiveWatch decides when a trial whose records carry no objective has gone too far without one:
// past the step its warm-up ends, or at the end of its last segment.
type objectiveWatch struct {
	// warmup is the step by which the trial's records must have carried the objective's metric: the
	// diagnostics warm-up (diagnostics.warmup_steps, else 10% of total_steps), counted from the step
	// the trial's training began (a pbt member started from another's checkpoint begins there).
	warmup int64
	// lastSegment: the segment runs to the trial's total_steps, the trial's last chance to report one.
	lastSegment bool
}

// newObjectiveWatch is the watch of the segment in.
func newObjectiveWatch(in SegmentInput) objectiveWatch {
	w := in.Diagnostics.WarmupSteps
	if w <= 0 {
		w = diagnostics.DefaultWarmup(in.Trainer.TotalSteps)
	}
	return objectiveWatch{warmup: in.Trial.ResumeStep + w, lastSegment: in.StopAtStep >= in.Trainer.TotalSteps}
}

// overdue says by when the objective was missed while the trainer runs, its records having reached
// step last without any of the trial's carrying it; "" while it is not yet overdue.
func (w objectiveWatch) overdue(last int64) string {
	if last < w.warmup {
		return ""
	}
	return fmt.Sprintf("by step %d (the diagnostics warm-up ends at step %d)", last, w.warmup)
}

// atEnd says by when the objective was missed once the trainer exited with records reaching step
// last, none of the trial's carrying it: past the warm-up, or at the trial's last segment. "" for an
// earlier segment that ends before the warm-up: it only warns.
func (w objectiveWatch) atEnd(last int64) string {
	if when := w.overdue(last); when != "" {
		return when
	}
	if w.lastSegment {
		return fmt.Sprintf("by the end of its last segment (step %d)", last)
	}
	return ""
}
