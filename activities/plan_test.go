package activities_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
)

func TestPlan(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	const file = "../sweeps/testdata/good/grid.yaml"
	yaml, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sweeps.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Plan(ctx, activities.PlanInput{SweepID: sweepID, Spec: *spec, SpecYAML: string(yaml)})
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	const trials = 3 * 3 * 2 * 3 // lr × clip × num_envs × seeds
	if res.Trials != trials || res.PlanKey != artifacts.SweepKey(sweepID, "plan.json") {
		t.Errorf("Plan = %+v, want %d trials in %s", res, trials, artifacts.SweepKey(sweepID, "plan.json"))
	}
	f := &fixture{t: t, store: store}
	var plan struct {
		SweepID string         `json:"sweep_id"`
		Params  []string       `json:"params"`
		Trials  []sweeps.Trial `json:"trials"`
	}
	if err := json.Unmarshal([]byte(f.read(res.PlanKey)), &plan); err != nil {
		t.Fatalf("plan.json: %v", err)
	}
	if plan.SweepID != sweepID || len(plan.Trials) != trials || len(plan.Params) != 4 {
		t.Errorf("plan.json = sweep %q, %d trials, params %q", plan.SweepID, len(plan.Trials), plan.Params)
	}
	if got := f.read(artifacts.SweepKey(sweepID, "spec.yaml")); got != string(yaml) {
		t.Errorf("spec.yaml is not stored verbatim")
	}
	var back sweeps.Spec
	if err := json.Unmarshal([]byte(f.read(artifacts.SweepKey(sweepID, "spec.json"))), &back); err != nil || back.Name != spec.Name {
		t.Errorf("spec.json = %+v, %v, want the spec", back.Name, err)
	}

	_, err = a.Plan(ctx, activities.PlanInput{SweepID: sweepID, Spec: sweeps.Spec{Name: "empty"}})
	if ae := appError(t, err, activities.ErrInvalidSpec); !ae.NonRetryable() {
		t.Errorf("InvalidSpec from Plan is retryable, want non-retryable")
	}
}
