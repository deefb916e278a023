package workflows

import (
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
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
func (s *sweepRun) runProbes(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryProbes, func() (*activities.ProbeReport, error) {
		return s.state.Probes, nil
	}); err != nil {
		return err
	}
	futures := make([]workflow.Future, len(probeIDs))
	for i, id := range probeIDs {
		futures[i] = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: ControlQueue, StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 10 * time.Second,
				MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrInvalidSpec}},
			Summary: "probe " + id,
		}), (*activities.Activities).RunProbe, s.probeInput(id))
	}
	results := make([]activities.ProbeResult, len(probeIDs))
	for i, f := range futures {
		if err := f.Get(ctx, &results[i]); err != nil {
			return err
		}
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

// probeInput runs a probe with the first planned trial's parameters and seed (its templates and the
// built-in's inject_bug), and the external command: probes.command, else trainer.command.
func (s *sweepRun) probeInput(id string) activities.ProbeInput {
	in := activities.ProbeInput{SweepID: s.in.SweepID, Probe: id, Trainer: s.in.Spec.Trainer,
		Command: s.in.Spec.Probes.Command, Seed: 1}
	if in.Command == nil {
		in.Command = s.in.Spec.Trainer.Command
	}
	if first, ok := s.sched.Peek(); ok {
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
