package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/builtin"
	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
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
const InjectBugParam = ppo.BugParam

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
// process (seconds of CPU); an external one runs as a child process speaking the probe protocol. A
// probe of an action space the trainer does not have is skipped. A failed probe is a result, not an
// error: errors are kept for what a retry may fix. `rlsweep probe` calls it outside any activity.
func (a *Activities) RunProbe(ctx context.Context, in ProbeInput) (*ProbeResult, error) {
	p, err := probes.Lookup(probes.ID(in.Probe))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	// A server away for a moment does not stop a probe (beats); outside an activity (`rlsweep probe`)
	// there is nothing to heartbeat to.
	ctx, b := startBeats(ctx, heartbeatEvery, Heartbeat{})
	defer b.stop()
	if in.Trainer.Builtin != "" {
		return builtinProbe(ctx, p, in)
	}
	return a.externalProbe(ctx, p, in)
}

func builtinProbe(ctx context.Context, p probes.Probe, in ProbeInput) (*ProbeResult, error) {
	newEnv, err := envs.Make(in.Trainer.Env)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	if newEnv().Spec().Discrete() == p.Continuous {
		return &ProbeResult{Probe: p.ID, Level: p.Level, Skipped: true}, nil
	}
	name, _ := in.Params[InjectBugParam].(string)
	bug, err := ppo.ParseBug(name)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	r := probes.RunOne(ctx, builtin.ProbeTrainer(bug), p, uint64(in.Seed))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &r, nil
}

// externalProbe runs the external trainer on the probe with the protocol's variables and judges the
// record it writes. Exit 3 skips the probe; any other failure fails it, with the log's tail.
func (a *Activities) externalProbe(ctx context.Context, p probes.Probe, in ProbeInput) (*ProbeResult, error) {
	if a.WorkDir != "" {
		if err := os.MkdirAll(a.WorkDir, 0o755); err != nil {
			return nil, fmt.Errorf("probe %s: work directory: %w", p.ID, err)
		}
	}
	dir, err := os.MkdirTemp(a.WorkDir, "probe-")
	if err != nil {
		return nil, fmt.Errorf("probe %s: scratch directory: %w", p.ID, err)
	}
	defer os.RemoveAll(dir)
	budget := probes.Budget(p)
	resultFile, metrics, ckpt := filepath.Join(dir, "probe-result.json"), filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "checkpoints")
	argv, err := sweeps.RenderCommand(in.Command, sweeps.TemplateData{SweepID: in.SweepID, TrialID: "probe-" + string(p.ID),
		Seed: in.Seed, Params: in.Params, TotalSteps: budget, StopAtStep: budget, CheckpointDir: ckpt, MetricsFile: metrics, Env: in.Trainer.Env})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	c := runner.Contract{SweepID: in.SweepID, TrialID: "probe-" + string(p.ID), Seed: in.Seed, Params: in.Params,
		MetricsFile: metrics, CheckpointDir: ckpt, TotalSteps: budget, StopAtStep: budget}
	env := c.Env(os.Environ(), in.Trainer.Environment,
		probes.EnvProbe+"="+string(p.ID), probes.EnvProbeResult+"="+resultFile, probes.EnvProbeGamma+"="+strconv.FormatFloat(probes.Gamma, 'g', -1, 64))
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	var log bytes.Buffer
	cwd := dir
	if in.Dir != "" {
		cwd = in.Dir
	}
	proc, err := runner.Start(argv, env, cwd, &limitedWriter{w: &log, n: 1 << 20})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	select {
	case <-proc.Done():
	case <-ctx.Done():
		proc.Stop(5 * time.Second)
		return nil, ctx.Err()
	}
	res := judgeExternal(p, proc.ExitCode(), resultFile, a.masker().MaskString(log.String()))
	res.Seconds = time.Since(start).Seconds()
	return &res, nil
}

func judgeExternal(p probes.Probe, code int, resultFile, log string) ProbeResult {
	fail := func(fault probes.Fault, msg string) ProbeResult {
		return ProbeResult{Probe: p.ID, Level: p.Level, Error: msg + logTail(log), Fault: fault}
	}
	switch code {
	case 0:
	case probes.ExitUnsupported:
		return ProbeResult{Probe: p.ID, Level: p.Level, Skipped: true}
	case -1:
		return fail(probes.FaultCrashed, "the trainer was killed by a signal")
	default:
		return fail(probes.FaultCrashed, fmt.Sprintf("the trainer exited with status %d", code))
	}
	b, err := os.ReadFile(resultFile)
	if err != nil {
		return fail(probes.FaultNoRecord, fmt.Sprintf("the trainer exited 0 but wrote no record to %s", probes.EnvProbeResult))
	}
	var rec probes.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return fail(probes.FaultBadRecord, fmt.Sprintf("%s: got an invalid record (%v), want the JSON object of docs/probes.md", probes.EnvProbeResult, err))
	}
	return probes.Judge(p, rec)
}

func logTail(log string) string {
	log = strings.TrimSpace(log)
	if log == "" {
		return ""
	}
	if len(log) > 400 {
		log = "…" + strings.ToValidUTF8(log[len(log)-400:], "")
	}
	return "; log tail: " + log
}

// limitedWriter keeps at most n bytes (the start of a runaway log is enough to judge a probe).
type limitedWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if l.n <= 0 {
		return len(b), nil
	}
	k := min(len(b), l.n)
	l.n -= k
	_, err := l.w.Write(b[:k])
	return len(b), err
}

// RecordProbes diagnoses the probe stage's results along the ladder and stores them as probes.json
// in the sweep's artifact prefix.
func (a *Activities) RecordProbes(ctx context.Context, in RecordProbesInput) (*ProbeReport, error) {
	rep := probes.Diagnose(in.Results)
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode probes.json: %w", err)
	}
	if err := a.Store.Put(ctx, artifacts.SweepKey(in.SweepID, "probes.json"), bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return &rep, nil
}
