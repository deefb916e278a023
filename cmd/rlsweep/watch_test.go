package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// endedTemporal is fakeTemporal whose ended sweeps answer GetWorkflow with their result.
type endedTemporal struct {
	*fakeTemporal
	result workflows.SweepResult
}

func (c *endedTemporal) GetWorkflow(_ context.Context, id, _ string) client.WorkflowRun {
	return &endedRun{id: id, result: c.result}
}

// endedRun is a sweep run that has ended with result; any other call panics through the nil embedded
// run.
type endedRun struct {
	client.WorkflowRun
	id     string
	result workflows.SweepResult
}

func (r *endedRun) GetID() string { return r.id }

func (r *endedRun) Get(_ context.Context, v any) error {
	*v.(*workflows.SweepResult) = r.result
	return nil
}

// bayesResults is an ended bayes sweep: five configurations on the search's seeds 1 and 2, the two
// best re-run on fresh seeds 3 to 5, one configuration failed on both seeds.
func bayesResults() *results.SweepResults {
	const id = "sweep/lunar-bayes/5e6f7a8b"
	type cfg struct {
		lr, clip float64
		scores   []float64 // per seed 1, 2, …; NaN: the trial failed
	}
	configs := []cfg{
		{0.0003, 0.2, []float64{412.5, 398.25, 401.75, 395.5, 407}},
		{0.001, 0.1, []float64{455.125, 470.5, 301.25, 288, 310.5}},
		{0.0001, 0.3, []float64{210, 198.5}},
		{0.003, 0.2, []float64{-1, -1}},
		{0.00065104345, 0.15, []float64{380.25}},
	}
	var trials []results.TrialSummary
	for c, cf := range configs {
		for i, score := range cf.scores {
			seed := int64(i + 1)
			t := results.TrialSummary{TrialID: sweeps.TrialID(c, seed), Config: c, Seed: seed,
				Params: map[string]any{"lr": cf.lr, "clip": cf.clip}, Steps: 200000, Segments: 2}
			if score < 0 {
				t.Outcome, t.Error = results.OutcomeFailed, "trainer exited with status 1"
			} else {
				t.Outcome, t.Objective = results.OutcomeCompleted, f64(score)
			}
			trials = append(trials, t)
		}
	}
	metric := sweeps.Metric{Name: "reward", Goal: "maximize", Bounds: &[2]float64{-200, 500}}
	return &results.SweepResults{SweepID: id, Name: "lunar-bayes", Status: "completed", Metric: metric,
		Params: []string{"lr", "clip"}, Trials: trials,
		Confirmations: results.Confirmations(trials, []int64{1, 2}, true, metric.Bounds)}
}

// The end of submit --watch (and dev): how the sweep ended, where its results are, and its best
// configurations as `results --top` ranks them, read from the stored results.
func TestWatchToEnd(t *testing.T) {
	res := bayesResults()
	dir := t.TempDir()
	store, err := artifacts.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(res)
	if err := store.Put(context.Background(), artifacts.ResultsKey(res.SweepID), bytes.NewReader(js)); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, tr := range res.Trials {
		counts[tr.Outcome]++
	}
	fake := &endedTemporal{
		fakeTemporal: &fakeTemporal{sweeps: map[string][]string{res.SweepID: nil}, ended: map[string]bool{res.SweepID: true}},
		result: workflows.SweepResult{SweepID: res.SweepID, Status: workflows.PhaseCompleted, Total: len(res.Trials),
			Counts: counts, ResultsKey: artifacts.ResultsKey(res.SweepID), CSVKey: artifacts.ResultsCSVKey(res.SweepID)},
	}
	t.Setenv("TEMPORAL_NAMESPACE", "")
	t.Setenv("RLSWEEP_UI_URL", "")
	f, out, errOut := testFactory()
	f.client, f.StoreURL = fake, dir
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())
	if err := watchToEnd(cmd, f, res.SweepID, false); err != nil {
		t.Fatalf("watchToEnd: %v; stderr %s", err, errOut)
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut)
	}
	golden(t, "submit-watch-end.golden", strings.ReplaceAll(out.String(), dir, "STORE"))
}
