package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/trainer"
)

// infraBound fails the segment for good once more of its attempts than in.MaxInfraRetries ended by
// faults outside the trainer: the attempts before this one that the trainer did not fail.
func infraBound(ctx context.Context, in SegmentInput, prev Heartbeat) error {
	if !activity.IsActivity(ctx) || in.MaxInfraRetries <= 0 {
		return nil
	}
	infra := int(activity.GetInfo(ctx).Attempt) - 1 - prev.TrainerFailures
	if infra <= in.MaxInfraRetries {
		return nil
	}
	msg := fmt.Sprintf("trial %s: segment %d: %d attempts were ended by faults outside the trainer (its worker died or was stopped, the Temporal server or the store was unreachable), more than retries.max_infra_retries (%d); the worker logs say why",
		in.Trial.ID, in.Segment, infra, in.MaxInfraRetries)
	prev.InfraRetries = infra
	return temporal.NewNonRetryableApplicationError(msg, ErrInfraRetries, nil, prev)
}
func orStart(checkpoint string) string {
	if checkpoint == "" {
		return "the segment's start"
	}
	return checkpoint
}

// finish turns the trainer's exit into the segment's result or a retryable crash.
func (r *segmentRun) finish(p *runner.Process) (*SegmentResult, error) {
	r.result.WallSeconds = time.Since(r.started).Seconds()
	st := r.reader.Stats()
	r.result.Malformed, r.result.MetricsSource = st.Malformed, st.Source
	if st.Preset != "" {
		// Told from the tags: say so, so that a mapping the user did not choose is visible.
		r.result.MetricsSource = strings.TrimSpace(st.Source + " (preset " + st.Preset + ", told from its tags; trainer.metrics.preset sets it)")
	}
	r.takeLog()
	if code := p.ExitCode(); code != 0 {
		msg := fmt.Sprintf("trial %s: trainer exited with status %d at step %d; log tail:\n%s",
			r.in.Trial.ID, code, r.result.LastStep, runner.TailFile(r.logPath, 2048, r.a.masker()))
		return nil, r.trainerFailed(ErrTrainerCrashed, msg)
	}
	if err := r.noRecords(); err != nil {
		return nil, err
	}
	if err := r.objectiveAtEnd(); err != nil {
		return nil, err
	}
	r.result.SegmentWarning = r.segmentWarning()
	r.judgeEnd()
	r.account()
	return &r.result, nil
}

// takeLog puts what the log kept into the result: the last values, the objective, or the metric names
// the records carried when none carried the objective.
func (r *segmentRun) takeLog() {
	if last := r.records.Last(); last != nil {
		r.result.Last = results.Values(last)
	}
	if v, ok := r.records.Objective(); ok {
		r.result.Objective = finite(v)
		if w, ok := r.records.Windowed(); ok {
			r.result.Windowed = &w
		}
	} else {
		r.result.MetricMissing = r.records.MissingMetric()
	}
}

// judgeEnd judges the whole trial with the end-of-run rules when this segment was its last: the trainer
// ran to the trial's budget, or ended on its own in a segment that had no earlier stop.
func (r *segmentRun) judgeEnd() {
	if r.engine == nil || r.in.StopAtStep < r.in.Trainer.TotalSteps && r.result.LastStep < r.in.Trainer.TotalSteps {
		return
	}
	if v, ok := r.engine.Finish(); ok {
		r.result.EndVerdict = &results.Verdict{Rule: v.Rule, Step: v.Step, Detail: v.Detail, Advice: v.Advice}
		if r.result.Warnings == nil {
			r.result.Warnings = map[string]int{}
		}
		r.result.Warnings[v.Rule]++
	}
}

// account puts the attempts' counts and the server outages the attempt rode out into the result.
func (r *segmentRun) account() {
	r.result.TrainerFailures, r.result.RetrainedSteps = r.hb.TrainerFailures, r.hb.Retrained
	r.result.InfraRetries = max(0, int(r.attempt)-1-r.hb.TrainerFailures)
	if r.beats != nil {
		o := r.beats.outage()
		r.result.ServerOutages, r.result.ServerOutageSeconds = o.Count, o.Seconds
	}
}

