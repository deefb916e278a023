// Package builtin is the built-in trainer: the PPO of trainer/ppo speaking the trainer contract of
// docs/trainer-contract.md (its variables in, JSON-lines records and announced checkpoints out, through
// the trainer package's names and record writer), and adapted to the probe ladder of trainer/probes.
// `rlsweep train` and `rlsweep probe` are its command lines.
package builtin

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

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
)

// DefaultSteps is the training budget when neither Options.Steps nor RLSWEEP_TOTAL_STEPS says.
const DefaultSteps = 500_000

// Options is a run of the built-in trainer as its caller asks for it; the trainer contract's
// variables fill in what it leaves unset, and what it sets wins over them.
type Options struct {
	Env string // a built-in environment (envs.Names)
	// Steps is the training budget; 0 means RLSWEEP_TOTAL_STEPS, else DefaultSteps.
	Steps int64
	// Seed, when not nil, wins over RLSWEEP_SEED; with neither the seed is 1.
	Seed *uint64
	// Sets are hyperparameters as key=value, laid over the defaults and RLSWEEP_PARAMS.
	Sets []string
	// InjectBug breaks the trainer on purpose (a test aid, ppo.BugNames); "" takes RLSWEEP_PARAMS'
	// inject_bug, if any.
	InjectBug string
	// Getenv reads the contract's variables; nil reads none.
	Getenv func(string) string
	// Progress, when not nil, gets a readable line per iteration at most once a second, and one at the end.
	Progress io.Writer
}

// Run is a resolved run of the built-in trainer, ready to train.
type Run struct {
	tr          *ppo.Trainer
	stop        int64 // RLSWEEP_STOP_AT_STEP, else the budget
	metricsFile string
	ckptDir     string
	resumeFrom  string
	progress    io.Writer
}

// New resolves opts against the contract's variables (RLSWEEP_PARAMS, RLSWEEP_SEED,
// RLSWEEP_TOTAL_STEPS, RLSWEEP_STOP_AT_STEP, RLSWEEP_METRICS_FILE, RLSWEEP_CHECKPOINT_DIR,
// RLSWEEP_RESUME_FROM) and builds the trainer. Every error it returns is bad input, naming the
// variable or parameter, the value and what is allowed.
func New(opts Options) (*Run, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	newEnv, err := envs.Make(opts.Env)
	if err != nil {
		return nil, err
	}
	cfg := ppo.Defaults(newEnv().Spec())
	bug := opts.InjectBug
	if s := getenv(trainer.EnvParams); s != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("%s: got %q, want a JSON object of parameters: %w", trainer.EnvParams, s, err)
		}
		// inject_bug (a test aid) lets a sweep run a broken built-in trainer; Options.InjectBug wins.
		if b, ok := m[ppo.BugParam]; ok {
			delete(m, ppo.BugParam)
			if bug == "" {
				bug = fmt.Sprint(b)
			}
		}
		if err := cfg.SetAll(m); err != nil {
			return nil, fmt.Errorf("%s: %w", trainer.EnvParams, err)
		}
	}
	for _, kv := range opts.Sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--set: got %q, want key=value", kv)
		}
		if err := cfg.Set(strings.TrimSpace(k), v); err != nil {
			return nil, err
		}
	}
	if cfg.Bug, err = ppo.ParseBug(bug); err != nil {
		return nil, err
	}
	seed, err := fromEnv(opts.Seed, getenv, trainer.EnvSeed, 1, parseUint)
	if err != nil {
		return nil, err
	}
	var steps *int64
	if opts.Steps != 0 {
		steps = &opts.Steps
	}
	total, err := fromEnv(steps, getenv, trainer.EnvTotalSteps, DefaultSteps, parsePositive)
	if err != nil {
		return nil, err
	}
	if total <= 0 {
		return nil, fmt.Errorf("--steps: got %d, want > 0", total)
	}
	stop, err := fromEnv(nil, getenv, trainer.EnvStopAtStep, total, parsePositive)
	if err != nil {
		return nil, err
	}
	cfg.TotalSteps = total
	tr, err := ppo.New(cfg, newEnv, seed) // checks cfg (ppo.Config.Validate)
	if err != nil {
		return nil, err
	}
	return &Run{tr: tr, stop: stop, metricsFile: getenv(trainer.EnvMetricsFile), ckptDir: getenv(trainer.EnvCheckpointDir),
		resumeFrom: getenv(trainer.EnvResumeFrom), progress: opts.Progress}, nil
}

