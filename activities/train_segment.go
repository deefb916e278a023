package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer"
)

// heartbeatEvery is how often a probe heartbeats (its cancellation arrives on a heartbeat's answer),
// and a segment outside an activity; a segment attempt heartbeats every sweeps.HeartbeatInterval.
const heartbeatEvery = time.Second

// segmentHeartbeatEvery is how often a segment attempt heartbeats: sweeps.HeartbeatInterval of its
// heartbeat timeout and its trainer's grace period.
func segmentHeartbeatEvery(ctx context.Context, grace time.Duration) time.Duration {
	if !activity.IsActivity(ctx) {
		return heartbeatEvery
	}
	return sweeps.HeartbeatInterval(activity.GetInfo(ctx).HeartbeatTimeout, grace)
}

// TrainSegment runs one segment of a trial: it starts the trainer as a child process under the trainer
// contract (docs/trainer-contract.md), follows its metrics, heartbeats the step and the last checkpoint, uploads
// announced checkpoints, and stores the records as metrics parts (artifacts.MetricsPartKey) and the
// trainer's log. A retried attempt resumes from the
// checkpoint its previous attempt last recorded in a heartbeat, on whichever worker runs it.
//
// The attempt heartbeats from a goroutine of its own (beats) and its work runs under the context beats
// returns: a Temporal server that is slow or away for less than the heartbeat timeout does not stop the
// trainer. Only failures of the trainer itself (it crashed, stalled, or wrote what cannot be read) count
// against SegmentInput.MaxTrainerFailures; the other attempts ended by faults outside the trainer (its
// worker died or was stopped, the server or the store was unreachable) against MaxInfraRetries.
//
// Each attempt that fails is logged once, here (logAttemptFailed): the worker's client logs the SDK's
// own line for TrainSegment at Debug (worker.Logger).
func (a *Activities) TrainSegment(ctx context.Context, in SegmentInput) (_ *SegmentResult, err error) {
	ctx = withTrialLog(ctx, in) // every line it logs names the trial
	var run *segmentRun
	defer func() { a.logAttemptFailed(ctx, run, err) }()
	var prev Heartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &prev)
	}
	if err := graceFits(ctx, in); err != nil {
		return nil, err
	}
	every := segmentHeartbeatEvery(ctx, in.Trainer.GracePeriod)
	// A parked segment's first attempt waits here for its place (parked.go). A retry runs at once if
	// the attempt before it trained (it heartbeated); one that never heartbeated died parked, or
	// handed its place before its first heartbeat: the retry ends lost, and its trial trains the
	// segment itself.
	parked := in.Parked && (!activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt == 1)
	if in.Parked && !parked && !activity.HasHeartbeatDetails(ctx) {
		return &SegmentResult{Unhanded: true, Lost: true}, nil
	}
	var inherited *Places // the places that count a parked segment's trainer
	parkedAt := time.Now()
	if parked {
		var handed bool
		if inherited, handed = a.awaitPlace(ctx, in, every); !handed {
			return &SegmentResult{Unhanded: true}, nil
		}
	}
	work, b := startBeats(ctx, every, prev, in.Trainer.GracePeriod)
	defer b.stop()
	if parked {
		b.startedAt(parkedAt) // the server counts the heartbeat timeout from the attempt's start
	}
	b.health = a.ServerHealth
	defer a.announceSegment(ctx, b, parked)()
	if err := infraBound(ctx, in, prev); err != nil {
		inherited.giveBack()
		return nil, err
	}
	run, release, err := a.prepareAndTakePlace(work, in, prev, b)
	if err != nil {
		run = nil // none ran
		inherited.giveBack()
		return nil, err
	}
	places := a.Places[activity.GetInfo(ctx).TaskQueue]
	var exited bool
	switch {
	case parked:
		places = inherited // placed by the hand-over
	case places != nil:
		// The segment has its place: on a GPU worker, the queue's worker may poll for another segment.
		places.Placed()
	}
	defer func() {
		switch {
		case exited:
			places.ActivityEnded() // after the scratch directory's clean-up below
		case places != nil:
			places.Unplaced() // its trainer never ran
		}
		if parked && places != nil {
			places.Release() // the slot Inherit took in its stead
		}
	}()
	defer run.close()
	var freed sync.Once
	free := func() { freed.Do(release) }
	defer free() // frees the GPUs or place before the scratch directory is cleaned up
	var handing sync.WaitGroup
	handed, released := false, false
	run.exited = func(clean bool) {
		// The trainer is gone: its GPUs and its place go to the next trainer now, not once what it left
		// is stored.
		free()
		if clean && !handed && a.handOver(ctx, in.SweepID, in.HandOffTo, places) {
			// Handed to the successor parked on this worker: its trainer starts now, no signal needed.
			handed, released = true, true
		}
		if places != nil && !exited {
			exited = true
			places.TrainerExited()
		}
		if clean && in.HandOffTo != "" && a.HandOff != nil && !handed {
			handed = true
			handing.Go(func() {
				if released = a.handOff(work, in); released {
					b.answeredNow() // the server took the signal
				}
			})
		}
	}
	res, err := run.run(work)
	handing.Wait()
	if res != nil {
		res.HandedOff = released
	}
	if err != nil && !temporal.IsCanceledError(err) {
		b.final(run.hb) // how far it got and the failures so far, for the next attempt
	}
	b.awaitServer(work) // a result handed in while the server is away could be lost
	return res, err
}

