//go:build integration

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
)

// A grid of two configurations under resources.precision [fp32, tf32] on an H100 worker (the fake
// nvidia-smi): the trainer of the first configuration NaNs from step 2000 when its environment has
// TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, as a PyTorch trainer whose numerics break under TF32 would; the
// second never does. Each configuration runs under each setting with the same parameters; the tf32
// run of the first diverges and the three others complete; each trial's hardware record holds the
// setting's variables; the report flags the first configuration hardware-sensitive, and only it.
func TestPrecisionDimensionFlagsHardwareSensitivity(t *testing.T) {
	e := newEnv(t)
	// NVIDIA_TF32_OVERRIDE=1: the worker's own setting, which each precision setting replaces.
	e.startGPUWorker("a", "", "h100", "NVIDIA_TF32_OVERRIDE=1")
	spec := e.spec("precision", `  total_steps: 4000
method: grid
seeds: [1, 2]
parameters:
  fault_env: {values: ["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1", "NONE=1"]}
  fault: {value: 1}
  fault_at: {value: 2000}
  sleep_ms: {value: 1}
resources: {precision: [fp32, tf32]}
probes: {enabled: false}
concurrency: 4
`)
	if out, code := e.cli("validate", "--explain", spec); code != 0 || !strings.Contains(out, "2 configurations × 2 precision settings (fp32, tf32) × 2 seeds") {
		t.Fatalf("validate --explain exited %d, want the precision settings in the count:\n%s", code, out)
	}
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d, want 0:\n%s", code, out)
	}
	res := e.results(sweepID)
	if len(res.Trials) != 8 {
		t.Fatalf("%d trials, want 8", len(res.Trials))
	}
	for _, tr := range res.Trials {
		sensitive := tr.Params["fault_env"] == "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1"
		want := results.OutcomeCompleted
		if sensitive && tr.Precision == "tf32" {
			want = results.OutcomeDiverged
		}
		if tr.Outcome != want {
			t.Errorf("trial %s (%v, %s): outcome %s, want %s; error: %s", tr.TrialID, tr.Params["fault_env"], tr.Precision, tr.Outcome, want, tr.Error)
		}
		wantPrec := map[string]map[string]string{
			"fp32": {"NVIDIA_TF32_OVERRIDE": "0", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "0", "JAX_DEFAULT_MATMUL_PRECISION": "highest"},
			"tf32": {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1", "JAX_DEFAULT_MATMUL_PRECISION": "tensorfloat32"},
		}[tr.Precision]
		if wantPrec == nil {
			t.Errorf("trial %s: precision %q, want fp32 or tf32", tr.TrialID, tr.Precision)
			continue
		}
		h := tr.Hardware
		if h == nil || h.GPUNames() != "NVIDIA H100 80GB HBM3" || len(h.Precision) != len(wantPrec) {
			t.Errorf("trial %s (%s): hardware %+v, want the H100 and precision %v", tr.TrialID, tr.Precision, h, wantPrec)
			continue
		}
		for k, v := range wantPrec {
			if h.Precision[k] != v {
				t.Errorf("trial %s (%s): hardware precision %v, want %v", tr.TrialID, tr.Precision, h.Precision, wantPrec)
			}
		}
	}
	out, code := e.cli("results", sweepID)
	if want := "hardware-sensitive: configuration 0, 1 (fault_env=TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, fault=1, fault_at=2000, sleep_ms=1) diverges under tf32"; code != 0 ||
		!strings.Contains(out, want) || strings.Count(out, "hardware-sensitive") != 1 || !strings.Contains(out, "PRECISION") {
		t.Errorf("rlsweep results exited %d, want the precision column and one line %q:\n%s", code, want, out)
	}
	page := e.reportPage(sweepID)
	checkHardwareSensitive(t, page)
}

// checkHardwareSensitive checks the report flags the configuration that diverges only under tf32 —
// configurations 0 (fp32) and 1 (tf32), one set of parameters — and no other.
func checkHardwareSensitive(t *testing.T, page string) {
	t.Helper()
	if n := strings.Count(page, "<li><b>hardware-sensitive</b>"); n != 1 {
		t.Errorf("report flags %d configurations hardware-sensitive, want 1", n)
	}
	if !strings.Contains(page, "<li><b>hardware-sensitive</b>: config 0, 1 (") ||
		!strings.Contains(page, "diverges under tf32 on NVIDIA H100 80GB HBM3; trains under fp32 on NVIDIA H100 80GB HBM3") {
		t.Errorf("report lacks configurations 0 and 1 flagged hardware-sensitive, diverging under tf32 and training under fp32")
	}
	for _, id := range []string{`id="hardware-table"`, `id="hardware-sensitive"`} {
		if !strings.Contains(page, id) {
			t.Errorf("report lacks %s", id)
		}
	}
}

