//go:build integration

package integration

import (
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
)

// A sweep with three objectives — reward (maximize), the env-steps until the windowed reward reaches
// 50, and the seed failure rate — over four configurations whose reward plateaus at quality 200, 100,
// 60 and 40 (the scripted trainer's reward is quality·(1 − e^(−step/20000))). Seed 2 of the first
// configuration, the best on every objective, NaNs from step 30,000 and diverges: that configuration is
// infeasible and never on the front. The front is the quality-100 configuration (higher reward and
// sooner at 50 than quality 60); quality 40 never reaches 50. results.json, results --pareto,
// results.csv and the report all say so, and the report's Pareto figures are drawn in headless Chromium.
func TestParetoFrontOfThreeObjectives(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	spec := e.spec("pareto", `  total_steps: 40000
metric:
  - {name: reward}
  - {name: env_steps, target: 50}
  - {name: seed_failure_rate}
method: grid
seeds: [1, 2, 3]
parameters:
  quality: {values: [200, 100, 60, 40]}
  sleep_ms: {value: 5}
  fault: {value: 1}
  fault_at: {value: 30000}
  fault_env: {value: "RLSWEEP_TRIAL_ID=0-s2"}
probes: {enabled: false}
diagnostics: {warmup_steps: 5000}
concurrency: 4
`)
	if out, code := e.cli("validate", "--explain", spec); code != 0 || !strings.Contains(out, "objective 2: minimize env_steps_to_target") {
		t.Fatalf("validate --explain exited %d, want the objectives:\n%s", code, out)
	}
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d:\n%s", code, out)
	}
	if out, code := e.cli("status", sweepID); code != 0 || !strings.Contains(out, "front   1 configuration on the Pareto front of 3 objectives (rlsweep results --pareto)") {
		t.Errorf("status exited %d, want the summary to count the front:\n%s", code, out)
	}
	res := e.results(sweepID)
	if len(res.Objectives) != 3 || len(res.Pareto) != 4 {
		t.Fatalf("results.json: %d objectives, %d configurations on its Pareto list; want 3 and 4", len(res.Objectives), len(res.Pareto))
	}
	wantRank := []int{0, 1, 2, 3}
	for i, p := range res.Pareto {
		if p.Rank != wantRank[i] {
			t.Errorf("configuration %d (quality %v): rank %d (why %q), want %d; values %v", p.Config, p.Params["quality"], p.Rank, p.Why, wantRank[i], p.Values)
		}
	}
	if p := res.Pareto[0]; p.Why != results.WhyDiverged || math.Abs(p.Values[2]-1.0/3) > 1e-9 {
		t.Errorf("configuration 0: why %q, seed failure rate %v; want infeasible with 1 of 3 seeds failed", p.Why, p.Values[2])
	}
	// quality 100 reaches 50 at 20000·ln 2 ≈ 13,863 steps (windowed, with a record every 1,000 steps);
	// quality 60 at 20000·ln 6 ≈ 35,835; quality 40 never.
	if v := res.Pareto[1].Values[1]; v < 13000 || v > 17000 || res.Pareto[1].Reached != 3 {
		t.Errorf("quality 100: env_steps_to_target %v reached by %d seeds, want about 14,000 by 3", v, res.Pareto[1].Reached)
	}
	if v := res.Pareto[2].Values[1]; v < 35000 || v > 40000 {
		t.Errorf("quality 60: env_steps_to_target %v, want about 36,000", v)
	}
	if v := res.Pareto[3].Values[1]; !math.IsInf(v, 1) || res.Pareto[3].Reached != 0 {
		t.Errorf("quality 40: env_steps_to_target %v reached by %d, want never", v, res.Pareto[3].Reached)
	}
	for _, tr := range res.Trials {
		if q := tr.Params["quality"]; q == 100.0 && tr.TargetStep == 0 || q == 40.0 && tr.TargetStep != 0 {
			t.Errorf("trial %s (quality %v): target step %d", tr.TrialID, q, tr.TargetStep)
		}
	}

	out, code := e.cli("results", "--pareto", sweepID)
	front := regexp.MustCompile(`(?m)^1\s+1\s+100\s`)
	if code != 0 || !front.MatchString(out) || !strings.Contains(out, "not ranked: "+results.WhyDiverged) ||
		!strings.Contains(out, "never (0 of 3 reached)") || !strings.Contains(out, "1 configurations on the Pareto front, 2 ranked behind it, 1 not ranked") {
		t.Errorf("results --pareto exited %d, want configuration 1 first on the front, configuration 0 infeasible, quality 40 never:\n%s", code, out)
	}
	if out, code := e.cli("results", "--pareto", "--output", "csv", sweepID); code == 0 || !strings.Contains(out, "--pareto: with --output csv") {
		t.Errorf("results --pareto --output csv exited %d, want a usage error naming the flags:\n%s", code, out)
	}
	csvText, err := os.ReadFile(e.store.URL(artifacts.ResultsCSVKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(csvText))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		rank := r[col["pareto_rank"]]
		switch r[col["config"]] {
		case "0":
			if rank != "" {
				t.Errorf("results.csv: trial %s of the infeasible configuration has pareto_rank %q", r[0], rank)
			}
		case "1":
			if rank != "1" || r[col["target_step"]] == "" {
				t.Errorf("results.csv: trial %s of the front has pareto_rank %q, target_step %q", r[0], rank, r[col["target_step"]])
			}
		}
	}

	page := e.reportPage(sweepID)
	for _, want := range []string{`id="plot-pareto-0-1"`, `id="pareto-table"`, `id="plot-hypervolume"`, `id="threshold-table"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("chromium not found: the report's Pareto figures are not checked in a browser (scripts/install-tools.sh chromium)")
		return
	}
	local := e.dir + "/report.html"
	dom, logs := runChromium(t, chromium, local, "--dump-dom")
	if errs := consoleErrors(logs); len(errs) > 0 {
		t.Errorf("console errors rendering report.html:\n%s", strings.Join(errs, "\n"))
	}
	for _, id := range []string{"plot-pareto-0-1", "plot-pareto-0-2", "plot-pareto-1-2", "plot-hypervolume"} {
		m := regexp.MustCompile(`<figure id="` + id + `"><svg [^>]*>(?s:(.*?))</svg>`).FindStringSubmatch(dom)
		if m == nil || strings.Count(m[1], "<path") < 5 {
			t.Errorf("rendered DOM lacks figure %q with drawn paths", id)
		}
	}
}

// asha with two objectives in stop mode: the trainers' passes of the rungs carry each trial's target
// step (RungPassed.TargetStep, from the segment's log), and each rung keeps its Pareto front. Four
// configurations, one at a time in listed order, whose reward is quality·(1 − e^(−step/τ)) with
// τ = 20000·(quality/200)³: quality 200 has the highest return and is slowest to 50 (about 6,000
// steps), 100 and 60 lower and sooner (about 2,000 and 1,000), 40 never reaches 50. At the first rung
// (5,000 steps) quality 60's return (60) is below quality 100's (86), which asha on return alone
// (eta 2: the top one of three) would stop it for, but it reached 50 first: it is on the front and
// trains to the end. Quality 40 is dominated and pruned there. The three trained to the end are the
// front.
func TestParetoASHAKeepsTheFront(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := e.spec("pareto-asha", `  total_steps: 40000
metric:
  - {name: reward}
  - {name: env_steps, target: 50}
method: grid
order: listed
seeds: [1, 2]
parameters:
  quality: {values: [200, 100, 60, 40]}
  tau_exponent: {value: 3}
  step_size: {value: 500}
  sleep_ms: {value: 20}
probes: {enabled: false}
diagnostics: {warmup_steps: 5000}
concurrency: 2
early_terminate: {type: asha, min_steps: 5000, eta: 2, mode: stop}
`)
	if out, code := e.cli("validate", "--explain", spec); code != 0 || !strings.Contains(out, "one goes on if it is on their Pareto front there") {
		t.Fatalf("validate --explain exited %d, want the rule of several objectives:\n%s", code, out)
	}
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d:\n%s", code, out)
	}
	res := e.results(sweepID)
	for _, tr := range res.Trials {
		q := tr.Params["quality"]
		switch {
		case q == 40.0 && (tr.Outcome != results.OutcomePruned || tr.Pruning == nil || tr.Pruning.Rung != 0 || tr.Pruning.Cutoff != nil):
			t.Errorf("trial %s (quality 40): %s (pruning %+v), want pruned at the first rung off the front, with no cutoff", tr.TrialID, tr.Outcome, tr.Pruning)
		case q != 40.0 && tr.Outcome != results.OutcomeCompleted:
			t.Errorf("trial %s (quality %v): %s (pruning %+v), want completed: on every rung's front", tr.TrialID, q, tr.Outcome, tr.Pruning)
		case q == 60.0 && (tr.TargetStep == 0 || tr.TargetStep > 1500):
			t.Errorf("trial %s (quality 60): target step %d, want about 1,000", tr.TrialID, tr.TargetStep)
		}
	}
	ranked := 0
	for _, p := range res.Pareto {
		if p.Rank == 1 {
			ranked++
		}
	}
	if ranked != 3 {
		t.Errorf("results.json: %d configurations on the front, want 3 (qualities 200, 100, 60): %+v", ranked, res.Pareto)
	}
}
