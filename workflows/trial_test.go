package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// acts is the receiver the worker registers; its methods name the activities for OnActivity.
var acts = &activities.Activities{}

func trialInput(total, segment int64, maxAttempts int) workflows.TrialInput {
	gpus := 2.0
	return workflows.TrialInput{
		GPUs:        &gpus,
		SweepID:     "sweep/t/abc",
		Trial:       sweeps.Trial{ID: "3-s7", Config: 3, Seed: 7, Params: map[string]any{"lr": 0.001}},
		Trainer:     sweeps.Trainer{Command: []string{"train"}, TotalSteps: total, SegmentSteps: segment},
		Metric:      sweeps.Metric{Name: "reward", Goal: "maximize"},
		TaskQueue:   "gpu-a",
		MaxAttempts: maxAttempts,
	}
}

// segmentCall is what one TrainSegment attempt saw.
type segmentCall struct {
	in        activities.SegmentInput
	attempt   int32
	queue     string
	heartbeat time.Duration
}

// recorder records TrainSegment attempts; mock callbacks run off the workflow goroutine.
type recorder struct {
	mu    sync.Mutex
	calls []segmentCall
}

func (r *recorder) add(ctx context.Context, in activities.SegmentInput) int {
	info := activity.GetInfo(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, segmentCall{in: in, attempt: info.Attempt, queue: info.TaskQueue, heartbeat: info.HeartbeatTimeout})
	return len(r.calls)
}

func (r *recorder) get() []segmentCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]segmentCall(nil), r.calls...)
}

func ptr(x float64) *float64 { return &x }

func TestTrialRunsSegmentsResumingFromCheckpoints(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var rec recorder
	// Segment 1 uploads no checkpoint: segment 2 must resume from segment 0's.
	ckpts := []string{"ck/10000", "", "ck/25000"}
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			rec.add(ctx, in)
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(float64(in.Segment)),
				CheckpointKey: ckpts[in.Segment], Last: results.Values{"reward": float64(in.Segment)}}, nil
		})
	in := trialInput(25000, 10000, 2)
	in.HeartbeatTimeout = 2 * time.Minute
	env.ExecuteWorkflow(workflows.Trial, in)

	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow completed %v, error %v; want completed without error", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	want := []struct {
		start, stop int64
		resume      string
		resumeStep  int64
	}{{0, 10000, "", 0}, {10000, 20000, "ck/10000", 10000}, {20000, 25000, "ck/10000", 10000}}
	calls := rec.get()
	if len(calls) != len(want) {
		t.Fatalf("TrainSegment called %d times, want %d (ceil(25000/10000))", len(calls), len(want))
	}
	for i, w := range want {
		c := calls[i]
		if c.in.Segment != i || c.in.StartStep != w.start || c.in.StopAtStep != w.stop || c.in.ResumeFrom != w.resume || c.in.ResumeStep != w.resumeStep {
			t.Errorf("segment %d: got segment %d steps %d–%d resume %q at %d, want %d steps %d–%d resume %q at %d",
				i, c.in.Segment, c.in.StartStep, c.in.StopAtStep, c.in.ResumeFrom, c.in.ResumeStep, i, w.start, w.stop, w.resume, w.resumeStep)
		}
		if c.queue != "gpu-a" || c.heartbeat != 2*time.Minute || c.in.Metric != "reward" || c.in.Trial.ID != "3-s7" ||
			c.in.GPUs == nil || *c.in.GPUs != 2 {
			t.Errorf("segment %d: queue %q heartbeat %v metric %q trial %q GPUs %v, want gpu-a, 2m, reward, 3-s7, 2 GPUs",
				i, c.queue, c.heartbeat, c.in.Metric, c.in.Trial.ID, c.in.GPUs)
		}
	}
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeCompleted || sum.Steps != 25000 || sum.Segments != 3 ||
		sum.Objective == nil || *sum.Objective != 2 || sum.Seed != 7 || sum.Config != 3 || sum.Last["reward"] != 2 {
		t.Errorf("summary = %+v, want completed, 25000 steps, 3 segments, objective 2 (the last segment's)", sum)
	}
}

