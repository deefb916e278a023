package results

import (
	"math"
	"testing"
)

func TestClassConfirmations(t *testing.T) {
	h100 := &Hardware{GPUs: []GPU{{ID: "0", Name: "NVIDIA H100 80GB HBM3"}}}
	a100 := &Hardware{GPUs: []GPU{{ID: "0", Name: "NVIDIA A100-SXM4-80GB"}}}
	obj := func(v float64) *float64 { return &v }
	p0, p1 := map[string]any{"lr": 0.1}, map[string]any{"lr": 0.2}
	trials := []TrialSummary{
		{TrialID: "0-s1", Config: 0, Params: p0, Outcome: OutcomeCompleted, Objective: obj(10), Hardware: h100},
		{TrialID: "0-s2", Config: 0, Params: p0, Outcome: OutcomeCompleted, Objective: obj(20), Hardware: h100},
		{TrialID: "1-s1", Config: 1, Params: p1, Outcome: OutcomeCompleted, Objective: obj(5), Hardware: h100},
		{TrialID: "0-s1-a100", Config: 0, Params: p0, GPUClass: "a100", Outcome: OutcomeCompleted, Objective: obj(30), Hardware: a100},
		{TrialID: "0-s2-a100", Config: 0, Params: p0, GPUClass: "a100", Outcome: OutcomeDiverged, Hardware: a100},
	}
	got := ClassConfirmations(trials)
	if len(got) != 1 || got[0].Config != 0 || len(got[0].Runs) != 2 {
		t.Fatalf("got %+v, want configuration 0 on two classes", got)
	}
	own, other := got[0].Runs[0], got[0].Runs[1]
	if own.GPUClass != "" || own.GPU != "NVIDIA H100 80GB HBM3" || own.Trials != 2 || own.Scored != 2 || own.Mean != 15 {
		t.Errorf("the sweep's class: %+v, want 2 trials on the H100, mean 15", own)
	}
	if other.GPUClass != "a100" || other.GPU != "NVIDIA A100-SXM4-80GB" || other.Trials != 2 || other.Scored != 1 ||
		other.Mean != 30 || other.Outcomes[OutcomeDiverged] != 1 {
		t.Errorf("a100: %+v, want 2 trials, one diverged, mean 30", other)
	}
	if ClassConfirmations(trials[:3]) != nil {
		t.Error("a sweep without re-runs has confirmations")
	}
	none := ClassConfirmations([]TrialSummary{{TrialID: "0-s1-a100", Config: 0, GPUClass: "a100", Outcome: OutcomeFailed}})
	if len(none) != 1 || !math.IsNaN(none[0].Runs[0].Mean) {
		t.Errorf("a class with no completed trial: %+v, want mean NaN", none)
	}
}
