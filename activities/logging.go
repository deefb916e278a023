package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
)

// trialLogger is the activity's logger with the trial's sweep ID, trial ID, segment and attempt on
// every line, so an operator can tell which trial a warning is about.
func trialLogger(ctx context.Context, sweepID, trialID string, segment int, attempt int32) log.Logger {
	return log.With(activity.GetLogger(ctx), "sweep_id", sweepID, "trial_id", trialID, "segment", segment, "attempt", attempt)
}

// logger is the worker's logger for what happens outside an activity.
func (a *Activities) logger() log.Logger {
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

// logAttemptFailed logs an Error for a segment attempt that failed: its error type and message with
// the worker's secrets masked. A cancelled attempt is no failure: it logs at Info.
func (r *segmentRun) logAttemptFailed(ctx context.Context, err error) {
	if err == nil {
		return
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) || errors.Is(err, context.Canceled) && ctx.Err() != nil {
		r.log(ctx).Info("segment attempt cancelled", "step", r.result.LastStep)
		return
	}
	typ := "error"
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() != "" {
		typ = app.Type()
	}
	r.log(ctx).Error("segment attempt failed", "error_type", typ, "error", r.a.masker().MaskString(err.Error()))
}

// log is the segment's trialLogger.
func (r *segmentRun) log(ctx context.Context) log.Logger {
	return trialLogger(ctx, r.in.SweepID, r.in.Trial.ID, r.in.Segment, r.attempt)
}
