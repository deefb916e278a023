package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
)

// defaultTrainSteps is the training budget when neither --steps nor RLSWEEP_TOTAL_STEPS says.
const defaultTrainSteps = 500_000

// trainOptions is everything `rlsweep train` acts on.
type trainOptions struct {
	Out, ErrOut io.Writer
	Getenv      func(string) string

	Env         string
	Steps       int64
	Seed        uint64
	Sets        []string
	SummaryJSON bool
	InjectBug   string
	stepsSet    bool
	seedSet     bool
}

func newTrainCmd(f *Factory) *cobra.Command {
	return newTrainCmdWith(f, runTrain)
}

// newTrainCmdWith builds the command around runF, so tests can inspect the parsed options.
func newTrainCmdWith(f *Factory, runF func(context.Context, *trainOptions) error) *cobra.Command {
	opts := &trainOptions{Out: f.Out, ErrOut: f.ErrOut, Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "train --env ENV [--steps N] [--seed S] [--set key=value ...]",
		Short: "Train PPO with the built-in trainer (standalone, or as a sweep's trainer process)",
		Long: `Train PPO on a built-in environment (` + strings.Join(envs.Names(), ", ") + `).

Standalone, progress goes to stderr. Under the trainer contract (RLSWEEP_METRICS_FILE set), one JSON
line per iteration is appended to the metrics file, checkpoints are written to RLSWEEP_CHECKPOINT_DIR
at the end of the segment (RLSWEEP_STOP_AT_STEP) and on SIGTERM, and RLSWEEP_RESUME_FROM,
RLSWEEP_TOTAL_STEPS, RLSWEEP_SEED and RLSWEEP_PARAMS are honoured. Flags given explicitly win over
the environment.

Hyperparameters (--set key=value, or keys of RLSWEEP_PARAMS): ` + strings.Join(ppo.ParamNames(), ", ") + `.
See docs/ppo.md for their defaults per environment.

--inject-bug is a test aid that breaks the trainer on purpose (` + strings.Join(ppo.BugNames(), ", ") + `),
so the probe checks can be shown to catch each bug. Never use it for real training.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.stepsSet, opts.seedSet = cmd.Flags().Changed("steps"), cmd.Flags().Changed("seed")
			if opts.Env == "" {
				return invalidInput(errors.New("--env: got nothing, want one of " + strings.Join(envs.Names(), ", ")))
			}
			return runF(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Env, "env", "", "environment: "+strings.Join(envs.Names(), ", "))
	fl.Int64Var(&opts.Steps, "steps", defaultTrainSteps, "total environment steps (default: RLSWEEP_TOTAL_STEPS, else 500000)")
	fl.Uint64Var(&opts.Seed, "seed", 1, "random seed (default: RLSWEEP_SEED, else 1)")
	fl.StringArrayVar(&opts.Sets, "set", nil, "hyperparameter key=value (repeatable)")
	fl.BoolVar(&opts.SummaryJSON, "summary-json", false, "print one JSON object with the final results to stdout")
	fl.StringVar(&opts.InjectBug, "inject-bug", "", "test aid: break the trainer on purpose ("+strings.Join(ppo.BugNames(), ", ")+")")
	return cmd
}

// trainPlan is the resolved run: configuration, seed, budget and the contract's files.
type trainPlan struct {
	newEnv      func() envs.Env
	cfg         ppo.Config
	seed        uint64
	total, stop int64
	metricsFile string
	ckptDir     string
	resumeFrom  string
}

func runTrain(ctx context.Context, opts *trainOptions) error {
	plan, err := resolveTrain(opts)
	if err != nil {
		return invalidInput(err)
	}
	tr, err := ppo.New(plan.cfg, plan.newEnv, plan.seed)
	if err != nil {
		return invalidInput(err)
	}
	if plan.resumeFrom != "" {
		if err := tr.RestoreFile(plan.resumeFrom); err != nil {
			return fmt.Errorf("resume from %s: %w", plan.resumeFrom, err)
		}
	}
	var metrics *os.File
	if plan.metricsFile != "" {
		if metrics, err = os.OpenFile(plan.metricsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
			return fmt.Errorf("metrics file: %w", err)
		}
		defer metrics.Close()
	}
	start, startStep := time.Now(), tr.Steps()
	prog := &progress{w: opts.ErrOut, total: plan.stop}
	runErr := tr.Run(ctx, plan.stop, func(m ppo.Metrics) error {
		prog.report(m, false)
		return writeRecord(metrics, record(m, ""))
	})
	stopped := errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)
	if runErr != nil && !stopped {
		return runErr
	}
	if err := checkpoint(tr, plan.ckptDir, metrics); err != nil {
		return err
	}
	prog.done(tr, stopped)
	if opts.SummaryJSON {
		return writeSummary(opts.Out, tr, time.Since(start), tr.Steps()-startStep)
	}
	return nil
}

// resolveTrain merges defaults, RLSWEEP_PARAMS, --set, flags and the contract's variables.
func resolveTrain(opts *trainOptions) (*trainPlan, error) {
	newEnv, err := envs.Make(opts.Env)
	if err != nil {
		return nil, err
	}
	p := &trainPlan{newEnv: newEnv, cfg: ppo.Defaults(newEnv().Spec())}
	env := opts.Getenv
	if s := env(trainer.EnvParams); s != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("%s: got %q, want a JSON object of parameters: %w", trainer.EnvParams, s, err)
		}
		// inject_bug (a test aid) lets a sweep run a broken built-in trainer; --inject-bug wins.
		if b, ok := m[activities.InjectBugParam]; ok {
			delete(m, activities.InjectBugParam)
			if opts.InjectBug == "" {
				opts.InjectBug = fmt.Sprint(b)
			}
		}
		if err := p.cfg.SetAll(m); err != nil {
			return nil, fmt.Errorf("%s: %w", trainer.EnvParams, err)
		}
	}
	for _, kv := range opts.Sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--set: got %q, want key=value", kv)
		}
		if err := p.cfg.Set(strings.TrimSpace(k), v); err != nil {
			return nil, err
		}
	}
	if p.cfg.Bug, err = ppo.ParseBug(opts.InjectBug); err != nil {
		return nil, err
	}
	if p.seed, err = pick(opts.seedSet, opts.Seed, env(trainer.EnvSeed), trainer.EnvSeed, 1, parseUint); err != nil {
		return nil, err
	}
	if p.total, err = pick(opts.stepsSet, opts.Steps, env(trainer.EnvTotalSteps), trainer.EnvTotalSteps, defaultTrainSteps, parsePositive); err != nil {
		return nil, err
	}
	if p.stop, err = pick(false, 0, env(trainer.EnvStopAtStep), trainer.EnvStopAtStep, p.total, parsePositive); err != nil {
		return nil, err
	}
	if p.total <= 0 {
		return nil, fmt.Errorf("--steps: got %d, want > 0", p.total)
	}
	p.cfg.TotalSteps = p.total
	p.metricsFile, p.ckptDir, p.resumeFrom = env(trainer.EnvMetricsFile), env(trainer.EnvCheckpointDir), env(trainer.EnvResumeFrom)
	return p, p.cfg.Validate()
}

// pick returns the flag's value if it was given, else the environment variable's, else def.
func pick[T any](flagSet bool, flag T, envValue, envName string, def T, parse func(string) (T, error)) (T, error) {
	switch {
	case flagSet:
		return flag, nil
	case envValue != "":
		v, err := parse(envValue)
		if err != nil {
			return v, fmt.Errorf("%s: got %q, want %w", envName, envValue, err)
		}
		return v, nil
	}
	return def, nil
}

func parseUint(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, errors.New("a non-negative integer")
	}
	return v, nil
}

func parsePositive(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v <= 0 {
		return 0, errors.New("a positive integer")
	}
	return v, nil
}

// record converts an iteration's metrics to a contract record.
func record(m ppo.Metrics, ckpt string) diagnostics.Record {
	r := diagnostics.Record{Step: m.Step, Values: map[string]float64{}, Checkpoint: ckpt}
	for _, v := range m.Values() {
		r.Values[v.Name] = v.Value
	}
	return r
}

func writeRecord(f *os.File, r diagnostics.Record) error {
	if f == nil {
		return nil
	}
	if _, err := f.Write(trainer.AppendRecordJSON(nil, r)); err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	return nil
}

// checkpoint writes the trainer's state under dir (when set), complete on disk before a record
// announces it by its path relative to dir.
func checkpoint(tr *ppo.Trainer, dir string, metrics *os.File) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	name := fmt.Sprintf("ckpt-%012d.bin", tr.Steps())
	if err := tr.SaveFile(filepath.Join(dir, name)); err != nil {
		return err
	}
	return writeRecord(metrics, diagnostics.Record{Step: tr.Steps(), Checkpoint: name})
}

func writeSummary(w io.Writer, tr *ppo.Trainer, wall time.Duration, steps int64) error {
	reward, _ := tr.RecentReturn()
	var b []byte
	b = append(b, `{"reward":`...)
	b = trainer.AppendFloatJSON(b, reward)
	b = append(b, `,"steps":`...)
	b = strconv.AppendInt(b, tr.Steps(), 10)
	b = append(b, `,"steps_per_second":`...)
	b = trainer.AppendFloatJSON(b, float64(steps)/math.Max(wall.Seconds(), 1e-9))
	b = append(b, `,"wall_seconds":`...)
	b = trainer.AppendFloatJSON(b, wall.Seconds())
	b = append(b, "}\n"...)
	_, err := w.Write(b)
	return err
}

// progress prints a readable line to stderr at most once a second.
type progress struct {
	w     io.Writer
	total int64
	last  time.Time
}

func (p *progress) report(m ppo.Metrics, force bool) {
	if !force && time.Since(p.last) < time.Second {
		return
	}
	p.last = time.Now()
	reward := "   n/a"
	if m.Episodes > 0 {
		reward = fmt.Sprintf("%8.1f", m.Reward)
	}
	fmt.Fprintf(p.w, "step %9d/%d  reward %s  len %6.1f  value_loss %8.3g  entropy %7.3f  kl %7.4f  clip %5.3f  ev %6.3f  lr %.2e  %6.0f steps/s\n",
		m.Step, p.total, reward, m.EpisodeLength, m.ValueLoss, m.Entropy, m.ApproxKL, m.ClipFraction,
		m.ExplainedVariance, m.LearningRate, m.FPS)
}

func (p *progress) done(tr *ppo.Trainer, stopped bool) {
	reward, n := tr.RecentReturn()
	how := "done"
	if stopped {
		how = "stopped by signal"
	}
	fmt.Fprintf(p.w, "%s at step %d: mean return %.1f over the last %d episodes\n", how, tr.Steps(), reward, n)
}
