package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

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
	if res.Trials != trials || res.PlanKey != artifacts.PlanKey(sweepID) {
		t.Errorf("Plan = %+v, want %d trials in %s", res, trials, artifacts.PlanKey(sweepID))
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
	if got := f.read(artifacts.SpecYAMLKey(sweepID)); got != string(yaml) {
		t.Errorf("spec.yaml is not stored verbatim")
	}
	var back sweeps.Spec
	if err := json.Unmarshal([]byte(f.read(artifacts.SpecJSONKey(sweepID))), &back); err != nil || back.Name != spec.Name {
		t.Errorf("spec.json = %+v, %v, want the spec", back.Name, err)
	}

	_, err = a.Plan(ctx, activities.PlanInput{SweepID: sweepID, Spec: sweeps.Spec{Name: "empty"}})
	if ae := appError(t, err, activities.ErrInvalidSpec); !ae.NonRetryable() {
		t.Errorf("InvalidSpec from Plan is retryable, want non-retryable")
	}
}

// attrLookup is a namespace whose search attributes are set, or whose listing fails.
type attrLookup struct {
	types map[string]string
	err   error
	asked []string // "namespace/name" of each question
}

func (l *attrLookup) SearchAttributeType(_ context.Context, namespace, name string) (string, error) {
	l.asked = append(l.asked, namespace+"/"+name)
	return l.types[name], l.err
}

// Plan says whether trials may carry RlsweepParams: only when the sweep's namespace has it as a
// KeywordList. A failed listing fails Plan, to be retried, rather than turn it off for the whole sweep.
func TestPlanParamsAttribute(t *testing.T) {
	spec, err := sweeps.Load("../sweeps/testdata/good/grid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		lookup  *attrLookup
		want    bool
		wantErr bool
	}{
		{"registered", &attrLookup{types: map[string]string{activities.ParamsSearchAttribute: "KeywordList"}}, true, false},
		{"registered as Keyword", &attrLookup{types: map[string]string{activities.ParamsSearchAttribute: "Keyword"}}, false, false},
		{"not registered", &attrLookup{types: map[string]string{"RlsweepSweepId": "Keyword"}}, false, false},
		{"listing fails", &attrLookup{types: map[string]string{activities.ParamsSearchAttribute: "KeywordList"}, err: errors.New("unavailable")}, false, true},
		{"no lookup", nil, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, err := artifacts.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			a := &activities.Activities{Store: store}
			if tt.lookup != nil {
				a.Attributes = tt.lookup
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivity(a.Plan)
			v, err := env.ExecuteActivity(a.Plan, activities.PlanInput{SweepID: sweepID, Spec: *spec, SpecYAML: "name: x"})
			if tt.wantErr {
				var app *temporal.ApplicationError
				if err == nil || (errors.As(err, &app) && app.NonRetryable()) {
					t.Fatalf("Plan: %v, want a retryable error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			var res activities.PlanResult
			if err := v.Get(&res); err != nil {
				t.Fatal(err)
			}
			if res.ParamsAttribute != tt.want {
				t.Errorf("ParamsAttribute = %v, want %v", res.ParamsAttribute, tt.want)
			}
			if tt.lookup != nil && !slices.Equal(tt.lookup.asked, []string{"default-test-namespace/" + activities.ParamsSearchAttribute}) {
				t.Errorf("asked %q, want the sweep's namespace for %s", tt.lookup.asked, activities.ParamsSearchAttribute)
			}
		})
	}
}

// Plan never overwrites another sweep's stored files: a second submission under a sweep ID whose files
// belong to another one (or to a sweep stored before owner.json existed) is refused, non-retryable,
// and leaves every file as it was; a retry of the same submission goes on.
func TestPlanKeepsAnotherSweepsFiles(t *testing.T) {
	ctx := context.Background()
	spec, err := sweeps.Load("../sweeps/testdata/good/grid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other, err := sweeps.Load("../sweeps/testdata/good/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	f := &fixture{t: t, store: store}
	if _, err := a.Plan(ctx, activities.PlanInput{SweepID: sweepID, Spec: *spec, SpecYAML: "first", Submission: "s1"}); err != nil {
		t.Fatalf("Plan: %v", err)
	}
	plan := f.read(artifacts.PlanKey(sweepID))
	if _, err := a.Plan(ctx, activities.PlanInput{SweepID: sweepID, Spec: *spec, SpecYAML: "first", Submission: "s1"}); err != nil {
		t.Fatalf("Plan retried by the same submission: %v, want it to go on", err)
	}
	_, err = a.Plan(ctx, activities.PlanInput{SweepID: sweepID, Spec: *other, SpecYAML: "second", Submission: "s2"})
	if ae := appError(t, err, activities.ErrSweepExists); !ae.NonRetryable() {
		t.Errorf("SweepExists from Plan is retryable, want non-retryable")
	}
	if !strings.Contains(err.Error(), sweepID) || !strings.Contains(err.Error(), "without --id") {
		t.Errorf("Plan error %q, want the sweep ID and how to pick another", err)
	}
	if got := f.read(artifacts.SpecYAMLKey(sweepID)); got != "first" {
		t.Errorf("spec.yaml = %q after a refused submission, want the first sweep's", got)
	}
	if got := f.read(artifacts.PlanKey(sweepID)); got != plan {
		t.Errorf("plan.json changed after a refused submission")
	}

	// A sweep stored without owner.json (before it existed) is kept too.
	old := "sweep/old/abc"
	if err := store.Put(ctx, artifacts.PlanKey(old), strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	}
	_, err = a.Plan(ctx, activities.PlanInput{SweepID: old, Spec: *spec, SpecYAML: "new", Submission: "s3"})
	appError(t, err, activities.ErrSweepExists)
	if got := f.read(artifacts.PlanKey(old)); got != "{}" {
		t.Errorf("plan.json = %q after a refused submission, want the old sweep's", got)
	}
	if _, err := store.Get(ctx, artifacts.SpecYAMLKey(old)); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("spec.yaml of the old sweep: %v, want none written", err)
	}
}