// startGPUWorker starts a worker serving GPU 0 with --trials-per-gpu 4 on the queue of GPU class class
// ("" for the default queue), the fake nvidia-smi describing a machine of fixture (h100, a100,
// rtx4090), with env added to its environment.
func (e *env) startGPUWorker(name, class, fixture string, env ...string) {
	e.t.Helper()
	smi, err := filepath.Abs("../activities/testdata/nvidia-smi")
	if err != nil {
		e.t.Fatal(err)
	}
	argv := []string{"worker", "--address", e.addr, "--store", e.store.Root(), "--work-dir", filepath.Join(e.dir, "work-"+name),
		"--gpus", "0", "--trials-per-gpu", "4"}
	if class != "" {
		argv = append(argv, "--gpu-class", class)
	}
	w := exec.Command(rlsweepBin, argv...)
	w.Env = append(append(os.Environ(), "PATH="+smi+string(os.PathListSeparator)+os.Getenv("PATH"), "RLSWEEP_FAKE_SMI="+filepath.Join(smi, fixture)), env...)
	log := logFile(e.t, filepath.Join(e.dir, "worker-"+name+".log"))
	w.Stdout, w.Stderr = log, log
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.workers = append(e.workers, w)
}

// A grid sweep on the h100 class with confirm: {gpu_classes: [a100], top: 2}: once its six trials
// completed, its best two configurations (0 and 1: the objectives tie, so by number) run again with
// the same seeds on the a100 workers, whose environment (GPU_MODEL=a100) makes configuration 0's
// trainer NaN. The re-runs train on the a100 worker's GPU (their hardware records), configuration 0
// diverges there and is flagged hardware-sensitive in results and the report, the leaderboard ranks
// the search alone, and the sweep's summary says what was re-run.
func TestConfirmReRunsTheBestOnOtherGPUClasses(t *testing.T) {
	e := newEnv(t)
	e.startGPUWorker("h", "h100", "h100")
	e.startGPUWorker("a", "a100", "a100", "GPU_MODEL=a100")
	spec := e.spec("confirm", `  total_steps: 4000
method: grid
seeds: [1, 2]
parameters:
  fault_env: {values: ["GPU_MODEL=a100", "NONE=1", "NONE=2"]}
  fault: {value: 1}
  fault_at: {value: 2000}
  sleep_ms: {value: 1}
resources: {gpu_class: h100}
confirm: {gpu_classes: [a100], top: 2}
probes: {enabled: false}
concurrency: 4
`)
	if out, code := e.cli("validate", "--explain", spec); code != 0 || !strings.Contains(out, "confirm: once the search is over, the best 2 configurations run again on GPU classes a100 (queues rlsweep-gpu-a100), seeds [1, 2] each: up to 4 trials") {
		t.Fatalf("validate --explain exited %d, want the confirm line:\n%s", code, out)
	}
	sweepID := e.submit(spec)
	out, code := e.cli("watch", sweepID)
	if code != 0 {
		t.Fatalf("watch exited %d, want 0:\n%s", code, out)
	}
	res := e.results(sweepID)
	if len(res.Trials) != 10 {
		t.Fatalf("%d trials, want 6 of the search and 4 re-runs: %+v", len(res.Trials), res.Trials)
	}
	reruns := 0
	for _, tr := range res.Trials {
		gpu, want := "NVIDIA H100 80GB HBM3", results.OutcomeCompleted
		if tr.GPUClass != "" {
			reruns++
			gpu = "NVIDIA A100-SXM4-80GB"
			if tr.GPUClass != "a100" || (tr.Config != 0 && tr.Config != 1) || !strings.HasSuffix(tr.TrialID, "-a100") {
				t.Errorf("re-run %s: class %q, configuration %d; want a100, configuration 0 or 1", tr.TrialID, tr.GPUClass, tr.Config)
			}
			if tr.Config == 0 {
				want = results.OutcomeDiverged
			}
		}
		if tr.Outcome != want || tr.Hardware.GPUNames() != gpu {
			t.Errorf("trial %s: %s on %q, want %s on %s; error: %s", tr.TrialID, tr.Outcome, tr.Hardware.GPUNames(), want, gpu, tr.Error)
		}
	}
	if reruns != 4 {
		t.Errorf("%d re-runs, want 4", reruns)
	}
	sens := results.HardwareSensitivity(res.Trials)
	if len(sens) != 1 || sens[0].Params["fault_env"] != "GPU_MODEL=a100" {
		t.Errorf("hardware-sensitive configurations %+v, want configuration 0 alone", sens)
	}
	if out, code := e.cli("status", sweepID); code != 0 || !strings.Contains(out, "confirm: configurations 0, 1 re-run on a100") {
		t.Errorf("status exited %d, want what confirm re-ran:\n%s", code, out)
	}
	page := e.reportPage(sweepID)
	for _, want := range []string{`id="confirm-table"`, "diverges under NVIDIA A100-SXM4-80GB; trains under NVIDIA H100 80GB HBM3"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// reportPage draws a sweep's report with rlsweep report -o and returns the page.
func (e *env) reportPage(sweepID string) string {
	e.t.Helper()
	local := filepath.Join(e.dir, "report.html")
	if out, code := e.cli("report", "-o", local, sweepID); code != 0 {
		e.t.Fatalf("report exited %d:\n%s", code, out)
	}
	page, err := os.ReadFile(local)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(page)
}
