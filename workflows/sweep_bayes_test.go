package workflows_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// bayesSweepSpec is a bayes sweep over q (a small discrete space: 16 values × 2 modes) on seeds 1 and
// 2; the fake trials' objective is q.
func bayesSweepSpec(t *testing.T, trials, concurrency int) sweeps.Spec {
	t.Helper()
	y := fmt.Sprintf(`name: unit
trainer: {command: [train], total_steps: 1000}
metric: {name: reward, goal: maximize}
method: bayes
trials: %d
sampler_seed: 7
seeds: [1, 2]
parameters:
  q: {min: 0, max: 15, distribution: int_uniform}
  mode: {values: [a, b]}
probes: {enabled: false}
concurrency: %d
bayes: {startup_trials: 4, rerun_top: 3}
`, trials, concurrency)
	spec, err := sweeps.Decode(strings.NewReader(y), "unit.yaml")
	if err == nil {
		err = spec.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	return *spec
}

// A bayes sweep with concurrency 8 runs each configuration on both its seeds, never suggests a
// configuration twice though eight trials are always running, and ends with the three best
// configurations run again on fresh seeds (3 and 4).
func TestSweepBayesNoDuplicateSuggestions(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c%5+1) * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 8)
	spec := bayesSweepSpec(t, 24, 8)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("sweep error: %v", err)
	}
	if fakes.maxAtOnce != 8 {
		t.Errorf("at most %d trials ran at once, want 8", fakes.maxAtOnce)
	}
	byConfig := map[int]map[string]any{}
	seedsOf := map[int][]int64{}
	for _, in := range fakes.inputs {
		tr := in.Trial
		if p, ok := byConfig[tr.Config]; ok && sweeps.ConfigKey(p) != sweeps.ConfigKey(tr.Params) {
			t.Errorf("configuration %d ran with %v and %v", tr.Config, p, tr.Params)
		}
		byConfig[tr.Config] = tr.Params
		seedsOf[tr.Config] = append(seedsOf[tr.Config], tr.Seed)
	}
	if len(byConfig) != 24 {
		t.Errorf("%d configurations ran, want 24", len(byConfig))
	}
	seen := map[string]int{}
	for c := range 24 {
		k := sweeps.ConfigKey(byConfig[c])
		if d, dup := seen[k]; dup {
			t.Errorf("configurations %d and %d are the same: %s", d, c, k)
		}
		seen[k] = c
	}
	rerun := 0
	for c, seeds := range seedsOf {
		slices.Sort(seeds)
		switch fmt.Sprint(seeds) {
		case "[1 2]":
		case "[1 2 3 4]":
			rerun++
			if q := toFloat(byConfig[c]["q"]); q < 13 {
				t.Errorf("configuration %d (q %v) re-run, want only the best three (q 14 or 15 of a mode, or 13)", c, q)
			}
		default:
			t.Errorf("configuration %d ran on seeds %v, want [1 2], or [1 2 3 4] when re-run", c, seeds)
		}
	}
	if rerun != 3 {
		t.Errorf("%d configurations re-run, want 3", rerun)
	}
	byID, times := res.recorded()
	if len(byID) != 24*2+3*2 {
		t.Errorf("%d trials recorded, want %d", len(byID), 24*2+3*2)
	}
	for id, n := range times {
		if n != 1 {
			t.Errorf("%s recorded %d times", id, n)
		}
	}
}
