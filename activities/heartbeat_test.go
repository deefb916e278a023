package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// The SDK ends an activity's context with a cause: only the causes that end the attempt stop the work;
// a heartbeat that could not be delivered (the server away or slow) does not.
func TestEndsAttempt(t *testing.T) {
	tests := []struct {
		cause error
		want  bool
	}{
		{temporal.NewCanceledError(), true},
		{serviceerror.NewNotFound("workflow execution already completed"), true},
		{serviceerror.NewNamespaceNotActive("default", "a", "b"), true},
		{activity.ErrActivityPaused, true},
		{activity.ErrActivityReset, true},
		{worker.ErrWorkerShutdown, true},
		{context.Canceled, true},
		{serviceerror.NewUnavailable("connection refused"), false},
		{serviceerror.NewDeadlineExceeded("context deadline exceeded"), false},
		{context.DeadlineExceeded, false},
		{serviceerror.NewResourceExhausted(0, "busy"), false},
		{fmt.Errorf("rpc error: %w", errors.New("transport is closing")), false},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(tt.cause)
		if got := endsAttempt(ctx); got != tt.want {
			t.Errorf("endsAttempt(cause %T %v) = %v, want %v", tt.cause, tt.cause, got, tt.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	if !endsAttempt(ctx) {
		t.Error("endsAttempt(a context past its deadline) = false, want true: the activity's StartToClose passed")
	}
}

// The live view's trend spans the whole segment in at most TrendPoints values: 1,000 records leave
// fewer than TrendPoints points, the first record's among them and the latest ones near the end.
func TestHeartbeatTrendSpansTheSegment(t *testing.T) {
	var hb Heartbeat
	every := 0
	for n := 1; n <= 1000; n++ {
		hb.addTrend(float64(n), n, &every)
	}
	if len(hb.Trend) == 0 || len(hb.Trend) >= TrendPoints {
		t.Fatalf("%d trend points, want 1…%d", len(hb.Trend), TrendPoints-1)
	}
	if hb.Trend[0] != 1 || hb.Trend[len(hb.Trend)-1] < 900 {
		t.Errorf("trend %v, want it to start at the first record and reach past 900", hb.Trend)
	}
	for i := 1; i < len(hb.Trend); i++ {
		if hb.Trend[i] <= hb.Trend[i-1] {
			t.Errorf("trend %v is not in record order", hb.Trend)
			break
		}
	}
}

// TestResultAfterAnAnswerAsksNoHealthCheck: before a segment hands in its result, the server is asked
// whether it answers (a health check) unless it answered a request of the attempt's within the last
// second, such as the hand-off's signal as the trainer exited.
func TestResultAfterAnAnswerAsksNoHealthCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answered time.Duration // how long ago; 0: never
		checks   int
	}{
		{"no answer seen", 0, 1},
		{"answered just now", 10 * time.Millisecond, 0},
		{"answered over a second ago", 1500 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := 0
			b := &beats{send: func(context.Context, Heartbeat) error { return nil },
				health: func(context.Context) error { checks++; return nil }, sdk: context.Background()}
			if tc.answered > 0 {
				b.answered = time.Now().Add(-tc.answered)
			}
			b.awaitServer(context.Background())
			if checks != tc.checks {
				t.Errorf("%d health checks, want %d", checks, tc.checks)
			}
		})
	}
}
