package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/worker"
	"github.com/rlsweep/rlsweep/workflows"
)

// WorkerOptions are worker's inputs.
type WorkerOptions struct {
	Control      bool
	Queues       []string
	Slots        int
	GPUs         string
	GPUClass     string
	TrialsPerGPU int
	WorkDir      string
	StopTimeout  time.Duration
	// SecretEnv names variables of the worker's environment whose values are secrets, besides
	// RLSWEEP_SECRET_ENV's and the credentials rlsweep knows.
	SecretEnv []string
	// KeepScratch keeps each attempt's scratch directory under WorkDir once it has ended.
	KeepScratch bool
	// TrainerPIDNamespace runs each trainer in a PID namespace of its own where one can be created.
	TrainerPIDNamespace bool
	// AllowTrainers are the only programs trials and probes may run (--allow-trainer, and
	// RLSWEEP_ALLOW_TRAINER's); empty: any.
	AllowTrainers []string
	Log           LogOptions
	// WorkflowCache is how many workflow runs the worker keeps in memory between their tasks.
	WorkflowCache int
}

// envAllowTrainer lists programs a worker allows as trainers, separated by ':' as PATH is; they add
// to --allow-trainer's.
const envAllowTrainer = "RLSWEEP_ALLOW_TRAINER"

// allowTrainerUsage is the --allow-trainer help of worker, dev and validate.
const allowTrainerUsage = "run only trainers whose program (trainer.command[0], a name looked up on PATH, symbolic links resolved) is this file; repeat for several (adds to " + envAllowTrainer + ", a ':'-separated list); any other trial or probe fails at once. Default: any program"

// addAllowTrainerFlag adds --allow-trainer to cmd.
func addAllowTrainerFlag(cmd *cobra.Command, dst *[]string) {
	cmd.Flags().StringArrayVar(dst, "allow-trainer", nil, allowTrainerUsage)
}

// allowTrainers is the worker's allow-list: --allow-trainer's programs and RLSWEEP_ALLOW_TRAINER's,
// resolved; nil when both are empty.
func allowTrainers(flag []string) (*activities.TrainerAllowList, error) {
	progs := slices.Clone(flag)
	if v := os.Getenv(envAllowTrainer); v != "" {
		for _, p := range filepath.SplitList(v) {
			if p == "" {
				return nil, fmt.Errorf("%s: got %q with an empty entry, want programs separated by ':' (e.g. /opt/train/bin/train:/usr/local/bin/ppo)", envAllowTrainer, v)
			}
			progs = append(progs, p)
		}
	}
	l, err := activities.NewTrainerAllowList(progs)
	if err != nil && len(flag) < len(progs) {
		return nil, fmt.Errorf("%w (--allow-trainer and %s=%q)", err, envAllowTrainer, os.Getenv(envAllowTrainer))
	}
	return l, err
}

// defaultStopTimeout is how long a stopping worker waits for its trainers: the default grace period
// (30s) to write a checkpoint, the upload, and a margin.
const defaultStopTimeout = 2 * time.Minute

// stopTimeoutUsage is the --stop-timeout help of worker and dev.
const stopTimeoutUsage = "at Ctrl-C or SIGTERM, how long to wait for running trainers to stop within their grace period and for what they wrote to be stored (0: kill them at once)"