// prepareAndTakePlace prepares the segment and waits for its place on the worker: its GPUs, or a place
// under --slots shared by the worker's trial queues (TrialLimit). Meanwhile it heartbeats what the
// previous attempt last did (beats): downloading a large checkpoint, or waiting for GPUs another trial
// holds, can outlast the heartbeat timeout, and the server would retry an attempt that has not failed
// and start a second trainer beside it. A retry must still find the previous attempt's checkpoint in
// the details.
func (a *Activities) prepareAndTakePlace(ctx context.Context, in SegmentInput, prev Heartbeat, b *beats) (*segmentRun, func(), error) {
	run, err := a.prepareSegment(ctx, in, prev)
	if err != nil {
		return nil, nil, err
	}
	run.beats = b
	b.set(run.hb)
	switch {
	case a.Slots != nil:
		// A trial that asks for no GPU sees none; one that asks for several sees them all; one that asks
		// for a fraction sees the GPU it shares, and is told its share.
		lease, err := a.Slots.Acquire(ctx, in.gpuCount())
		if err != nil {
			run.close()
			return nil, nil, err
		}
		run.process.CUDADevices = strings.Join(lease.GPUs, ",")
		run.process.GPUMemoryFraction = lease.MemoryFraction()
		run.env = run.process.Env(os.Environ(), in.Trainer.Environment,
			slices.Concat(run.extraEnv, xlaMemoryEnv(lease, in.Trainer.Environment))...)
		return run, func() { a.Slots.Release(lease) }, nil
	case a.TrialLimit != nil:
		select {
		case a.TrialLimit <- struct{}{}:
			return run, func() { <-a.TrialLimit }, nil
		case <-ctx.Done():
			run.close()
			return nil, nil, ctx.Err()
		}
	}
	return run, func() {}, nil
}

// segmentRun is the state of one running segment attempt.
type segmentRun struct {
	a       *Activities
	in      SegmentInput
	argv    []string
	process runner.Contract
	env     []string
	// extraEnv: the variables a W&B sweep config's run gets (wandbEnv), kept for the environment made
	// again once the segment holds its GPUs.
	extraEnv []string
	// ledger: what this attempt and the segment's earlier ones came to (failures, retrained steps).
	ledger  attemptLedger
	dir     string // scratch directory of this attempt
	scratch *scratch
	ckptDir string
	metrics string // the file the trainer appends to
	tbDir   string
	logPath string
	canon   *os.File // the records as read, in canonical JSON lines: what the metrics parts store
	reader  metrics.Reader
	engine  *diagnostics.Engine // nil when diagnostics are off
	// records: the records this attempt took in (their canonical lines go to canon).
	records *runner.SegmentLog
	// trendSeen counts the windowed objectives taken into the heartbeat's trend; trendEvery is how many
	// each trend point stands for (Heartbeat.addTrend).
	trendSeen, trendEvery int
	hb                    Heartbeat
	result                SegmentResult
	beats                 *beats
	started               time.Time
	// flushed: how many bytes of this attempt's records the stored metrics parts already hold.
	flushed int64
	// parts: how many metrics parts this attempt has stored; the next one's seq.
	parts int
	// partAttempt: the attempt number its metrics parts carry (artifacts.MetricsAttempt); 0 until the
	// first part is stored.
	partAttempt int32
	// resumedAt: the step of the checkpoint this attempt resumed from; 0 for a fresh start.
	resumedAt int64
	// exited is called once the trainer is gone (clean: it exited with status 0 by itself); it may be
	// called more than once.
	exited func(clean bool)
	// rungs follows the records past the trial's decision points (nil: none to report); passes
	// counts the reports still being sent.
	rungs  *rungTracker
	passes sync.WaitGroup
	// oomKills is the cgroup's oom_kill counter as the trainer started (runner.OOMKills), oomKillsOK
	// whether there was one to read.
	oomKills   int64
	oomKillsOK bool
}

