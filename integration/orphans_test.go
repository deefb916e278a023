//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A SIGKILLed worker leaves no trainer running, not even one started through a wrapper that forks
// (`sh -c 'python train.py; ...'`): the trainer, the wrapper's child, dies with the worker.
func TestKilledWorkerLeavesNoWrappedTrainer(t *testing.T) {
	e := newEnv(t)
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := e.startWorker("a", "--slots", "2")
	// Not the last command of the script, so the shell forks the trainer instead of exec'ing it.
	spec := filepath.Join(e.dir, "wrapped.yaml")
	y := fmt.Sprintf(`name: wrapped
trainer:
  command: ["/bin/sh", "-c", %q]
  total_steps: 1000000
seeds: [1, 2]
parameters:
  sleep_ms: {value: 100}
  pid_dir: {value: %q}
probes: {enabled: false}
concurrency: 2
`, strconv.Quote(trainerBin)+"; exit $?", pidDir)
	if err := os.WriteFile(spec, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := e.cli("submit", spec); code != 0 {
		t.Fatalf("submit exited %d:\n%s", code, out)
	}
	waitFor(t, 2*time.Minute, "2 trainers running", func() bool { return len(livePIDs(t, pidDir)) == 2 })
	pids := livePIDs(t, pidDir)
	for _, pid := range pids {
		if ppid := parentOf(pid); ppid == w.Process.Pid || ppid <= 1 {
			t.Fatalf("trainer %d has parent %d, want the wrapper shell", pid, ppid)
		}
	}
	if err := w.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.Wait()
	start := time.Now()
	deadline := start.Add(3 * time.Second)
	for time.Now().Before(deadline) && anyRunning(pids) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, pid := range pids {
		if running(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("trainer %d still running 3s after its worker was SIGKILLed", pid)
		}
	}
	t.Logf("trainers gone %.2fs after the worker's SIGKILL", time.Since(start).Seconds())
}

// procStat returns the fields of /proc/PID/stat after the command name, or nil once pid is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// running says whether pid is a process that is neither gone nor a zombie.
func running(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func anyRunning(pids []int) bool {
	for _, pid := range pids {
		if running(pid) {
			return true
		}
	}
	return false
}

// parentOf is pid's parent's ID, 0 if pid is gone.
func parentOf(pid int) int {
	f := procStat(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
