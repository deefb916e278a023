//go:build integration

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// The built-in PPO with a setting that really diverges (lr 1.0 on Pendulum) is stopped by a rule
// before any crash, and `rlsweep diagnose` on its stored metrics agrees (exit 3) and explains it.
func TestBuiltinPendulumLR1IsStopped(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "1")
	p := filepath.Join(e.dir, "pendulum-lr1.yaml")
	spec := `name: pendulum-lr1
trainer: {builtin: ppo, env: Pendulum-v1, total_steps: 100000}
seeds: [1]
parameters:
  lr: {value: 1.0}
probes: {enabled: false}
`
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepID := e.submit(p, "--watch")
	res := e.results(sweepID)
	if len(res.Trials) != 1 || res.Trials[0].Outcome != results.OutcomeDiverged {
		t.Fatalf("results %+v, want one diverged trial", res.Trials)
	}
	tr := res.Trials[0]
	var dump sweepstore.Divergence
	e.readJSON(artifacts.DivergenceKey(sweepID, tr.TrialID), &dump)
	t.Logf("lr 1.0 on Pendulum stopped by %s at step %d: %s = %g (threshold %g); %s",
		dump.Verdict.Rule, dump.Verdict.Step, dump.Verdict.Metric, dump.Verdict.Value, dump.Verdict.Threshold, dump.Verdict.Advice)
	if dump.Verdict.Step >= 100000 {
		t.Errorf("stopped at step %d, want before the 100000-step budget", dump.Verdict.Step)
	}
	// The trial's stored metrics: their folder of parts, or the trial's metrics.jsonl that stands for it.
	dir := e.store.URL(artifacts.MetricsDir(sweepID, tr.TrialID))
	metrics := filepath.Join(filepath.Dir(dir), "metrics.jsonl")
	// With the trial's budget — given, or read from the sweep's spec.json beside the stored metrics —
	// diagnose warms up as the sweep did and stops where the sweep stopped.
	for _, args := range [][]string{{"diagnose", "--total-steps", "100000", dir}, {"diagnose", metrics}} {
		diag, err := exec.Command(rlsweepBin, args...).CombinedOutput()
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != 3 {
			t.Errorf("rlsweep %q exited %v, want 3 (a stop rule fired):\n%s", args, err, diag)
		}
		if want := fmt.Sprintf("STOP  %s at step %d", dump.Verdict.Rule, dump.Verdict.Step); !strings.Contains(string(diag), want) {
			t.Errorf("rlsweep %q does not say %q, as the sweep did:\n%s", args, want, diag)
		}
		fmt.Fprintf(os.Stderr, "rlsweep %s:\n%s", strings.Join(args[:len(args)-1], " "), diag)
	}
}
