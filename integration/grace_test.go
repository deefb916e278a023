//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
)

// wrapper writes a trainer wrapper, a shell script that runs the scripted trainer as its child (not
// exec) after the lines in before, and returns its path.
func (e *env) wrapper(name string, before ...string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	script := "#!/bin/sh\n" + strings.Join(append(before, ""), "\n") + "'" + trainerBin + "' \"$@\"\nexit $?\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// wrappedSpec writes a spec whose trainer command is the wrapper at path; body is the rest of the YAML.
func (e *env) wrappedSpec(name, wrapper, body string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf("name: %s\ntrainer:\n  command: [%q]\n", name, wrapper)+body), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// checkWrapped fails the test unless the trainer pid runs under the wrapper (a shell running it), not
// directly under its supervisor.
func checkWrapped(t testing.TB, pid int, wrapper string) {
	t.Helper()
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", parentOf(pid)))
	if !bytes.Contains(cmdline, []byte(wrapper)) {
		t.Fatalf("trainer %d has parent %d running %q, want the wrapper %s", pid, parentOf(pid), cmdline, wrapper)
	}
}

// lastStoredStep is the highest step of a trial's stored metrics records.
func lastStoredStep(t *testing.T, e *env, sweepID, trialID string) int64 {
	var last int64
	sc := bufio.NewScanner(bytes.NewReader(storedMetrics(t, e.store, sweepID, trialID)))
	for sc.Scan() {
		var rec struct{ Step int64 }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Step > last {
			last = rec.Step
		}
	}
	return last
}

// startWrappedTrainer submits a one-trial sweep (spec body as wrappedSpec takes it; the trainer's
// pid_dir is added) whose trainer runs under a `sh train.sh` wrapper, and returns its ID once the
// trainer has run two seconds under the wrapper.
func (e *env) startWrappedTrainer(name, body string) string {
	e.t.Helper()
	pidDir := filepath.Join(e.dir, "pids-"+name)
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	wrapper := e.wrapper("train.sh")
	body = strings.Replace(body, "parameters:\n", "parameters:\n  pid_dir: {value: "+strconv.Quote(pidDir)+"}\n", 1)
	sweepID := e.submit(e.wrappedSpec(name, wrapper, body))
	waitFor(e.t, 2*time.Minute, "the trainer running", func() bool { return len(livePIDs(e.t, pidDir)) == 1 })
	checkWrapped(e.t, livePIDs(e.t, pidDir)[0], wrapper)
	time.Sleep(2 * time.Second)
	return sweepID
}

// A trainer started through a wrapper (`sh train.sh` running it as a child) checkpoints on a cancel:
// its SIGTERM checkpoint, which takes it a second to write, is stored, at the step the cancelled
// trial reports. The wrapper dies at SIGTERM at once; the trainer under it still has its grace period.
func TestWrappedTrainerCheckpointsOnCancel(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a")
	sweepID := e.startWrappedTrainer("wrapcancel", `
  total_steps: 100000000
  grace_period: 30s
seeds: [1]
parameters:
  sleep_ms: {value: 10}
  checkpoint_every: {value: 0}
  term_delay_ms: {value: 1000}
probes: {enabled: false}
`)
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
	keys, err := e.store.List(context.Background(), artifacts.TrialsDir(sweepID)+"/")
	if err != nil {
		t.Fatal(err)
	}
	var ckpts []string
	for _, k := range keys {
		if strings.Contains(k, "/checkpoints/") {
			ckpts = append(ckpts, k)
		}
	}
	// Periodic checkpoints are off: the one checkpoint is the one written on SIGTERM.
	want := artifacts.CheckpointKey(sweepID, tr.TrialID, fmt.Sprintf("ckpt-%d.json", tr.Steps))
	if len(ckpts) != 1 || ckpts[0] != want {
		t.Errorf("stored checkpoints %q, want the SIGTERM checkpoint %s (the trainer was killed before it wrote it)", ckpts, want)
	}
	if last := lastStoredStep(t, e, sweepID, tr.TrialID); tr.Steps != last || last < 10000 {
		t.Errorf("cancelled trial reports %d steps, stored records reach %d; want equal and past 10000", tr.Steps, last)
	}
}

// A graceful worker stop (SIGTERM to the worker) gives a wrapped trainer its grace period: its
// SIGTERM checkpoint is stored and the retry on another worker resumes from it, re-training nothing.
func TestWrappedTrainerCheckpointsOnWorkerStop(t *testing.T) {
	e := newEnv(t)
	a := e.startWorker("a")
	// 400 records of 1,000 steps, 50 a second; no periodic checkpoint, so only the SIGTERM one can
	// spare the retry from training again from step 0.
	sweepID := e.startWrappedTrainer("wrapstop", `
  total_steps: 400000
  grace_period: 30s
seeds: [1]
parameters:
  sleep_ms: {value: 20}
  checkpoint_every: {value: 0}
  term_delay_ms: {value: 1000}
probes: {enabled: false}
`)
	if err := a.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	e.startWorker("b")
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d:\n%s", code, out)
	}
	tr := completedTrials(t, e.results(sweepID), 1, 400000)[0]
	t.Logf("trial %s: InfraRetries %d, RetrainedSteps %d", tr.TrialID, tr.InfraRetries, tr.RetrainedSteps)
	if tr.InfraRetries < 1 {
		t.Errorf("InfraRetries %d, want at least 1 (its worker stopped under it)", tr.InfraRetries)
	}
	if tr.RetrainedSteps != 0 {
		t.Errorf("RetrainedSteps %d, want 0: the retry resumes from the SIGTERM checkpoint", tr.RetrainedSteps)
	}
}

