//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
)

// realRun is a real W&B run file of the shared corpus (CleanRL's DQN on CartPole, wandb 0.13.11, 969
// rows with charts/episodic_return); the test skips, saying so, when the corpus is absent.
func realRun(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "shared", "corpus", "wandb-runs", "double_dqn",
		"run-20241126_231724-37bc455c", "run-37bc455c.wandb"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the shared corpus of W&B run files is absent (%v): this test replays one of its real runs", err)
	}
	return p
}

// A W&B sweep config as a W&B user has it — hyperband, no rlsweep block — whose trainer is a plain
// script that logs with wandb.log (a real run's rows replayed into a W&B run file, its objective
// scaled by the configuration's quality) and never checkpoints: rlsweep reads the run file, judges
// each trial as its stream passes W&B's bands (3, 9, 27, 81 logged values), stops the pruned
// trainers, keeps the best configuration to its end, and results and the report say what was saved.
// The same with a TensorBoard script.
func TestWandBHyperbandPrunesPlainScripts(t *testing.T) {
	src := realRun(t)
	for _, format := range []string{"wandb", "tensorboard"} {
		t.Run(format, func(t *testing.T) {
			e := newEnv(t)
			e.startWorker("a", "--slots", "2")
			cfg := filepath.Join(e.dir, "sweep.yaml")
			y := fmt.Sprintf(`project: hyperband-%s
method: grid
metric: {name: charts/episodic_return, goal: maximize}
early_terminate: {type: hyperband, min_iter: 3, eta: 3}
command: [%q, --format=%s, --source=%s, --rows=120, --sleep_ms=40, "${args}"]
parameters:
  quality: {values: [1.0, 0.2, 0.9, 0.3, 0.8, 0.4]}
`, format, replayBin, format, src)
			if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			out, code := e.cli("validate", "--explain", cfg)
			if code != 0 || !strings.Contains(out, "stop") {
				t.Fatalf("validate --explain exited %d, or does not name the stop mode:\n%s", code, out)
			}
			out, code = e.cli("submit", cfg, "--watch")
			if code != 0 {
				t.Fatalf("submit --watch exited %d:\n%s", code, out)
			}
			sweepID := sweepIDFrom(t, out)
			res := e.results(sweepID)
			if len(res.Trials) != 6 {
				t.Fatalf("results.json has %d trials, want 6", len(res.Trials))
			}
			pruned := 0
			var best results.TrialSummary
			for _, tr := range res.Trials {
				switch tr.Outcome {
				case results.OutcomePruned:
					pruned++
					if tr.Pruning == nil || tr.Pruning.Value == nil || tr.Steps >= 119 {
						t.Errorf("pruned trial %s: steps %d, pruning %+v; want stopped before its last row, with its value", tr.TrialID, tr.Steps, tr.Pruning)
					}
				case results.OutcomeCompleted:
				default:
					t.Errorf("trial %s ended %s: %s", tr.TrialID, tr.Outcome, tr.Error)
				}
				if tr.Config == 0 {
					best = tr
				}
			}
			if best.Outcome != results.OutcomeCompleted || best.Steps != 119 {
				t.Errorf("the best configuration (quality 1.0) ended %s at step %d, want completed at 119 (all its rows)", best.Outcome, best.Steps)
			}
			t.Logf("%d of 6 trials pruned; best: %s at step %d", pruned, best.Outcome, best.Steps)
			if pruned < 3 {
				t.Errorf("%d of 6 trials pruned, want at least 3 (W&B's bands keep the top third)", pruned)
			}
			// The default source, auto, settled on what the script wrote, and status says which.
			out, code = e.cli("status", sweepID+"/"+best.TrialID)
			if code != 0 || !strings.Contains(out, "metrics") || !strings.Contains(out, format+" (") {
				t.Errorf("status of %s (exit %d) does not say its metrics came from %s:\n%s", best.TrialID, code, format, out)
			}
			html, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(html), `id="pruning-saved"`) {
				t.Errorf("report.html does not say what pruning saved")
			}
		})
	}
}

// W&B's bayes + hyperband pairing on the same plain script: the search's trials are judged as their
// run files pass the bands, and the configurations behind the cutoff are stopped.
func TestWandBBayesHyperbandPrunes(t *testing.T) {
	src := realRun(t)
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	cfg := filepath.Join(e.dir, "sweep.yaml")
	y := fmt.Sprintf(`project: bayes-hyperband
method: bayes
run_cap: 6
metric: {name: charts/episodic_return, goal: maximize}
early_terminate: {type: hyperband, min_iter: 3, eta: 3}
command: [%q, --format=wandb, --source=%s, --rows=120, --sleep_ms=40, "${args}"]
parameters:
  quality: {min: 0.1, max: 1.0}
`, replayBin, src)
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := e.cli("submit", cfg, "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	res := e.results(sweepIDFrom(t, out))
	pruned, completed := 0, 0
	for _, tr := range res.Trials {
		switch tr.Outcome {
		case results.OutcomePruned:
			pruned++
		case results.OutcomeCompleted:
			completed++
		default:
			t.Errorf("trial %s ended %s: %s", tr.TrialID, tr.Outcome, tr.Error)
		}
	}
	t.Logf("%d trials: %d pruned, %d completed", len(res.Trials), pruned, completed)
	if pruned < 2 || completed < 1 {
		t.Errorf("%d pruned, %d completed of %d trials; want at least 2 pruned at W&B's bands and the best completed", pruned, completed, len(res.Trials))
	}
}
