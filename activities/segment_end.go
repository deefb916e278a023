package activities

import (
	"fmt"

	"github.com/rlsweep/rlsweep/trainer"
)

// segmentEnd is where a segment's trainer stopped, against where the segment and the trial were to end:
// what the end means is decided from these alone.
type segmentEnd struct {
	segment int
	// total: the trial's total_steps; stop: the segment's stop step (RLSWEEP_STOP_AT_STEP); last: the
	// last step the segment's records (or the checkpoint it resumed from) reached.
	total, stop, last int64
	// checkpointed: the segment ended with a checkpoint of its own (not the one it resumed from).
	checkpointed bool
	// resumeFrom: the checkpoint the segment was handed to resume from ("" for the trial's start).
	resumeFrom string
}

// trialsLast says whether the segment was the trial's last: it was to run to the trial's budget, or the
// trainer got there anyway. The end-of-run rules then judge the whole trial.
func (e segmentEnd) trialsLast() bool {
	return e.stop >= e.total || e.last >= e.total
}

// warning judges how a segment other than the trial's last ended: a trainer that follows the contract
// stops at RLSWEEP_STOP_AT_STEP (or within the iteration that crosses it) with a checkpoint, and the
// next segment resumes from it. One that ran to total_steps ignored the stop step: the Trial workflow
// ends the trial there rather than run it again in every later segment. One that wrote no checkpoint
// makes the next segment start over. "" when the segment ended as the contract asks.
func (e segmentEnd) warning() string {
	if e.stop >= e.total {
		return ""
	}
	restart := "from the start"
	if e.resumeFrom != "" {
		restart = "from " + e.resumeFrom
	}
	const fix = "segment_steps needs a trainer that stops at RLSWEEP_STOP_AT_STEP with a checkpoint and resumes from RLSWEEP_RESUME_FROM (docs/trainer-contract.md)"
	switch {
	case e.last >= e.total:
		return fmt.Sprintf("segment %d: the trainer ran past %s=%d to step %d, its whole total_steps (%d): it ignores the stop step, so the trial ends here instead of re-running in every later segment; %s",
			e.segment, trainer.EnvStopAtStep, e.stop, e.last, e.total, fix)
	case !e.checkpointed && e.last > e.stop:
		return fmt.Sprintf("segment %d: the trainer ran past %s=%d to step %d and wrote no checkpoint: the next segment re-runs it %s; %s",
			e.segment, trainer.EnvStopAtStep, e.stop, e.last, restart, fix)
	case !e.checkpointed:
		return fmt.Sprintf("segment %d: the trainer stopped at step %d without writing a checkpoint: the next segment re-runs it %s; %s",
			e.segment, e.last, restart, fix)
	}
	return ""
}