func newWorkerCmd(f *Factory, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Serve sweeps: the control queue (workflows, plans, results) and trial queues (training)",
		Long: "Run a worker until interrupted. By default it serves both the control queue and the default trial\n" +
			"queue, running --slots trials at once on the CPU. With --gpus 0,1,2,3 it runs one trial per GPU\n" +
			"(or --trials-per-gpu), each seeing only its GPUs through CUDA_VISIBLE_DEVICES, and packs trials whose\n" +
			"resources.gpus is a fraction: four of 0.25 share one GPU. With --gpu-class a100\n" +
			"it serves the queue of that class, rlsweep-gpu-a100, which specs pick with resources.gpu_class.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSlotsWithGPUs(cmd, opts.Slots, opts.GPUs); err != nil {
				return invalidInput(err)
			}
			if err := opts.validate(); err != nil {
				return invalidInput(err)
			}
			if opts.GPUClass != "" {
				// The class's queue replaces the default trial queue, or joins the ones named with --queue.
				q := sweeps.GPUClassQueue(opts.GPUClass)
				if cmd.Flags().Changed("queue") {
					opts.Queues = append(opts.Queues, q)
				} else {
					opts.Queues = []string{q}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runWorker(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Control, "control", true, "serve the control queue "+workflows.ControlQueue)
	fl.StringSliceVar(&opts.Queues, "queue", []string{workflows.DefaultTrialQueue}, "trial task queues to serve (empty: none)")
	fl.IntVar(&opts.Slots, "slots", 1, "trials run at once without --gpus, across all the trial queues served")
	fl.StringVar(&opts.GPUClass, "gpu-class", "", "serve the trial queue of this GPU class (rlsweep-gpu-CLASS), which specs pick with resources.gpu_class")
	addGPUsFlag(cmd, &opts.GPUs)
	fl.IntVar(&opts.TrialsPerGPU, "trials-per-gpu", 1, "whole-GPU trials sharing each GPU, each holding 1/N of it (a fractional resources.gpus holds its fraction whatever this says)")
	fl.StringVar(&opts.WorkDir, "work-dir", "", "scratch directory for running trials (default: ~/.rlsweep/work)")
	fl.DurationVar(&opts.StopTimeout, "stop-timeout", defaultStopTimeout, stopTimeoutUsage)
	addTrainerPIDNamespaceFlag(cmd, &opts.TrainerPIDNamespace)
	addAllowTrainerFlag(cmd, &opts.AllowTrainers)
	fl.BoolVar(&opts.KeepScratch, "keep-scratch", false, "keep each segment attempt's scratch directory under --work-dir after it ends (default: removed once its log is stored)")
	addLogFlags(cmd, &opts.Log)
	fl.IntVar(&opts.WorkflowCache, "workflow-cache", worker.DefaultWorkflowCache, "workflow runs kept in memory between their workflow tasks (the Temporal SDK's sticky cache); a run not kept replays its whole history at its next task, 0 keeps none")
	fl.StringSliceVar(&opts.SecretEnv, "secret-env", nil, "environment variables whose values are secrets, masked in every trainer output that leaves the worker (adds to "+runner.EnvSecretEnv+"; AWS and Temporal credentials always are)")
	return cmd
}

func (o *WorkerOptions) validate() error {
	if o.Slots < 1 {
		return fmt.Errorf("--slots: got %d, want at least 1", o.Slots)
	}
	if o.WorkflowCache < 0 {
		return fmt.Errorf("--workflow-cache: got %d, want 0 or more workflow runs (default %d)", o.WorkflowCache, worker.DefaultWorkflowCache)
	}
	if err := checkStopTimeout(o.StopTimeout); err != nil {
		return err
	}
	if o.TrialsPerGPU < 1 || o.TrialsPerGPU > activities.MaxTrialsPerGPU {
		return fmt.Errorf("--trials-per-gpu: got %d, want an integer in [1, %d] (for finer shares, give trials a fractional resources.gpus)",
			o.TrialsPerGPU, activities.MaxTrialsPerGPU)
	}
	if _, err := parseGPUs(o.GPUs); err != nil {
		return err
	}
	if o.GPUClass != "" && !sweeps.ValidGPUClass(o.GPUClass) {
		return fmt.Errorf("--gpu-class: got %q, want lower-case letters, digits, '_', '-', at most 40 characters (e.g. a100, h100)", o.GPUClass)
	}
	for _, q := range o.Queues {
		if strings.TrimSpace(q) == "" {
			return fmt.Errorf("--queue: got an empty name, want task queue names")
		}
	}
	if err := o.Log.validate(); err != nil {
		return err
	}
	if err := checkSecretEnv(o.SecretEnv); err != nil {
		return err
	}
	if _, err := allowTrainers(o.AllowTrainers); err != nil {
		return err
	}
	if !o.Control && len(o.Queues) == 0 {
		return fmt.Errorf("--control=false and --queue empty: want at least one queue to serve")
	}
	return nil
}

func (o *WorkerOptions) gpuList() []string {
	gpus, _ := parseGPUs(o.GPUs) // validated
	return gpus
}

// newActivities builds what the activities run with, from the worker's options and the factory.
func newActivities(f *Factory, o *WorkerOptions) (*activities.Activities, error) {
	store, err := f.Store()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locate the rlsweep executable: %w", err)
	}
	wd := o.WorkDir
	if wd == "" {
		wd = filepath.Join(Home(), "work")
	}
	a := &activities.Activities{Store: store, WorkDir: wd, Executable: exe,
		Secrets: runner.NewMasker(workerSecrets(f, o.SecretEnv)), KeepScratch: o.KeepScratch, Logger: f.Logger}
	for _, name := range shortSecrets(o.SecretEnv) {
		fmt.Fprintf(f.ErrOut, "worker: warning: %s is marked secret but its value is shorter than %d characters: it is not masked in trainer output\n",
			name, runner.MinSecretLen)
	}
	if a.AllowTrainers, err = allowTrainers(o.AllowTrainers); err != nil {
		return nil, err
	}
	if gpus := o.gpuList(); len(gpus) > 0 {
		if a.Slots, err = activities.NewSlots(gpus, o.TrialsPerGPU); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func runWorker(cmd *cobra.Command, f *Factory, o *WorkerOptions) error {
	ctx := cmd.Context()
	if f.ProtectCredentials {
		if err := hideCredentials(o.SecretEnv); err != nil {
			return err
		}
	}
	if err := checkGPUsPresent(ctx, o.GPUs, nvidiaSMI, f.ErrOut); err != nil {
		return invalidInput(err)
	}
	f.Logger = o.Log.logger(f.ErrOut)
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	acts, err := newActivities(f, o)
	if err != nil {
		return err
	}
	w, err := worker.New(c, worker.Options{Control: o.Control, TrialQueues: o.Queues, Slots: o.Slots, Activities: acts,
		StopTimeout: o.StopTimeout, WorkflowCache: &o.WorkflowCache})
	if err != nil {
		return invalidInput(err)
	}
	reclaimScratch(f, acts, "worker")
	setIsolation(f, "worker", o.TrainerPIDNamespace)
	if err := protectMemory(f, "worker"); err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	fmt.Fprintf(f.ErrOut, "worker: control=%v trial queues=%v slots=%d gpus=%q store=%s\n",
		o.Control, o.Queues, max(o.Slots, slotCount(acts)), o.GPUs, acts.Store.URL(""))
	if acts.StopQueue != "" {
		fmt.Fprintf(f.ErrOut, "worker: stops for its segments arrive on task queue %s\n", acts.StopQueue)
	}
	if progs := acts.AllowTrainers.Programs(); len(progs) > 0 {
		fmt.Fprintf(f.ErrOut, "worker: trainers allowed: %s (--allow-trainer); any other program is refused\n", strings.Join(progs, ", "))
	}
	<-ctx.Done()
	fmt.Fprintln(f.ErrOut, "worker: "+stoppingMessage(o.StopTimeout))
	w.Stop()
	waitUploads(f, acts, o.StopTimeout, "worker")
	return nil
}

// addTrainerPIDNamespaceFlag adds --trainer-pid-namespace (worker and dev).
func addTrainerPIDNamespaceFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "trainer-pid-namespace", true, "run each trainer in a PID namespace of its own where one can be created, so that "+
		"no trainer process outlives its supervisor (false: process group and child subreaper only, for trainers that need the machine's PIDs; docs/deploy.md)")
}

