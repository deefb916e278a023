//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// A small pbt sweep of the built-in PPO on CartPole-v1: four members, ready every 2048 steps; the
// members exploit one another, each exploit copies the source's checkpoint into the member's own
// folder and is recorded in results.json and in the store's decision log, the trainer resumes from
// the copy with the explored parameters, and the report shows the lineage.
func TestPBTSweepExploits(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	p := filepath.Join(e.dir, "pbt.yaml")
	spec := `name: pbt
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 10240}
metric: {name: reward, goal: maximize}
method: pbt
sampler_seed: 2
seeds: [1]
parameters:
  lr: {min: 0.00003, max: 0.01, distribution: log_uniform}
  ent_coef: {min: 0.0, max: 0.02}
pbt: {population: 4, ready_steps: 2048, quantile: 0.5}
probes: {enabled: false}
concurrency: 4
`
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	watched, wcode := e.cli("submit", p, "--watch")
	if wcode != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", wcode, watched)
	}
	sweepID := sweepIDFrom(t, watched)
	if st, code := e.cli("status", sweepID); code != 0 || !strings.Contains(st, "pbt     4 members · 8 exploits · 0 replaced · ready step 8192 reached") {
		t.Errorf("status of the sweep (exit %d) lacks the pbt line:\n%s", code, st)
	}
	res := e.results(sweepID)
	if len(res.Trials) < 4 {
		t.Fatalf("results.json has %d trials, want the 4 members", len(res.Trials))
	}
	exploits := 0
	var exploited string
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps < 10240 {
			t.Errorf("member %s: %s at step %d, want completed at 10240", tr.TrialID, tr.Outcome, tr.Steps)
		}
		for _, x := range tr.Exploits {
			exploits++
			exploited = tr.TrialID
			if x.Member != tr.TrialID || x.From == tr.TrialID || x.Checkpoint != artifacts.ExploitCheckpointKey(sweepID, tr.TrialID, x.Step, filepath.Base(x.Source)) {
				t.Errorf("exploit %+v of %s, want from another member, copied into its own folder", x, tr.TrialID)
			}
			if !strings.HasPrefix(x.Source, artifacts.TrialDir(sweepID, x.From)+"/") {
				t.Errorf("exploit %+v: the source is not %s's checkpoint", x, x.From)
			}
			if _, err := os.Stat(e.store.URL(x.Checkpoint)); err != nil {
				t.Errorf("the copy of the exploited checkpoint: %v", err)
			}
			var rec results.Exploit
			e.readJSON(artifacts.ExploitKey(sweepID, tr.TrialID, x.Step), &rec)
			if rec.From != x.From || rec.Checkpoint != x.Checkpoint || rec.Step != x.Step {
				t.Errorf("decision log %+v, want the summary's exploit %+v", rec, x)
			}
			if len(rec.New) == 0 || len(rec.Old) == 0 {
				t.Errorf("decision log %+v lacks the old or new parameters", rec)
			}
		}
	}
	t.Logf("%d exploits", exploits)
	if exploits == 0 {
		t.Fatalf("no exploit recorded: %+v", res.Trials)
	}
	out, code := e.cli("status", sweepID+"/"+exploited)
	if code != 0 || !strings.Contains(out, "exploit      step ") {
		t.Errorf("status of %s (exit %d) lacks its exploits:\n%s", exploited, code, out)
	}
	html, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `id="lineage-table"`) {
		t.Error("report.html has no lineage table")
	}
	recordHistory(t, e, sweepID, "", "sweep-pbt.json")
	recordHistory(t, e, workflows.TrialWorkflowID(sweepID, exploited), "", "trial-exploited.json")
}