// fromEnv returns *given when it is set, else the contract variable name's value, else def.
func fromEnv[T any](given *T, getenv func(string) string, name string, def T, parse func(string) (T, error)) (T, error) {
	if given != nil {
		return *given, nil
	}
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := parse(s)
	if err != nil {
		return v, fmt.Errorf("%s: got %q, want %w", name, s, err)
	}
	return v, nil
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

// Summary is what a run reached.
type Summary struct {
	Reward         float64 // mean return over the last episodes (ppo's window); NaN before one ended
	Steps          int64   // the trainer's step at the end
	StepsPerSecond float64 // the steps this run took, over its wall time
	WallSeconds    float64
	Stopped        bool // ctx was cancelled (SIGTERM) before the run reached its stop step
}

// AppendJSON appends the summary as one JSON line: reward, steps, steps_per_second, wall_seconds (NaN
// as the bare token, as the contract's records write it).
func (s Summary) AppendJSON(b []byte) []byte {
	b = append(b, `{"reward":`...)
	b = metrics.AppendFloatJSON(b, s.Reward)
	b = append(b, `,"steps":`...)
	b = strconv.AppendInt(b, s.Steps, 10)
	b = append(b, `,"steps_per_second":`...)
	b = metrics.AppendFloatJSON(b, s.StepsPerSecond)
	b = append(b, `,"wall_seconds":`...)
	b = metrics.AppendFloatJSON(b, s.WallSeconds)
	return append(b, "}\n"...)
}

// Train resumes from RLSWEEP_RESUME_FROM when set, trains to RLSWEEP_STOP_AT_STEP (else the budget),
// appending one record per iteration to RLSWEEP_METRICS_FILE when set, then writes a checkpoint under
// RLSWEEP_CHECKPOINT_DIR when set and announces it by a record. A cancelled ctx (what SIGTERM becomes)
// ends training early; the checkpoint is still written and Train returns no error.
func (r *Run) Train(ctx context.Context) (Summary, error) {
	if r.resumeFrom != "" {
		if err := r.tr.RestoreFile(r.resumeFrom); err != nil {
			return Summary{}, fmt.Errorf("resume from %s: %w", r.resumeFrom, err)
		}
	}
	var metricsOut *os.File
	if r.metricsFile != "" {
		var err error
		if metricsOut, err = os.OpenFile(r.metricsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
			return Summary{}, fmt.Errorf("metrics file: %w", err)
		}
		defer metricsOut.Close()
	}
	start, startStep := time.Now(), r.tr.Steps()
	prog := &progress{w: r.progress, total: r.stop}
	runErr := r.tr.Run(ctx, r.stop, func(m ppo.Metrics) error {
		prog.report(m)
		return writeRecord(metricsOut, record(m))
	})
	stopped := errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)
	if runErr != nil && !stopped {
		return Summary{}, runErr
	}
	if err := r.checkpoint(metricsOut); err != nil {
		return Summary{}, err
	}
	prog.done(r.tr, stopped)
	wall := time.Since(start)
	reward, _ := r.tr.RecentReturn()
	return Summary{Reward: reward, Steps: r.tr.Steps(), WallSeconds: wall.Seconds(), Stopped: stopped,
		StepsPerSecond: float64(r.tr.Steps()-startStep) / math.Max(wall.Seconds(), 1e-9)}, nil
}

// record converts an iteration's metrics to a contract record.
func record(m ppo.Metrics) metrics.Record {
	r := metrics.Record{Step: m.Step, Values: map[string]float64{}}
	for _, v := range m.Values() {
		r.Values[v.Name] = v.Value
	}
	return r
}

func writeRecord(f *os.File, r metrics.Record) error {
	if f == nil {
		return nil
	}
	if _, err := f.Write(metrics.AppendRecordJSON(nil, r)); err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	return nil
}

// checkpoint writes the trainer's state under the checkpoint directory (when set), complete on disk
// before a record announces it by its path relative to that directory.
func (r *Run) checkpoint(metricsOut *os.File) error {
	if r.ckptDir == "" {
		return nil
	}
	if err := os.MkdirAll(r.ckptDir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	name := fmt.Sprintf("ckpt-%012d.bin", r.tr.Steps())
	if err := r.tr.SaveFile(filepath.Join(r.ckptDir, name)); err != nil {
		return err
	}
	return writeRecord(metricsOut, metrics.Record{Step: r.tr.Steps(), Checkpoint: name})
}

// progress prints a readable line at most once a second.
type progress struct {
	w     io.Writer // nil: nothing is printed
	total int64
	last  time.Time
}

func (p *progress) report(m ppo.Metrics) {
	if p.w == nil || time.Since(p.last) < time.Second {
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
	if p.w == nil {
		return
	}
	reward, n := tr.RecentReturn()
	how := "done"
	if stopped {
		how = "stopped by signal"
	}
	fmt.Fprintf(p.w, "%s at step %d: mean return %.1f over the last %d episodes\n", how, tr.Steps(), reward, n)
}
