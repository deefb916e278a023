package activities

import (
	"context"
	"errors"
	"os"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/builtin"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// ProbeResult and ProbeReport are the probe stage's results, as trainer/probes defines them.
type (
	ProbeResult = probes.Result
	ProbeReport = probes.Report
	ProbeID     = probes.ID
)

// InjectBugParam is the sweep parameter that breaks the built-in trainer on purpose (a test aid, as
// `rlsweep train --inject-bug`); the probe stage honours it too.
const InjectBugParam = builtin.BugParam

// ProbeInput is one probe of a sweep's probe stage.
type ProbeInput struct {
	SweepID string
	Probe   string // a probes.ID
	Trainer sweeps.Trainer
	// Command is the external probe command (probes.command, else trainer.command); unused for the
	// built-in trainer.
	Command []string
	Params  map[string]any // the first planned trial's parameters, for templates and inject_bug
	Seed    int64
	// Dir is the trainer's working directory; empty means the probe's scratch directory, as for a
	// trial's segment. `rlsweep probe` runs it where it was called.
	Dir string
}

// RecordProbesInput is the probe stage's results, to be diagnosed and stored.
type RecordProbesInput struct {
	SweepID string
	Results []ProbeResult
}

// RunProbe trains the sweep's trainer on one probe and judges it. The built-in trainer runs in this
// process (seconds of CPU); an external one runs as a child process speaking the probe protocol
// (runner.ExternalProbe). A probe of an action space the trainer does not have is skipped. A failed
// probe is a result, not an error: errors are kept for what a retry may fix.
func (a *Activities) RunProbe(ctx context.Context, in ProbeInput) (*ProbeResult, error) {
	p, err := probes.Lookup(probes.ID(in.Probe))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	// A server away for a moment does not stop a probe (beats).
	ctx, b := startBeats(ctx, heartbeatEvery, Heartbeat{}, 0)
	defer b.stop()
	var r probes.Result
	if in.Trainer.Builtin != "" {
		r, err = builtin.Probe(ctx, in.Trainer.Env, in.Params, p, in.Seed)
		if err != nil && ctx.Err() == nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
		}
	} else {
		if err := a.checkTrainerCommand(in.Trainer, in.Command, sweeps.TemplateData{SweepID: in.SweepID, Seed: in.Seed,
			Params: in.Params, Env: in.Trainer.Env}); err != nil {
			return nil, err
		}
		r, err = runner.ExternalProbe{Command: in.Command, TrainerEnv: in.Trainer.Env, Environ: os.Environ(),
			Spec: in.Trainer.Environment, SweepID: in.SweepID, Seed: in.Seed, Params: in.Params,
			WorkDir: a.WorkDir, Dir: in.Dir, Mask: a.masker()}.Run(ctx, p)
		if errors.Is(err, runner.ErrCommand) {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
		}
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// RecordProbes diagnoses the probe stage's results along the ladder and stores them as probes.json
// in the sweep's artifact prefix.
func (a *Activities) RecordProbes(ctx context.Context, in RecordProbesInput) (*ProbeReport, error) {
	rep := probes.Diagnose(in.Results)
	if err := a.sweepStore().WriteProbes(ctx, in.SweepID, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}
