package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// WriteResults draws report.html beside results.json, with the diverged trial's curve, its verdict and
// the probe results, and records the steps a trial stopped mid-segment really reached.
func TestWriteResultsDrawsReport(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	obj := 42.0
	trials := []results.TrialSummary{
		{TrialID: "0-s1", Seed: 1, Params: map[string]any{"lr": 0.1}, Outcome: "completed", Objective: &obj, Steps: 4000, WallSeconds: 4},
		// The Trial workflow counts steps at segment ends: a one-segment trial stopped at 3000 says 0.
		{TrialID: "1-s1", Config: 1, Seed: 1, Params: map[string]any{"lr": 1.0}, Outcome: "diverged", StopRule: "non_finite", Steps: 0, WallSeconds: 3},
	}
	if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: sweepID, Trials: trials}); err != nil {
		t.Fatal(err)
	}
	put := func(key, body string) {
		t.Helper()
		if err := store.Put(ctx, key, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	put(artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0), "{\"step\":1000,\"reward\":10}\n")
	put(artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 1), "{\"step\":4000,\"reward\":42}\n")
	put(artifacts.MetricsPartKey(sweepID, "1-s1", 0, 1, 0), "{\"step\":1000,\"reward\":5}\nnot json\n{\"step\":3000,\"reward\":NaN}\n")
	dump, _ := json.Marshal(sweepstore.Divergence{SweepID: sweepID, TrialID: "1-s1", Verdict: diagnostics.Verdict{
		Level: diagnostics.Stop, Rule: "non_finite", Metric: "reward", Step: 3000, Advice: "check the reward scale"}})
	put(artifacts.DivergenceKey(sweepID, "1-s1"), string(dump))
	probesJSON, _ := json.Marshal(activities.ProbeReport{Results: []activities.ProbeResult{{Probe: "1", Level: 1, Passed: true},
		{Probe: "4", Level: 4, Error: "advantage sign flipped"}}, Failed: "4"})
	put(artifacts.ProbesKey(sweepID), string(probesJSON))

	spec := sweeps.Spec{Name: "unit", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"},
		Trainer: sweeps.Trainer{TotalSteps: 4000}, Parameters: []sweeps.Parameter{{Name: "lr", Values: []any{0.1, 1.0}}}}
	out, err := a.WriteResults(ctx, activities.WriteResultsInput{SweepID: sweepID, Spec: spec, Status: "completed"})
	if err != nil {
		t.Fatal(err)
	}
	if out.ReportKey != artifacts.ReportKey(sweepID) || out.ReportError != "" {
		t.Fatalf("WriteResults = %+v, want report.html written", out)
	}
	f := &fixture{t: t, store: store}
	html := f.read(out.ReportKey)
	for _, want := range []string{`id="plot-learning-curves"`, "check the reward scale", "advantage sign flipped",
		// 4000 − 3000 steps at the trial's 1000 steps/s.
		"<b>1\u202f000</b> environment steps", "<b>1s</b> of trial time"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	var res results.SweepResults
	if err := json.Unmarshal([]byte(f.read(out.ResultsKey)), &res); err != nil {
		t.Fatal(err)
	}
	if got := res.Trials[1].Steps; got != 3000 {
		t.Errorf("diverged trial's steps in results.json = %d, want 3000 (where it was stopped)", got)
	}
	if got := res.Trials[0].Steps; got != 4000 {
		t.Errorf("completed trial's steps = %d, want 4000", got)
	}
	if !strings.Contains(f.read(out.CSVKey), ",diverged,,non_finite,3000,") {
		t.Errorf("results.csv lacks the diverged trial's steps:\n%s", f.read(out.CSVKey))
	}
}

// WriteResults with NoReport writes results.json and results.csv and draws no report.html (the
// Regression workflow draws it once, with its comparison).
func TestWriteResultsNoReport(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	obj := 1.0
	if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: sweepID, Trials: []results.TrialSummary{
		{TrialID: "0-s1", Seed: 1, Params: map[string]any{"lr": 0.1}, Outcome: "completed", Objective: &obj, Steps: 10}}}); err != nil {
		t.Fatal(err)
	}
	spec := sweeps.Spec{Name: "unit", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"},
		Trainer: sweeps.Trainer{TotalSteps: 10}, Parameters: []sweeps.Parameter{{Name: "lr", Values: []any{0.1}}}}
	out, err := a.WriteResults(ctx, activities.WriteResultsInput{SweepID: sweepID, Spec: spec, Status: "completed", NoReport: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.ResultsKey == "" || out.CSVKey == "" || out.ReportKey != "" || out.ReportError != "" {
		t.Errorf("WriteResults with NoReport = %+v, want results.json and results.csv only", out)
	}
	if _, err := store.Get(ctx, artifacts.ReportKey(sweepID)); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("report.html after WriteResults with NoReport: %v, want none", err)
	}
}
