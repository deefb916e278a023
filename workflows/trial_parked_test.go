package workflows_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// parkedRun is what a standby trial of two segments did: its parked segment's input and queue, when
// each segment ran outside the parked one, and the StopSegment requests it sent.
type parkedRun struct {
	env    *testsuite.TestWorkflowEnvironment
	mu     sync.Mutex
	parked []activities.SegmentInput
	queue  string                // the queue it was parked on
	trials string                // the trial queue
	starts map[int]time.Duration // segment → when it started, not parked
	stops  []activities.StopSegmentRequest
	order  []string // "parked ended" and "segment 0 started", as they came
}

// parkedTrial runs a standby trial whose parked first segment does what park says: it may act on the
// trial (the test environment's clock stands still while an activity runs), and given the StopSegment
// requests the trial sends, it returns the segment's end. Signals are sent at the given times.
func parkedTrial(t *testing.T, park func(ctx context.Context, env *testsuite.TestWorkflowEnvironment, disarmed <-chan activities.StopSegmentRequest) (*activities.SegmentResult, error),
	signals map[time.Duration]func(*testsuite.TestWorkflowEnvironment)) *parkedRun {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	r := &parkedRun{env: s.NewTestWorkflowEnvironment(), starts: map[int]time.Duration{}}
	env := r.env
	start := env.Now()
	disarms := make(chan activities.StopSegmentRequest, 8)
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			r.mu.Lock()
			if in.Parked {
				r.parked, r.queue = append(r.parked, in), activity.GetInfo(ctx).TaskQueue
				r.mu.Unlock()
				res, err := park(ctx, env, disarms)
				r.mu.Lock()
				r.order = append(r.order, "parked ended")
				r.mu.Unlock()
				return res, err
			}
			if in.Segment == 0 {
				r.order = append(r.order, "segment 0 started")
			}
			r.starts[in.Segment] = env.Now().Sub(start)
			r.mu.Unlock()
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(1), HandedOff: in.HandOffTo != ""}, nil
		})
	env.OnActivity(acts.StopSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, req activities.StopSegmentRequest) (bool, error) {
			r.mu.Lock()
			r.stops = append(r.stops, req)
			r.mu.Unlock()
			disarms <- req
			return true, nil
		})
	schedule(env, signals, 0)
	in := standbyInput()
	r.trials = in.TaskQueue
	env.ExecuteWorkflow(workflows.Trial, in)
	return r
}

