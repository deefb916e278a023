package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rlsweep/rlsweep/worker"
)

// The SDK's lines for what the activities log themselves, or for an expected cancellation, go to
// Debug; every other warning and error stays as it was. The lines are written as the SDK writes them:
// its keys (ActivityType, Error), the activity logger's tags added by With.
func TestLoggerLowersOnlyExpectedLines(t *testing.T) {
	crash := temporal.NewApplicationError("trial 0-s1: trainer exited with status 2", "TrainerCrashed")
	for _, tt := range []struct {
		name  string
		log   func(l log.Logger)
		level string // "" when nothing is written at Info or above
	}{
		{"TrainSegment's failure, logged by the activity", func(l log.Logger) {
			l.Error("Activity error.", "WorkflowID", "sweep/a/1/trial/0-s1", "ActivityType", "TrainSegment", "Attempt", 1, "Error", crash)
		}, ""},
		{"TrainSegment cancelled (a prune)", func(l log.Logger) {
			l.Error("Activity error.", "ActivityType", "TrainSegment", "Error", temporal.NewCanceledError())
		}, ""},
		{"a probe cancelled with its sweep", func(l log.Logger) {
			l.Error("Activity error.", "ActivityType", "RunProbe", "Error", fmt.Errorf("probe: %w", context.Canceled))
		}, ""},
		{"another activity's failure", func(l log.Logger) {
			l.Error("Activity error.", "ActivityType", "WriteResults", "Error", errors.New("store: access denied"))
		}, "ERROR"},
		{"heartbeat answered: cancel requested", func(l log.Logger) {
			log.With(l, "ActivityType", "TrainSegment", "Attempt", 1).Warn("RecordActivityHeartbeat with error",
				"Error", temporal.NewCanceledError())
		}, ""},
		{"heartbeat of an ended attempt (gRPC status)", func(l log.Logger) {
			log.With(l, "ActivityType", "TrainSegment", "Attempt", 1).Warn("RecordActivityHeartbeat with error",
				"Error", status.Error(codes.Canceled, "context canceled"))
		}, ""},
		{"heartbeat of an ended attempt (serviceerror)", func(l log.Logger) {
			log.With(l, "ActivityType", "RunProbe").Warn("RecordActivityHeartbeat with error", "Error", serviceerror.NewCanceled("context canceled"))
		}, ""},
		{"heartbeat to an unreachable server", func(l log.Logger) {
			log.With(l, "ActivityType", "TrainSegment").Warn("RecordActivityHeartbeat with error",
				"Error", serviceerror.NewUnavailable("connection refused"))
		}, "WARN"},
		{"the activity's own failure line", func(l log.Logger) {
			log.With(l, "ActivityType", "TrainSegment").Error("segment attempt failed", "error_type", "TrainerCrashed", "error", "boom")
		}, "ERROR"},
		{"a workflow's warning", func(l log.Logger) {
			l.Warn("search attributes not updated", "Error", context.Canceled)
		}, "WARN"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := worker.Logger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			tt.log(l)
			out := buf.String()
			if strings.Count(out, "\n") != 1 {
				t.Fatalf("wrote %q, want one line", out)
			}
			want := "level=DEBUG"
			if tt.level != "" {
				want = "level=" + tt.level
			}
			if !strings.Contains(out, want) {
				t.Errorf("wrote %q, want it at %s", out, want)
			}
			if !strings.Contains(out, "ActivityType=") && strings.Contains(tt.name, "heartbeat") {
				t.Errorf("wrote %q, want the With pairs kept", out)
			}
		})
	}
}
