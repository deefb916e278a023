//go:build integration

package integration

import (
	"os"
	"path/filepath"
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
	out, code := e.cli("logs", sweepID+"/0-s1")
	if code != 0 || !strings.Contains(out, "crashing on purpose at step 2000") {
		t.Errorf("rlsweep logs exited %d, want the crashed trainer's log:\n%s", code, out)
	}
	if n := trialDirs(t, filepath.Join(e.dir, "work-a")); n != 0 {
		t.Errorf("%d attempt scratch directories left, want none", n)
	}
}
