package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer"
)

// heartbeatEvery bounds how often a running segment records a heartbeat; the SDK throttles further.
const heartbeatEvery = time.Second

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
func (a *Activities) TrainSegment(ctx context.Context, in SegmentInput) (*SegmentResult, error) {
	ctx = withTrialLog(ctx, in) // every line it logs names the trial
	var prev Heartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &prev)
	}
	work, b := startBeats(ctx, heartbeatEvery, prev)
	defer b.stop()
	if err := infraBound(ctx, in, prev); err != nil {
		return nil, err
	}
	run, release, err := a.prepareAndTakePlace(work, in, prev, b)
	if err != nil {
		return nil, err
	}
	defer run.close()
	defer release() // frees the GPUs or place before the scratch directory is cleaned up
	res, err := run.run(work)
	if err != nil && !temporal.IsCanceledError(err) {
		b.final(run.hb) // how far it got and the failures so far, for the next attempt
	}
	run.logAttemptFailed(work, err)
	return res, err
}

// infraBound fails the segment for good once more of its attempts than in.MaxInfraRetries ended by
// faults outside the trainer: the attempts before this one that the trainer did not fail.
func infraBound(ctx context.Context, in SegmentInput, prev Heartbeat) error {
	if !activity.IsActivity(ctx) || in.MaxInfraRetries <= 0 {
		return nil
	}
	infra := int(activity.GetInfo(ctx).Attempt) - 1 - prev.TrainerFailures
	if infra <= in.MaxInfraRetries {
		return nil
	}
	msg := fmt.Sprintf("trial %s: segment %d: %d attempts were ended by faults outside the trainer (its worker died or was stopped, the Temporal server or the store was unreachable), more than retries.max_infra_retries (%d); the worker logs say why",
		in.Trial.ID, in.Segment, infra, in.MaxInfraRetries)
	return temporal.NewNonRetryableApplicationError(msg, ErrInfraRetries, nil, prev)
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
		// A trial that asks for no GPU sees none; one that asks for several sees them all.
		gpus, err := a.Slots.AcquireN(ctx, in.gpuCount())
		if err != nil {
			run.close()
			return nil, nil, err
		}
		run.process.CUDADevices = strings.Join(gpus, ",")
		run.env = run.process.Env(os.Environ(), in.Trainer.Environment)
		return run, func() { a.Slots.Release(gpus...) }, nil
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
	attempt int32
	dir     string // scratch directory of this attempt
	scratch *scratch
	ckptDir string
	metrics string // the file the trainer appends to
	tbDir   string
	logPath string
	canon   *os.File // the records as read, in canonical JSON lines: what the metrics parts store
	reader  trainer.Reader
	engine  *diagnostics.Engine // nil when diagnostics are off
	// records: the records this attempt took in (their canonical lines go to canon).
	records *runner.SegmentLog
	hb      Heartbeat
	result  SegmentResult
	beats   *beats
	started time.Time
	// flushed: how many bytes of this attempt's records the stored metrics parts already hold.
	flushed int64
	// parts: how many metrics parts this attempt has stored; the next one's seq.
	parts int
	// partAttempt: the attempt number its metrics parts carry (artifacts.MetricsAttempt); 0 until the
	// first part is stored.
	partAttempt int32
	// resumedAt: the step of the checkpoint this attempt resumed from; 0 for a fresh start.
	resumedAt int64
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
	if in.Trainer.Metrics.Source == trainer.SourceCSV {
		// SB3's logger writes progress.csv into the directory it is configured with: the trainer's
		// working directory, or the directory of RLSWEEP_METRICS_FILE.
		metricsName = "progress.csv"
	}
	r := &segmentRun{a: a, in: in, dir: dir, scratch: sc, attempt: info.Attempt, ckptDir: filepath.Join(dir, "checkpoints"),
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
	r.reader, err = trainer.Open(trainer.ReaderConfig{Source: m.Source, Preset: m.Preset, Tags: m.Tags,
		StepsPerIteration: m.StepsPerIteration, MetricsFile: r.metrics, TBDir: r.tbDir, StdoutFile: r.logPath})
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
	r.countRetrained(prev)
	r.records = runner.NewSegmentLog(r.canon, in.Metric, r.resumedAt)
	r.argv, err = r.command(resume)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	r.process = r.contract(resume)
	r.env = r.process.Env(os.Environ(), in.Trainer.Environment)
	return r, nil
}

// resumeCheckpoint downloads the checkpoint this attempt resumes from — the last one a previous attempt
// heartbeated, else the one the workflow handed over — and returns its local path ("" for none).
func (r *segmentRun) resumeCheckpoint(ctx context.Context, prev Heartbeat) (string, error) {
	key := r.in.ResumeFrom
	// The counts of earlier attempts go on; the step and checkpoint are the previous attempt's only
	// when it got to a checkpoint.
	r.hb.TrainerFailures, r.hb.Retrained = prev.TrainerFailures, prev.Retrained
	if prev.CheckpointKey != "" {
		key = prev.CheckpointKey
		r.hb = prev
	}
	if r.attempt > 1 {
		// A resume point of this segment past its stop step is a checkpoint of the iteration that
		// crossed it (trainers finish the iteration they are in): the segment's work is done.
		p, err := retryStore(ctx, r.a, "read the resume point", func() (*resumePoint, error) { return r.loadResumePoint(ctx) })
		if err != nil {
			return "", err
		} else if p != nil && p.Segment == r.in.Segment && p.Step > r.hb.CheckpointStep {
			key, r.hb.CheckpointKey, r.hb.CheckpointStep = p.Key, p.Key, p.Step
		}
	}
	if key == "" {
		return "", nil
	}
	// The resume point is this attempt's result until it writes a record of its own; one that resumes
	// at or past the segment's end writes none. An earlier attempt of this segment got to its
	// heartbeat's checkpoint; the previous segment ended at ResumeStep (0 when it does not say: then the
	// segment's start).
	r.resumedAt = max(r.in.ResumeStep, r.in.StartStep)
	if key != r.in.ResumeFrom {
		r.resumedAt = r.hb.CheckpointStep
	}
	r.result.CheckpointKey, r.result.LastStep = key, r.resumedAt
	local := filepath.Join(r.dir, "resume", filepath.Base(key))
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return "", err
	}
	if _, err := retryStore(ctx, r.a, "download the resume checkpoint", func() (struct{}, error) {
		return struct{}{}, r.download(ctx, key, local)
	}); err != nil {
		return "", fmt.Errorf("resume checkpoint %s: %w", key, err)
	}
	r.result.ResumedFrom = key
	r.hb.CheckpointKey = key
	return local, nil
}

