//go:build integration

package integration

import (
	"os"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// An asha sweep on a real server and worker: segments end at the rungs (1000 and 3000 of 9000 steps),
// the two seeds of a configuration are judged together, only the configuration in front at each rung
// goes on, the others end pruned after their first segment, and status, results.csv and the report
// say so.
func TestASHASweepPrunes(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := e.spec("asha", `
  total_steps: 9000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1, 2]
parameters:
  quality: {values: [90, 10, 80, 20, 70, 30]}
  sleep_ms: {value: 10}
early_terminate: {type: asha, min_steps: 1000, eta: 3}
order: listed  # the assertions follow the listed arrival order: quality 90 first
probes: {enabled: false}
concurrency: 2
`)
	out, code := e.cli("submit", spec, "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)
	if !strings.Contains(out, "2 completed, 10 pruned") {
		t.Errorf("submit --watch output lacks the pruned count:\n%s", out)
	}
	res := e.results(sweepID)
	if len(res.Trials) != 12 {
		t.Fatalf("results.json has %d trials, want 12", len(res.Trials))
	}
	var pruned results.TrialSummary
	for _, tr := range res.Trials {
		switch {
		case tr.Config == 0:
			if tr.Outcome != results.OutcomeCompleted || tr.Steps != 9000 || tr.Segments != 3 {
				t.Errorf("trial %s: %s, %d steps, %d segments; want completed, 9000, 3 (ending at 1000, 3000, 9000)", tr.TrialID, tr.Outcome, tr.Steps, tr.Segments)
			}
		default:
			p := tr.Pruning
			if tr.Outcome != results.OutcomePruned || tr.Steps != 1000 || tr.Segments != 1 || p == nil || p.Step != 1000 || p.Value == nil || p.Cutoff == nil {
				t.Errorf("trial %s = %+v (pruning %+v), want pruned at step 1000 with its value and cutoff", tr.TrialID, tr, p)
			}
			pruned = tr
		}
	}
	out, code = e.cli("status", sweepID+"/"+pruned.TrialID)
	if code != 0 || !strings.Contains(out, "pruning") || !strings.Contains(out, "asha, rung 0 (step 1000)") {
		t.Errorf("status of %s (exit %d) lacks its pruning:\n%s", pruned.TrialID, code, out)
	}
	csv, err := os.ReadFile(e.store.URL(artifacts.ResultsCSVKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csv), "pruned_cutoff") || !strings.Contains(string(csv), ",pruned,") {
		t.Errorf("results.csv lacks the pruned outcome or its cutoff:\n%s", csv)
	}
	html, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `id="pruning-saved"`) {
		t.Errorf("report.html does not say what pruning saved")
	}
	recordHistory(t, e, sweepID, "", "sweep-asha.json")
	recordHistory(t, e, workflows.TrialWorkflowID(sweepID, pruned.TrialID), "", "trial-pruned.json")
}