func (a *Activities) prepareSegment(ctx context.Context, in SegmentInput, prev Heartbeat) (_ *segmentRun, err error) {
	info := activity.GetInfo(ctx)
	sc, err := newScratch(filepath.Join(a.WorkDir, artifacts.TrialsDir(in.SweepID), artifacts.Segment(in.Trial.ID)),
		attemptState{SweepID: in.SweepID, TrialID: in.Trial.ID, Segment: in.Segment, Attempt: info.Attempt})
	if err != nil {
		return nil, err
	}
	dir := sc.dir
	metricsName := "metrics.jsonl"
	if in.Trainer.Metrics.Source == metrics.SourceCSV {
		// SB3's logger writes progress.csv into the directory it is configured with: the trainer's
		// working directory, or the directory of RLSWEEP_METRICS_FILE.
		metricsName = "progress.csv"
	}
	r := &segmentRun{a: a, in: in, ledger: newAttemptLedger(in, info.Attempt, prev), exited: func(bool) {}, dir: dir, scratch: sc, ckptDir: filepath.Join(dir, "checkpoints"),
		metrics: filepath.Join(dir, metricsName), tbDir: filepath.Join(dir, "tb"),
		logPath: sc.logPath(), started: time.Now()}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	for _, d := range []string{r.ckptDir, r.tbDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("segment scratch: %w", err)
		}
	}
	canon, err := os.Create(filepath.Join(dir, "metrics.canonical.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("segment scratch: %w", err)
	}
	r.canon = canon
	m := in.Trainer.Metrics
	r.reader, err = metrics.Open(metrics.ReaderConfig{Source: m.Source, Preset: m.Preset, Tags: m.Tags,
		StepsPerIteration: m.StepsPerIteration, MetricsFile: r.metrics, TBDir: r.tbDir, StdoutFile: r.logPath,
		WandbDir: r.dir, StepKey: m.StepKey}) // WandbDir: the trainer's WANDB_DIR (wandbEnv)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	if r.engine, err = newEngine(in); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	resume, err := r.resumeCheckpoint(ctx, prev)
	if err != nil {
		return nil, err
	}
	r.countRetrained(ctx, prev)
	r.records = runner.NewSegmentLog(r.canon, in.Metric, r.resumedAt)
	if t := in.StepsTarget; t != nil {
		r.records.SetTarget(*t, in.Goal != sweeps.GoalMinimize)
	}
	r.rungs = newRungTracker(in)
	r.argv, err = r.command(resume)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	if err := r.a.checkTrainer(in.Trainer, r.argv[0]); err != nil {
		return nil, err
	}
	r.process = r.contract(resume)
	if r.extraEnv, err = r.wandbEnv(); err != nil {
		return nil, err
	}
	r.env = r.process.Env(os.Environ(), in.Trainer.Environment, r.extraEnv...)
	return r, nil
}