// download copies the stored object key to the local file path.
func (r *segmentRun) download(ctx context.Context, key, path string) error {
	rc, err := r.a.Store.Get(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.ReadFrom(rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countRetrained adds to the details what the previous attempt trained past the step this attempt
// resumes from (its last heartbeated step: the work a retry trains again), and makes that resume step
// the details' step.
func (r *segmentRun) countRetrained(prev Heartbeat) {
	from := r.resumedAt
	if r.attempt > 1 && prev.Step > from {
		r.hb.Retrained += prev.Step - from
	}
	r.hb.Step = from
}

// resumePoint is what resume.json, beside a trial's checkpoints, records: the segment's last uploaded
// checkpoint. The SDK sends heartbeats at most once a second, so a worker that dies within a second of
// an upload takes the heartbeat naming it along; the store keeps it, and the retry resumes from it.
type resumePoint struct {
	Segment int    `json:"segment"`
	Step    int64  `json:"step"`
	Key     string `json:"key"`
}

func (r *segmentRun) storeResumePoint(ctx context.Context, key string, step int64) error {
	b, _ := json.Marshal(resumePoint{Segment: r.in.Segment, Step: step, Key: key}) // cannot fail
	return putBytes(ctx, r.a.Store, artifacts.ResumePointKey(r.in.SweepID, r.in.Trial.ID), b)
}

// loadResumePoint reads resume.json; nil when there is none or it is unreadable (the heartbeat then decides).
func (r *segmentRun) loadResumePoint(ctx context.Context) (*resumePoint, error) {
	rc, err := r.a.Store.Get(ctx, artifacts.ResumePointKey(r.in.SweepID, r.in.Trial.ID))
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resume point: %w", err)
	}
	defer rc.Close()
	var p resumePoint
	if err := json.NewDecoder(rc).Decode(&p); err != nil || p.Key == "" {
		return nil, nil
	}
	if _, err := artifacts.CleanKey(p.Key); err != nil {
		return nil, nil
	}
	return &p, nil
}

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
		TotalSteps: r.in.Trainer.TotalSteps, ResumeFrom: resume}
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
	p, err := runner.Start(r.argv, r.env, r.dir, logFile)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	tick := time.NewTicker(r.a.pollInterval())
	defer tick.Stop()
	lastRecord, lastFlush := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			r.stopTrainer(ctx, p)
			// Read and upload what the trainer wrote on SIGTERM (its final checkpoint) despite the
			// cancellation, so the next attempt can resume from it.
			done := context.WithoutCancel(ctx)
			r.pollFinal(done)
			r.flush(done)
			// The step its records reached goes back with the cancellation: the Trial workflow
			// reports it as the cancelled trial's steps.
			r.result.WallSeconds = time.Since(r.started).Seconds()
			r.result.Malformed = r.reader.Stats().Malformed
			r.takeLog()
			return nil, temporal.NewCanceledError(r.result)
		case <-workerStop:
			// The worker is shutting down: the trainer gets its grace period to checkpoint (the worker
			// waits for it, --stop-timeout), what it wrote is stored, and another attempt resumes.
			r.stopTrainer(ctx, p)
			r.pollFinal(ctx)
			if err := r.flush(ctx); err != nil {
				r.log(ctx).Warn("storing metrics at worker shutdown failed", "error", err)
			}
			msg := fmt.Sprintf("trial %s: the worker shut down at step %d; the trainer was stopped and the next attempt resumes from %s",
				r.in.Trial.ID, r.result.LastStep, orStart(r.hb.CheckpointKey))
			return nil, temporal.NewApplicationError(msg, ErrWorkerStopping, r.hb)
		case <-p.Done():
			// Most segments end here, the trainer having written its last records since the last
			// tick: a failure to take them in (reading, storing a checkpoint) fails the attempt, to be
			// retried, rather than pass for a segment whose records were never stored.
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
		case now := <-tick.C:
			n, verdict, err := r.poll(ctx)
			if err != nil {
				r.stopTrainer(ctx, p)
				return nil, r.failed(err)
			}
			if verdict != nil {
				detected := time.Now()
				r.stopTrainer(ctx, p)
				killed := time.Now()
				r.flush(ctx)
				return nil, r.diverged(ctx, *verdict, detected, killed)
			}
			if n > 0 {
				lastRecord = now
			}
			r.beats.set(r.hb)
			if st := stallTimeout(r.in); st > 0 && now.Sub(lastRecord) > st {
				r.stopTrainer(ctx, p)
				r.flush(ctx)
				msg := fmt.Sprintf("trial %s: no metrics record for %s (last step %d); log tail:\n%s",
					r.in.Trial.ID, st, r.result.LastStep, runner.TailFile(r.logPath, 2048, r.a.masker()))
				return nil, r.trainerFailed(ErrTrialStalled, msg)
			}
			if now.Sub(lastFlush) >= r.a.flushInterval() {
				if err := r.flush(ctx); err != nil {
					r.log(ctx).Warn("flushing metrics failed; will retry", "error", err)
				}
				lastFlush = now
			}
		}
	}
}

