package workflows_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// pruneSweepSpec: q in 6, 5, ..., 1 (configuration 0 best), two seeds, asha with rungs at 100, 300
// and 900 of 2700 steps; two trials at a time, so configurations reach the rungs in plan order.
func pruneSweepSpec(t *testing.T) sweeps.Spec {
	t.Helper()
	return pruneSweepSpecMetric(t, "{name: reward, goal: maximize}")
}

// pruneSweepSpecMetric is pruneSweepSpec with the metric as given (a list of objectives, say).
func pruneSweepSpecMetric(t *testing.T, metric string) sweeps.Spec {
	t.Helper()
	y := `name: unit
trainer: {command: [train], total_steps: 2700}
metric: ` + metric + `
method: grid
seeds: [1, 2]
parameters:
  q: {values: [6, 5, 4, 3, 2, 1]}
probes: {enabled: false}
concurrency: 2
early_terminate: {type: asha, min_steps: 100, eta: 3}
`
	spec, err := sweeps.Decode(strings.NewReader(y), "unit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return *spec
}

// The real Sweep and Trial workflows under asha: segments end at the rungs, every trial asks at
// each, both seeds of a configuration are judged together on the IQM of their windowed values (the
// last value says the opposite and is not used), the bottom configurations end pruned after their
// first segment with the rung, value and cutoff, and a configuration whose seed diverged has its
// other seed stopped as diverged at its next rung.
func TestSweepASHAPrunes(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	var res resultsRecorder
	res.mock(env, 12)
	var mu sync.Mutex
	segs := map[string][]int64{}
	// 5-s2, of the last configuration, diverges in its first segment, after 10 minutes: 5-s1 waits
	// for it at rung 0, and is released by its end (no other trial is left to wake the sweep).
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.MatchedBy(func(in activities.SegmentInput) bool {
		return in.Trial.ID == "5-s2" && in.Segment == 0
	})).Return(nil, temporal.NewNonRetryableApplicationError("diverged", activities.ErrTrialDiverged,
		nil, activities.DivergedDetails{Rule: "non_finite", Verdict: diagnostics.Verdict{Rule: "non_finite", Step: 50}})).After(10 * time.Minute)
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			mu.Lock()
			segs[in.Trial.ID] = append(segs[in.Trial.ID], in.StopAtStep)
			mu.Unlock()
			q := toFloat(in.Trial.Params["q"])
			w, last := q+0.1*float64(in.Trial.Seed), -q
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: &last, Windowed: &w,
				CheckpointKey: fmt.Sprintf("ck-%s-%d", in.Trial.ID, in.Segment)}, nil
		}).After(time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(pruneSweepSpec(t)))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, times := res.recorded()
	if len(byID) != 12 {
		t.Fatalf("recorded %d trials, want 12", len(byID))
	}
	for id, n := range times {
		if n != 1 {
			t.Errorf("%s recorded %d times", id, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"0-s1", "0-s2"} {
		if tr := byID[id]; tr.Outcome != results.OutcomeCompleted || fmt.Sprint(segs[id]) != "[100 300 900 2700]" {
			t.Errorf("%s: %s, segments to %v; want completed, segments ending at the rungs [100 300 900 2700]", id, tr.Outcome, segs[id])
		}
	}
	tr := byID["5-s1"]
	if tr.Outcome != results.OutcomeDiverged || tr.Pruning == nil || !tr.Pruning.SiblingDiverged || tr.Objective != nil || tr.Steps != 100 {
		t.Errorf("5-s1 = %+v (pruning %+v), want diverged at its rung-0 boundary (step 100) because 5-s2 diverged", tr, tr.Pruning)
	}
	// Released as 5-s2 ended (10 minutes after it started), not by asking again a minute later.
	if tr.WallSeconds > 10*60+30 {
		t.Errorf("5-s1 ended after %.0f s, want when 5-s2 ended (600 s)", tr.WallSeconds)
	}
	if tr := byID["5-s2"]; tr.Outcome != results.OutcomeDiverged || tr.Pruning != nil {
		t.Errorf("5-s2 = %+v, want diverged by its own rule", tr)
	}
	for c := 1; c < 5; c++ {
		for _, seed := range []int64{1, 2} {
			id := sweeps.TrialID(c, seed)
			tr := byID[id]
			p := tr.Pruning
			q := float64(6 - c)
			if tr.Outcome != results.OutcomePruned || tr.Segments != 1 || tr.Steps != 100 || p == nil || p.Rule != "asha" ||
				p.Step != 100 || p.Rung != 0 || p.Value == nil || fmt.Sprintf("%.2f", *p.Value) != fmt.Sprintf("%.2f", q+0.15) || p.Cutoff == nil {
				t.Errorf("%s = %+v (pruning %+v), want pruned after 1 segment at rung 0 (step 100), value %.2f (IQM of its seeds), a cutoff", id, tr, p, q+0.15)
			}
			if len(segs[id]) != 1 {
				t.Errorf("%s trained segments to %v, want only the first", id, segs[id])
			}
		}
	}
	checkDecisionLog(t, res.decisions(t), byID)
}

// checkDecisionLog checks the sweep's decision log against its trials: numbered in order, one stop
// per pruned trial and per trial stopped because a sibling diverged, with the pruning its summary
// carries, and no other.
func checkDecisionLog(t *testing.T, log []results.Decision, byID map[string]results.TrialSummary) {
	t.Helper()
	stops := map[string]int{}
	for i, d := range log {
		if d.Seq != i {
			t.Errorf("decision %d has seq %d", i, d.Seq)
		}
		if d.Action != string(scheduler.Stop) {
			t.Errorf("decision %+v: want only stops", d)
		}
		stops[d.TrialID]++
		tr := byID[d.TrialID]
		if tr.Pruning == nil || d.Pruning == nil || tr.Pruning.Rung != d.Pruning.Rung || tr.Pruning.SiblingDiverged != d.Pruning.SiblingDiverged {
			t.Errorf("decision %+v (pruning %+v) does not match trial %s's summary (pruning %+v)", d, d.Pruning, d.TrialID, tr.Pruning)
		}
	}
	for id, tr := range byID {
		want := 0
		if tr.Pruning != nil {
			want = 1
		}
		if stops[id] != want {
			t.Errorf("trial %s (%s): %d stops in the decision log, want %d", id, tr.Outcome, stops[id], want)
		}
	}
}

// A seed that diverges stops its configuration's other seeds at once, in the middle of their
// segment: they end diverged (a sibling diverged), not pruned, long before their segment would have
// ended; the other configurations go on.
func TestSweepStopsSiblingsOfADivergedSeed(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	var res resultsRecorder
	res.mock(env, 4)
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.MatchedBy(func(in activities.SegmentInput) bool {
		return in.Trial.ID == "0-s2"
	})).Return(nil, temporal.NewNonRetryableApplicationError("diverged", activities.ErrTrialDiverged,
		nil, activities.DivergedDetails{Rule: "non_finite", Verdict: diagnostics.Verdict{Rule: "non_finite", Step: 50}})).After(time.Minute)
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			q := toFloat(in.Trial.Params["q"])
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: &q, Windowed: &q,
				CheckpointKey: fmt.Sprintf("ck-%s-%d", in.Trial.ID, in.Segment)}, nil
		}).After(10 * time.Minute)
	spec := pruneSweepSpec(t)
	spec.Parameters[0].Values = []any{6.0, 5.0}
	spec.Concurrency = 4
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, _ := res.recorded()
	tr := byID["0-s1"]
	if tr.Outcome != results.OutcomeDiverged || tr.Pruning == nil || !tr.Pruning.SiblingDiverged || tr.Segments != 1 || tr.WallSeconds > 120 {
		t.Errorf("0-s1 = %+v (pruning %+v), want diverged with a sibling diverged, stopped in its first segment within 2 minutes", tr, tr.Pruning)
	}
	for _, id := range []string{"1-s1", "1-s2"} {
		if tr := byID[id]; tr.Outcome != results.OutcomeCompleted {
			t.Errorf("%s = %s, want completed", id, tr.Outcome)
		}
	}
}

