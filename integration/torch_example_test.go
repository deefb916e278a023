//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/trainer"
)

// torchPython is the interpreter Debian's python3-torch is installed for (scripts/install-python-deps.sh).
const torchPython = "/usr/bin/python3"

// The PyTorch example trainer (examples/torch-ppo) under the real runner: its own Python tests, then
// examples/torch-ppo/sweep.yaml itself — only its path, budget and seeds changed — through the probe
// stage and four CartPole trials of two segments each on the CPU, and the same sweep with
// --inject-bug no-discount stopped at probe 3. Needs torch for /usr/bin/python3: a missing torch fails
// the test (never a skip), naming the install script.
func TestTorchExample(t *testing.T) {
	if out, err := exec.Command(torchPython, "-c", "import torch").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import torch (run scripts/install-python-deps.sh, which installs Debian's python3-torch): %v\n%s",
			torchPython, err, out)
	}
	dir, err := filepath.Abs("../examples/torch-ppo")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("python-tests", func(t *testing.T) {
		cmd := exec.Command(torchPython, "-m", "unittest", "test_torch_ppo")
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python -m unittest test_torch_ppo: %v\n%s", err, out)
		}
		t.Logf("examples/torch-ppo unit tests passed in %s", time.Since(start).Round(time.Millisecond))
	})
	t.Run("gaussian-metrics", func(t *testing.T) { torchGaussianMetrics(t, dir) })

	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	example, err := os.ReadFile(filepath.Join(dir, "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(filepath.Dir(dir))
	small := editExample(t, string(example),
		"- /opt/rlsweep/", "- "+repo+"/",
		"name: torch-ppo-cartpole", "name: torch-ppo-it",
		"total_steps: 200000", "total_steps: 2048",
		"segment_steps: 50000", "segment_steps: 1024",
		"num_envs: {value: 8}", "num_envs: {value: 4}", // 512 steps an iteration: two per segment
		"seeds: [1, 2]", "seeds: [1]",
		"warmup_steps: 20000", "warmup_steps: 1024")
	t.Run("sweep", func(t *testing.T) { torchSweep(t, e, small) })
	t.Run("inject-bug", func(t *testing.T) {
		broken := editExample(t, small, "name: torch-ppo-it", "name: torch-ppo-broken",
			"- --device=auto", "- --device=auto\n    - --inject-bug=no-discount")
		torchBrokenSweep(t, e, broken)
	})
}

// torchSweep runs the sweep to completion and checks every trial's stored metrics and checkpoints.
func torchSweep(t *testing.T, e *env, spec string) {
	start := time.Now()
	out, code := e.cli("submit", e.writeSpecFile("torch-ppo-it", spec), "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)
	e.checkDiscreteProbesPassed(sweepID)
	_, children, stage := e.probeStage(sweepID)
	res := e.results(sweepID)
	if len(res.Trials) != 4 || children != 4 {
		t.Fatalf("results.json: %d trials, %d children; want 4 and 4:\n%s", len(res.Trials), children, out)
	}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != 2048 || tr.Segments != 2 {
			t.Errorf("trial %s: outcome %s, %d steps, %d segments; want completed, 2048, 2 (%s)", tr.TrialID, tr.Outcome, tr.Steps, tr.Segments, tr.Error)
			continue
		}
		e.checkTorchTrial(t, sweepID, tr.TrialID)
	}
	t.Logf("torch sweep: probe stage %s, whole sweep %s", stage.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// checkTorchTrial checks one trial's stored metrics (one record per iteration, each step once, every
// canonical metric of a categorical policy), its two checkpoints, and that segment 2 resumed.
func (e *env) checkTorchTrial(t *testing.T, sweepID, trialID string) {
	t.Helper()
	b := storedMetrics(t, e.store, sweepID, trialID)
	var steps []int64
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
		rec, err := metrics.ParseJSONLine(line)
		if err != nil {
			t.Fatalf("trial %s: stored metrics: %v: %s", trialID, err, line)
		}
		steps = append(steps, rec.Step)
		if missing := missingCanonical(rec, metrics.ActionStd, metrics.ActionStdMin); len(missing) > 0 {
			t.Errorf("trial %s: step %d lacks %v", trialID, rec.Step, missing)
		}
	}
	if want := []int64{512, 1024, 1536, 2048}; !slices.Equal(steps, want) {
		t.Errorf("trial %s: stored metrics steps %v, want %v (each once)", trialID, steps, want)
	}
	for _, step := range []int{1024, 2048} {
		key := artifacts.CheckpointKey(sweepID, trialID, fmt.Sprintf("ckpt-%012d.pt", step))
		if st, err := os.Stat(e.store.URL(key)); err != nil || st.Size() == 0 {
			t.Errorf("trial %s: checkpoint %s: %v", trialID, key, err)
		}
	}
	// Segments count from 0: the second one's log.
	var log bytes.Buffer
	err := artifacts.ReadLog(context.Background(), e.store, sweepID, trialID, 1, 1, &log)
	second := log.Bytes()
	if err != nil || !bytes.Contains(second, []byte("resumed from")) || !bytes.Contains(second, []byte("at step 1024")) {
		t.Errorf("trial %s: the second segment's log does not show a resume at step 1024 (%v):\n%s", trialID, err, second)
	}
}

// missingCanonical lists the canonical metrics a record lacks, but for those named in except (a
// categorical policy has no σ); reward and episode_length count once an episode has finished.
func missingCanonical(rec metrics.Record, except ...string) []string {
	var missing []string
	for _, name := range metrics.CanonicalMetrics {
		if _, ok := rec.Values[name]; !ok && !slices.Contains(except, name) {
			missing = append(missing, name)
		}
	}
	return missing
}

// torchBrokenSweep checks that the probe stage stops the sweep at probe 3 with no trial started.
func torchBrokenSweep(t *testing.T, e *env, spec string) {
	out, code := e.cli("submit", e.writeSpecFile("torch-ppo-broken", spec), "--watch")
	if code == 0 {
		t.Fatalf("submit --watch exited 0, want a failure:\n%s", out)
	}
	sweepID := sweepIDFrom(t, out)
	var rep activities.ProbeReport
	e.readJSON(artifacts.ProbesKey(sweepID), &rep)
	_, children, stage := e.probeStage(sweepID)
	if rep.Passed || rep.Failed != "3" || children != 0 {
		t.Errorf("probes.json: passed %v, failed %q, %d children; want probe 3 failed and none: %s", rep.Passed, rep.Failed, children, rep.Diagnosis)
	}
	if want := "probe 3 fails while probes 1–2 pass"; !strings.Contains(out, want) {
		t.Errorf("watch output lacks %q:\n%s", want, out)
	}
	t.Logf("--inject-bug no-discount stopped by the probe stage in %s: %s", stage.Round(time.Millisecond), rep.Diagnosis)
}

// torchGaussianMetrics runs one Pendulum-v1 iteration under the contract's variables and checks the
// record has every canonical metric, action_std and action_std_min included.
func torchGaussianMetrics(t *testing.T, dir string) {
	tmp := t.TempDir()
	metricsPath := filepath.Join(tmp, "metrics.jsonl")
	cmd := exec.Command(torchPython, filepath.Join(dir, "train.py"), "--env=Pendulum-v1", "--num-steps=256")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), trainer.EnvMetricsFile+"="+metricsPath, trainer.EnvTotalSteps+"=1024",
		trainer.EnvCheckpointDir+"="+filepath.Join(tmp, "ckpt"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("train.py --env=Pendulum-v1: %v\n%s", err, out)
	}
	b, err := os.ReadFile(metricsPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte{'\n'})
	if len(lines) != 2 {
		t.Fatalf("metrics.jsonl has %d lines, want an iteration and a checkpoint:\n%s", len(lines), b)
	}
	rec, err := metrics.ParseJSONLine(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	if missing := missingCanonical(rec); len(missing) > 0 {
		t.Errorf("Pendulum-v1 record lacks %v: %s", missing, lines[0])
	}
	if v := rec.Values[metrics.ActionStdMin]; v <= 0 || v > rec.Values[metrics.ActionStd] {
		t.Errorf("action_std_min = %g, action_std = %g; want 0 < min ≤ mean", v, rec.Values[metrics.ActionStd])
	}
}

// editExample replaces each old string (pairs: old, new, ...), which must occur in s exactly once, so
// a change to the example that the test no longer matches fails here instead of testing something else.
func editExample(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := strings.Count(s, pairs[i]); n != 1 {
			t.Fatalf("examples/torch-ppo/sweep.yaml: %q occurs %d times, want once", pairs[i], n)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// writeSpecFile writes a whole sweep spec into the env's directory and returns its path.
func (e *env) writeSpecFile(name, spec string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// checkDiscreteProbesPassed checks a sweep's probes.json: a discrete-action trainer passed probes 1–5
// and declined the five continuous ones.
func (e *env) checkDiscreteProbesPassed(sweepID string) {
	e.t.Helper()
	var rep activities.ProbeReport
	e.readJSON(artifacts.ProbesKey(sweepID), &rep)
	var passed, skipped []string
	for _, r := range rep.Results {
		switch {
		case r.Passed:
			passed = append(passed, string(r.Probe))
		case r.Skipped:
			skipped = append(skipped, string(r.Probe))
		}
	}
	if !rep.Passed || !slices.Equal(passed, []string{"1", "2", "3", "4", "5"}) || len(skipped) != 5 {
		e.t.Errorf("probes.json: passed %v (%v), skipped %v; want 1–5 passed, 1c–5c skipped: %s", rep.Passed, passed, skipped, rep.Diagnosis)
	}
}
