//go:build integration

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
	seen := filepath.Join(e.dir, "seen")
	wrapper := e.wrapper("share.sh", fmt.Sprintf(`echo "$RLSWEEP_TRIAL_ID ${CUDA_VISIBLE_DEVICES:--} ${RLSWEEP_GPU_MEMORY_FRACTION:--} ${XLA_PYTHON_CLIENT_MEM_FRACTION:--}" >> %q`, seen))
	timeline := filepath.Join(e.dir, "timeline")
	spec := e.wrappedSpec("packing", wrapper, `  total_steps: 20000
method: grid
parameters:
  x: {values: [1, 2, 3, 4, 5, 6, 7, 8]}
  sleep_ms: {value: 150}
  checkpoint_every: {value: 0}
  timeline: {value: `+timeline+`}
probes: {enabled: false}
concurrency: 8
resources: {gpus: 0.25}
`)
	if out, code := e.cli("validate", "--explain", spec); code != 0 || !strings.Contains(out, "each trial holds 0.25 of a GPU: 4 share one") {
		t.Errorf("validate --explain exited %d, want it to say how trials pack:\n%s", code, out)
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
		if tr.Outcome != results.OutcomeCompleted {
			t.Errorf("trial %s: outcome %s, want completed; error:\n%s", tr.TrialID, tr.Outcome, tr.Error)
		}
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if fs := strings.Fields(line); len(fs) != 4 || fs[1] != "1" || fs[2] != "0.25" || fs[3] != "0.225" {
			t.Errorf("trainer saw %q, want: trial, CUDA_VISIBLE_DEVICES 1, RLSWEEP_GPU_MEMORY_FRACTION 0.25, XLA_PYTHON_CLIENT_MEM_FRACTION 0.225", line)
		}
	}
	events := readTimeline(t, timeline)
	sort.SliceStable(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	running, most := 0, 0
	for _, ev := range events {
		switch ev.event {
		case "start":
			running++
		case "exit":
			running--
		}
		most = max(most, running)
	}
	if most != 4 {
		t.Errorf("at most %d trainers ran at once on the one GPU, want 4 (four 0.25 trials); timeline:\n%+v", most, events)
	}
}
