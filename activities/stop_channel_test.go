package activities

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// announcements records what segment attempts told their workflow.
type announcements struct {
	mu  sync.Mutex
	got []SegmentStarted
	wf  []string
}

func (r *announcements) SegmentStarted(_ context.Context, workflowID, runID string, s SegmentStarted) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got, r.wf = append(r.got, s), append(r.wf, workflowID+"/"+runID)
	return nil
}

// A segment attempt announces its worker's stop queue and itself to its workflow; StopSegment for it
// heartbeats it at once, 44 s before its next periodic heartbeat (the defaults: a 2-minute heartbeat
// timeout, a 30 s grace period); once the attempt has ended StopSegment finds nothing to stop.
func TestStopSegmentHeartbeatsTheAnnouncedAttempt(t *testing.T) {
	ann := &announcements{}
	a := &Activities{StopQueue: "rlsweep-stop/host-a/1/ab", Announce: ann, AnnounceAfter: -1}
	var beats atomic.Int32
	type outcome struct {
		Every          time.Duration
		Found, Unknown bool
		BeatsAfterStop int32
	}
	segment := func(ctx context.Context) (outcome, error) {
		var o outcome
		o.Every = segmentHeartbeatEvery(ctx, 30*time.Second)
		_, b := startBeats(ctx, o.Every, Heartbeat{Step: 7}, 30*time.Second)
		defer b.stop()
		defer a.announceSegment(ctx, b, false)()
		ann.mu.Lock()
		key := ann.got[0].Attempt
		ann.mu.Unlock()
		var err error
		if o.Unknown, err = a.StopSegment(ctx, StopSegmentRequest{Attempt: key + "x"}); err != nil {
			return o, err
		}
		if o.Found, err = a.StopSegment(ctx, StopSegmentRequest{Attempt: key}); err != nil {
			return o, err
		}
		deadline := time.Now().Add(2 * time.Second)
		for beats.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		o.BeatsAfterStop = beats.Load()
		return o, nil
	}
	o := runSegmentActivity(t, segment, func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	if o.Every != 44*time.Second {
		t.Errorf("heartbeat interval %s, want 44s", o.Every)
	}
	if len(ann.got) != 1 || ann.got[0].StopQueue != "rlsweep-stop/host-a/1/ab" || ann.wf[0] != "default-test-workflow-id/default-test-run-id" {
		t.Fatalf("announcements %+v to %v, want one naming the stop queue, to the segment's workflow", ann.got, ann.wf)
	}
	if o.Unknown || !o.Found {
		t.Errorf("StopSegment found an unknown attempt: %v, the announced one: %v; want false, true", o.Unknown, o.Found)
	}
	if o.BeatsAfterStop < 1 {
		t.Errorf("no heartbeat within 2 s of StopSegment (interval %s)", o.Every)
	}
	if found, _ := a.StopSegment(context.Background(), StopSegmentRequest{Attempt: ann.got[0].Attempt}); found {
		t.Errorf("StopSegment found the attempt after it ended")
	}
}

// Without a stop queue nothing is announced and StopSegment finds nothing.
func TestNoStopQueueAnnouncesNothing(t *testing.T) {
	ann := &announcements{}
	a := &Activities{Announce: ann}
	unregister := a.announceSegment(context.Background(), nil, false)
	unregister()
	if len(ann.got) != 0 {
		t.Errorf("announced %+v without a stop queue", ann.got)
	}
}

// An attempt announces itself once it has run AnnounceAfter, from a goroutine, and one that ends
// sooner announces nothing; StopSegment finds the attempt before its announcement too.
func TestShortSegmentAnnouncesNothing(t *testing.T) {
	for _, c := range []struct {
		runs time.Duration
		want int
	}{{50 * time.Millisecond, 0}, {600 * time.Millisecond, 1}} {
		ann := &announcements{}
		a := &Activities{StopQueue: "rlsweep-stop/host-a/1/ab", Announce: ann, AnnounceAfter: 300 * time.Millisecond}
		segment := func(ctx context.Context) (bool, error) {
			_, b := startBeats(ctx, time.Minute, Heartbeat{Step: 7}, 2*time.Minute)
			defer b.stop()
			unregister := a.announceSegment(ctx, b, false)
			defer unregister()
			found, err := a.StopSegment(ctx, StopSegmentRequest{Attempt: segmentKey(activity.GetInfo(ctx))})
			time.Sleep(c.runs)
			return found, err
		}
		found := runSegmentActivity(t, segment, nil)
		time.Sleep(400 * time.Millisecond) // past the announcement's time, had the attempt gone on
		ann.mu.Lock()
		got := len(ann.got)
		ann.mu.Unlock()
		if got != c.want || !found {
			t.Errorf("attempt of %s: %d announcements, found by StopSegment %v; want %d, true", c.runs, got, found, c.want)
		}
	}
}

// runSegmentActivity runs segment as the one activity of a test workflow (a minute to run, a 2-minute
// heartbeat timeout, one attempt), beats told of its heartbeats when set, and returns its result.
func runSegmentActivity[T any](t *testing.T, segment func(context.Context) (T, error), beats func(*activity.Info, converter.EncodedValues)) T {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(segment, activity.RegisterOptions{Name: "segment"})
	if beats != nil {
		env.SetOnActivityHeartbeatListener(beats)
	}
	env.ExecuteWorkflow(func(ctx workflow.Context) (T, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			HeartbeatTimeout: 2 * time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		var out T
		err := workflow.ExecuteActivity(ctx, "segment").Get(ctx, &out)
		return out, err
	})
	var out T
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
