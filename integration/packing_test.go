//go:build integration

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/results"
)

// Packing: a worker with one GPU (--gpus 1, the fake nvidia-smi's H100) and a sweep of eight trials of
// resources.gpus 0.25 at concurrency 8 trains four at once on that GPU, never more, each seeing GPU 1
// and told its share (RLSWEEP_GPU_MEMORY_FRACTION=0.25, XLA_PYTHON_CLIENT_MEM_FRACTION=0.225). Without
// packing, the worker's one slot would run them one at a time.
func TestPackingFourQuarterTrialsOnOneGPU(t *testing.T) {
	e := newEnv(t)
	smi, err := filepath.Abs("../activities/testdata/nvidia-smi")
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{"worker", "--address", e.addr, "--store", e.store.Root(), "--work-dir", filepath.Join(e.dir, "work-a"), "--gpus", "1"}
	w := exec.Command(rlsweepBin, argv...)
	w.Env = append(os.Environ(), "PATH="+smi+string(os.PathListSeparator)+os.Getenv("PATH"), "RLSWEEP_FAKE_SMI="+filepath.Join(smi, "h100"))
	log := logFile(t, filepath.Join(e.dir, "worker-a.log"))
	w.Stdout, w.Stderr = log, log
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	e.workers = append(e.workers, w)
	seen, timeline, spec := packingSpec(e, "packing", 8, 0.25)
	if out, code := e.cli("validate", "--explain", spec); code != 0 || !strings.Contains(out, "each trial holds 0.25 of a GPU: 4 share one") {
		t.Errorf("validate --explain exited %d, want it to say how trials pack:\n%s", code, out)
	}
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d, want 0:\n%s", code, out)
	}
	checkCompleted(t, e, sweepID, 8)
	for _, r := range readSeen(t, seen) {
		if r.gpu != "1" || r.memory != "0.25" || r.xla != "0.225" {
			t.Errorf("trainer %s saw CUDA_VISIBLE_DEVICES=%s RLSWEEP_GPU_MEMORY_FRACTION=%s XLA_PYTHON_CLIENT_MEM_FRACTION=%s, want 1, 0.25, 0.225",
				r.trial, r.gpu, r.memory, r.xla)
		}
	}
	if most := mostAtOnce(readTimeline(t, timeline), nil); most != 4 {
		t.Errorf("at most %d trainers ran at once on the one GPU, want 4 (four 0.25 trials)", most)
	}
}

// Two workers of one GPU each (--gpus 0, then --gpus 1) and eight trials of resources.gpus 0.5: the
// first worker runs two at once on its GPU and takes one more it cannot place yet, so the second,
// started once the first has its two trainers running, still finds trials to run, two at once on its
// GPU; never more than two train on a GPU. (That a worker holds at most one segment it has not placed
// is checked exactly by worker's TestOneGPUWorkerRunsFourQuarterTrials: here the sweep's trials reach
// the queue over time, and a worker taking several more would still leave the second some.)
func TestPackingLeavesTrialsToOtherWorkers(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--gpus", "0")
	seen, timeline, spec := packingSpec(e, "packing2", 8, 0.5)
	sweepID := e.submit(spec)
	waitFor(t, time.Minute, "two trainers on worker a", func() bool { return mostAtOnce(readTimeline(t, timeline), nil) >= 2 })
	e.startWorker("b", "--gpus", "1", "--control=false")
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d, want 0:\n%s", code, out)
	}
	checkCompleted(t, e, sweepID, 8)
	gpuOf := map[string]string{}
	perGPU := map[string]int{}
	for _, r := range readSeen(t, seen) {
		if r.memory != "0.5" {
			t.Errorf("trainer %s saw RLSWEEP_GPU_MEMORY_FRACTION=%s, want 0.5", r.trial, r.memory)
		}
		gpuOf[r.trial] = r.gpu
		perGPU[r.gpu]++
	}
	if perGPU["1"] < 2 {
		t.Errorf("trials per GPU %v: worker b (GPU 1) ran %d, want 2 or more (worker a takes no more segments than it places, and one)", perGPU, perGPU["1"])
	}
	events := readTimeline(t, timeline)
	if most := mostAtOnce(events, nil); most > 4 {
		t.Errorf("%d trainers ran at once on two GPUs, want at most 4 (two 0.5 trials on each)", most)
	}
	for _, g := range []string{"0", "1"} {
		if most := mostAtOnce(events, func(trial string) bool { return gpuOf[trial] == g }); most > 2 {
			t.Errorf("GPU %s: %d trainers of 0.5 at once, want at most 2", g, most)
		}
	}
}

// packingSpec writes a sweep of n trials holding gpus each, whose trainer (the scripted trainer, about
// 3 s each) appends what it saw of its GPU to the returned seen file and its start and exit to the
// returned timeline.
func packingSpec(e *env, name string, n int, gpus float64) (seen, timeline, spec string) {
	seen, timeline = filepath.Join(e.dir, name+"-seen"), filepath.Join(e.dir, name+"-timeline")
	wrapper := e.wrapper(name+".sh", fmt.Sprintf(`echo "$RLSWEEP_TRIAL_ID ${CUDA_VISIBLE_DEVICES:--} ${RLSWEEP_GPU_MEMORY_FRACTION:--} ${XLA_PYTHON_CLIENT_MEM_FRACTION:--}" >> %q`, seen))
	xs := make([]string, n)
	for i := range xs {
		xs[i] = fmt.Sprint(i + 1)
	}
	spec = e.wrappedSpec(name, wrapper, fmt.Sprintf(`  total_steps: 20000
method: grid
parameters:
  x: {values: [%s]}
  sleep_ms: {value: 150}
  checkpoint_every: {value: 0}
  timeline: {value: %s}
probes: {enabled: false}
concurrency: %d
resources: {gpus: %g}
`, strings.Join(xs, ", "), timeline, n, gpus))
	return seen, timeline, spec
}

func checkCompleted(t *testing.T, e *env, sweepID string, n int) {
	t.Helper()
	res := e.results(sweepID)
	if len(res.Trials) != n {
		t.Fatalf("%d trials, want %d", len(res.Trials), n)
	}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted {
			t.Errorf("trial %s: outcome %s, want completed; error:\n%s", tr.TrialID, tr.Outcome, tr.Error)
		}
	}
}

// seenGPU is one trainer's view of its GPU: CUDA_VISIBLE_DEVICES, RLSWEEP_GPU_MEMORY_FRACTION and
// XLA_PYTHON_CLIENT_MEM_FRACTION ("-" when unset).
type seenGPU struct{ trial, gpu, memory, xla string }

func readSeen(t *testing.T, path string) []seenGPU {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []seenGPU
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 4 {
			t.Fatalf("seen: line %q, want: trial gpu memory-fraction xla-fraction", line)
		}
		out = append(out, seenGPU{fs[0], fs[1], fs[2], fs[3]})
	}
	return out
}

// mostAtOnce is the most trainers running at once in a timeline, of the trials keep says (all: nil).
func mostAtOnce(events []timelineEvent, keep func(trial string) bool) int {
	events = slices.Clone(events)
	sort.SliceStable(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	running, most := 0, 0
	for _, ev := range events {
		if keep != nil && !keep(ev.trial) {
			continue
		}
		switch ev.event {
		case "start":
			running++
		case "exit":
			running--
		}
		most = max(most, running)
	}
	return most
}