// `kill -9` of the worker and all its supervisors together (as `pkill -9 rlsweep` or an OOM kill of
// its cgroup) leaves no process of any trainer: not the wrappers' trainers, not what the wrappers
// started beside them, not one detached with setsid. Trainer processes are told by a marker in
// their environment.
func TestKilledWorkerAndSupervisorsLeaveNoTrainer(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker("a", "--slots", "2")
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("IT_ORPHAN_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	wrapper := e.wrapper("train.sh", "sleep 600 &", "setsid sleep 600 &")
	spec := e.wrappedSpec("orphans", wrapper, `
  total_steps: 100000000
  environment: {IT_ORPHAN_MARK: "`+strings.TrimPrefix(mark, "IT_ORPHAN_MARK=")+`"}
seeds: [1, 2]
parameters:
  sleep_ms: {value: 100}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
concurrency: 2
`)
	e.submit(spec)
	waitFor(t, 2*time.Minute, "2 trainers running", func() bool { return len(livePIDs(t, pidDir)) == 2 })
	for _, pid := range livePIDs(t, pidDir) {
		checkWrapped(t, pid, wrapper)
	}
	logged, _ := os.ReadFile(filepath.Join(e.dir, "worker-a.log"))
	if !bytes.Contains(logged, []byte("worker: trainer isolation ")) {
		t.Fatalf("the worker did not log its trainer isolation:\n%s", logged)
	}
	if bytes.Contains(logged, []byte("worker: trainer isolation subreaper")) {
		t.Skip("no PID namespace can be created here: a trainer's children may outlive a killed worker and supervisor (docs/deploy.md)")
	}
	marked := func() map[int]string { return processesWith(mark) }
	// 2 wrappers, 2 trainers, 4 sleeps; and a supervisor started cold, whose environment is its trainer's.
	waitFor(t, 10*time.Second, "8 marked processes besides supervisors", func() bool {
		n := 0
		for _, cmdline := range marked() {
			if !strings.Contains(cmdline, "__rlsweep_supervise") {
				n++
			}
		}
		return n == 8
	})
	var sups []int
	for pid := range marked() {
		for p := parentOf(pid); p > 1 && p != w.Process.Pid; p = parentOf(p) {
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); bytes.Contains(cmdline, []byte("__rlsweep_supervise")) && !slices.Contains(sups, p) {
				sups = append(sups, p)
			}
		}
	}
	// The supervisors and the worker, as `pkill -9` would: no one is left to clean up.
	for _, pid := range append(sups, w.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = w.Wait()
	start := time.Now()
	deadline := start.Add(2 * time.Second)
	for len(marked()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for pid, cmdline := range marked() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d (%s, parent %d) of a trainer still running 2s after its worker and supervisors %v were SIGKILLed",
			pid, cmdline, parentOf(pid), sups)
	}
	t.Logf("every trainer process gone %.2fs after the kill of the worker and %d supervisors", time.Since(start).Seconds(), len(sups))
}

// processesWith returns the running processes whose environment holds the entry kv, with their command lines.
func processesWith(kv string) map[int]string {
	out := map[int]string{}
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range envs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(append([]byte{0}, b...), []byte("\x00"+kv+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if !running(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		out[pid] = strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
	}
	return out
}
