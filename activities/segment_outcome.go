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
)

// infraBound fails the segment for good once more of its attempts than in.MaxInfraRetries ended by
// faults outside the trainer: the attempts before this one that the trainer did not fail.
func infraBound(ctx context.Context, in SegmentInput, prev Heartbeat) error {
	if !activity.IsActivity(ctx) {
		return nil
	}
	l := newAttemptLedger(in, activity.GetInfo(ctx).Attempt, prev)
	if !l.infraExhausted() {
		return nil
	}
	infra := l.infraFaults()
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
	r.result.Hardware = r.hardware()
	if code := p.ExitCode(); code != 0 {
		if oom := r.outOfMemory(p); oom != nil {
			return nil, r.oomFailed(p, oom)
		}
		msg := fmt.Sprintf("trial %s: trainer %s at step %d; log tail:\n%s",
			r.in.Trial.ID, exitOf(p), r.result.LastStep, runner.TailFile(r.logPath, 2048, r.a.masker()))
		return nil, r.trainerFailed(ErrTrainerCrashed, msg)
	}
	if err := r.noRecords(); err != nil {
		return nil, err
	}
	if err := r.objectiveAtEnd(); err != nil {
		return nil, err
	}
	r.result.SegmentWarning = r.end().warning()
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
		if step, ok := r.records.TargetStep(); ok {
			r.result.TargetStep = step
		}
	} else {
		r.result.MetricMissing = r.records.MissingMetric()
	}
}

// judgeEnd judges the whole trial with the end-of-run rules when this segment was its last: the trainer
// ran to the trial's budget, or ended on its own in a segment that had no earlier stop.
func (r *segmentRun) judgeEnd() {
	if r.engine == nil || !r.end().trialsLast() {
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
	r.result.TrainerFailures, r.result.RetrainedSteps = r.ledger.trainerFailures, r.ledger.retrained
	r.result.InfraRetries = r.ledger.infraFaults()
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
	final := r.failTrainer()
	if r.ledger.failureLimited() {
		msg += fmt.Sprintf("\n(trainer failure %d of at most %d, retries.max_attempts)", r.ledger.trainerFailures, r.ledger.maxTrainerFailures)
		if final {
			return temporal.NewNonRetryableApplicationError(msg, errType, nil, r.details())
		}
	}
	return temporal.NewApplicationError(msg, errType, r.details())
}

// details are the details of the attempt's failure: its heartbeat's, with where it ran.
func (r *segmentRun) details() Heartbeat {
	hb := r.hb
	hb.Hardware = r.hardware()
	return hb
}

// hardware is where this attempt runs: this machine, the GPUs the trainer was given and the precision
// settings of its environment (results.Hardware).
func (r *segmentRun) hardware() *results.Hardware {
	return hardware(thisMachine(), r.process.CUDADevices, r.env)
}

// exitOf says how the trainer ended: "exited with status 1", "was killed by signal 9 (killed)".
func exitOf(p *runner.Process) string {
	if sig := p.Signal(); sig != 0 {
		return fmt.Sprintf("was killed by signal %d (%v)", int(sig), sig)
	}
	return fmt.Sprintf("exited with status %d", p.ExitCode())
}

// oomTail is how much of the log's end is searched for an out-of-memory error: JAX prints its buffer
// statistics after the error, TensorFlow its allocator's chunks.
const oomTail = 64 << 10

// outOfMemory tells whether the trainer, which exited non-zero, died out of memory: a framework's
// out-of-memory error in its log's tail, or the host's OOM killer (runner.HostOOM). Nil when not.
func (r *segmentRun) outOfMemory(p *runner.Process) *runner.OOM {
	if oom := runner.DetectOOM(runner.TailFile(r.logPath, oomTail, r.a.masker())); oom != nil {
		return oom
	}
	return runner.HostOOM(p.Killed(), p.Stopped(), r.oomKills, r.oomKillsOK)
}

// oomFailed is the error of an attempt whose trainer died out of memory: TrainerOOM, never retried and
// not counted against retries.max_attempts, naming the trial, the line that told it and the fix.
func (r *segmentRun) oomFailed(p *runner.Process, oom *runner.OOM) error {
	hb := r.details()
	hb.InfraRetries = r.ledger.infraFaults()
	on := ""
	if g := hb.Hardware.GPUNames(); g != "" {
		on = " on " + g
		if m := hb.Hardware.GPUMemoryMiB(); m > 0 {
			on += fmt.Sprintf(" (%d MiB)", m)
		}
	}
	fix := "lower num_envs or the batch size (minibatch, rollout length × envs), or give each trial more GPU memory: " +
		"a larger resources.gpus (a bigger share of a GPU than a fraction such as 0.25, or more GPUs), or fewer trials " +
		"sharing a GPU (the worker's --trials-per-gpu)"
	if oom.Framework == "host OOM killer" {
		fix = "lower num_envs, the replay or rollout buffer, or the data loaders' workers, or give each trial more host memory: " +
			"fewer trials per worker (--gpus, --slots) or a worker with more memory"
	}
	msg := fmt.Sprintf("trial %s: out of memory%s at step %d (%s): the trainer %s; it matched:\n  %s\n"+
		"fix: %s. The same configuration runs out again on the same GPU class, so the trial is not retried and "+
		"retries.max_attempts is not spent.\nlog tail:\n%s",
		r.in.Trial.ID, on, r.result.LastStep, oom.Framework, exitOf(p), oom.Line, fix,
		runner.TailFile(r.logPath, 2048, r.a.masker()))
	return temporal.NewNonRetryableApplicationError(msg, ErrTrainerOOM, nil, hb)
}

// end is where the segment's trainer stopped, as far as its result tells (segmentEnd).
func (r *segmentRun) end() segmentEnd {
	return segmentEnd{segment: r.in.Segment, total: r.in.Trainer.TotalSteps, stop: r.in.StopAtStep, last: r.result.LastStep,
		checkpointed: r.result.CheckpointKey != "" && r.result.CheckpointKey != r.in.ResumeFrom, resumeFrom: r.in.ResumeFrom}
}

// failTrainer counts this attempt's trainer failure in the ledger and in the details the next attempt
// reads, and says whether it ends the segment for good (attemptLedger.trainerFailed).
func (r *segmentRun) failTrainer() (final bool) {
	r.ledger, final = r.ledger.trainerFailed()
	r.hb.TrainerFailures, r.hb.InfraRetries = r.ledger.trainerFailures, r.ledger.infraFaults()
	return final
}