// wandbEnv is what W&B's agent tells a run of a W&B sweep config besides its command, so that a script
// reading wandb.config gets its parameters: the run's config written as the agent writes it
// (sweeps.WandBConfigYAML) and WANDB_SWEEP_PARAM_PATH naming it, and WANDB_DIR, where wandb.init()
// keeps its run files, in the attempt's scratch directory. A trainer that has no W&B credentials
// (neither WANDB_MODE nor WANDB_API_KEY in the worker's environment or trainer.environment) gets
// WANDB_MODE=offline: wandb.init() without a key and without a terminal would fail. An rlsweep spec
// whose metrics source is wandb or auto gets WANDB_DIR (and WANDB_MODE) only: its reader follows the
// run file there. Nothing for another rlsweep spec.
func (r *segmentRun) wandbEnv() ([]string, error) {
	t := r.in.Trainer
	if src := t.Metrics.Source; len(t.WandBConfig) == 0 && (src == metrics.SourceWandb || src == metrics.SourceAuto) {
		return r.wandbDirEnv([]string{"WANDB_DIR=" + r.dir}), nil
	}
	if len(t.WandBConfig) == 0 {
		return nil, nil
	}
	b, err := sweeps.WandBConfigYAML(r.in.Trial.Params, t.WandBConfig)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	path := filepath.Join(r.dir, wandbConfigFile)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return nil, fmt.Errorf("segment scratch: %w", err)
	}
	return r.wandbDirEnv([]string{"WANDB_SWEEP_PARAM_PATH=" + path, "WANDB_DIR=" + r.dir}), nil
}

// wandbDirEnv adds WANDB_MODE=offline to env when the trainer has no W&B credentials.
func (r *segmentRun) wandbDirEnv(env []string) []string {
	t := r.in.Trainer
	has := func(name string) bool {
		_, inSpec := t.Environment[name]
		_, inWorker := os.LookupEnv(name)
		return inSpec || inWorker
	}
	if !has("WANDB_MODE") && !has("WANDB_API_KEY") {
		env = append(env, "WANDB_MODE=offline")
	}
	return env
}

// xlaMemoryFraction is the part of its share of a GPU a JAX trainer preallocates
// (XLA_PYTHON_CLIENT_MEM_FRACTION): the rest is left to each process's CUDA context and the libraries
// that allocate outside XLA's pool, as JAX's own default of 0.75 leaves a quarter of a whole GPU.
const xlaMemoryFraction = 0.9

// xlaMemoryEnv is XLA_PYTHON_CLIENT_MEM_FRACTION for a trainer that holds less than a whole GPU
// (a fractional resources.gpus, or --trials-per-gpu): 0.9 of its share, so that the JAX trainers sharing
// a GPU do not each preallocate JAX's default of 75% of it, which only the first would get. Nothing
// when the worker's environment or trainer.environment sets it (theirs wins), or for a whole GPU.
func xlaMemoryEnv(l Lease, spec map[string]string) []string {
	if len(l.GPUs) == 0 || l.units >= sweeps.GPUUnits {
		return nil
	}
	_, inSpec := spec[trainer.EnvXLAMemFraction]
	_, inWorker := os.LookupEnv(trainer.EnvXLAMemFraction)
	if inSpec || inWorker {
		return nil
	}
	f := float64(l.units) * xlaMemoryFraction / sweeps.GPUUnits
	return []string{trainer.EnvXLAMemFraction + "=" + strconv.FormatFloat(math.Round(f*1e4)/1e4, 'f', -1, 64)}
}

// wandbConfigFile is the run config of a W&B sweep's trial in its attempt's scratch directory.
const wandbConfigFile = "wandb-sweep-config.yaml"

// command renders the trainer's argv: the built-in trainer is this binary's `train` command; an
// external command's elements are templates rendered one by one, each into exactly one argument.
func (r *segmentRun) command(resume string) ([]string, error) {
	t := r.in.Trainer
	if t.Builtin != "" {
		if t.Builtin != "ppo" {
			return nil, fmt.Errorf("trainer.builtin: got %q, want ppo", t.Builtin)
		}
		if r.a.Executable == "" {
			return nil, errors.New("built-in trainer: the worker has no rlsweep executable configured")
		}
		return []string{r.a.Executable, "train", "--env", t.Env}, nil
	}
	return sweeps.RenderCommand(t.Command, sweeps.TemplateData{
		SweepID: r.in.SweepID, TrialID: r.in.Trial.ID, Seed: r.in.Trial.Seed, Params: r.in.Trial.Params,
		TotalSteps: t.TotalSteps, StopAtStep: r.in.StopAtStep, CheckpointDir: r.ckptDir,
		MetricsFile: r.metrics, ResumeFrom: resume, Env: t.Env,
	})
}