// setIsolation applies --trainer-pid-namespace and says once how trainers are bound to their
// supervisors here (runner.TrainerIsolation), before any trainer starts.
func setIsolation(f *Factory, who string, pidNamespace bool) {
	if !pidNamespace {
		runner.WithoutNamespaces()
	}
	iso := runner.TrainerIsolation()
	fmt.Fprintf(f.ErrOut, "%s: trainer isolation %s: %s\n", who, iso, iso.Guarantee())
}

// waitUploads gives the logs of attempts that ended while the store was away up to timeout to be
// stored before the worker exits; what is left, the next worker on the work directory stores.
func waitUploads(f *Factory, a *activities.Activities, timeout time.Duration, who string) {
	n := a.PendingUploads()
	if n == 0 || timeout <= 0 {
		return
	}
	fmt.Fprintf(f.ErrOut, "%s: waiting up to %s for the logs of %d ended attempts to be stored\n", who, timeout, n)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if left := a.WaitUploads(ctx); left > 0 {
		fmt.Fprintf(f.ErrOut, "%s: %d attempt logs not stored yet; their directories stay in %s for the next worker there to store\n", who, left, a.WorkDir)
	}
}

// checkSecretEnv validates --secret-env and RLSWEEP_SECRET_ENV: variable names.
func checkSecretEnv(names []string) error {
	for _, n := range names {
		if !runner.ValidEnvName(strings.TrimSpace(n)) {
			return fmt.Errorf("--secret-env: got %q, want environment variable names separated by commas (letters, digits, '_')", n)
		}
	}
	if v := os.Getenv(runner.EnvSecretEnv); v != "" {
		for n := range strings.SplitSeq(v, ",") {
			if !runner.ValidEnvName(strings.TrimSpace(n)) {
				return fmt.Errorf("%s: got %q, want environment variable names separated by commas (letters, digits, '_')", runner.EnvSecretEnv, n)
			}
		}
	}
	return nil
}