// parkedStops waits (in real time) for the StopSegment requests a trial sent after it returned.
func (r *parkedRun) parkedStops(want int) []activities.StopSegmentRequest {
	deadline := time.Now().Add(time.Second)
	for {
		r.mu.Lock()
		got := append([]activities.StopSegmentRequest(nil), r.stops...)
		r.mu.Unlock()
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// untilDisarmed announces the parked attempt, does what then says to the trial, parks until a
// StopSegment arrives, and ends unhanded.
func untilDisarmed(then func(*testsuite.TestWorkflowEnvironment)) func(context.Context, *testsuite.TestWorkflowEnvironment, <-chan activities.StopSegmentRequest) (*activities.SegmentResult, error) {
	return func(ctx context.Context, env *testsuite.TestWorkflowEnvironment, disarmed <-chan activities.StopSegmentRequest) (*activities.SegmentResult, error) {
		announceParked(env)
		then(env)
		select {
		case <-disarmed:
		case <-ctx.Done():
		}
		return &activities.SegmentResult{Unhanded: true}, nil
	}
}

func announceParked(env *testsuite.TestWorkflowEnvironment) {
	env.SignalWorkflow(activities.SignalSegmentStarted, activities.SegmentStarted{StopQueue: "rlsweep-stop/host-a/1/ab", Attempt: "parked#1"})
}

// A standby trial parks its first segment on its trial queue's parked queue; handed its place there,
// that segment is the trial's first, and the trial goes on to its second as any trial does.
func TestParkedStandbyTrialTrainsOnItsHandOver(t *testing.T) {
	r := parkedTrial(t, func(context.Context, *testsuite.TestWorkflowEnvironment, <-chan activities.StopSegmentRequest) (*activities.SegmentResult, error) {
		return &activities.SegmentResult{LastStep: 1000, Objective: ptr(1), WallSeconds: 30}, nil
	}, nil)
	if err := r.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(r.parked) != 1 || r.parked[0].Segment != 0 || r.parked[0].StopAtStep != 1000 || r.parked[0].HandOffTo != "" {
		t.Fatalf("parked segments %+v, want segment 0 to step 1000, handing off nothing (the second hands off)", r.parked)
	}
	if want := activities.ParkedQueue(r.trials); r.queue != want {
		t.Errorf("parked on %q, want %q", r.queue, want)
	}
	if _, ok := r.starts[0]; ok || len(r.starts) != 1 {
		t.Errorf("segments started outside the parked one: %v, want segment 1 alone", r.starts)
	}
	var sum results.TrialSummary
	if err := r.env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeCompleted || sum.Segments != 2 || sum.Steps != 2000 || !sum.HandedOff || sum.WallSeconds != 30 {
		t.Errorf("summary %+v, want completed over 2 segments to step 2000, handed off, 30 s of wall time", sum)
	}
}

// Held while parked, the trial disarms its parked segment on the stop queue it announced (ParkedOnly:
// one handed its place meanwhile trains on), and then only the sweep's release starts it.
func TestHeldParkedStandbyTrialIsDisarmed(t *testing.T) {
	r := parkedTrial(t, untilDisarmed(hold), map[time.Duration]func(*testsuite.TestWorkflowEnvironment){
		time.Hour: release(false), 2 * time.Hour: release(true)})
	if err := r.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got := r.parkedStops(1); len(got) != 1 || got[0] != (activities.StopSegmentRequest{Attempt: "parked#1", ParkedOnly: true}) {
		t.Errorf("StopSegment %+v, want one, ParkedOnly, for parked#1", got)
	}
	if r.starts[0] != 2*time.Hour {
		t.Errorf("first segment started at %v, want at the sweep's release (2h)", r.starts[0])
	}
}

// Released by the sweep while parked (the trainer ahead may still run on the parked segment's worker),
// the trial waits for its parked segment to be disarmed before it starts its first segment; one that
// was handed its place meanwhile is the first segment.
func TestSweepReleaseOfAParkedTrialWaitsForTheDisarm(t *testing.T) {
	t.Run("disarmed", func(t *testing.T) {
		r := parkedTrial(t, untilDisarmed(release(true)), nil)
		if err := r.env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if got := r.parkedStops(1); len(got) != 1 || !got[0].ParkedOnly {
			t.Errorf("StopSegment %+v, want one, ParkedOnly", got)
		}
		if fmt.Sprint(r.order) != "[parked ended segment 0 started]" {
			t.Errorf("order %v, want the first segment started once the parked one ended", r.order)
		}
	})
	t.Run("handed meanwhile", func(t *testing.T) {
		r := parkedTrial(t, func(ctx context.Context, env *testsuite.TestWorkflowEnvironment, disarmed <-chan activities.StopSegmentRequest) (*activities.SegmentResult, error) {
			announceParked(env)
			release(true)(env)
			<-disarmed // too late: it was handed its place first
			return &activities.SegmentResult{LastStep: 1000, Objective: ptr(1)}, nil
		}, nil)
		if err := r.env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.starts[0]; ok {
			t.Errorf("segment 0 started again at %v after its parked attempt trained", r.starts[0])
		}
	})
}

// Released by a worker (the trainer ahead exited elsewhere: no hand-over can come), the trial starts its
// first segment at once and disarms the parked one behind it.
func TestWorkerReleaseOfAParkedTrialGoesOnAtOnce(t *testing.T) {
	r := parkedTrial(t, untilDisarmed(func(env *testsuite.TestWorkflowEnvironment) {
		release(false)(env)
		time.Sleep(300 * time.Millisecond) // the trial goes on meanwhile
	}), nil)
	if err := r.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	r.parkedStops(1)
	var order string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		order = fmt.Sprint(r.order)
		n := len(r.order)
		r.mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if order != "[segment 0 started parked ended]" {
		t.Errorf("order %v, want the first segment started before the parked one ended", order)
	}
	if got := r.parkedStops(1); len(got) != 1 || !got[0].ParkedOnly {
		t.Errorf("StopSegment %+v, want one, ParkedOnly", got)
	}
}

// Cancelled while parked, the trial stops its parked segment (a full stop: it may train by now) and
// ends cancelled without having trained.
func TestParkedStandbyTrialCancelled(t *testing.T) {
	r := parkedTrial(t, untilDisarmed(func(env *testsuite.TestWorkflowEnvironment) { env.CancelWorkflow() }), nil)
	if err := r.env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("error %v, want cancelled", err)
	}
	if len(r.starts) != 0 {
		t.Errorf("segments started %v, want none", r.starts)
	}
	if got := r.parkedStops(1); len(got) != 1 || got[0].ParkedOnly {
		t.Errorf("StopSegment %+v, want one, a full stop", got)
	}
	var sum results.TrialSummary
	if err := r.env.GetWorkflowResult(&sum); err == nil && (!sum.Unstarted || sum.Outcome != results.OutcomeCancelled) {
		t.Errorf("summary %+v, want cancelled and unstarted", sum)
	}
}

// A parked attempt that died without a heartbeat ends lost on its retry, perhaps handed its place
// before it died: the trial trains its first segment itself.
func TestLostParkedSegmentIsTrainedByTheTrial(t *testing.T) {
	r := parkedTrial(t, func(context.Context, *testsuite.TestWorkflowEnvironment, <-chan activities.StopSegmentRequest) (*activities.SegmentResult, error) {
		return &activities.SegmentResult{Unhanded: true, Lost: true}, nil
	}, nil)
	if err := r.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.starts[0]; !ok {
		t.Errorf("segments started %v, want the first trained by the trial itself", r.starts)
	}
}