// contract is what the trainer contract tells this segment's trainer; CUDADevices is set once the
// segment holds its GPUs.
func (r *segmentRun) contract(resume string) runner.Contract {
	return runner.Contract{SweepID: r.in.SweepID, TrialID: r.in.Trial.ID, Seed: r.in.Trial.Seed, Params: r.in.Trial.Params,
		MetricsFile: r.metrics, TBDir: r.tbDir, CheckpointDir: r.ckptDir, StopAtStep: r.in.StopAtStep,
		TotalSteps: r.in.Trainer.TotalSteps, ResumeFrom: resume, Precision: r.in.Trial.Precision}
}

// close closes the attempt's files and ends its hold on the scratch directory: removed once its log
// is stored, else left to the background uploader (scratch.release).
func (r *segmentRun) close() {
	if r.canon != nil {
		r.canon.Close()
	}
	if r.reader != nil {
		r.reader.Close()
	}
	r.scratch.release(r.a)
}

// handOff releases the trial that waits for this one's place (SegmentInput.HandOffTo). It does not
// wait for long and never fails the segment: the sweep releases that trial anyway once it learns this
// one ended.
func (a *Activities) handOff(ctx context.Context, in SegmentInput) bool {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.HandOff.HandOff(hctx, in.SweepID, in.HandOffTo); err != nil {
		activity.GetLogger(ctx).Warn("standby trial not released; the sweep releases it", "standby", in.HandOffTo, "error", err)
		return false
	}
	return true
}

// run starts the trainer and follows it until it exits, is cancelled, or stalls.
func (r *segmentRun) run(ctx context.Context) (*SegmentResult, error) {
	logFile, err := os.Create(r.logPath)
	if err != nil {
		return nil, fmt.Errorf("trainer log: %w", err)
	}
	defer logFile.Close()
	workerStop := activity.GetWorkerStopChannel(ctx)
	select {
	case <-workerStop: // stopping while this attempt waited for its place: start nothing
		return nil, temporal.NewApplicationError(fmt.Sprintf("trial %s: the worker is shutting down", r.in.Trial.ID), ErrWorkerStopping, r.hb)
	default:
	}
	if r.result.ResumedFrom != "" && r.resumedAt >= r.in.StopAtStep {
		// The checkpoint it resumes from is at or past the segment's end (an earlier attempt got there
		// and its completion was lost): nothing is left to train.
		return r.resumedPastEnd(ctx)
	}
	go thisMachine() // asked once per worker process; at hand when the segment ends
	r.oomKills, r.oomKillsOK = runner.OOMKills()
	p, err := runner.Start(r.argv, r.env, r.dir, logFile)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	fast := r.a.pollInterval()
	tick := time.NewTimer(fast)
	defer tick.Stop()
	w := watch{lastFlush: time.Now(), lastRecord: time.Now()}
	w.silence.heard(time.Now())
	for {
		select {
		case <-ctx.Done():
			return nil, r.cancelled(ctx, p)
		case <-workerStop:
			return nil, r.workerStopped(ctx, p)
		case <-p.Done():
			return r.trainerExited(ctx, p)
		case <-tick.C:
			if err := r.tick(ctx, p, &w); err != nil {
				return nil, err
			}
			tick.Reset(pollEvery(time.Since(w.lastRecord), fast))
		}
	}
}

// How often a running segment reads its trainer's metrics: every Activities.PollInterval (20 ms) while
// records arrive, and every idlePoll once the trainer has written none for idleAfter. Most trainers
// write a record every second or more; between records a segment then costs the worker a fifth of the
// reads (with thousands of trainers on one worker, the reads are most of its CPU), and a record that
// ends a silence — a divergence included — is still read within idlePoll.
const (
	idleAfter = 200 * time.Millisecond
	idlePoll  = 100 * time.Millisecond
)

// pollEvery is the wait before the next read of the metrics, the trainer having written no record for
// silent, fast the interval while records arrive.
func pollEvery(silent, fast time.Duration) time.Duration {
	if silent >= idleAfter && fast < idlePoll {
		return idlePoll
	}
	return fast
}

