package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// ErrCommand marks an error of the trainer's command itself — its template does not render, its program
// cannot start — which no retry can fix.
var ErrCommand = errors.New("trainer command")

// ExternalProbe runs an external trainer on probes under the probe protocol (docs/probes.md): the trainer
// contract's variables for a run of the probe's budget, plus RLSWEEP_PROBE, RLSWEEP_PROBE_RESULT and
// RLSWEEP_PROBE_GAMMA.
type ExternalProbe struct {
	// Command is the trainer's command, whose elements are templates (sweeps.RenderCommand) rendered for
	// each probe run; TrainerEnv is the spec's trainer.env, which they may name.
	Command    []string
	TrainerEnv string
	// Environ is the worker's environment (os.Environ's form) and Spec the spec's trainer.environment:
	// Contract.Env builds the trainer's environment from them.
	Environ []string
	Spec    map[string]string
	SweepID string
	Seed    int64
	Params  map[string]any
	// WorkDir holds each run's scratch directory ("" means the system's temporary directory); Dir is the
	// trainer's working directory ("" means the scratch directory).
	WorkDir, Dir string
	// Mask masks the worker's secrets in the log tail a failed probe's result carries (nil masks nothing).
	Mask *Masker
}

// Run trains the trainer on probe p and judges the record it writes. Exit 3 skips the probe; any other
// failure fails it, with the tail of what the trainer printed. An error (errors.Is ErrCommand when the
// command is at fault) means the probe could not be run at all; ctx's end stops the trainer.
func (e ExternalProbe) Run(ctx context.Context, p probes.Probe) (probes.Result, error) {
	if e.WorkDir != "" {
		if err := os.MkdirAll(e.WorkDir, 0o755); err != nil {
			return probes.Result{}, fmt.Errorf("probe %s: work directory: %w", p.ID, err)
		}
	}
	dir, err := os.MkdirTemp(e.WorkDir, "probe-")
	if err != nil {
		return probes.Result{}, fmt.Errorf("probe %s: scratch directory: %w", p.ID, err)
	}
	defer os.RemoveAll(dir)
	budget := probes.Budget(p)
	resultFile, metrics, ckpt := filepath.Join(dir, "probe-result.json"), filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "checkpoints")
	trial := "probe-" + string(p.ID)
	argv, err := sweeps.RenderCommand(e.Command, sweeps.TemplateData{SweepID: e.SweepID, TrialID: trial, Seed: e.Seed,
		Params: e.Params, TotalSteps: budget, StopAtStep: budget, CheckpointDir: ckpt, MetricsFile: metrics, Env: e.TrainerEnv})
	if err != nil {
		return probes.Result{}, fmt.Errorf("%w: %v", ErrCommand, err)
	}
	c := Contract{SweepID: e.SweepID, TrialID: trial, Seed: e.Seed, Params: e.Params,
		MetricsFile: metrics, CheckpointDir: ckpt, TotalSteps: budget, StopAtStep: budget}
	env := c.Env(e.Environ, e.Spec, probes.EnvProbe+"="+string(p.ID), probes.EnvProbeResult+"="+resultFile,
		probes.EnvProbeGamma+"="+strconv.FormatFloat(probes.Gamma, 'g', -1, 64))
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		return probes.Result{}, err
	}
	start := time.Now()
	var log bytes.Buffer
	cwd := dir
	if e.Dir != "" {
		cwd = e.Dir
	}
	proc, err := Start(argv, env, cwd, &limitedWriter{w: &log, n: 1 << 20})
	if err != nil {
		return probes.Result{}, fmt.Errorf("%w: %v", ErrCommand, err)
	}
	select {
	case <-proc.Done():
	case <-ctx.Done():
		proc.Stop(5 * time.Second)
		return probes.Result{}, ctx.Err()
	}
	res := judgeExternal(p, proc.ExitCode(), resultFile, e.Mask.MaskString(log.String()))
	res.Error = e.Mask.MaskString(res.Error) // it may quote the record the trainer wrote
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func judgeExternal(p probes.Probe, code int, resultFile, log string) probes.Result {
	fail := func(fault probes.Fault, msg string) probes.Result {
		return probes.Result{Probe: p.ID, Level: p.Level, Error: msg + logTail(log), Fault: fault}
	}
	switch code {
	case 0:
	case probes.ExitUnsupported:
		return probes.Result{Probe: p.ID, Level: p.Level, Skipped: true}
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
