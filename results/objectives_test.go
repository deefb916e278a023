package results

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/rlsweep/rlsweep/sweeps"
)

func f(x float64) *float64 { return &x }

func TestObjectivesRankConfigurationsAndKeepInfeasibleOff(t *testing.T) {
	target := -200.0
	spec := &sweeps.Spec{Seeds: []int64{1, 2, 3}, Resources: sweeps.Resources{GPUs: 0.5},
		Objectives: []sweeps.Objective{
			{Name: "episode_return", Goal: sweeps.GoalMaximize},
			{Name: sweeps.ObjectiveEnvSteps, Goal: sweeps.GoalMinimize, Target: &target},
			{Name: sweeps.ObjectiveSeedFailureRate, Goal: sweeps.GoalMinimize},
		}}
	trial := func(c int, seed int64, outcome string, obj float64, reached int64) TrialSummary {
		ts := TrialSummary{Config: c, Seed: seed, Outcome: outcome, Steps: 100000, TargetStep: reached, WallSeconds: 10,
			Params: map[string]any{"lr": float64(c)}}
		if outcome == OutcomeCompleted {
			ts.Objective = f(obj)
		}
		return ts
	}
	trials := []TrialSummary{
		// 0: the best return, slow to reach the target.
		trial(0, 1, OutcomeCompleted, -150, 80000), trial(0, 2, OutcomeCompleted, -160, 90000), trial(0, 3, OutcomeCompleted, -155, 85000),
		// 1: a worse return, fast to the target: also on the front.
		trial(1, 1, OutcomeCompleted, -190, 30000), trial(1, 2, OutcomeCompleted, -195, 40000), trial(1, 3, OutcomeCompleted, -185, 35000),
		// 2: dominated by 0 (worse return, slower).
		trial(2, 1, OutcomeCompleted, -170, 95000), trial(2, 2, OutcomeCompleted, -175, 99000), trial(2, 3, OutcomeCompleted, -172, 97000),
		// 3: the best of all, but a seed diverged: infeasible, never on the front.
		trial(3, 1, OutcomeCompleted, -100, 10000), trial(3, 2, OutcomeDiverged, 0, 0), trial(3, 3, OutcomeCompleted, -100, 10000),
		// 4: pruned: not ranked.
		trial(4, 1, OutcomePruned, 0, 0), trial(4, 2, OutcomeCompleted, -120, 20000), trial(4, 3, OutcomeCompleted, -120, 20000),
		// 5: two seeds never reach the target: never, and a failed seed.
		trial(5, 1, OutcomeCompleted, -300, 0), trial(5, 2, OutcomeCompleted, -310, 0), trial(5, 3, OutcomeFailed, 0, 0),
		// A confirm re-run on another GPU class does not count.
		{Config: 2, Seed: 1, GPUClass: "a100", Outcome: OutcomeCompleted, Objective: f(0)},
	}
	pts := Objectives(spec, trials)
	if len(pts) != 6 {
		t.Fatalf("got %d configurations, want 6", len(pts))
	}
	wantRank := []int{1, 1, 2, 0, 0, 3}
	for i, p := range pts {
		if p.Rank != wantRank[i] {
			t.Errorf("configuration %d: rank %d (why %q), want %d; values %v", p.Config, p.Rank, p.Why, wantRank[i], p.Values)
		}
	}
	if pts[3].Why != WhyDiverged || pts[4].Why != WhyPruned {
		t.Errorf("why: %q, %q; want %q, %q", pts[3].Why, pts[4].Why, WhyDiverged, WhyPruned)
	}
	if !math.IsInf(pts[5].Values[1], 1) || pts[5].Reached != 0 {
		t.Errorf("configuration 5 env_steps_to_target = %v (reached %d), want never", pts[5].Values[1], pts[5].Reached)
	}
	// Two of three seeds never reached the target: the interval's top is never, not NaN.
	if !math.IsInf(pts[5].High[1], 1) {
		t.Errorf("configuration 5 env_steps_to_target interval [%v, %v], want its top never", pts[5].Low[1], pts[5].High[1])
	}
	if got := pts[5].Values[2]; math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("configuration 5 seed_failure_rate = %v, want 1/3", got)
	}
	if got := pts[0].Values[0]; got != -155 {
		t.Errorf("configuration 0 return IQM = %v, want -155", got)
	}
	if !(pts[0].Low[0] <= -155 && pts[0].High[0] >= -155) || math.IsNaN(pts[0].Low[0]) {
		t.Errorf("configuration 0 return interval [%v, %v] does not hold its IQM", pts[0].Low[0], pts[0].High[0])
	}
	// results.json carries the vectors: +Inf (never, a front's extreme crowding) and NaN included.
	b, err := json.Marshal(pts)
	if err != nil {
		t.Fatalf("the points do not encode: %v", err)
	}
	var back []ConfigPoint
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(back[5].Values[1], 1) || !math.IsInf(back[0].Crowding, 1) || back[1].Rank != 1 || !math.IsNaN(back[5].Low[2]) {
		t.Errorf("the points read back as %+v", back)
	}
	configs, hv := FrontHypervolume(spec.Objectives, pts)
	if len(hv) != 4 || configs[0] != 0 || !(hv[0] > 0) || hv[3] < hv[0] {
		t.Errorf("FrontHypervolume = %v %v, want 4 growing values", configs, hv)
	}
}