// shortSecrets names the variables marked secret (RLSWEEP_SECRET_ENV, --secret-env) whose values are
// too short to be masked.
func shortSecrets(extra []string) []string {
	var out []string
	for _, n := range append(strings.Split(os.Getenv(runner.EnvSecretEnv), ","), extra...) {
		n = strings.TrimSpace(n)
		if v := os.Getenv(n); n != "" && v != "" && len(v) < runner.MinSecretLen && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// workerSecrets are the secret values the worker holds: those of its environment
// (runner.WorkerSecrets), and the API key, TLS client key, codec auth and gRPC headers of the
// Temporal profile it connects with (a config file's profile holds them outside the environment).
func workerSecrets(f *Factory, extra []string) map[string]string {
	secrets := runner.WorkerSecrets(os.Environ(), extra...)
	if f.Local {
		return secrets
	}
	p, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{})
	if err != nil {
		return secrets // the connection reports it
	}
	add := func(name, v string) {
		if old := secrets[name]; old != "" && old != v {
			name += "_PROFILE" // the environment's value stays masked too
		}
		if v != "" {
			secrets[name] = v
		}
	}
	add("TEMPORAL_API_KEY", p.APIKey)
	if p.TLS != nil {
		add("TEMPORAL_TLS_CLIENT_KEY", string(p.TLS.ClientKeyData))
		if p.TLS.ClientKeyPath != "" {
			if b, err := os.ReadFile(p.TLS.ClientKeyPath); err == nil {
				add("TEMPORAL_TLS_CLIENT_KEY", string(b))
			}
		}
	}
	if p.Codec != nil {
		add("TEMPORAL_CODEC_AUTH", p.Codec.Auth)
	}
	for k, v := range p.GRPCMeta {
		add("TEMPORAL_GRPC_META_"+strings.ToUpper(k), v)
	}
	return secrets
}

// checkStopTimeout validates --stop-timeout, for worker and dev.
func checkStopTimeout(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("--stop-timeout: got %s, want a duration ≥ 0 such as 2m", d)
	}
	return nil
}

// stoppingMessage says what a stopping worker waits for, and how not to wait.
func stoppingMessage(timeout time.Duration) string {
	if timeout <= 0 {
		return "stopping; running trainers are killed (--stop-timeout 0)"
	}
	return fmt.Sprintf("stopping; running trainers get their grace period to checkpoint (at most --stop-timeout %s); Ctrl-C again to kill them now", timeout)
}

// reclaimScratch takes over the attempt directories a killed worker left under the work directory:
// their logs are stored in the background, then they are removed.
func reclaimScratch(f *Factory, a *activities.Activities, who string) {
	n, err := a.ReclaimScratch()
	if err != nil {
		fmt.Fprintf(f.ErrOut, "%s: warning: sweeping %s for attempts a stopped worker left: %v\n", who, a.WorkDir, err)
	}
	if n > 0 {
		fmt.Fprintf(f.ErrOut, "%s: %d attempt directories left in %s by a stopped worker: storing their logs, then removing them\n", who, n, a.WorkDir)
	}
}

func slotCount(a *activities.Activities) int {
	if a.Slots == nil {
		return 0
	}
	return a.Slots.Len()
}

// refusedTrainers says which of spec's trainer programs (trainer.command[0], probes.command[0]) allow
// refuses, each as FIELD: why. A templated program ({{...}}) is rendered only on the worker, and not
// checked here; the built-in trainer is always allowed.
func refusedTrainers(spec *sweeps.Spec, allow *activities.TrainerAllowList) []string {
	if allow == nil || spec.Trainer.Builtin != "" {
		return nil
	}
	var out []string
	for _, c := range []struct {
		field string
		cmd   []string
	}{{"trainer.command[0]", spec.Trainer.Command}, {"probes.command[0]", spec.Probes.Command}} {
		if len(c.cmd) == 0 || strings.Contains(c.cmd[0], "{{") {
			continue
		}
		if msg := allow.Refusal(c.cmd[0]); msg != "" {
			out = append(out, c.field+": "+msg)
		}
	}
	return out
}
