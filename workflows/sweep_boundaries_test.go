package workflows_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// askingScheduler is the planned scheduler asking at every boundary, as a pruner or PBT would: it
// stops configuration 1 after its first segment and has configuration 2 go on from another trial's
// checkpoint with q = 9.
type askingScheduler struct {
	scheduler.Scheduler
	mu    sync.Mutex
	asked []string
}

func (a *askingScheduler) AsksAtBoundaries() bool { return true }

func (a *askingScheduler) AtBoundary(b scheduler.Boundary) scheduler.Decision {
	a.mu.Lock()
	a.asked = append(a.asked, fmt.Sprintf("%s@%d step %d ck %s", b.TrialID, b.Segment, b.Step, b.CheckpointKey))
	a.mu.Unlock()
	switch b.Config {
	case 1:
		return scheduler.Decision{Segment: b.Segment, Action: scheduler.Stop, Reason: "below the median"}
	case 2:
		return scheduler.Decision{Segment: b.Segment, Action: scheduler.Exploit, Reason: "exploit 0-s1",
			ResumeFrom: "ck-0-s1-0", ResumeStep: 500, Params: map[string]any{"q": 9.0}}
	}
	return scheduler.Decision{Segment: b.Segment, Action: scheduler.Continue}
}

// A scheduler that asks at boundaries is asked by every trial at each segment end but the last, and
// its answers are applied: a stopped trial ends pruned after one segment, an exploiting one trains its
// next segment from the other trial's checkpoint with the new parameters, the rest go on.
func TestSweepAsksTheSchedulerAtBoundaries(t *testing.T) {
	sched := &askingScheduler{}
	defer workflows.SetScheduler(func(spec *sweeps.Spec, st scheduler.State) (scheduler.Scheduler, error) {
		planned, err := scheduler.New(spec, st)
		sched.Scheduler = planned
		return sched, err
	})()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	var res resultsRecorder
	res.mock(env, 3)
	var mu sync.Mutex
	var segs []string
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			mu.Lock()
			segs = append(segs, fmt.Sprintf("%s@%d from %q (%d) q=%v", in.Trial.ID, in.Segment, in.ResumeFrom, in.ResumeStep, in.Trial.Params["q"]))
			mu.Unlock()
			q := toFloat(in.Trial.Params["q"])
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: &q,
				CheckpointKey: fmt.Sprintf("ck-%s-%d", in.Trial.ID, in.Segment)}, nil
		}).After(time.Minute)
	spec := sweepSpec(t, []float64{1, 2, 3}, 3, "maximize")
	spec.Trainer.SegmentSteps = 500
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, _ := res.recorded()
	if tr := byID["0-s1"]; tr.Outcome != results.OutcomeCompleted || tr.Segments != 2 {
		t.Errorf("0-s1: %s after %d segments, want completed after 2", tr.Outcome, tr.Segments)
	}
	if tr := byID["1-s1"]; tr.Outcome != results.OutcomePruned || tr.Segments != 1 || tr.Steps != 500 ||
		!strings.Contains(tr.Error, "below the median") || tr.Objective == nil {
		t.Errorf("1-s1 = %+v, want pruned after 1 segment at step 500, the reason and its objective so far", tr)
	}
	if tr := byID["2-s1"]; tr.Outcome != results.OutcomeCompleted || tr.Params["q"] != 9.0 || tr.Objective == nil || *tr.Objective != 9 {
		t.Errorf("2-s1 = %+v, want completed with q 9 and objective 9", tr)
	}
	mu.Lock()
	got := strings.Join(segs, "\n")
	mu.Unlock()
	for _, want := range []string{`0-s1@1 from "ck-0-s1-0" (500) q=1`, `2-s1@1 from "ck-0-s1-0" (500) q=9`} {
		if !strings.Contains(got, want) {
			t.Errorf("segments run:\n%s\nwant one %s", got, want)
		}
	}
	if strings.Contains(got, "1-s1@1") {
		t.Errorf("segments run:\n%s\nwant none for 1-s1 after it was stopped", got)
	}
	sched.mu.Lock()
	defer sched.mu.Unlock()
	if len(sched.asked) != 3 {
		t.Errorf("scheduler asked %q, want each trial once, after its first segment", sched.asked)
	}
}

// The planned scheduler does not ask: trials are started without AskAtBoundaries, so they emit
// nothing at their segment ends.
func TestPlannedSweepTrialsDoNotAsk(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 2)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{1, 2}, 2, "maximize")))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, in := range fakes.inputs {
		if in.AskAtBoundaries {
			t.Errorf("trial %s started asking at boundaries, want not", in.Trial.ID)
		}
	}
}

// The sweep hands every trial the segment ends it computed from the spec (sweeps.Spec.SegmentEnds),
// a plain grid's too: the trial trains by them and works none out itself.
func TestSweepHandsEveryTrialItsSegmentEnds(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 2)
	spec := sweepSpec(t, []float64{1, 2}, 2, "maximize")
	spec.Trainer.SegmentSteps = 300
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(fakes.inputs) != 2 {
		t.Fatalf("%d trials started, want 2", len(fakes.inputs))
	}
	for _, in := range fakes.inputs {
		if !slices.Equal(in.SegmentEnds, []int64{300, 600, 900, 1000}) {
			t.Errorf("trial %s: segment ends %v, want [300 600 900 1000]", in.Trial.ID, in.SegmentEnds)
		}
	}
}
