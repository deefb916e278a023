package activities

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// resumeCheckpoint downloads the checkpoint this attempt resumes from — the last one a previous attempt
// heartbeated, else the one the workflow handed over — into the checkpoint directory and returns its
// local path ("" for none): a file, or the directory a directory checkpoint was.
func (r *segmentRun) resumeCheckpoint(ctx context.Context, prev Heartbeat) (string, error) {
	// The counts of earlier attempts, and whether one saw the objective, go on; the step and checkpoint
	// are the previous attempt's only when it got to a checkpoint.
	r.hb.TrainerFailures, r.hb.Retrained, r.hb.ObjectiveSeen = prev.TrainerFailures, prev.Retrained, prev.ObjectiveSeen
	if prev.CheckpointKey != "" {
		r.hb = prev
	}
	choice := newResumeChoice(r.in, prev)
	if r.ledger.retry() {
		p, err := retryStore(ctx, r.a, "read the resume point", func() (*sweepstore.ResumePoint, error) { return r.loadResumePoint(ctx) })
		if err != nil {
			return "", err
		}
		choice.stored = p
	}
	from := choice.choose()
	if from.stored {
		r.hb.CheckpointKey, r.hb.CheckpointStep = choice.stored.Key, choice.stored.Step
	}
	key := from.key
	if key == "" {
		return "", nil
	}
	// The resume point is this attempt's result until it writes a record of its own; one that resumes
	// at or past the segment's end writes none.
	r.resumedAt = from.step
	r.result.CheckpointKey, r.result.LastStep = key, r.resumedAt
	// Restored into the checkpoint directory under its own name: a file, or a directory checkpoint as
	// the directory it was (artifacts.GetCheckpoint), only once its manifest is stored.
	local := filepath.Join(r.ckptDir, path.Base(key))
	if _, err := retryStore(ctx, r.a, "download the resume checkpoint", func() (bool, error) {
		return artifacts.GetCheckpoint(ctx, r.a.Store, key, local)
	}); err != nil {
		return "", fmt.Errorf("resume checkpoint %s: %w", key, err)
	}
	r.result.ResumedFrom = key
	r.hb.CheckpointKey = key
	return local, nil
}

// countRetrained adds to the details what the previous attempt trained past the step this attempt
// resumes from (the work a retry trains again), and makes that resume step the details' step. How far
// the previous attempt got is the later of its last heartbeated step and the last step of the metrics
// it stored (previousReach): an attempt cut off from the Temporal server, or killed between two
// heartbeats, trained and stored records its heartbeats never told.
func (r *segmentRun) countRetrained(ctx context.Context, prev Heartbeat) {
	from := r.resumedAt
	if r.ledger.retry() {
		r.ledger = r.ledger.resumed(from, max(prev.Step, r.previousReach(ctx)))
		r.hb.Retrained = r.ledger.retrained
	}
	r.hb.Step = from
}

// previousReach is the last step the metrics of the previous attempt of this segment hold: those of the
// latest attempt that stored any, unless that is older than the previous one (which stored none; what
// the older one trained was counted when the previous one started). 0 when unknown.
func (r *segmentRun) previousReach(ctx context.Context) int64 {
	attempt, last, err := artifacts.LastAttemptReach(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.in.Segment, metrics.LineStep)
	if err != nil {
		r.log(ctx).Warn("reading how far the previous attempt got failed; the steps it trained again count from its last heartbeat", "error", err)
		return 0
	}
	if attempt < r.ledger.attempt-1 {
		return 0
	}
	return last
}

// storeResumePoint records the segment's last uploaded checkpoint in resume.json (sweepstore.ResumePoint).
func (r *segmentRun) storeResumePoint(ctx context.Context, key string, step int64) error {
	return r.a.sweepStore().WriteResumePoint(ctx, r.in.SweepID, r.in.Trial.ID, sweepstore.ResumePoint{Segment: r.in.Segment, Step: step, Key: key})
}

// loadResumePoint reads resume.json; nil when there is none or it is unreadable (the heartbeat then decides).
func (r *segmentRun) loadResumePoint(ctx context.Context) (*sweepstore.ResumePoint, error) {
	p, err := r.a.sweepStore().ReadResumePoint(ctx, r.in.SweepID, r.in.Trial.ID)
	if errors.Is(err, artifacts.ErrNotFound) || errors.Is(err, sweepstore.ErrMalformed) || err == nil && p.Key == "" {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resume point: %w", err)
	}
	if _, err := artifacts.CleanKey(p.Key); err != nil {
		return nil, nil
	}
	return p, nil
}

// lastStoredRecord takes the last metrics and the objective of a segment whose attempt wrote no record
// of its own (it resumed from an earlier attempt's checkpoint at the segment's end) from the trial's
// stored metrics at or below the step it resumed from.
func (r *segmentRun) lastStoredRecord(ctx context.Context) error {
	var last []byte
	err := artifacts.ReadMetrics(ctx, r.a.Store, r.in.SweepID, r.in.Trial.ID, r.result.LastStep+1, metrics.LineStep, func(line []byte, _ int64) error {
		last = append(last[:0], line...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read stored metrics: %w", err)
	}
	rec, err := metrics.ParseJSONLine(last)
	if err != nil {
		return nil // nothing stored: the result keeps the step and the checkpoint
	}
	r.records.Take(rec)
	return nil
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
