//go:build integration

package integration

import (
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// A sweep in which some trials write NaN at a chosen step, some let action_std_min fall to 0, some
// report grad_norm 1e5, and some are healthy but noisy: every divergent trial ends diverged by the
// right rule within one record of its trigger, its divergence dump stored; no healthy trial is stopped.
func TestDiagnosticsStopDivergentTrials(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "6")
	const faultAt = 30000
	spec := e.spec("diverge", `
  total_steps: 60000
seeds: [1, 2, 3]
parameters:
  fault: {values: [0, 1, 2, 3]}
  fault_at: {value: 30000}
  noise: {value: 5}
  sleep_ms: {value: 10}
probes: {enabled: false}
concurrency: 6
`)
	sweepID := e.submit(spec, "--watch")
	wantRule := map[int64]string{0: "", 1: diagnostics.RuleNonFinite, 2: diagnostics.RuleStdNonPositive, 3: diagnostics.RuleGradExplosion}
	res := e.results(sweepID)
	if len(res.Trials) != 12 {
		t.Fatalf("results.json has %d trials, want 12", len(res.Trials))
	}
	for _, tr := range res.Trials {
		fault, _ := tr.Params["fault"].(float64)
		rule := wantRule[int64(fault)]
		if rule == "" {
			if tr.Outcome != results.OutcomeCompleted {
				t.Errorf("healthy trial %s ended %s (%s %s), want completed", tr.TrialID, tr.Outcome, tr.StopRule, tr.Error)
			}
			continue
		}
		if tr.Outcome != results.OutcomeDiverged || tr.StopRule != rule {
			t.Errorf("trial %s (fault %v) ended %s by %q, want diverged by %q", tr.TrialID, fault, tr.Outcome, tr.StopRule, rule)
			continue
		}
		var dump sweepstore.Divergence
		e.readJSON(artifacts.DivergenceKey(sweepID, tr.TrialID), &dump)
		if dump.Verdict.Step < faultAt || dump.Verdict.Step > faultAt+1000 {
			t.Errorf("trial %s stopped at step %d, want within one record of %d", tr.TrialID, dump.Verdict.Step, faultAt)
		}
		if len(dump.Records) == 0 || dump.LogTail == "" || dump.LastHealthyCkpt == "" {
			t.Errorf("trial %s: divergence dump lacks records (%d), log tail or last healthy checkpoint (%q)",
				tr.TrialID, len(dump.Records), dump.LastHealthyCkpt)
		}
		t.Logf("trial %s: %s at step %d, detection to kill %.1f ms", tr.TrialID, dump.Verdict.Rule, dump.Verdict.Step, dump.DetectionToKillMS)
		if rule == diagnostics.RuleNonFinite && tr.Seed == 1 {
			recordHistory(t, e, workflows.TrialWorkflowID(sweepID, tr.TrialID), "", "trial-diverged.json")
		}
	}
	recordHistory(t, e, sweepID, "", "sweep-diverged.json")
}

// A trainer that prints rsl_rl's console table to stdout and writes nothing else is followed through
// its stdout (trainer.metrics.source stdout, preset rsl_rl): the trials whose value function loss
// becomes inf are stopped by non_finite within one iteration, the healthy ones complete, and every
// trial's stored metrics hold the table's values under canonical names.
func TestDiagnosticsStopConsoleOnlyTrainer(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	const faultAt = 20000
	spec := e.spec("console", `
  total_steps: 40000
  metrics: {source: stdout, preset: rsl_rl}
seeds: [1, 2]
parameters:
  console: {value: 1}
  vf_inf_at: {values: [100000, 20000]}
  sleep_ms: {value: 10}
probes: {enabled: false}
concurrency: 4
`)
	sweepID := e.submit(spec, "--watch")
	res := e.results(sweepID)
	if len(res.Trials) != 4 {
		t.Fatalf("results.json has %d trials, want 4", len(res.Trials))
	}
	for _, tr := range res.Trials {
		stored := storedMetrics(t, e.store, sweepID, tr.TrialID)
		if !strings.Contains(string(stored), `"value_loss":`) || !strings.Contains(string(stored), `"action_std":0.5`) {
			t.Errorf("trial %s: stored metrics lack the console's values:\n%.400s", tr.TrialID, stored)
		}
		if at, _ := tr.Params["vf_inf_at"].(float64); at > 40000 {
			if tr.Outcome != results.OutcomeCompleted || tr.Steps != 40000 {
				t.Errorf("healthy trial %s ended %s at step %d (%s %s), want completed at 40000", tr.TrialID, tr.Outcome, tr.Steps, tr.StopRule, tr.Error)
			}
			continue
		}
		if tr.Outcome != results.OutcomeDiverged || tr.StopRule != diagnostics.RuleNonFinite {
			t.Errorf("trial %s ended %s by %q, want diverged by non_finite", tr.TrialID, tr.Outcome, tr.StopRule)
			continue
		}
		var dump sweepstore.Divergence
		e.readJSON(artifacts.DivergenceKey(sweepID, tr.TrialID), &dump)
		if dump.Verdict.Step != faultAt || dump.Verdict.Metric != metrics.ValueLoss {
			t.Errorf("trial %s stopped at step %d on %s, want step %d on value_loss", tr.TrialID, dump.Verdict.Step, dump.Verdict.Metric, faultAt)
		}
		if !strings.Contains(dump.LogTail, "Learning iteration") {
			t.Errorf("trial %s: the divergence dump's log tail lacks the console table: %q", tr.TrialID, dump.LogTail)
		}
	}
}