func TestTrialSegmentDefaults(t *testing.T) {
	// segment_steps 0 or larger than total_steps: one segment over the whole budget; no queue: the
	// default trial queue; no heartbeat timeout: two minutes.
	for _, seg := range []int64{0, 50000} {
		t.Run(fmt.Sprint(seg), func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var rec recorder
			env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
					rec.add(ctx, in)
					return &activities.SegmentResult{LastStep: in.StopAtStep}, nil
				})
			in := trialInput(30000, seg, 0)
			in.TaskQueue = ""
			env.ExecuteWorkflow(workflows.Trial, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			calls := rec.get()
			if len(calls) != 1 || calls[0].in.StartStep != 0 || calls[0].in.StopAtStep != 30000 ||
				calls[0].queue != workflows.DefaultTrialQueue || calls[0].heartbeat != 2*time.Minute {
				t.Fatalf("calls = %+v, want one segment 0–30000 on %s with a 2m heartbeat timeout", calls, workflows.DefaultTrialQueue)
			}
		})
	}
}

func TestTrialDivergedIsNotRetried(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var rec recorder
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			rec.add(ctx, in)
			// Retryable on purpose: the retry policy alone must keep a divergence from running again.
			return nil, temporal.NewApplicationError("trial 3-s7 diverged: stop non_finite at step 4000", activities.ErrTrialDiverged,
				activities.DivergedDetails{Rule: "non_finite", DumpKey: "d.json",
					Verdict: diagnostics.Verdict{Level: diagnostics.Stop, Rule: "non_finite", Metric: "reward", Value: math.NaN(), Step: 4000,
						Advice: "lower the learning rate", Objective: "reward", ObjectiveValue: 12.5}})
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(20000, 10000, 5))

	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error %v, want a diverged summary", err)
	}
	if n := len(rec.get()); n != 1 {
		t.Errorf("TrainSegment called %d times, want 1 (TrialDiverged is never retried, MaxAttempts 5 notwithstanding)", n)
	}
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeDiverged || sum.StopRule != "non_finite" || sum.Segments != 1 ||
		!strings.Contains(sum.Error, "stop non_finite at step 4000") {
		t.Errorf("summary = %+v, want diverged by non_finite in segment 1 with the activity's message", sum)
	}
	if sum.Steps != 4000 {
		t.Errorf("summary steps = %d, want 4000, the step the rule fired at", sum.Steps)
	}
	want := results.Verdict{Rule: "non_finite", Step: 4000, Detail: "reward = NaN (threshold 0), reward 12.5 where the run stood", Advice: "lower the learning rate"}
	if sum.Stop == nil || *sum.Stop != want {
		t.Errorf("summary stop = %+v, want the verdict carried: %+v", sum.Stop, want)
	}
}

// A trial that diverges in a later segment has no objective: the earlier segment's is not its result,
// and a regression or a leaderboard must not count it as a scored seed.
func TestTrialDivergedInALaterSegmentHasNoObjective(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			if in.Segment == 0 {
				return &activities.SegmentResult{LastStep: 10000, Objective: ptr(200.0), CheckpointKey: "ck/10000"}, nil
			}
			return nil, temporal.NewNonRetryableApplicationError("diverged", activities.ErrTrialDiverged,
				nil, activities.DivergedDetails{Rule: "non_finite", Verdict: diagnostics.Verdict{Rule: "non_finite", Step: 14000}})
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(20000, 10000, 5))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeDiverged || sum.Steps != 14000 || sum.Objective != nil {
		t.Errorf("summary = outcome %s, %d steps, objective %v; want diverged at 14000 with no objective", sum.Outcome, sum.Steps, sum.Objective)
	}
}

