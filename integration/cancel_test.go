//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// `rlsweep cancel` while 8 trials run: every trainer process is gone within 10 s, the sweep ends
// cancelled, and the 8 trials that had finished before keep their results.
func TestCancelStopsEveryTrainer(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "8")
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The first parameter varies slowest: 8 quick trials, then 8 that would run for minutes, one of
	// which ignores SIGTERM so the worker must escalate to SIGKILL.
	spec := e.spec("cancelme", `
  total_steps: 40000
  grace_period: 2s
seeds: [1, 2, 3, 4, 5, 6, 7, 8]
parameters:
  sleep_ms: {values: [1, 1000]}
  ignore_term: {value: 1}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
concurrency: 8
`)
	sweepID := e.submit(spec)
	waitFor(t, 2*time.Minute, "8 long trainers running", func() bool { return len(livePIDs(t, pidDir)) == 8 })
	pids := livePIDs(t, pidDir)

	start := time.Now()
	if out, code := e.cli("cancel", sweepID); code != 0 {
		t.Fatalf("cancel exited %d:\n%s", code, out)
	}
	waitFor(t, 30*time.Second, "every trainer to exit", func() bool {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				return false
			}
		}
		return true
	})
	gone := time.Since(start)
	t.Logf("all 8 trainers gone %.2fs after cancel", gone.Seconds())
	if gone > 10*time.Second {
		t.Errorf("trainers gone %s after cancel, want within 10s", gone)
	}

	out, code := e.cli("watch", sweepID)
	if code != 4 || !strings.Contains(out, "cancelled") {
		t.Errorf("watch of a cancelled sweep exited %d, want 4 and 'cancelled' in:\n%s", code, out)
	}
	recordHistory(t, e, sweepID, "", "sweep-cancelled.json")
	if ls := e.listSweeps("--state", "cancelled"); len(ls) != 1 || ls[0].SweepID != sweepID || ls[0].Trials != 16 {
		t.Errorf("list --state cancelled: %+v, want %s with 16 trials", ls, sweepID)
	}
	if out, code := e.cli("list", "--state", "running"); code != 0 || strings.TrimSpace(out) != "no sweeps" {
		t.Errorf("list --state running exited %d, want 0 and 'no sweeps':\n%s", code, out)
	}
	res := e.results(sweepID)
	counts := map[string]int{}
	for _, tr := range res.Trials {
		counts[tr.Outcome]++
	}
	if counts[results.OutcomeCompleted] != 8 || counts[results.OutcomeCancelled] != 8 || len(res.Trials) != 16 {
		t.Errorf("results after cancel: %v over %d trials, want 8 completed and 8 cancelled", counts, len(res.Trials))
	}
}

// livePIDs reads the pid files the scripted trainers write and keeps the processes still alive.
func livePIDs(t testing.TB, dir string) []int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err == nil && syscall.Kill(pid, 0) == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A cancelled trial whose trainer ignores SIGTERM (killed after its grace period) reports the step its
// stored records reached, not the step of its last finished segment (0 for a one-segment trial).
func TestCancelledTrialKeepsItsSteps(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a")
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := e.spec("cancelsteps", `
  total_steps: 100000000
  grace_period: 1s
seeds: [1]
parameters:
  sleep_ms: {value: 10}
  ignore_term: {value: 1}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
`)
	sweepID := e.submit(spec)
	waitFor(t, 2*time.Minute, "the trainer running", func() bool { return len(livePIDs(t, pidDir)) == 1 })
	time.Sleep(4 * time.Second) // a few hundred records
	if out, code := e.cli("cancel", sweepID); code != 0 {
		t.Fatalf("cancel exited %d:\n%s", code, out)
	}
	if out, code := e.cli("watch", sweepID); code != 4 {
		t.Fatalf("watch of a cancelled sweep exited %d, want 4:\n%s", code, out)
	}
	res := e.results(sweepID)
	if len(res.Trials) != 1 || res.Trials[0].Outcome != results.OutcomeCancelled {
		t.Fatalf("results: %+v, want one cancelled trial", res.Trials)
	}
	tr := res.Trials[0]
	recordHistory(t, e, workflows.TrialWorkflowID(sweepID, tr.TrialID), "", "trial-cancelled.json")
	var last int64
	sc := bufio.NewScanner(bytes.NewReader(storedMetrics(t, e.store, sweepID, tr.TrialID)))
	for sc.Scan() {
		var rec struct{ Step int64 }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Step > last {
			last = rec.Step
		}
	}
	if last < 10000 {
		t.Fatalf("stored metrics reach step %d, want a trainer that trained a while", last)
	}
	if tr.Steps != last {
		t.Errorf("cancelled trial reports %d steps, want %d, the last step of its stored records", tr.Steps, last)
	}
}
