package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A trainer started through a wrapper that dies at SIGTERM (`sh train.sh`, the trainer a child of the
// shell) still has its grace period: Stop waits for the trainer's own SIGTERM checkpoint, and returns
// once it has exited, well before the grace period ends.
func TestStopGivesWrappedTrainerItsGrace(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		// The inner shell is the trainer: on SIGTERM it takes 0.5 s to checkpoint. The outer one, the
		// wrapper, forks it (not the last command) and dies at SIGTERM.
		trainer := `trap "sleep 0.5; echo step-42 > ckpt; exit 0" TERM; echo ready > ready; while :; do sleep 0.05; done`
		p, err := Start([]string{"/bin/sh", "-c", `/bin/sh -c '` + trainer + `'; exit $?`}, os.Environ(), dir, log)
		if err != nil {
			t.Fatal(err)
		}
		waitFile(t, filepath.Join(dir, "ready"))
		start := time.Now()
		p.Stop(10 * time.Second)
		took := time.Since(start)
		if b, err := os.ReadFile(filepath.Join(dir, "ckpt")); err != nil || string(b) != "step-42\n" {
			t.Errorf("the wrapped trainer's SIGTERM checkpoint: %q, %v; want step-42 (it was killed before it wrote it)", b, err)
		}
		if took < 400*time.Millisecond || took > 5*time.Second {
			t.Errorf("stop took %s, want the trainer's 0.5 s checkpoint and not the 10 s grace period", took)
		}
	})
}

// A wrapped trainer that ignores SIGTERM is killed at the end of the grace period, counted from SIGTERM
// and not from its wrapper's exit, and nothing of it is left.
func TestStopKillsWrappedTrainerAfterGrace(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		trainer := `trap "" TERM; ` + writePID("trainer.pid") + `; while :; do sleep 0.05; done`
		p, err := Start([]string{"/bin/sh", "-c", `/bin/sh -c '` + trainer + `'; exit $?`}, os.Environ(), dir, log)
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "trainer.pid")))
		const grace = 700 * time.Millisecond
		start := time.Now()
		p.Stop(grace)
		took := time.Since(start)
		if took < grace || took > grace+2*time.Second {
			t.Errorf("stop took %s, want the %s grace period and a little", took, grace)
		}
		// Under Subreaper the SIGKILL to the group is sent by the time Stop returns, not necessarily
		// delivered; in a namespace everything has exited with the supervisor.
		if waitDead(pid, 2*time.Second) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the wrapped trainer %d outlived the stop by 2s", pid)
		}
	})
}

// A trainer that exits on its own (no stop asked) ends at once: what it left behind is killed, not
// waited for. In a PID namespace that includes a process that left the trainer's group (setsid).
func TestTrainerExitKillsLeftoversAtOnce(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		script := `sh -c "` + nested(writePID("child.pid")) + `; exec sleep 60" & ` +
			`setsid sh -c "` + nested(writePID("daemon.pid")) + `; exec sleep 60" & ` +
			`while [ ! -e child.pid ] || [ ! -e daemon.pid ]; do sleep 0.01; done; exit 0`
		start := time.Now()
		p, err := Start([]string{"/bin/sh", "-c", script}, os.Environ(), dir, log)
		if err != nil {
			t.Fatal(err)
		}
		child, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "child.pid")))
		daemon, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "daemon.pid")))
		t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL) })
		select {
		case <-p.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a trainer that exited was waited for past 5 s: its leftover child held it")
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Done came %s after the start, want at once", took)
		}
		if p.ExitCode() != 0 {
			t.Errorf("exit code %d, want the trainer's 0", p.ExitCode())
		}
		if waitDead(child, 2*time.Second) {
			t.Errorf("the trainer's leftover child %d outlived it", child)
		}
		if TrainerIsolation() != Subreaper && waitDead(daemon, 2*time.Second) {
			t.Errorf("the trainer's leftover daemon %d (detached with setsid) outlived it in a PID namespace", daemon)
		}
	})
}

// waitDead waits up to d for pid to exit and reports whether it is still running.
func waitDead(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return alive(pid)
}

// The worker and its supervisors killed together (`pkill -9 rlsweep`, an OOM kill of the worker's
// cgroup) leave no process of the trainer: not the wrapper, not the trainer under it, not what the
// trainer started, not even one that left the trainer's process group. This holds in a PID namespace;
// under Subreaper it does not (docs/deploy.md says so), so the test runs where a namespace can be made.
func TestKilledWorkerAndSupervisorLeaveNoTrainer(t *testing.T) {
	for _, iso := range isolations() {
		if iso == Subreaper {
			continue
		}
		t.Run(iso.String(), func(t *testing.T) {
			for _, m := range []struct {
				name string
				mode int32
			}{{"cold", coldOnly}, {"warm", warmAlways}} {
				t.Run(m.name, func(t *testing.T) {
					dir := t.TempDir()
					worker := exec.Command(os.Args[0], "-test.run=^TestPlayWorker$", "-test.count=1", "-test.timeout=2m")
					worker.Env = append(os.Environ(), playWorkerEnv+"="+dir, playWorkerModeEnv+"="+strconv.Itoa(int(m.mode)),
						playWorkerIsolationEnv+"="+strconv.Itoa(int(iso)), playWorkerDaemonEnv+"=1")
					worker.Stdout, worker.Stderr = os.Stderr, os.Stderr
					if err := worker.Start(); err != nil {
						t.Fatal(err)
					}
					defer func() { _ = worker.Process.Kill(); _ = worker.Wait() }()
					child, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "child.pid")))
					daemon, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "daemon.pid")))
					sup, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "supervisor.pid")))
					waitFile(t, filepath.Join(dir, "warm.pid"))
					for _, pid := range []int{child, daemon, sup} {
						if pid <= 1 || !alive(pid) {
							t.Fatalf("process %d of the trainer (child %d, daemon %d, supervisor %d) is not running", pid, child, daemon, sup)
						}
					}
					// Together, as `pkill -9` does: the supervisor, then the worker.
					_ = syscall.Kill(sup, syscall.SIGKILL)
					_ = worker.Process.Kill()
					_ = worker.Wait()
					for what, pid := range map[string]int{"the trainer's child": child, "the trainer's daemon": daemon} {
						if waitDead(pid, 2*time.Second) {
							_ = syscall.Kill(pid, syscall.SIGKILL)
							t.Errorf("%s %d outlived its worker and supervisor by 2s", what, pid)
						}
					}
				})
			}
		})
	}
}

// WithoutNamespaces (the worker's --trainer-pid-namespace=false) starts trainers under Subreaper: the
// trainer's parent is its supervisor's PID as the machine knows it, not 1.
func TestWithoutNamespaces(t *testing.T) {
	old := forcedIsolation.Load()
	t.Cleanup(func() {
		forcedIsolation.Store(old)
		CloseIdle()
	})
	CloseIdle()
	WithoutNamespaces()
	if got := TrainerIsolation(); got != Subreaper {
		t.Fatalf("TrainerIsolation() = %v after WithoutNamespaces, want subreaper", got)
	}
	useMode(t, coldOnly)
	dir := t.TempDir()
	log := trainerLog(t, dir)
	p, err := Start([]string{"/bin/sh", "-c", `echo $PPID`}, []string{}, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if out, _ := os.ReadFile(log.Name()); string(out) != strconv.Itoa(p.cmd.Process.Pid)+"\n" {
		t.Errorf("the trainer's parent = %q, want its supervisor %d", out, p.cmd.Process.Pid)
	}
}
