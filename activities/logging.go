package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Logger is what the activities log with: the Temporal SDK's log.Logger satisfies it.
type Logger interface {
	Debug(msg string, keyvals ...any)
	Info(msg string, keyvals ...any)
	Warn(msg string, keyvals ...any)
	Error(msg string, keyvals ...any)
}

// trialLogger is the activity's logger with the trial's sweep ID, trial ID, segment and attempt on
// every line, so an operator can tell which trial a warning is about.
func trialLogger(ctx context.Context, sweepID, trialID string, segment int, attempt int32) Logger {
	if !activity.IsActivity(ctx) {
		return discard{}
	}
	return withKeys{activity.GetLogger(ctx), []any{"sweep_id", sweepID, "trial_id", trialID, "segment", segment, "attempt", attempt}}
}

type trialLogKey struct{}

// withTrialLog returns ctx carrying the segment attempt's trialLogger, which activityLog returns for
// ctx and every context derived from it.
func withTrialLog(ctx context.Context, in SegmentInput) context.Context {
	var attempt int32
	if activity.IsActivity(ctx) {
		attempt = activity.GetInfo(ctx).Attempt
	}
	return context.WithValue(ctx, trialLogKey{}, trialLogger(ctx, in.SweepID, in.Trial.ID, in.Segment, attempt))
}

// activityLog is what an activity logs with: the trial's logger when ctx carries one (withTrialLog),
// else the SDK's activity logger (nothing outside an activity).
func activityLog(ctx context.Context) Logger {
	if l, ok := ctx.Value(trialLogKey{}).(Logger); ok {
		return l
	}
	if !activity.IsActivity(ctx) {
		return discard{}
	}
	return activity.GetLogger(ctx)
}

// withKeys adds its key-value pairs to every line.
type withKeys struct {
	l    Logger
	keys []any
}

func (w withKeys) with(kv []any) []any { return append(append([]any(nil), w.keys...), kv...) }

func (w withKeys) Debug(msg string, kv ...any) { w.l.Debug(msg, w.with(kv)...) }
func (w withKeys) Info(msg string, kv ...any)  { w.l.Info(msg, w.with(kv)...) }
func (w withKeys) Warn(msg string, kv ...any)  { w.l.Warn(msg, w.with(kv)...) }
func (w withKeys) Error(msg string, kv ...any) { w.l.Error(msg, w.with(kv)...) }

// logger is the worker's logger for what happens outside an activity.
func (a *Activities) logger() Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return discard{}
}

type discard struct{}

func (discard) Debug(string, ...any) {}
func (discard) Info(string, ...any)  {}
func (discard) Warn(string, ...any)  {}
func (discard) Error(string, ...any) {}

// logAttemptFailed logs an Error for a segment attempt that failed, whatever failed it (the trainer,
// preparing the segment, the infrastructure retries spent): its error type and message with the
// worker's secrets masked. A cancelled attempt is no failure: it logs at Info, with the step it reached
// when it trained (run, nil when none did).
func (a *Activities) logAttemptFailed(ctx context.Context, run *segmentRun, err error) {
	if err == nil {
		return
	}
	log := activityLog(ctx)
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) || errors.Is(err, context.Canceled) && ctx.Err() != nil {
		kv := []any{}
		if run != nil {
			kv = append(kv, "step", run.result.LastStep)
		}
		log.Info("segment attempt cancelled", kv...)
		return
	}
	typ := "error"
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() != "" {
		typ = app.Type()
	}
	log.Error("segment attempt failed", "error_type", typ, "error", a.masker().MaskString(err.Error()))
}

// log is the segment's logger: its trialLogger.
func (r *segmentRun) log(ctx context.Context) Logger {
	if l, ok := ctx.Value(trialLogKey{}).(Logger); ok {
		return l
	}
	return trialLogger(ctx, r.in.SweepID, r.in.Trial.ID, r.in.Segment, r.ledger.attempt)
}
