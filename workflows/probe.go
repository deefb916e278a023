package workflows

import (
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/sweeps"
)

// QueryProbes returns the probe stage's report (nil until it has run).
const QueryProbes = "probes"

// ErrProbeFailed is the failure type of a sweep stopped by its probe stage; never retried.
const ErrProbeFailed = "ProbeFailed"

// probeIDs are the probes the stage runs, discrete then continuous: the activity skips those of the
// action space the trainer does not have (the workflow cannot know it for an external trainer).
var probeIDs = []string{"1", "2", "3", "4", "5", "1c", "2c", "3c", "4c", "5c"}

// runProbes runs every probe as a parallel activity on the control queue, then records and diagnoses
// them. A failing probe ends the sweep in PhaseProbeFailed with a non-retryable ProbeFailed error
// whose message carries the diagnosis and the measured values; the report is also queryable.
//
// An external trainer runs probe 1 alone first: one that does not speak the probe protocol (it exits
// without a result, or crashes, or writes an invalid record) shows it on that one run, and the stage
// stops there instead of running it nine more times. Probe 1 is the lowest on the ladder, so its
// failure is the diagnosis whatever the others would say. The built-in trainer speaks the protocol:
// its ten probes all run at once.
func (s *sweepRun) runProbes(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryProbes, func() (*activities.ProbeReport, error) {
		return s.state.Probes, nil
	}); err != nil {
		return err
	}
	ids := probeIDs
	var results []activities.ProbeResult
	if s.in.Spec.Trainer.Builtin == "" {
		var first activities.ProbeResult
		if err := s.runProbe(ctx, ids[0]).Get(ctx, &first); err != nil {
			return err
		}
		results, ids = append(results, first), ids[1:]
		if first.Fault != "" {
			workflow.GetLogger(ctx).Warn("probe stage stopped after its first run", "fault", first.Fault, "error", first.Error)
			ids = nil
		}
	}
	futures := make([]workflow.Future, len(ids))
	for i, id := range ids {
		futures[i] = s.runProbe(ctx, id)
	}
	for _, f := range futures {
		var r activities.ProbeResult
		if err := f.Get(ctx, &r); err != nil {
			return err
		}
		results = append(results, r)
	}
	var rep activities.ProbeReport
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "record probes"), (*activities.Activities).RecordProbes,
		activities.RecordProbesInput{SweepID: s.in.SweepID, Results: results}).Get(ctx, &rep)
	if err != nil {
		return err
	}
	s.state.Probes = &rep
	if rep.Passed {
		workflow.GetLogger(ctx).Info("probe stage passed", "diagnosis", rep.Diagnosis)
		return nil
	}
	s.state.Phase = PhaseProbeFailed
	return temporal.NewNonRetryableApplicationError(probeFailure(rep), ErrProbeFailed, nil, rep)
}

// runProbe runs one probe on the control queue.
func (s *sweepRun) runProbe(ctx workflow.Context, id string) workflow.Future {
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: ControlQueue, StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second,
			MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrInvalidSpec}},
		Summary: "probe " + id,
	}), (*activities.Activities).RunProbe, s.probeInput(id))
}

// probeInput runs a probe with the parameters and seed of the first configuration written
// (sweeps.FirstListed: a grid's configuration 0 even when it starts shuffled; its templates and the
// built-in's inject_bug), and the external command: probes.command, else trainer.command.
func (s *sweepRun) probeInput(id string) activities.ProbeInput {
	in := activities.ProbeInput{SweepID: s.in.SweepID, Probe: id, Trainer: s.in.Spec.Trainer,
		Command: s.in.Spec.Probes.Command, Seed: 1}
	if in.Command == nil {
		in.Command = s.in.Spec.Trainer.Command
	}
	if first, ok := s.sched.Peek(); ok {
		first = sweeps.FirstListed(&s.in.Spec, first)
		in.Params, in.Seed = first.Params, first.Seed
	}
	return in
}

// probeFailure is the failure message: the diagnosis, then each failing probe's measured values.
func probeFailure(rep activities.ProbeReport) string {
	lines := []string{"probe stage failed, no trial started: " + rep.Diagnosis}
	for _, r := range rep.Results {
		if !r.Passed && !r.Skipped {
			lines = append(lines, r.String())
		}
	}
	return strings.Join(lines, "\n")
}