// ObjectiveVectors is Objectives without the intervals: on five seeds, where Objectives computes
// them, every other field is the same (values with +Inf and NaN, seeds reached, why, rank, crowding).
func TestObjectiveVectorsAreObjectivesWithoutIntervals(t *testing.T) {
	target := -200.0
	spec := &sweeps.Spec{Seeds: []int64{1, 2, 3, 4, 5}, Resources: sweeps.Resources{GPUs: 0.5},
		Objectives: []sweeps.Objective{
			{Name: "episode_return", Goal: sweeps.GoalMaximize},
			{Name: sweeps.ObjectiveEnvSteps, Goal: sweeps.GoalMinimize, Target: &target},
			{Name: sweeps.ObjectiveGPUSeconds, Goal: sweeps.GoalMinimize},
			{Name: sweeps.ObjectiveSeedFailureRate, Goal: sweeps.GoalMinimize},
		}}
	outcomes := []string{OutcomeCompleted, OutcomeDiverged, OutcomePruned, OutcomeFailed, OutcomeOOM, OutcomeCancelled, ""}
	var trials []TrialSummary
	for c := range 15 {
		for seed := int64(1); seed <= 5; seed++ {
			ts := TrialSummary{Config: c, Seed: seed, Outcome: OutcomeCompleted, Steps: 100000, WallSeconds: float64(10*c + int(seed)),
				Params: map[string]any{"lr": float64(c)}}
			if c >= 8 && seed == 3 { // one odd seed in each of the last configurations
				ts.Outcome = outcomes[c-8]
			}
			if ts.Outcome == OutcomeCompleted {
				ts.Objective = f(-150 - float64((c*7+int(seed)*3)%40))
				if (c+int(seed))%3 != 0 {
					ts.TargetStep = int64(10000 * (1 + (c*5+int(seed))%9))
				}
				if c == 5 && seed == 2 {
					ts.End = &Verdict{Rule: "collapsed_at_end"}
				}
			}
			trials = append(trials, ts)
		}
	}
	full, cheap := Objectives(spec, trials), ObjectiveVectors(spec, trials)
	intervals := 0
	for i := range full {
		for _, lo := range full[i].Low {
			if !math.IsNaN(lo) {
				intervals++
			}
		}
		if cheap[i].Low != nil || cheap[i].High != nil {
			t.Errorf("configuration %d: ObjectiveVectors gives intervals %v, %v; want none", cheap[i].Config, cheap[i].Low, cheap[i].High)
		}
		full[i].Low, full[i].High = nil, nil
	}
	ranks, unranked := map[int]bool{}, 0
	for _, p := range cheap {
		ranks[p.Rank] = true
		if p.Why != "" {
			unranked++
		}
	}
	if intervals == 0 || len(ranks) < 3 || unranked < 3 {
		t.Fatalf("%d intervals, ranks %v, %d unranked: the case does not test leaving the intervals out", intervals, ranks, unranked)
	}
	if got, want := fmt.Sprintf("%+v", cheap), fmt.Sprintf("%+v", full); got != want {
		t.Errorf("ObjectiveVectors:\n%s\nwant Objectives without intervals:\n%s", got, want)
	}
}

// IQMNever is +Inf exactly when the sorted middle half holds +Inf (more +Inf than the top trim drops),
// and diagnostics.IQM otherwise.
func TestIQMInf(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, math.NaN()},
		{[]float64{inf}, inf},
		{[]float64{1, inf}, inf},                     // n 2: nothing trimmed
		{[]float64{1, 2, 3, inf}, 2.5},               // n 4: one trimmed from each end
		{[]float64{1, 2, inf, inf}, inf},             // two +Inf, one trimmed
		{[]float64{5, 1, inf, 3, 2, 4, 6, inf}, 4.5}, // n 8: two trimmed from the top, both +Inf
		{[]float64{5, 1, inf, 3, inf, 4, 6, inf}, inf},
	} {
		got := IQMNever(c.xs)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("IQMNever(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