// cancelled ends an attempt the server cancelled: the trainer is stopped, and what it wrote on SIGTERM
// (its final checkpoint) is read and stored despite the cancellation, so the next attempt can resume
// from it. The step its records reached goes back with the cancellation: the Trial workflow reports it
// as the cancelled trial's steps.
func (r *segmentRun) cancelled(ctx context.Context, p *runner.Process) error {
	r.stopTrainer(ctx, p)
	done := context.WithoutCancel(ctx)
	r.pollFinal(done)
	r.flush(done)
	r.result.WallSeconds = time.Since(r.started).Seconds()
	r.result.Malformed = r.reader.Stats().Malformed
	r.takeLog()
	return temporal.NewCanceledError(r.result)
}

// workerStopped ends an attempt whose worker is shutting down: the trainer gets its grace period to
// checkpoint (the worker waits for it, --stop-timeout), what it wrote is stored, and another attempt
// resumes.
func (r *segmentRun) workerStopped(ctx context.Context, p *runner.Process) error {
	r.stopTrainer(ctx, p)
	r.pollFinal(ctx)
	if err := r.flush(ctx); err != nil {
		r.log(ctx).Warn("storing metrics at worker shutdown failed", "error", err)
	}
	msg := fmt.Sprintf("trial %s: the worker shut down at step %d; the trainer was stopped and the next attempt resumes from %s",
		r.in.Trial.ID, r.result.LastStep, orStart(r.hb.CheckpointKey))
	return temporal.NewApplicationError(msg, ErrWorkerStopping, r.hb)
}

// trainerExited ends an attempt whose trainer exited by itself. Most segments end here, the trainer
// having written its last records since the last tick: a failure to take them in (reading, storing a
// checkpoint) fails the attempt, to be retried, rather than pass for a segment whose records were
// never stored.
func (r *segmentRun) trainerExited(ctx context.Context, p *runner.Process) (*SegmentResult, error) {
	r.exited(p.ExitCode() == 0)
	_, verdict, err := r.pollFinal(ctx)
	if err != nil {
		r.flush(ctx)
		return nil, r.failed(err)
	}
	if _, err := retryStore(ctx, r.a, "store the segment's metrics and log", func() (struct{}, error) {
		return struct{}{}, r.flush(ctx)
	}); err != nil {
		return nil, err
	}
	if verdict != nil {
		return nil, r.diverged(ctx, *verdict, time.Now(), time.Now())
	}
	if r.records.Lines() == 0 && r.result.LastStep > 0 {
		if err := r.lastStoredRecord(ctx); err != nil {
			return nil, err
		}
	}
	return r.finish(p)
}

// watch is what the polling loop of a running trainer keeps between its ticks: the trainer's silence
// and when the records were last stored.
type watch struct {
	silence    stallClock
	lastFlush  time.Time
	lastRecord time.Time // the last read that took in a record, or the trainer's start
}

// tick takes in the records the trainer wrote since the last tick, stores them every flush interval,
// and ends the attempt (a non-nil error) when a record fired a stop rule, the records cannot be taken
// in, or the trainer has been silent past trainer.stall_timeout.
func (r *segmentRun) tick(ctx context.Context, p *runner.Process, w *watch) error {
	took := time.Now()
	n, verdict, err := r.poll(ctx)
	now := time.Now()
	w.silence.worked(now.Sub(took)) // a checkpoint's upload, a flush: the worker's wait, not the trainer's silence
	if err != nil {
		r.stopTrainer(ctx, p)
		if localFault(err) {
			// The trainer's fault, not the store's: what it wrote up to here is stored.
			r.flush(ctx)
		}
		return r.failed(err)
	}
	if verdict != nil {
		detected := time.Now()
		r.stopTrainer(ctx, p)
		killed := time.Now()
		r.flush(ctx)
		return r.diverged(ctx, *verdict, detected, killed)
	}
	if n > 0 {
		w.silence.heard(now)
		w.lastRecord = now
	}
	r.beats.set(r.hb)
	if st := stallTimeout(r.in); st > 0 && w.silence.silent(now) > st && !exited(p) {
		r.stopTrainer(ctx, p)
		r.flush(ctx)
		msg := fmt.Sprintf("trial %s: no metrics record for %s (last step %d); log tail:\n%s",
			r.in.Trial.ID, st, r.result.LastStep, runner.TailFile(r.logPath, 2048, r.a.masker()))
		return r.trainerFailed(ErrTrialStalled, msg)
	}
	if now.Sub(w.lastFlush) >= r.a.flushInterval() {
		if err := r.flush(ctx); err != nil {
			r.log(ctx).Warn("flushing metrics failed; will retry", "error", err)
		}
		w.lastFlush = time.Now()
		w.silence.worked(w.lastFlush.Sub(now))
	}
	return nil
}

