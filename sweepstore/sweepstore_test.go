package sweepstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

const sweepID = "sweep/unit/abc"

func newStore(t *testing.T) artifacts.Store {
	t.Helper()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s artifacts.Store, key, body string) {
	t.Helper()
	if err := s.Put(context.Background(), key, strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
}

// ReportInput leaves the results it is handed as they are: the steps a stopped trial reached are in
// the input's own copy, so callers need not mind the order in which they write results.json.
func TestReportInputDoesNotModifyResults(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	put(t, s, artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0), "{\"step\":1000,\"reward\":5}\n{\"step\":3000,\"reward\":7}\n")
	obj := 7.0
	res := &results.SweepResults{SweepID: sweepID, Metric: sweeps.Metric{Name: "reward", Goal: "maximize"},
		Trials: []results.TrialSummary{{TrialID: "0-s1", Outcome: results.OutcomeDiverged, Objective: &obj, Steps: 0}}}
	reg := &regression.Report{Verdict: regression.VerdictPass}
	in, err := sweepstore.ReportInput(ctx, s, res, nil, reg, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Trials[0].Steps != 0 {
		t.Errorf("ReportInput changed the results it was handed: steps %d, want 0", res.Trials[0].Steps)
	}
	if in.Results == res || in.Results.Trials[0].Steps != 3000 {
		t.Errorf("input results: steps %d (same value as handed: %v), want a copy with steps 3000", in.Results.Trials[0].Steps, in.Results == res)
	}
	if in.Regression != reg || len(in.Curves["0-s1"]) != 2 {
		t.Errorf("input regression %p (want %p), curve %v; want the report handed over and the 2-point curve", in.Regression, reg, in.Curves["0-s1"])
	}
}

// A sweep without spec.json, plan.json or regression.json has none of them, and no error.
func TestOptionalFiles(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if spec, err := sweepstore.LoadSpec(ctx, s, sweepID); spec != nil || err != nil {
		t.Errorf("LoadSpec = %v, %v; want nil, nil", spec, err)
	}
	if reg, err := sweepstore.LoadRegression(ctx, s, sweepID); reg != nil || err != nil {
		t.Errorf("LoadRegression = %v, %v; want nil, nil", reg, err)
	}
	if plan, err := sweepstore.LoadPlanTrials(ctx, s, sweepID); plan != nil || err != nil {
		t.Errorf("LoadPlanTrials = %v, %v; want none", plan, err)
	}
	put(t, s, artifacts.RegressionKey(sweepID), "{not json")
	if _, err := sweepstore.LoadRegression(ctx, s, sweepID); err == nil || !strings.Contains(err.Error(), "regression.json") {
		t.Errorf("LoadRegression of a broken file: %v, want an error naming regression.json", err)
	}
}

// Result parts written with WriteResultsPart come back merged with the plan, each trial once.
func TestResultsPartsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	put(t, s, artifacts.PlanKey(sweepID), `{"trials": [{"id": "0-s1", "config": 0, "seed": 1, "params": {"lr": 0.1}}]}`)
	for part, outcome := range []string{"failed", "cancelled"} {
		if err := sweepstore.WriteResultsPart(ctx, s, sweepID, part, []results.TrialSummary{{TrialID: "0-s1", Outcome: outcome}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sweepstore.LoadTrialSummaries(ctx, s, sweepID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Outcome != "cancelled" || got[0].Params["lr"] != 0.1 || got[0].Seed != 1 {
		t.Errorf("LoadTrialSummaries = %+v, want 0-s1 once, cancelled (the later part), with the plan's seed and params", got)
	}
}

// The decision log reads back each decision once, in the order the sweep made them, whichever parts
// were written again (a retried RecordResults) and in whatever order the store lists them.
func TestDecisionsRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	d := func(seq int, trial string) results.Decision {
		return results.Decision{Seq: seq, TrialID: trial, Segment: 0, Action: "stop", Reason: "r"}
	}
	for _, w := range []struct {
		part int
		ds   []results.Decision
	}{{1, []results.Decision{d(2, "b"), d(3, "c")}}, {0, []results.Decision{d(0, "a"), d(1, "d")}}, {1, []results.Decision{d(2, "b"), d(3, "c")}}} {
		if err := sweepstore.WriteDecisionsPart(ctx, s, "sw", w.part, w.ds); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sweepstore.LoadDecisions(ctx, s, "sw")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, x := range got {
		if x.Seq != i {
			t.Errorf("decision %d has seq %d", i, x.Seq)
		}
		ids = append(ids, x.TrialID)
	}
	if strings.Join(ids, ",") != "a,d,b,c" {
		t.Errorf("decisions = %v, want a,d,b,c", ids)
	}
	if none, err := sweepstore.LoadDecisions(ctx, s, "other"); err != nil || len(none) != 0 {
		t.Errorf("a sweep without decisions: %v, %v", none, err)
	}
}