// With several objectives the real workflows judge each rung on the objective vectors: the
// configuration of the lowest return whose segments reached the env_steps target is on the rung's
// front and trains to the end, the ones that return less than configuration 0 and never reached the
// target are pruned at the first rung with no cutoff; every segment is told the trial's training
// seconds and target step before it.
func TestSweepASHAKeepsTheFront(t *testing.T) {
	spec := pruneSweepSpecMetric(t, "[{name: reward}, {name: env_steps, target: 100}]")
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	var res resultsRecorder
	res.mock(env, 12)
	var mu sync.Mutex
	inputs := map[string][]activities.SegmentInput{}
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			mu.Lock()
			inputs[in.Trial.ID] = append(inputs[in.Trial.ID], in)
			mu.Unlock()
			q := toFloat(in.Trial.Params["q"])
			w := q + 0.1*float64(in.Trial.Seed)
			r := &activities.SegmentResult{LastStep: in.StopAtStep, Objective: &w, Windowed: &w, WallSeconds: 60,
				CheckpointKey: fmt.Sprintf("ck-%s-%d", in.Trial.ID, in.Segment)}
			if q == 1 && in.Segment == 0 {
				r.TargetStep = 50 // the lowest return, but at the target first
			}
			return r, nil
		}).After(time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, _ := res.recorded()
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"0-s1", "0-s2", "5-s1", "5-s2"} {
		tr := byID[id]
		if tr.Outcome != results.OutcomeCompleted || len(inputs[id]) != 4 {
			t.Errorf("%s: %s after %d segments, want completed after 4 (on every rung's front)", id, tr.Outcome, len(inputs[id]))
		}
	}
	if in := inputs["5-s1"]; len(in) == 4 && (in[2].SecondsBefore != 120 || in[2].TargetStepBefore != 50 || in[0].SecondsBefore != 0) {
		t.Errorf("5-s1's third segment was told %g s and target step %d before it, want 120 and 50", in[2].SecondsBefore, in[2].TargetStepBefore)
	}
	for c := 1; c < 5; c++ {
		for _, seed := range []int64{1, 2} {
			id := sweeps.TrialID(c, seed)
			tr := byID[id]
			if p := tr.Pruning; tr.Outcome != results.OutcomePruned || p == nil || p.Rung != 0 || p.Cutoff != nil {
				t.Errorf("%s = %+v (pruning %+v), want pruned at rung 0, no cutoff", id, tr, p)
			}
		}
	}
	log := res.decisions(t)
	for _, d := range log {
		if !strings.Contains(d.Reason, "off the front") || !strings.Contains(d.Reason, "env_steps_to_target never") {
			t.Errorf("decision %+v: want its reason to say the configuration is off the front, with its vector", d)
		}
	}
	checkDecisionLog(t, log, byID)
}