func TestTrialCrashThenRetrySucceeds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var rec recorder
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			if n := rec.add(ctx, in); n == 2 { // segment 1, first attempt
				return nil, temporal.NewApplicationError("trainer exited with status 137", activities.ErrTrainerCrashed)
			}
			return &activities.SegmentResult{LastStep: in.StopAtStep, CheckpointKey: fmt.Sprint("ck/", in.StopAtStep)}, nil
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(20000, 10000, 3))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	calls := rec.get()
	if len(calls) != 3 || calls[2].in.Segment != 1 || calls[2].attempt != 2 || calls[2].in.ResumeFrom != "ck/10000" {
		t.Fatalf("calls = %+v, want segment 0, then segment 1 twice (attempt 2 resuming from ck/10000)", calls)
	}
	if sum.Outcome != results.OutcomeCompleted || sum.Steps != 20000 || sum.Segments != 2 {
		t.Errorf("summary = %+v, want completed after the retry", sum)
	}
}

func TestTrialCancelled(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).
		Return(&activities.SegmentResult{LastStep: 10000}, nil).After(time.Hour)
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	env.ExecuteWorkflow(workflows.Trial, trialInput(20000, 10000, 3))

	err := env.GetWorkflowError()
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("workflow error %v, want a CanceledError", err)
	}
}

// A trial whose first segment's records lack the objective's metric warns at once, in its status query
// and its summary, naming the metrics it did write; segments without it keep one warning, not one
// each; a later segment that carries it drops the warning.
func TestTrialWarnsOfAMissingMetric(t *testing.T) {
	for _, tt := range []struct {
		name      string
		carriedAt int // the first segment whose records carry the metric; 3: none
		want      int // warnings at the end
	}{
		{"never", 3, 1},
		{"from segment 2", 2, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
					res := &activities.SegmentResult{LastStep: in.StopAtStep, Records: 10}
					if in.Segment < tt.carriedAt {
						res.MetricMissing = []string{"episode_return", "value_loss"}
					} else {
						res.Objective = ptr(1)
					}
					return res, nil
				}).After(time.Minute)
			var mid workflows.TrialStatus
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(workflows.QueryStatus)
				if err != nil {
					t.Errorf("query status: %v", err)
					return
				}
				if err := v.Get(&mid); err != nil {
					t.Error(err)
				}
			}, 90*time.Second) // segment 0 has ended, segment 1 runs
			env.ExecuteWorkflow(workflows.Trial, trialInput(30000, 10000, 1))
			var sum results.TrialSummary
			if err := env.GetWorkflowResult(&sum); err != nil {
				t.Fatal(err)
			}
			want := results.MissingMetricWarning("reward", 0, []string{"episode_return", "value_loss"})
			if len(mid.Warnings) != 1 || mid.Warnings[0] != want || mid.Steps != 10000 {
				t.Errorf("status after segment 0 = %+v, want step 10000 and the warning %q", mid, want)
			}
			if len(sum.Warnings) != tt.want || tt.want == 1 && sum.Warnings[0] != want {
				t.Errorf("summary warnings = %q, want %d (%q)", sum.Warnings, tt.want, want)
			}
		})
	}
}