// trainerFault marks an error of the trainer itself (its metrics cannot be read), which counts against
// retries.max_attempts like a crash.
type trainerFault struct{ err error }

func (e *trainerFault) Error() string { return e.err.Error() }
func (e *trainerFault) Unwrap() error { return e.err }

// failed turns an error of the running attempt into its failure: a trainerFault or an announced
// checkpoint that cannot be stored (artifacts.CheckpointError) counts against the trainer's failures,
// anything else (the store) is an infrastructure fault.
func (r *segmentRun) failed(err error) error {
	var ce *artifacts.CheckpointError
	if errors.As(err, &ce) {
		return r.checkpointFailed(ce)
	}
	var tf *trainerFault
	if errors.As(err, &tf) {
		return r.trainerFailed(ErrMetricsUnreadable, fmt.Sprintf("trial %s: %v", r.in.Trial.ID, tf.err))
	}
	return err
}

// trainerFailed is the error of an attempt whose trainer failed (crashed, stalled, wrote unreadable
// metrics): it counts the failure in the details the next attempt reads, and is not retried once the
// trainer has failed MaxTrainerFailures times (retries.max_attempts).
func (r *segmentRun) trainerFailed(errType, msg string) error {
	r.hb.TrainerFailures++
	r.hb.InfraRetries = max(0, int(r.attempt)-r.hb.TrainerFailures)
	if limit := r.in.MaxTrainerFailures; limit > 0 {
		msg += fmt.Sprintf("\n(trainer failure %d of at most %d, retries.max_attempts)", r.hb.TrainerFailures, limit)
		if r.hb.TrainerFailures >= limit {
			return temporal.NewNonRetryableApplicationError(msg, errType, nil, r.hb)
		}
	}
	return temporal.NewApplicationError(msg, errType, r.hb)
}

// segmentWarning judges how a segment other than the trial's last ended: a trainer that follows the
// contract stops at RLSWEEP_STOP_AT_STEP (or within the iteration that crosses it) with a checkpoint,
// and the next segment resumes from it. One that ran to total_steps ignored the stop step: the Trial
// workflow ends the trial there rather than run it again in every later segment. One that wrote no
// checkpoint makes the next segment start over.
func (r *segmentRun) segmentWarning() string {
	total, stop := r.in.Trainer.TotalSteps, r.in.StopAtStep
	if stop >= total {
		return ""
	}
	last := r.result.LastStep
	checkpointed := r.result.CheckpointKey != "" && r.result.CheckpointKey != r.in.ResumeFrom
	restart := "from the start"
	if r.in.ResumeFrom != "" {
		restart = "from " + r.in.ResumeFrom
	}
	const fix = "segment_steps needs a trainer that stops at RLSWEEP_STOP_AT_STEP with a checkpoint and resumes from RLSWEEP_RESUME_FROM (docs/trainer-contract.md)"
	switch {
	case last >= total:
		return fmt.Sprintf("segment %d: the trainer ran past %s=%d to step %d, its whole total_steps (%d): it ignores the stop step, so the trial ends here instead of re-running in every later segment; %s",
			r.in.Segment, trainer.EnvStopAtStep, stop, last, total, fix)
	case !checkpointed && last > stop:
		return fmt.Sprintf("segment %d: the trainer ran past %s=%d to step %d and wrote no checkpoint: the next segment re-runs it %s; %s",
			r.in.Segment, trainer.EnvStopAtStep, stop, last, restart, fix)
	case !checkpointed:
		return fmt.Sprintf("segment %d: the trainer stopped at step %d without writing a checkpoint: the next segment re-runs it %s; %s",
			r.in.Segment, last, restart, fix)
	}
	return ""
}
