//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
)

// A new user's plain PyTorch PPO script with the ten lines of docs/trainer-contract.md
// (python/tests/fixtures/user_ppo.py, on the rlsweep package of python/) under the real runner: the
// probe stage judges it on probes 1–5 (1c–5c declined), then an asha sweep over lr prunes the
// configuration that barely learns (lr 1e-7) at the first rung, while the other runs three segments
// (1024, 2048, 4096), each resuming from the checkpoint the one before announced; then a pbt sweep of
// two members in which one exploits the other. Needs torch for /usr/bin/python3, as TestTorchExample.
func TestPythonPackageUserScript(t *testing.T) {
	if out, err := exec.Command(torchPython, "-c", "import torch").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import torch (run scripts/install-python-deps.sh, which installs Debian's python3-torch): %v\n%s",
			torchPython, err, out)
	}
	python, err := filepath.Abs("../python")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := fmt.Sprintf(`name: user-ppo
trainer:
  command: [%q, %q]
  environment: {PYTHONPATH: %q}
  total_steps: 4096
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
parameters:
  lr: {values: [0.003, 1.0e-7]}
early_terminate: {type: asha, min_steps: 1024, eta: 2}
order: listed  # the good lr reaches the rung first, so the other is judged against it
probes: {enabled: true}
concurrency: 1
`, torchPython, filepath.Join(python, "tests", "fixtures", "user_ppo.py"), python)
	start := time.Now()
	out, code := e.cli("submit", e.writeSpecFile("user-ppo", spec), "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)

	e.checkDiscreteProbesPassed(sweepID)

	res := e.results(sweepID)
	if len(res.Trials) != 2 {
		t.Fatalf("results.json: %d trials, want 2:\n%s", len(res.Trials), out)
	}
	for _, tr := range res.Trials {
		switch tr.Config {
		case 0:
			if tr.Outcome != results.OutcomeCompleted || tr.Steps != 4096 || tr.Segments != 3 {
				t.Errorf("trial %s (lr 0.003): %s, %d steps, %d segments; want completed, 4096, 3 (%s)", tr.TrialID, tr.Outcome, tr.Steps, tr.Segments, tr.Error)
			}
			checkUserTrial(t, e, sweepID, tr.TrialID)
		default:
			if p := tr.Pruning; tr.Outcome != results.OutcomePruned || tr.Steps != 1024 || p == nil || p.Step != 1024 {
				t.Errorf("trial %s (lr 1e-7): %s at %d steps (pruning %+v); want pruned at the rung at step 1024 (%s)", tr.TrialID, tr.Outcome, tr.Steps, p, tr.Error)
			}
		}
	}
	t.Logf("user script: probes and asha sweep in %s", time.Since(start).Round(time.Millisecond))

	t.Run("pbt", func(t *testing.T) { userScriptPBT(t, e, python) })
}

// userScriptPBT runs the same script as a population of two, ready at 1024 of 2048 steps: the worse
// member exploits the better one, resuming from its checkpoint with a perturbed lr (rlsweep.resume
// keeps the optimiser's new lr), and both complete.
func userScriptPBT(t *testing.T, e *env, python string) {
	spec := fmt.Sprintf(`name: user-ppo-pbt
trainer:
  command: [%q, %q]
  environment: {PYTHONPATH: %q}
  total_steps: 2048
metric: {name: reward, goal: maximize}
method: pbt
sampler_seed: 1
seeds: [1]
parameters:
  lr: {min: 1.0e-7, max: 0.003, distribution: log_uniform}
pbt: {population: 2, ready_steps: 1024, quantile: 0.5}
probes: {enabled: false}
concurrency: 2
`, torchPython, filepath.Join(python, "tests", "fixtures", "user_ppo.py"), python)
	start := time.Now()
	out, code := e.cli("submit", e.writeSpecFile("user-ppo-pbt", spec), "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	res := e.results(sweepIDFrom(t, out))
	exploits := 0
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != 2048 {
			t.Errorf("member %s: %s at step %d, want completed at 2048 (%s)", tr.TrialID, tr.Outcome, tr.Steps, tr.Error)
		}
		for _, x := range tr.Exploits {
			exploits++
			t.Logf("member %s: %s", tr.TrialID, results.FormatExploit(x))
		}
	}
	if len(res.Trials) != 2 || exploits != 1 {
		t.Errorf("results.json: %d members, %d exploits; want 2 and 1 (the worse exploits the better at step 1024)", len(res.Trials), exploits)
	}
	t.Logf("user script: pbt sweep in %s", time.Since(start).Round(time.Millisecond))
}

// checkUserTrial checks that the trial's stored records run 256…4096, each iteration once across its
// three processes, and that each segment's checkpoint reached the store.
func checkUserTrial(t *testing.T, e *env, sweepID, trialID string) {
	t.Helper()
	var steps []int64
	for _, line := range bytes.Split(bytes.TrimSpace(storedMetrics(t, e.store, sweepID, trialID)), []byte{'\n'}) {
		rec, err := metrics.ParseJSONLine(line)
		if err != nil {
			t.Fatalf("trial %s: stored metrics: %v: %s", trialID, err, line)
		}
		if _, ok := rec.Values["value_loss"]; !ok {
			t.Errorf("trial %s: record lacks value_loss: %s", trialID, line)
		}
		steps = append(steps, rec.Step)
	}
	var want []int64
	for s := int64(256); s <= 4096; s += 256 {
		want = append(want, s)
	}
	if !slices.Equal(steps, want) {
		t.Errorf("trial %s: stored steps %v, want %v (each once: segments 2 and 3 resumed)", trialID, steps, want)
	}
	for _, step := range []int{1024, 2048, 4096} {
		key := artifacts.CheckpointKey(sweepID, trialID, fmt.Sprintf("ckpt-%012d.pt", step))
		if st, err := os.Stat(e.store.URL(key)); err != nil || st.Size() == 0 {
			t.Errorf("trial %s: checkpoint %s: %v", trialID, key, err)
		}
	}
}
