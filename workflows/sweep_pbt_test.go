package workflows_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
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

func pbtSweepSpec(t *testing.T) sweeps.Spec {
	t.Helper()
	y := `name: unit
trainer: {command: [train], total_steps: 400}
metric: {name: reward, goal: maximize}
method: pbt
sampler_seed: 5
seeds: [1]
parameters:
  lr: {min: 0.001, max: 0.01, distribution: log_uniform}
probes: {enabled: false}
concurrency: 8
pbt: {population: 4, ready_steps: 100, quantile: 0.5}
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

// The real Sweep and Trial workflows under pbt: members train to the ready steps and ask there; the
// worst exploits a healthy member of the top quantile (its checkpoint copied first, the next segment
// resuming from the copy with the explored parameters); the best member, whose segments warn, is never
// a source; a member that diverges is replaced at once by a member that starts from a healthy
// member's checkpoint; every exploit is in the summaries.
func TestSweepPBTExploits(t *testing.T) {
	spec := pbtSweepSpec(t)
	plan, err := sweeps.Plan(&spec)
	if err != nil {
		t.Fatal(err)
	}
	byLR := slices.Clone(plan)
	sort.Slice(byLR, func(i, j int) bool { return toFloat(byLR[i].Params["lr"]) < toFloat(byLR[j].Params["lr"]) })
	best, diverging := byLR[3].ID, byLR[1].ID // the best warns; the second worst diverges in its third segment

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	var res resultsRecorder
	res.mock(env, 4)
	var mu sync.Mutex
	segs := map[string][]activities.SegmentInput{}
	adopted := map[string]activities.AdoptInput{}
	env.OnActivity(acts.AdoptCheckpoint, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AdoptInput) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			key := fmt.Sprintf("copy/%s/%d", in.TrialID, in.Exploit.Step)
			adopted[key] = in
			return key, nil
		})
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			mu.Lock()
			segs[in.Trial.ID] = append(segs[in.Trial.ID], in)
			mu.Unlock()
			if in.Trial.ID == diverging && in.Segment == 2 {
				return nil, temporal.NewNonRetryableApplicationError("diverged", activities.ErrTrialDiverged,
					nil, activities.DivergedDetails{Rule: "non_finite", Verdict: diagnostics.Verdict{Rule: "non_finite", Step: in.StartStep + 10}})
			}
			v := toFloat(in.Trial.Params["lr"]) * 1000
			r := &activities.SegmentResult{LastStep: in.StopAtStep, Objective: &v, Windowed: &v,
				CheckpointKey: fmt.Sprintf("sweeps/unit/abc/trials/%s/checkpoints/ck-%d", in.Trial.ID, in.StopAtStep)}
			if in.Trial.ID == best {
				r.Warnings = map[string]int{"clip_excess": 3}
			}
			return r, nil
		}).After(time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, times := res.recorded()
	for id, n := range times {
		if n != 1 {
			t.Errorf("%s recorded %d times", id, n)
		}
	}
	if len(byID) != 5 {
		t.Fatalf("recorded %d trials (%v), want the 4 members and one replacement", len(byID), times)
	}
	mu.Lock()
	defer mu.Unlock()
	exploits := 0
	for id, sum := range byID {
		for _, e := range sum.Exploits {
			if e.From == best || e.From == diverging {
				t.Errorf("%s exploited %s, which is unhealthy", id, e.From)
			}
			if e.Member != id || !strings.HasPrefix(e.Checkpoint, "copy/"+id+"/") {
				t.Errorf("%s's exploit %+v, want its own copy of the checkpoint", id, e)
			}
			if _, ok := adopted[e.Checkpoint]; !ok {
				t.Errorf("%s's exploit %+v: no AdoptCheckpoint made %s", id, e, e.Checkpoint)
			}
			if sum.Parent == "" {
				exploits++
				// The segment after the exploit resumes from the copy with the new parameters.
				i := slices.IndexFunc(segs[id], func(in activities.SegmentInput) bool { return in.StartStep == e.Step })
				if i < 0 || segs[id][i].ResumeFrom != e.Checkpoint || toFloat(segs[id][i].Trial.Params["lr"]) != toFloat(e.New["lr"]) {
					t.Errorf("%s: after its exploit at %d, segments %+v; want one resuming from %s with lr %v", id, e.Step, segs[id], e.Checkpoint, e.New["lr"])
				}
			}
		}
	}
	if exploits == 0 {
		t.Errorf("no exploit recorded: adopted %v, summaries %+v", adopted, byID)
	}
	if sum := byID[diverging]; sum.Outcome != results.OutcomeDiverged {
		t.Errorf("%s = %s, want diverged", diverging, sum.Outcome)
	}
	rep, ok := byID["4-s1"]
	if !ok || rep.Parent == "" || rep.Parent == best || rep.Parent == diverging || rep.StartStep == 0 || rep.Outcome != results.OutcomeCompleted {
		t.Fatalf("replacement 4-s1 = %+v, want completed, started from a healthy member's checkpoint", rep)
	}
	first := segs["4-s1"][0]
	if first.StartStep != rep.StartStep || !strings.HasPrefix(first.ResumeFrom, "copy/4-s1/") {
		t.Errorf("replacement's first segment %+v, want from step %d resuming from its copy", first, rep.StartStep)
	}
	// The replacement is in the decision log (decisions.json), once, with what it replaces and where it
	// starts from.
	var replaced []results.Decision
	for _, d := range res.decisions(t) {
		if d.Action == workflows.DecisionReplace {
			replaced = append(replaced, d)
		}
	}
	if len(replaced) != 1 || replaced[0].TrialID != "4-s1" || replaced[0].Replaces != diverging || replaced[0].Parent != rep.Parent ||
		replaced[0].Step != rep.StartStep || replaced[0].ResumeFrom == "" || replaced[0].Params["lr"] == nil || replaced[0].Reason == "" {
		t.Errorf("replace decisions %+v, want one for 4-s1 replacing %s from %s's checkpoint at step %d", replaced, diverging, rep.Parent, rep.StartStep)
	}
}

// The pbt scheduler's state is carried across a continue-as-new: the next run resumes with every
// member, its points and its exploits, and answers a question asked again the same way.
func TestSweepPBTStateCarried(t *testing.T) {
	spec := pbtSweepSpec(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	var res resultsRecorder
	res.mock(env, 4)
	env.OnActivity(acts.AdoptCheckpoint, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AdoptInput) (string, error) {
			return fmt.Sprintf("copy/%s/%d", in.TrialID, in.Exploit.Step), nil
		})
	env.OnActivity(acts.TrainSegment, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SegmentInput) (*activities.SegmentResult, error) {
			v := toFloat(in.Trial.Params["lr"]) * 1000
			return &activities.SegmentResult{LastStep: in.StopAtStep, Objective: &v, Windowed: &v,
				CheckpointKey: fmt.Sprintf("sweeps/unit/abc/trials/%s/checkpoints/ck-%d", in.Trial.ID, in.StopAtStep)}, nil
		}).After(time.Minute)
	// After the first ready step's decisions (1 minute), before the second (2 minutes).
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 90*time.Second)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	next := continuedInput(t, env)
	st := next.State.Scheduler.PBT
	if st == nil || len(st.Members) != 4 {
		t.Fatalf("carried pbt state %+v, want the 4 members", st)
	}
	exploits := 0
	for _, m := range st.Members {
		if p := m.Points; len(p) == 0 || p[0].Step != 100 || !p[0].Decided {
			t.Errorf("member %s carried points %+v, want its decided point at step 100", m.ID, p)
		}
		exploits += len(m.Schedule) - 1
	}
	if exploits != 2 {
		t.Errorf("carried %d exploits, want 2 (the bottom half at step 100)", exploits)
	}
	sched, err := scheduler.New(&spec, next.State.Scheduler)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if len(m.Schedule) < 2 {
			continue
		}
		d := sched.AtBoundary(scheduler.Boundary{TrialID: m.ID, Config: m.Config, Seed: m.Seed, Segment: 0, Step: 100})
		if d.Action != scheduler.Exploit || d.Params["lr"] != m.Schedule[1].Params["lr"] {
			t.Errorf("%s asked again after the continue-as-new: %+v, want its exploit again", m.ID, d)
		}
	}
}
