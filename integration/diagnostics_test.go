//go:build integration

package integration

import (
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
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
			if tr.Outcome != activities.OutcomeCompleted {
				t.Errorf("healthy trial %s ended %s (%s %s), want completed", tr.TrialID, tr.Outcome, tr.StopRule, tr.Error)
			}
			continue
		}
		if tr.Outcome != activities.OutcomeDiverged || tr.StopRule != rule {
			t.Errorf("trial %s (fault %v) ended %s by %q, want diverged by %q", tr.TrialID, fault, tr.Outcome, tr.StopRule, rule)
			continue
		}
		var dump activities.Divergence
		e.readJSON(artifacts.TrialKey(sweepID, tr.TrialID, "divergence.json"), &dump)
		if dump.Verdict.Step < faultAt || dump.Verdict.Step > faultAt+1000 {
			t.Errorf("trial %s stopped at step %d, want within one record of %d", tr.TrialID, dump.Verdict.Step, faultAt)
		}
		if len(dump.Records) == 0 || dump.LogTail == "" || dump.LastHealthyCkpt == "" {
			t.Errorf("trial %s: divergence dump lacks records (%d), log tail or last healthy checkpoint (%q)",
				tr.TrialID, len(dump.Records), dump.LastHealthyCkpt)
		}
		t.Logf("trial %s: %s at step %d, detection to kill %.1f ms", tr.TrialID, dump.Verdict.Rule, dump.Verdict.Step, dump.DetectionToKillMS)
	}
}
