//go:build integration

package integration

import (
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// A bayes sweep on a real server: 12 configurations searched on two seeds with concurrency 4 (4 of
// them random start-up), no configuration run twice, then the best two run again on seed 3; the
// results list them with their search interval and re-run score.
func TestBayesSweepSearchesAndReruns(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	spec := e.spec("bayes", `
  total_steps: 2000
metric: {name: reward, goal: maximize}
method: bayes
trials: 12
sampler_seed: 3
seeds: [1, 2]
parameters:
  lr: {min: 0.00001, max: 0.1, distribution: log_uniform}
  sleep_ms: {value: 5}
bayes: {startup_trials: 4, rerun_top: 2, rerun_seeds: [3]}
probes: {enabled: false}
concurrency: 4
`)
	out, code := e.cli("submit", spec, "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)
	// submit --watch ends with the best configurations, the two confirmed on a fresh seed first.
	if i := strings.Index(out, "best configurations of "+sweepID); i < 0 {
		t.Errorf("submit --watch output lacks the best configurations:\n%s", out)
	} else if lines := strings.Split(out[i:], "\n"); len(lines) < 4 || !strings.Contains(lines[1], "CONFIRMED") ||
		!strings.Contains(lines[2], "on 1 fresh seed") || !strings.Contains(lines[3], "on 1 fresh seed") {
		t.Errorf("best configurations do not rank the two confirmed first:\n%s", out[i:])
	}
	res := e.results(sweepID)
	if len(res.Trials) != 12*2+2 {
		t.Fatalf("results.json has %d trials, want 26 (12 configurations × 2 seeds, 2 re-run on seed 3)", len(res.Trials))
	}
	seen := map[string]int{}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted {
			t.Errorf("trial %s: %s, want completed", tr.TrialID, tr.Outcome)
		}
		if tr.Seed == 1 {
			k := sweeps.ConfigKey(tr.Params)
			if c, dup := seen[k]; dup {
				t.Errorf("configurations %d and %d are the same: %s", c, tr.Config, k)
			}
			seen[k] = tr.Config
		}
	}
	if len(res.Confirmations) != 2 {
		t.Fatalf("results.json has %d confirmations, want 2", len(res.Confirmations))
	}
	for _, c := range res.Confirmations {
		// Two search seeds are too few for an interval (results.MinIntervalSeeds), so no inside verdict.
		if c.SearchScore == nil || c.SearchLow != nil || c.Inside != nil || c.RerunScore == nil || c.SearchSeeds != 2 || c.RerunSeeds != 1 {
			t.Errorf("confirmation %+v, want a search score over 2 seeds (too few for an interval) and a re-run score on 1", c)
		}
	}
	recordHistory(t, e, sweepID, "", "sweep-bayes.json")
}

// bayes with early_terminate (W&B's bayes + hyperband pairing) on a real server: the pruner stops
// configurations at their rungs, the search goes on from their rung values, and the re-run of the
// best configuration on a fresh seed is never pruned.
func TestBayesWithASHA(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := e.spec("bayes-asha", `
  total_steps: 9000
metric: {name: reward, goal: maximize}
method: bayes
trials: 6
seeds: [1, 2]
parameters:
  quality: {values: [90, 10, 80, 20, 70, 30]}
  sleep_ms: {value: 10}
early_terminate: {type: asha, min_steps: 1000, eta: 3}
bayes: {startup_trials: 3, rerun_top: 1, rerun_seeds: [3]}
probes: {enabled: false}
concurrency: 2
`)
	out, code := e.cli("submit", spec, "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)
	res := e.results(sweepID)
	pruned, rerun := 0, 0
	seen := map[string]bool{}
	for _, tr := range res.Trials {
		switch {
		case tr.Seed == 3:
			rerun++
			if tr.Outcome != results.OutcomeCompleted || tr.Steps != 9000 {
				t.Errorf("re-run trial %s: %s at %d steps, want completed at 9000", tr.TrialID, tr.Outcome, tr.Steps)
			}
		case tr.Outcome == results.OutcomePruned:
			pruned++
		case tr.Outcome != results.OutcomeCompleted:
			t.Errorf("trial %s: %s, want completed or pruned", tr.TrialID, tr.Outcome)
		}
		if tr.Seed == 1 {
			k := sweeps.ConfigKey(tr.Params)
			if seen[k] {
				t.Errorf("configuration %v run twice", tr.Params)
			}
			seen[k] = true
		}
	}
	if len(seen) != 6 || pruned == 0 || rerun != 1 || len(res.Confirmations) != 1 {
		t.Errorf("%d configurations, %d trials pruned, %d re-run, %d confirmations; want all 6 values, some pruned, one re-run and its confirmation", len(seen), pruned, rerun, len(res.Confirmations))
	}
	// quality 90 is in front at every rung, so it completes, and it is the best completed.
	if c := res.Confirmations; len(c) == 1 && c[0].Params["quality"] != 90.0 {
		t.Errorf("confirmed %v, want quality 90", c[0].Params)
	}
}
