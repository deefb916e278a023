//go:build integration

package integration

import (
	"os"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

// A trainer that ignores RLSWEEP_STOP_AT_STEP and writes no checkpoint trains its whole budget in its
// first segment. The trial ends there, instead of training it all again in each of its five segments,
// and says why once: in `rlsweep status` of the trial, in results.json and in the sweep's report.
func TestSegmentsTrainerIgnoringStopStep(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "1")
	spec := e.spec("ignore-stop", `
  total_steps: 10000
  segment_steps: 2000
seeds: [1]
parameters:
  sleep_ms: {value: 1}
  ignore_stop: {value: 1}
probes: {enabled: false}
`)
	sweepID := e.submit(spec, "--watch")
	res := e.results(sweepID)
	if len(res.Trials) != 1 {
		t.Fatalf("results.json has %d trials, want 1", len(res.Trials))
	}
	tr := res.Trials[0]
	const want = "segment 0: the trainer ran past RLSWEEP_STOP_AT_STEP=2000 to step 10000, its whole total_steps (10000): it ignores the stop step, so the trial ends here"
	if tr.Outcome != "completed" || tr.Steps != 10000 || tr.Segments != 1 {
		t.Errorf("trial %s: outcome %s, steps %d, segments %d; want completed, 10000, 1 (not re-run in 5 segments)",
			tr.TrialID, tr.Outcome, tr.Steps, tr.Segments)
	}
	if len(tr.Warnings) != 1 || !strings.HasPrefix(tr.Warnings[0], want) {
		t.Errorf("results.json warnings = %q, want one starting %q", tr.Warnings, want)
	}
	checkSteps(t, e, sweepID, tr.TrialID, 1000, 10000, 1000)
	out, code := e.cli("status", sweepID+"/"+tr.TrialID)
	if code != 0 || !strings.Contains(out, "warning") || !strings.Contains(out, want) {
		t.Errorf("status of the trial (exit %d) lacks the warning %q:\n%s", code, want, out)
	}
	html, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `id="warnings"`) || !strings.Contains(string(html), "it ignores the stop step") {
		t.Errorf("report.html shows no warning for the trial")
	}
}
