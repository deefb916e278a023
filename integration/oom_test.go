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
)

// Trainers that die out of memory as PyTorch, cuDNN, JAX, TensorFlow, PhysX, the CUDA driver and runtime
// do (each error printed, exit status 1), and one the host's OOM killer kills (SIGKILL, the cgroup's
// oom_kill counter risen): each trial ends oom after exactly one attempt although retries.max_attempts
// is 3, and results.json and results.csv record the hardware each ran on, as the fake nvidia-smi on
// the worker's PATH describes it (an H100 machine, the worker serving its GPU 1).
func TestOOMTrialsEndOOMWithTheirHardware(t *testing.T) {
	e := newEnv(t)
	smi, err := filepath.Abs("../activities/testdata/nvidia-smi")
	if err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(e.dir, "memory.events")
	if err := os.WriteFile(events, []byte("oom 0\noom_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{"worker", "--address", e.addr, "--store", e.store.Root(), "--work-dir", filepath.Join(e.dir, "work-a"), "--gpus", "1"}
	w := exec.Command(rlsweepBin, argv...)
	w.Env = append(os.Environ(), "PATH="+smi+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RLSWEEP_FAKE_SMI="+filepath.Join(smi, "h100"), "RLSWEEP_CGROUP_MEMORY_EVENTS="+events)
	log := logFile(t, filepath.Join(e.dir, "worker-a.log"))
	w.Stdout, w.Stderr = log, log
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	e.workers = append(e.workers, w)
	timeline := filepath.Join(e.dir, "timeline")
	spec := e.spec("oom", `  total_steps: 4000
  environment: {FAKE_MEMORY_EVENTS: `+events+`, JAX_DEFAULT_MATMUL_PRECISION: highest}
method: grid
parameters:
  oom: {values: [0, 1, 2, 3, 4, 5, 6, 7, 8]}
  oom_at: {value: 2000}
  sleep_ms: {value: 1}
  timeline: {value: `+timeline+`}
probes: {enabled: false}
concurrency: 1
retries: {max_attempts: 3}
`)
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d, want 0 (one trial completed):\n%s", code, out)
	}
	res := e.results(sweepID)
	starts := trainerStarts(t, timeline)
	if len(res.Trials) != 9 {
		t.Fatalf("%d trials, want 9", len(res.Trials))
	}
	for _, tr := range res.Trials {
		kind := tr.Params["oom"].(float64)
		want := results.OutcomeOOM
		if kind == 0 {
			want = results.OutcomeCompleted
		}
		if tr.Outcome != want || tr.TrainerFailures != 0 {
			t.Errorf("trial %s (oom %v): outcome %s, %d trainer failures, want %s and none; error:\n%s", tr.TrialID, kind, tr.Outcome, tr.TrainerFailures, want, tr.Error)
		}
		if starts[tr.TrialID] != 1 {
			t.Errorf("trial %s (oom %v): started %d times, want exactly 1", tr.TrialID, kind, starts[tr.TrialID])
		}
		if want == results.OutcomeOOM && (!strings.Contains(tr.Error, "trial "+tr.TrialID+": out of memory on NVIDIA H100 80GB HBM3") || !strings.Contains(tr.Error, "fix: ")) {
			t.Errorf("trial %s: error lacks the trial, the GPU or the fix:\n%s", tr.TrialID, tr.Error)
		}
		if kind == 8 && !strings.Contains(tr.Error, "host OOM killer") {
			t.Errorf("trial %s: error does not name the host OOM killer:\n%s", tr.TrialID, tr.Error)
		}
		h := tr.Hardware
		if h == nil || len(h.GPUs) != 1 || h.GPUs[0].ID != "1" || h.GPUs[0].Name != "NVIDIA H100 80GB HBM3" || h.GPUs[0].MemoryMiB != 81559 ||
			h.Driver != "550.54.15" || h.CUDA != "12.4" || h.Host == "" || h.Precision["JAX_DEFAULT_MATMUL_PRECISION"] != "highest" {
			t.Errorf("trial %s: hardware %+v, want GPU 1, an H100 (81559 MiB), driver 550.54.15, CUDA 12.4, the host and JAX's precision", tr.TrialID, h)
		}
	}
	csv, err := os.ReadFile(e.store.URL(artifacts.ResultsCSVKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csv), ",hw_worker,hw_cpu,hw_gpu,hw_gpu_memory_mib,hw_driver,hw_cuda,hw_precision") ||
		!strings.Contains(string(csv), ",NVIDIA H100 80GB HBM3,81559,550.54.15,12.4,JAX_DEFAULT_MATMUL_PRECISION=highest") ||
		strings.Count(string(csv), ",oom,,,") != 8 {
		t.Errorf("results.csv lacks the oom outcomes or the hardware columns:\n%s", csv)
	}
	out, code := e.cli("results", sweepID)
	if code != 0 || !strings.Contains(out, "NVIDIA H100 80GB HBM3") || !strings.Contains(out, " oom ") {
		t.Errorf("rlsweep results exited %d, want the oom trials and their GPU:\n%s", code, out)
	}
}

// A num_envs sweep at concurrency 1 whose trainer runs out of memory from num_envs 2048 on: after
// 3-s1 (2048) does, no trial of num_envs 2048 or more trains; they are recorded oom, not started, with
// the next smaller value, and every trial is in results.json once.
func TestOOMBoundsTheSearch(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a")
	timeline := filepath.Join(e.dir, "timeline")
	spec := e.spec("oombound", `  total_steps: 4000
method: grid
seeds: [1, 2]
parameters:
  num_envs: {values: [256, 512, 1024, 2048, 4096]}
  oom_from: {value: 2048}
  oom_at: {value: 2000}
  sleep_ms: {value: 1}
  timeline: {value: `+timeline+`}
probes: {enabled: false}
concurrency: 1
`)
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d, want 0 (trials completed):\n%s", code, out)
	}
	res := e.results(sweepID)
	starts := trainerStarts(t, timeline)
	if len(res.Trials) != 10 {
		t.Fatalf("%d trials, want 10", len(res.Trials))
	}
	seen := map[string]bool{}
	for _, tr := range res.Trials {
		if seen[tr.TrialID] {
			t.Errorf("trial %s recorded twice", tr.TrialID)
		}
		seen[tr.TrialID] = true
		n := tr.Params["num_envs"].(float64)
		switch {
		case n < 2048:
			if tr.Outcome != results.OutcomeCompleted || starts[tr.TrialID] != 1 {
				t.Errorf("trial %s (num_envs %v): %s, started %d times; want completed, once", tr.TrialID, n, tr.Outcome, starts[tr.TrialID])
			}
		case tr.TrialID == "3-s1":
			if tr.Outcome != results.OutcomeOOM || !strings.Contains(tr.Error, "fix: the next smaller num_envs in the space is 1024") {
				t.Errorf("trial 3-s1: %s, want oom with the next smaller num_envs in its fix:\n%s", tr.Outcome, tr.Error)
			}
		default:
			want := fmt.Sprintf("trial %s: not started: num_envs %v ≥ 2048, which ran out of memory", tr.TrialID, n)
			if tr.Outcome != results.OutcomeOOM || starts[tr.TrialID] != 0 || tr.Steps != 0 ||
				!strings.Contains(tr.Error, want) || !strings.Contains(tr.Error, "the next smaller num_envs in the space is 1024") {
				t.Errorf("trial %s (num_envs %v): %s, started %d times, %d steps, error %q; want oom, never started, %q … 1024",
					tr.TrialID, n, tr.Outcome, starts[tr.TrialID], tr.Steps, tr.Error, want)
			}
		}
	}
	// The report plots throughput against num_envs with the bound marked.
	page := e.reportPage(sweepID)
	for _, want := range []string{`<figure id="plot-throughput"><svg`, "OOM at num_envs ≥ 2048 on no GPU"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// diagnose of the trial that ran out of memory, and of one never started, says so with the advice.
	for trial, want := range map[string]string{"3-s1": "OUT OF MEMORY", "4-s1": "trial 4-s1: not started: num_envs 4096 ≥ 2048"} {
		out, code := e.cli("diagnose", sweepID+"/"+trial)
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "the next smaller num_envs in the space is 1024") {
			t.Errorf("diagnose %s/%s exited %d, want 0 with %q and the next smaller num_envs:\n%s", sweepID, trial, code, want, out)
		}
	}
}

// trainerStarts counts each trial's trainer starts in the scripted trainers' timeline.
func trainerStarts(t *testing.T, timeline string) map[string]int {
	starts := map[string]int{}
	for _, ev := range readTimeline(t, timeline) {
		if ev.event == "start" {
			starts[ev.trial]++
		}
	}
	return starts
}
