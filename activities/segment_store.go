package activities

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
)

// primeEngine reads the trial's stored metrics from before this attempt's first record — what earlier
// segments and attempts reported — so the rules judge this attempt against the trial's whole history
// (its initial action std, its starting objective), not against a fresh start.
func (r *segmentRun) primeEngine(ctx context.Context) error {
	if r.engine == nil {
		return nil
	}
	err := artifacts.ReadMetrics(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.records.FirstLine(), metrics.LineStep, func(line []byte, _ int64) error {
		if rec, err := metrics.ParseJSONLine(line); err == nil {
			r.engine.Observe(rec)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read stored metrics: %w", err)
	}
	return nil
}

// uploadCheckpoint copies an announced checkpoint — a file, or a directory stored as a tree under its
// key and announced by its manifest (artifacts.PutCheckpoint) — into the store and records it in the
// heartbeat, so a retry on any worker resumes from it. An announcement that cannot be stored as it is
// on disk (artifacts.OpenLocalCheckpoint) fails the attempt at once as the trainer's failure; only the
// store's errors are retried.
func (r *segmentRun) uploadCheckpoint(ctx context.Context, rec metrics.Record) error {
	c, err := artifacts.OpenLocalCheckpoint(r.ckptDir, rec.Checkpoint)
	if err != nil {
		return err
	}
	// The checkpoint is the one the trainer named; its key, and every message about it, has the
	// worker's secrets masked (a masked name is a clean key too: "[secret NAME]" replaces part of a
	// segment).
	name := r.a.masker().MaskName(c.Name)
	if _, err := artifacts.CleanKey(name); err != nil {
		return &artifacts.CheckpointError{Name: name, Problem: "its name, the worker's secrets masked, is no store key: " + err.Error()}
	}
	key := artifacts.CheckpointKey(r.in.SweepID, r.in.Trial.ID, name)
	tree := fmt.Sprintf("step-%d-%s", rec.Step, randomHex(4)) // a directory's upload: a folder of its own
	// The metrics up to the checkpoint are stored before the heartbeat names it: a retry resumes after
	// the checkpoint and overrides the stored records from its own first step on, so lines that were
	// read but not yet flushed (flushes are 30 s apart) would otherwise be missing from the stream for good.
	// The trainer trains on while the store is away; the attempt fails (and a retry resumes from the
	// checkpoint before) only when it stays away past the retry budget.
	_, err = retryStore(ctx, r.a, "store checkpoint "+name, func() (struct{}, error) {
		if err := artifacts.PutCheckpoint(ctx, r.a.Store, key, c, tree); err != nil {
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

// localFault tells whether err is one no retry of a store operation can change: the object is not
// stored, or an announced checkpoint cannot be read on disk (artifacts.CheckpointError).
func localFault(err error) bool {
	var ce *artifacts.CheckpointError
	return errors.Is(err, artifacts.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.As(err, &ce)
}

// checkpointFailed is the error of an attempt whose trainer announced a checkpoint that cannot be
// stored: the trainer's failure (retries.max_attempts), naming the path and what a checkpoint may be.
func (r *segmentRun) checkpointFailed(ce *artifacts.CheckpointError) error {
	msg := fmt.Sprintf("trial %s: the trainer announced a checkpoint that cannot be stored: %s (at step %d); %s (%s=%s)",
		r.in.Trial.ID, ce.Error(), r.records.LastStep(), artifacts.CheckpointRule, trainer.EnvCheckpointDir, r.ckptDir)
	return r.trainerFailed(ErrCheckpointUnreadable, r.a.masker().MaskString(msg))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return hex.EncodeToString(b)
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
		if r.partAttempt, err = artifacts.MetricsAttempt(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.in.Segment, r.ledger.attempt); err != nil {
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