// exited tells whether the trainer has exited: one that has is never stalled; the loop's next turn
// takes in what it wrote and ends the segment by its exit status.
func exited(p *runner.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// stopTrainer stops the trainer (SIGTERM, the grace period, SIGKILL). The heartbeats (beats) go on
// meanwhile: a grace period as long as the heartbeat timeout would otherwise let the server time the
// attempt out and start a retry beside the trainer still shutting down — for a diverged trial, a retry
// of what must never be retried.
func (r *segmentRun) stopTrainer(_ context.Context, p *runner.Process) {
	r.beats.set(r.hb)
	p.Stop(r.in.Trainer.GracePeriod)
	r.exited(false)
}

// poll reads the records that arrived since the last call and returns how many there were, and the
// stop verdict if a record fired a stop rule (the records after it are not looked at). Records past
// the warm-up with none of the trial's carrying the objective fail the attempt (objectiveOverdue).
func (r *segmentRun) poll(ctx context.Context) (int, *diagnostics.Verdict, error) {
	n, v, err := r.pollRecords(ctx, false)
	if err == nil && v == nil {
		err = r.objectiveOverdue(ctx) // nothing silent: past the warm-up without the objective fails
	}
	return n, v, err
}

// pollFinal is poll once the trainer has exited: a reader holding back a record it could not yet
// tell was whole (metrics.Finisher) gives it up too.
func (r *segmentRun) pollFinal(ctx context.Context) (int, *diagnostics.Verdict, error) {
	return r.pollRecords(ctx, true)
}
func (r *segmentRun) pollRecords(ctx context.Context, final bool) (int, *diagnostics.Verdict, error) {
	recs, err := r.reader.Poll()
	if err != nil {
		// A reader's error may quote what the trainer wrote.
		return 0, nil, &trainerFault{errors.New(r.a.masker().MaskString("read metrics: " + err.Error()))}
	}
	if final {
		if f, ok := r.reader.(metrics.Finisher); ok {
			recs = append(recs, f.Finish()...)
		}
	}
	m := r.a.masker()
	for i, rec := range recs {
		v, err := r.observe(ctx, rec, m)
		if err != nil || v != nil {
			return i + 1, v, err
		}
	}
	return len(recs), nil, nil
}

// observe takes in one record: the rules judge it, it is appended to the canonical metrics, and its
// checkpoint is uploaded unless the record fired a stop rule (the last healthy checkpoint stays the
// one before). What is taken in has the secrets m knows masked in its names (maskRecord); the
// checkpoint is read from the file the trainer announced.
func (r *segmentRun) observe(ctx context.Context, announced metrics.Record, m *runner.Masker) (*diagnostics.Verdict, error) {
	rec := maskRecord(m, announced)
	added, err := r.records.Add(rec)
	if err != nil {
		return nil, err
	}
	if added.First {
		if err := r.primeEngine(ctx); err != nil {
			return nil, err
		}
	}
	r.result.Records, r.result.LastStep = r.records.Records(), r.records.LastStep()
	r.hb.Step, r.hb.TotalSteps = rec.Step, r.in.Trainer.TotalSteps
	if w, ok := r.records.Windowed(); ok && !math.IsNaN(w) && !math.IsInf(w, 0) {
		r.hb.Windowed = &w
		r.trendSeen++
		r.hb.addTrend(w, r.trendSeen, &r.trendEvery)
	}
	if r.rungs != nil {
		r.reportPasses(ctx, r.rungs.observe(rec, r.records.Windowed))
	}
	if r.engine != nil {
		switch v := r.engine.Observe(rec); v.Level {
		case diagnostics.Stop:
			return &v, nil
		case diagnostics.Warn:
			if r.result.Warnings == nil {
				r.result.Warnings = map[string]int{}
			}
			r.result.Warnings[v.Rule]++
		}
	}
	if announced.Checkpoint != "" {
		return nil, r.uploadCheckpoint(ctx, announced)
	}
	return nil, nil
}
