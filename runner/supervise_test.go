package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// playWorkerEnv names the directory in which TestPlayWorker, run as a helper process, starts a trainer;
// playWorkerModeEnv how it gets the trainer's supervisor (startMode).
// playWorkerIsolationEnv the isolation it starts it under (0: as TrainerIsolation finds);
// playWorkerDaemonEnv, when set, has the trainer also start a process detached with setsid.
const (
	playWorkerEnv          = "RLSWEEP_TEST_PLAY_WORKER"
	playWorkerModeEnv      = "RLSWEEP_TEST_PLAY_WORKER_MODE"
	playWorkerIsolationEnv = "RLSWEEP_TEST_PLAY_WORKER_ISOLATION"
	playWorkerDaemonEnv    = "RLSWEEP_TEST_PLAY_WORKER_DAEMON"
)

// TestPlayWorker is not a test of its own: run as a helper process it plays a worker that starts a
// trainer, through a wrapper that forks (its supervisor's PID in supervisor.pid), keeps a warm
// supervisor waiting for the next (its PID in warm.pid), and then waits to be killed.
func TestPlayWorker(t *testing.T) {
	dir := os.Getenv(playWorkerEnv)
	if dir == "" {
		t.Skip("helper process for TestKilledWorkerLeavesNoTrainer")
	}
	mode, _ := strconv.Atoi(os.Getenv(playWorkerModeEnv))
	startMode.Store(int32(mode))
	iso, _ := strconv.Atoi(os.Getenv(playWorkerIsolationEnv))
	forcedIsolation.Store(int32(iso))
	log := trainerLog(t, dir)
	script := `sh -c "` + nested(writePID("child.pid")) + `; exec sleep 300" & `
	if os.Getenv(playWorkerDaemonEnv) != "" {
		script += `setsid sh -c "` + nested(writePID("daemon.pid")) + `; exec sleep 300" & `
	}
	p, err := Start([]string{"/bin/sh", "-c", script + "wait"}, os.Environ(), dir, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "supervisor.pid"), []byte(strconv.Itoa(p.cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startMode.Store(warmIfWaiting)
	pid := waitWarm(t)
	if err := os.WriteFile(filepath.Join(dir, "warm.pid.tmp"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "warm.pid.tmp"), filepath.Join(dir, "warm.pid")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute)
}

// A worker killed with SIGKILL leaves nothing of its trainer running: not the wrapper it started, and
// not what the wrapper forked (which holds the GPU in a real trainer); nor the warm supervisor it kept
// waiting for its next trainer. Whether the trainer's supervisor was started cold or warm.
func TestKilledWorkerLeavesNoTrainer(t *testing.T) {
	for _, m := range []struct {
		name string
		mode int32
	}{{"cold", coldOnly}, {"warm", warmAlways}} {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			worker := exec.Command(os.Args[0], "-test.run=^TestPlayWorker$", "-test.count=1", "-test.timeout=2m")
			worker.Env = append(os.Environ(), playWorkerEnv+"="+dir, playWorkerModeEnv+"="+strconv.Itoa(int(m.mode)))
			worker.Stdout, worker.Stderr = os.Stderr, os.Stderr
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			child, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "child.pid")))
			warmPID, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "warm.pid")))
			if child <= 1 || !alive(child) || warmPID <= 1 || !alive(warmPID) {
				t.Fatalf("the wrapper's child %d or the warm supervisor %d is not running", child, warmPID)
			}
			_ = worker.Process.Kill()
			_ = worker.Wait()
			deadline := time.Now().Add(3 * time.Second)
			for (alive(child) || alive(warmPID)) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			for what, pid := range map[string]int{"the trainer's child": child, "the warm supervisor": warmPID} {
				if alive(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("%s %d outlived its killed worker by 3s", what, pid)
				}
			}
		})
	}
}

// The worker sees the trainer's own status through the supervisor: its exit code, or the signal that
// ended it, core-dumping signals included.
func TestProcessPassesExitStatusThrough(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		for _, c := range []struct {
			script string
			code   int
			sig    syscall.Signal
		}{
			{"exit 0", 0, 0},
			{"exit 7", 7, 0},
			{"exit 143", 143, 0},
			{"kill -TERM $$", -1, syscall.SIGTERM},
			{"kill -INT $$", -1, syscall.SIGINT},
			{"kill -SEGV $$", -1, syscall.SIGSEGV},
			{"kill -ABRT $$", -1, syscall.SIGABRT},
			{"kill -USR1 $$", -1, syscall.SIGUSR1},
			{"kill -KILL $$", -1, syscall.SIGKILL},
		} {
			p, err := Start([]string{"/bin/sh", "-c", c.script}, os.Environ(), dir, log)
			if err != nil {
				t.Fatal(err)
			}
			<-p.done
			ws := p.waitStatus()
			if p.ExitCode() != c.code || (c.sig != 0) != ws.Signaled() || (c.sig != 0 && ws.Signal() != c.sig) {
				t.Errorf("%q: exit code %d, status %#x; want exit code %d, signal %v", c.script, p.ExitCode(), ws, c.code, c.sig)
			}
		}
	})
}

// A trainer that cannot start is reported by startProcess, as when it ran without a supervisor.
func TestProcessStartErrors(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		noExec := filepath.Join(dir, "train.sh")
		if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for argv0, want := range map[string]string{
			"rlsweep-no-such-trainer":  "executable file not found",
			filepath.Join(dir, "none"): "no such file",
			noExec:                     "permission denied",
			"./train.sh":               "permission denied",
		} {
			p, err := Start([]string{argv0}, os.Environ(), dir, log)
			if err == nil {
				p.Stop(time.Second)
				t.Errorf("Start(%q) = nil error, want one saying %q", argv0, want)
				continue
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), argv0) {
				t.Errorf("Start(%q) = %v, want an error naming it and saying %q", argv0, err, want)
			}
		}
		// A relative program is found in the trainer's directory.
		if err := os.Chmod(noExec, 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := Start([]string{"./train.sh"}, os.Environ(), dir, log)
		if err != nil {
			t.Fatal(err)
		}
		<-p.done
		if p.ExitCode() != 0 {
			t.Errorf("./train.sh exit code %d, want 0", p.ExitCode())
		}
	})
}

// trainerLog creates the file a test trainer's output goes to, closed when the test ends.
func trainerLog(t *testing.T, dir string) *os.File {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log
}
