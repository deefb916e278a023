package workflows_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/results"
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

// A bayes sweep that continues as new carries when each result became known and the results, not the
// configurations' parameters; the next run makes the same configurations again, hears the trials
// still running, and goes on without suggesting a configuration twice.
func TestSweepBayesContinueAsNew(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c%3+1) * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 8)
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 4*time.Minute+30*time.Second)
	in := sweepInput(bayesSweepSpec(t, 12, 3)) // 3 at once: a configuration has one seed started at the continue-as-new
	in.ResultsFlushInterval = 1000 * time.Hour
	env.ExecuteWorkflow(workflows.Sweep, in)
	next := continuedInput(t, env)
	st := next.State
	if st == nil || st.Scheduler.Bayes == nil {
		t.Fatalf("continued-as-new state %+v, want the bayes scheduler's", st)
	}
	carried, _ := json.Marshal(st.Scheduler)
	if strings.Contains(string(carried), `"q"`) || strings.Contains(string(carried), "params") {
		t.Errorf("carried scheduler state holds parameters: %s", carried)
	}
	first := map[string]map[string]any{}
	for _, in := range fakes.inputs {
		first[in.Trial.ID] = in.Trial.Params
	}
	t.Logf("running %v, started %d, configs %d", st.Running, st.Scheduler.Bayes.Started, len(st.Scheduler.Bayes.Configs))
	if len(st.Running) == 0 || len(st.Scheduler.Bayes.Configs) < 3 {
		t.Fatalf("at the continue-as-new %d trials run and %d configurations were suggested; want some of each", len(st.Running), len(st.Scheduler.Bayes.Configs))
	}

	env2 := s.NewTestWorkflowEnvironment()
	fakes2 := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes2.register(env2)
	var res2 resultsRecorder
	res2.mock(env2, 8)
	for i, id := range st.Running {
		q := toFloat(first[id]["q"])
		sum := results.TrialSummary{TrialID: id, Outcome: results.OutcomeCompleted, Objective: &q}
		env2.RegisterDelayedCallback(func() { env2.SignalWorkflow(workflows.SignalTrialDone, sum) }, time.Duration(i+1)*time.Minute)
	}
	env2.ExecuteWorkflow(workflows.Sweep, next)
	if err := env2.GetWorkflowError(); err != nil {
		t.Fatalf("next run: %v", err)
	}
	byConfig := map[int]map[string]any{}
	for id, p := range first {
		var c int
		fmt.Sscanf(id, "%d-s", &c)
		byConfig[c] = p
	}
	for _, in := range fakes2.inputs {
		tr := in.Trial
		if p, ok := byConfig[tr.Config]; ok && sweeps.ConfigKey(p) != sweeps.ConfigKey(tr.Params) {
			t.Errorf("configuration %d: the next run starts it with %v, the first run did with %v", tr.Config, tr.Params, p)
		}
		if _, ok := first[tr.ID]; ok {
			t.Errorf("trial %s started again by the next run", tr.ID)
		}
		byConfig[tr.Config] = tr.Params
	}
	if len(byConfig) != 12 {
		t.Errorf("%d configurations ran, want 12", len(byConfig))
	}
	seen := map[string]int{}
	for c, p := range byConfig {
		if d, dup := seen[sweeps.ConfigKey(p)]; dup {
			t.Errorf("configurations %d and %d are the same: %v", d, c, p)
		}
		seen[sweeps.ConfigKey(p)] = c
	}
	var out workflows.SweepResult
	if err := env2.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Total != 12*2+3*2 || out.Status != workflows.PhaseCompleted {
		t.Errorf("result %+v, want completed with 30 trials (12 × 2 and the re-run's 3 × 2)", out)
	}
}
