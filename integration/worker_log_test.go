//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A worker says why an attempt failed: when a trial's trainer crashes, the worker's stderr holds a
// warning-or-worse line that names the trial, and the attempt's log is stored (rlsweep logs prints it)
// and its scratch directory removed.
func TestWorkerLogsTrainerCrash(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "1")
	spec := e.spec("crashlog", `
  total_steps: 4000
method: grid
parameters:
  sleep_ms: {value: 1}
  crash_at: {value: 2000}
probes: {enabled: false}
retries: {max_attempts: 1}
`)
	sweepID := e.submit(spec)
	if out, code := e.cli("watch", sweepID); code == 0 {
		t.Fatalf("watch exited 0, want the sweep failed:\n%s", out)
	}
	logPath := filepath.Join(e.dir, "worker-a.log")
	var line string
	waitFor(t, 10*time.Second, "the worker's log line about the crash", func() bool {
		b, _ := os.ReadFile(logPath)
		for _, l := range strings.Split(string(b), "\n") {
			if (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) && strings.Contains(l, "trial_id=0-s1") {
				line = l
				return true
			}
		}
		return false
	})
	t.Logf("worker log line: %s", line)
	for _, want := range []string{"sweep_id=" + sweepID, "TrainerCrashed", "crashing on purpose at step 2000"} {
		if !strings.Contains(line, want) {
			t.Errorf("worker log line %q lacks %q", line, want)
		}
	}
	// One line for the one failure: not the SDK's "Activity error." beside it, nor a warning about the
	// attempt's last heartbeat.
	if lines := warnLines(t, logPath); len(lines) != 1 {
		t.Errorf("the worker logged %d warning-or-worse lines for one failed attempt, want 1:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	out, code := e.cli("logs", sweepID+"/0-s1")
	if code != 0 || !strings.Contains(out, "crashing on purpose at step 2000") {
		t.Errorf("rlsweep logs exited %d, want the crashed trainer's log:\n%s", code, out)
	}
	if n := trialDirs(t, filepath.Join(e.dir, "work-a")); n != 0 {
		t.Errorf("%d attempt scratch directories left, want none", n)
	}
}

// warnLines are the worker log's lines at WARN or ERROR.
func warnLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	return out
}

// Expected cancellations are not warnings: a sweep whose trainers early_terminate stops in the middle
// of a segment (mode stop: the pruned trials' activities are cancelled), then a sweep cancelled while
// its trainers run, leave no line at WARN or ERROR in the worker's log.
func TestExpectedCancellationsLogNoWarning(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	pruned := e.spec("quietprune", `
  total_steps: 12000
metric: {name: reward, goal: maximize}
method: grid
parameters:
  quality: {values: [90, 10, 80, 20]}
  sleep_ms: {value: 150}
early_terminate: {type: asha, min_steps: 2000, eta: 2, mode: stop}
order: listed  # quality 10 reaches the first rung after 90 has, and is stopped there
probes: {enabled: false}
concurrency: 2
`)
	out, code := e.cli("submit", pruned, "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	res := e.results(sweepIDFrom(t, out))
	n := 0
	for _, tr := range res.Trials {
		if tr.Outcome == "pruned" && tr.Steps < 12000 {
			n++
		}
	}
	if n == 0 {
		for _, tr := range res.Trials {
			t.Logf("trial %s: %s at step %d", tr.TrialID, tr.Outcome, tr.Steps)
		}
		t.Fatalf("no trial was stopped during a segment; the test needs one:\n%s", out)
	}
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cancelled := e.spec("quietcancel", `
  total_steps: 400000
parameters:
  sleep_ms: {value: 200}
  quality: {values: [1, 2]}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
concurrency: 2
`)
	sweepID := e.submit(cancelled)
	waitFor(t, time.Minute, "2 trainers running", func() bool { return len(livePIDs(t, pidDir)) == 2 })
	time.Sleep(2 * time.Second) // a few heartbeats in
	if out, code := e.cli("cancel", sweepID); code != 0 {
		t.Fatalf("cancel exited %d:\n%s", code, out)
	}
	if out, code := e.cli("watch", sweepID); !strings.Contains(out, "cancelled") {
		t.Fatalf("watch exited %d, want the sweep cancelled:\n%s", code, out)
	}
	time.Sleep(2 * time.Second) // the SDK's last heartbeat flushes come after the attempts end
	if lines := warnLines(t, filepath.Join(e.dir, "worker-a.log")); len(lines) > 0 {
		t.Errorf("the worker logged %d warning-or-worse lines for %d pruned trials and a cancel, want none:\n%s",
			len(lines), n, strings.Join(lines, "\n"))
	}
}