// TestTrialEndsWhenATrainerIgnoresItsStopStep: a segment whose trainer trained the whole budget
// (RLSWEEP_STOP_AT_STEP ignored) ends the trial, rather than every later segment training it all
// again; a trainer that keeps stopping without a checkpoint is warned about once, with every segment
// still run.
func TestTrialEndsWhenATrainerIgnoresItsStopStep(t *testing.T) {
	for _, c := range []struct {
		name     string
		lastStep func(in activities.SegmentInput) int64
		segments int
		steps    int64
	}{
		{"whole budget", func(activities.SegmentInput) int64 { return 25000 }, 1, 25000},
		{"no checkpoint", func(in activities.SegmentInput) int64 { return in.StopAtStep }, 3, 25000},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var rec recorder
			env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
				func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
					n := rec.add(ctx, in)
					return &activities.SegmentResult{LastStep: c.lastStep(in), Objective: ptr(1),
						SegmentWarning: fmt.Sprintf("segment %d: the trainer misbehaved (call %d)", in.Segment, n)}, nil
				})
			env.ExecuteWorkflow(workflows.Trial, trialInput(25000, 10000, 2))
			var sum results.TrialSummary
			if err := env.GetWorkflowResult(&sum); err != nil {
				t.Fatal(err)
			}
			if n := len(rec.get()); n != c.segments || sum.Segments != c.segments || sum.Steps != c.steps ||
				sum.Outcome != results.OutcomeCompleted {
				t.Errorf("%d TrainSegment calls, summary %+v; want %d segments, %d steps, completed", n, sum, c.segments, c.steps)
			}
			if want := []string{"segment 0: the trainer misbehaved (call 1)"}; fmt.Sprint(sum.Warnings) != fmt.Sprint(want) {
				t.Errorf("warnings = %q, want %q (once per trial)", sum.Warnings, want)
			}
		})
	}
}

// A trial that fails for good reports the attempts of its failed segment — the trainer's failures,
// those ended by faults outside it, the steps trained again — from the failure's details, added to its
// earlier segments'.
func TestTrialFailedReportsItsAttempts(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			if in.Segment == 0 {
				return &activities.SegmentResult{LastStep: 10000, CheckpointKey: "ck/10000", InfraRetries: 1, RetrainedSteps: 300}, nil
			}
			return nil, temporal.NewNonRetryableApplicationError("trainer exited with status 1", activities.ErrTrainerCrashed, nil,
				activities.Heartbeat{Step: 12000, TrainerFailures: 3, InfraRetries: 2, Retrained: 4000})
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(20000, 10000, 3))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeFailed || sum.TrainerFailures != 3 || sum.InfraRetries != 3 || sum.RetrainedSteps != 4300 {
		t.Errorf("summary: %s, trainer_failures %d, infra_retries %d, retrained_steps %d; want failed, 3, 3 and 4300",
			sum.Outcome, sum.TrainerFailures, sum.InfraRetries, sum.RetrainedSteps)
	}
	if sum.Steps != 12000 || sum.Stop != nil {
		t.Errorf("summary steps %d, stop %+v; want 12000, the step the failed segment's records reached, and no stop verdict", sum.Steps, sum.Stop)
	}
}

// A trial whose last segment comes back with an end-of-run verdict completes, carrying the verdict and
// its warning line.
func TestTrialCarriesTheEndVerdict(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	end := &results.Verdict{Rule: "collapsed_at_end", Step: 25000, Detail: "reward of the last tenth 3, best 90", Advice: "use the best checkpoint"}
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			res := &activities.SegmentResult{LastStep: in.StopAtStep, Objective: ptr(3), CheckpointKey: fmt.Sprintf("ck/%d", in.StopAtStep)}
			if in.StopAtStep == 25000 {
				res.EndVerdict = end
			}
			return res, nil
		})
	env.ExecuteWorkflow(workflows.Trial, trialInput(25000, 10000, 2))
	var sum results.TrialSummary
	if err := env.GetWorkflowResult(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != results.OutcomeCompleted || sum.End == nil || *sum.End != *end {
		t.Errorf("summary outcome %q, end %+v; want completed with %+v", sum.Outcome, sum.End, end)
	}
	if want := []string{end.Warning()}; fmt.Sprint(sum.Warnings) != fmt.Sprint(want) ||
		!strings.Contains(want[0], "collapsed_at_end at step 25000: reward of the last tenth 3, best 90; use the best checkpoint") {
		t.Errorf("warnings = %q, want %q", sum.Warnings, want)
	}
}