func orStart(checkpoint string) string {
	if checkpoint == "" {
		return "the segment's start"
	}
	return checkpoint
}

// lastStoredRecord takes the last metrics and the objective of a segment whose attempt wrote no record
// of its own (it resumed from an earlier attempt's checkpoint at the segment's end) from the trial's
// stored metrics at or below the step it resumed from.
func (r *segmentRun) lastStoredRecord(ctx context.Context) error {
	var last []byte
	err := artifacts.ReadMetrics(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.result.LastStep+1, func(line []byte, _ int64) error {
		last = append(last[:0], line...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read stored metrics: %w", err)
	}
	rec, err := trainer.ParseJSONLine(last)
	if err != nil {
		return nil // nothing stored: the result keeps the step and the checkpoint
	}
	r.records.Take(rec)
	return nil
}

// stopTrainer stops the trainer (SIGTERM, the grace period, SIGKILL). The heartbeats (beats) go on
// meanwhile: a grace period as long as the heartbeat timeout would otherwise let the server time the
// attempt out and start a retry beside the trainer still shutting down — for a diverged trial, a retry
// of what must never be retried.
func (r *segmentRun) stopTrainer(_ context.Context, p *runner.Process) {
	r.beats.set(r.hb)
	p.Stop(r.in.Trainer.GracePeriod)
}

// poll reads the records that arrived since the last call and returns how many there were, and the
// stop verdict if a record fired a stop rule (the records after it are not looked at).
func (r *segmentRun) poll(ctx context.Context) (int, *diagnostics.Verdict, error) {
	return r.pollRecords(ctx, false)
}

// pollFinal is poll once the trainer has exited: a reader holding back a record it could not yet
// tell was whole (trainer.Finisher) gives it up too.
func (r *segmentRun) pollFinal(ctx context.Context) (int, *diagnostics.Verdict, error) {
	return r.pollRecords(ctx, true)
}

func (r *segmentRun) pollRecords(ctx context.Context, final bool) (int, *diagnostics.Verdict, error) {
	recs, err := r.reader.Poll()
	if err != nil {
		return 0, nil, &trainerFault{fmt.Errorf("read metrics: %w", err)}
	}
	if final {
		if f, ok := r.reader.(trainer.Finisher); ok {
			recs = append(recs, f.Finish()...)
		}
	}
	for i, rec := range recs {
		v, err := r.observe(ctx, rec)
		if err != nil || v != nil {
			return i + 1, v, err
		}
	}
	return len(recs), nil, nil
}

// observe takes in one record: the rules judge it, it is appended to the canonical metrics, and its
// checkpoint is uploaded unless the record fired a stop rule (the last healthy checkpoint stays the
// one before).
func (r *segmentRun) observe(ctx context.Context, rec diagnostics.Record) (*diagnostics.Verdict, error) {
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
	r.hb.Step = rec.Step
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
	if rec.Checkpoint != "" {
		return nil, r.uploadCheckpoint(ctx, rec)
	}
	return nil, nil
}

// primeEngine reads the trial's stored metrics from before this attempt's first record — what earlier
// segments and attempts reported — so the rules judge this attempt against the trial's whole history
// (its initial action std, its starting objective), not against a fresh start.
func (r *segmentRun) primeEngine(ctx context.Context) error {
	if r.engine == nil {
		return nil
	}
	err := artifacts.ReadMetrics(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.records.FirstLine(), func(line []byte, _ int64) error {
		if rec, err := trainer.ParseJSONLine(line); err == nil {
			r.engine.Observe(rec)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read stored metrics: %w", err)
	}
	return nil
}

// uploadCheckpoint copies an announced checkpoint into the store and records it in the heartbeat, so
// a retry on any worker resumes from it.
func (r *segmentRun) uploadCheckpoint(ctx context.Context, rec diagnostics.Record) error {
	rel, err := artifacts.CleanKey(rec.Checkpoint)
	if err != nil {
		r.log(ctx).Warn("ignoring checkpoint announcement", "error", err)
		return nil
	}
	path := filepath.Join(r.ckptDir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		r.log(ctx).Warn("announced checkpoint is not on disk", "checkpoint", rel, "error", err)
		return nil
	}
	key := artifacts.CheckpointKey(r.in.SweepID, r.in.Trial.ID, rel)
	// The metrics up to the checkpoint are stored before the heartbeat names it: a retry resumes after
	// the checkpoint and overrides the stored records from its own first step on, so lines that were
	// read but not yet flushed (flushes are 30 s apart) would otherwise be missing from the stream for good.
	// The trainer trains on while the store is away; the attempt fails (and a retry resumes from the
	// checkpoint before) only when it stays away past the retry budget.
	_, err = retryStore(ctx, r.a, "store checkpoint "+rel, func() (struct{}, error) {
		f, err := os.Open(path)
		if err != nil {
			return struct{}{}, err
		}
		defer f.Close()
		if err := r.a.Store.Put(ctx, key, f); err != nil {
			return struct{}{}, fmt.Errorf("upload checkpoint: %w", err)
		}
		if err := r.flushMetrics(ctx); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, r.storeResumePoint(ctx, key, rec.Step)
	})
	if err != nil {
		return err
	}
	r.hb.CheckpointKey, r.hb.CheckpointStep = key, rec.Step
	r.result.CheckpointKey = key
	r.beats.set(r.hb)
	return nil
}

// flush stores the records read since the last flush as a metrics part, and what stdout.log gained
// as a log part (uploadLog): each byte is uploaded once, read from the file a section at a time.
func (r *segmentRun) flush(ctx context.Context) error {
	if err := r.flushMetrics(ctx); err != nil {
		return err
	}
	err := uploadLog(ctx, r.a.Store, r.scratch)
	if st := r.scratch.state; st.LogAttempt != 0 {
		// One log per attempt: a retry never overwrites the log of the attempt that crashed.
		r.result.LogKey = artifacts.LogDir(r.in.SweepID, r.in.Trial.ID, r.in.Segment, st.LogAttempt)
	}
	return err
}

// flushMetrics stores the records this attempt read since its previous flush as its next metrics part
// (artifacts.MetricsPartKey): each record is uploaded once. Readers merge the parts into one stream
// in which this attempt's records replace what earlier attempts stored from its first step on, so a
// resumed trial has no duplicate and no missing step (artifacts.ReadMetrics).
func (r *segmentRun) flushMetrics(ctx context.Context) error {
	r.result.MetricsKey = artifacts.MetricsDir(r.in.SweepID, r.in.Trial.ID)
	f, err := os.Open(r.canon.Name())
	if err != nil {
		return fmt.Errorf("read metrics: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read metrics: %w", err)
	}
	size := st.Size()
	if size == r.flushed {
		return nil // nothing new since the last flush (a checkpoint's upload stored it)
	}
	if r.partAttempt == 0 { // once: a retried first Put that did store its part must not bump the number again
		if r.partAttempt, err = artifacts.MetricsAttempt(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.in.Segment, r.attempt); err != nil {
			return err
		}
	}
	key := artifacts.MetricsPartKey(r.in.SweepID, r.in.Trial.ID, r.in.Segment, r.partAttempt, r.parts)
	if err := r.a.Store.Put(ctx, key, io.NewSectionReader(f, r.flushed, size-r.flushed)); err != nil {
		return err
	}
	r.flushed = size
	r.parts++
	return nil
}

// finish turns the trainer's exit into the segment's result or a retryable crash.
func (r *segmentRun) finish(p *runner.Process) (*SegmentResult, error) {
	r.result.WallSeconds = time.Since(r.started).Seconds()
	st := r.reader.Stats()
	r.result.Malformed = st.Malformed
	r.takeLog()
	if code := p.ExitCode(); code != 0 {
		msg := fmt.Sprintf("trial %s: trainer exited with status %d at step %d; log tail:\n%s",
			r.in.Trial.ID, code, r.result.LastStep, runner.TailFile(r.logPath, 2048, r.a.masker()))
		return nil, r.trainerFailed(ErrTrainerCrashed, msg)
	}
	r.result.SegmentWarning = r.segmentWarning()
	r.account()
	return &r.result, nil
}

// resumedPastEnd is the result of an attempt that resumes from a checkpoint at or past the segment's
// end: the step and checkpoint it resumed from, and the last stored metrics.
func (r *segmentRun) resumedPastEnd(ctx context.Context) (*SegmentResult, error) {
	if _, err := retryStore(ctx, r.a, "read the stored metrics", func() (struct{}, error) {
		return struct{}{}, r.lastStoredRecord(ctx)
	}); err != nil {
		return nil, err
	}
	r.result.MetricsKey = artifacts.MetricsDir(r.in.SweepID, r.in.Trial.ID)
	r.result.WallSeconds = time.Since(r.started).Seconds()
	r.takeLog()
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
	} else {
		r.result.MetricMissing = r.records.MissingMetric()
	}
}

// account puts the attempts' counts and the server outages the attempt rode out into the result.
func (r *segmentRun) account() {
	r.result.TrainerFailures, r.result.RetrainedSteps = r.hb.TrainerFailures, r.hb.Retrained
	r.result.InfraRetries = max(0, int(r.attempt)-1-r.hb.TrainerFailures)
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

// failed turns an error of the running attempt into its failure: a trainerFault counts against the
// trainer's failures, anything else (the store) is an infrastructure fault.
func (r *segmentRun) failed(err error) error {
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
	r.hb.TrainerFailures++
	if limit := r.in.MaxTrainerFailures; limit > 0 {
		msg += fmt.Sprintf("\n(trainer failure %d of at most %d, retries.max_attempts)", r.hb.TrainerFailures, limit)
		if r.hb.TrainerFailures >= limit {
			return temporal.NewNonRetryableApplicationError(msg, errType, nil, r.hb)
		}
	}
	return temporal.NewApplicationError(msg, errType, r.hb)
}

// segmentWarning judges how a segment other than the trial's last ended: a trainer that follows the
// contract stops at RLSWEEP_STOP_AT_STEP (or within the iteration that crosses it) with a checkpoint,
// and the next segment resumes from it. One that ran to total_steps ignored the stop step: the Trial
// workflow ends the trial there rather than run it again in every later segment. One that wrote no
// checkpoint makes the next segment start over.
func (r *segmentRun) segmentWarning() string {
	total, stop := r.in.Trainer.TotalSteps, r.in.StopAtStep
	if stop >= total {
		return ""
	}
	last := r.result.LastStep
	checkpointed := r.result.CheckpointKey != "" && r.result.CheckpointKey != r.in.ResumeFrom
	restart := "from the start"
	if r.in.ResumeFrom != "" {
		restart = "from " + r.in.ResumeFrom
	}
	const fix = "segment_steps needs a trainer that stops at RLSWEEP_STOP_AT_STEP with a checkpoint and resumes from RLSWEEP_RESUME_FROM (docs/trainer-contract.md)"
	switch {
	case last >= total:
		return fmt.Sprintf("segment %d: the trainer ran past %s=%d to step %d, its whole total_steps (%d): it ignores the stop step, so the trial ends here instead of re-running in every later segment; %s",
			r.in.Segment, trainer.EnvStopAtStep, stop, last, total, fix)
	case !checkpointed && last > stop:
		return fmt.Sprintf("segment %d: the trainer ran past %s=%d to step %d and wrote no checkpoint: the next segment re-runs it %s; %s",
			r.in.Segment, trainer.EnvStopAtStep, stop, last, restart, fix)
	case !checkpointed:
		return fmt.Sprintf("segment %d: the trainer stopped at step %d without writing a checkpoint: the next segment re-runs it %s; %s",
			r.in.Segment, last, restart, fix)
	}
	return ""
}
