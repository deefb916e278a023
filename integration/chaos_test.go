//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
)

// The fault schedules of the chaos tests, each event at an offset from the moment the sweep's first
// trainers have written a checkpoint. A freeze stops the dev server's process group (SIGSTOP) for dur
// and resumes it (SIGCONT); a server kill SIGKILLs it, waits dur and starts it again on the same
// address and SQLite file (the restart itself takes a few seconds more, logged); MinIO is SIGKILLed
// and started again on the same address and data directory.
var (
	// TestServerFreezeKeepsTrainersRunning: three 1.5 s freezes and two 3 s ones while ~40 s trainers run.
	freezeSchedule = []fault{
		{at: 2 * time.Second, kind: serverFreeze, dur: 1500 * time.Millisecond},
		{at: 6 * time.Second, kind: serverFreeze, dur: 1500 * time.Millisecond},
		{at: 10 * time.Second, kind: serverFreeze, dur: 1500 * time.Millisecond},
		{at: 14 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
		{at: 20 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
	}
	// TestServerRestartKeepsTrainersRunning: the server SIGKILLed, down 8 s, restarted (~9 s away in all).
	restartSchedule = []fault{
		{at: 2 * time.Second, kind: serverKill, dur: 8 * time.Second},
	}
	// TestStoreOutageLosesNothing: MinIO down for 60 s.
	storeOutageSchedule = []fault{
		{at: 2 * time.Second, kind: minioStop},
		{at: 62 * time.Second, kind: minioStart},
	}
	// TestChaosSweep: five 3 s freezes, two kills and restarts, and a 60 s MinIO outage overlapping
	// a freeze and a restart, while 8 trials of 3 segments train on two workers.
	chaosSchedule = []fault{
		{at: 2 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
		{at: 8 * time.Second, kind: serverKill, dur: 5 * time.Second},
		{at: 22 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
		{at: 28 * time.Second, kind: minioStop},
		{at: 34 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
		{at: 42 * time.Second, kind: serverKill, dur: 5 * time.Second},
		{at: 58 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
		{at: 72 * time.Second, kind: serverFreeze, dur: 3 * time.Second},
		{at: 88 * time.Second, kind: minioStart},
	}
)

// TestServerFreezeKeepsTrainersRunning and the tests after it read results.json's accounting of
// attempts: TrainerFailures (attempts the trainer itself failed: crash, hang, garbage), InfraRetries
// (attempts lost to a worker, the server or the store) and RetrainedSteps (steps an attempt trained
// that a later attempt trained again).

type faultKind string

const (
	serverFreeze faultKind = "server-freeze"
	serverKill   faultKind = "server-kill"
	minioStop    faultKind = "minio-stop"
	minioStart   faultKind = "minio-start"
)

// fault is one event of a schedule.
type fault struct {
	at   time.Duration // after the schedule starts
	kind faultKind
	dur  time.Duration // serverFreeze: how long the server stays stopped; serverKill: how long it stays down
}

// faultInjector plays schedules on a test's dev server (one devserver.Server, restarted as needed) and MinIO.
type faultInjector struct {
	t     *testing.T
	e     *env
	srv   *devserver.Server
	minio *minioServer // nil without one
	// minioDown and minioUp bracket the last MinIO outage.
	minioDown, minioUp time.Time
}

// run plays schedule from now, each event at its offset (or at once when the one before ran late).
func (f *faultInjector) run(schedule []fault) {
	f.t.Helper()
	start := time.Now()
	for _, ev := range schedule {
		if d := time.Until(start.Add(ev.at)); d > 0 {
			time.Sleep(d)
		}
		at := time.Since(start)
		switch ev.kind {
		case serverFreeze:
			f.freeze(ev.dur)
			f.t.Logf("%6.1fs: dev server frozen (SIGSTOP) for %s", at.Seconds(), ev.dur)
		case serverKill:
			f.srv.Kill()
			time.Sleep(ev.dur)
			f.srv = startKillableServer(f.t, f.e)
			f.t.Logf("%6.1fs: dev server SIGKILLed, restarted on %s after %.1fs away", at.Seconds(), f.e.addr,
				time.Since(start.Add(at)).Seconds())
		case minioStop:
			f.minio.kill()
			f.minioDown = time.Now()
			f.t.Logf("%6.1fs: MinIO SIGKILLed", at.Seconds())
		case minioStart:
			f.minio.start()
			f.minioUp = time.Now()
			f.t.Logf("%6.1fs: MinIO started again after %.1fs down", at.Seconds(), f.minioUp.Sub(f.minioDown).Seconds())
		default:
			f.t.Fatalf("unknown fault %q", ev.kind)
		}
	}
}

// freeze stops the dev server's process group for d and resumes it, checking that it really stopped
// answering meanwhile.
func (f *faultInjector) freeze(d time.Duration) {
	f.t.Helper()
	start := time.Now()
	if err := f.srv.Signal(syscall.SIGSTOP); err != nil {
		f.t.Fatalf("SIGSTOP dev server: %v", err)
	}
	defer func() {
		if err := f.srv.Signal(syscall.SIGCONT); err != nil {
			f.t.Fatalf("SIGCONT dev server: %v", err)
		}
	}()
	// SIGSTOP takes effect as each of the server's threads next enters the kernel: wait until every
	// one is stopped before checking that the server no longer answers.
	waitFor(f.t, 5*time.Second, "every thread of the dev server stopped", func() bool { return allStopped(f.srv.Pid()) })
	ctx, cancel := context.WithTimeout(context.Background(), min(d/2, 500*time.Millisecond))
	_, err := f.e.client.CheckHealth(ctx, &client.CheckHealthRequest{})
	cancel()
	if err == nil {
		f.t.Fatalf("dev server still answers after SIGSTOP: the freeze would test nothing")
	}
	time.Sleep(time.Until(start.Add(d)))
}

// TestServerFreezeKeepsTrainersRunning: a Temporal server frozen for 1.5 s three times and 3 s twice
// (the heartbeat timeout is a minute) stops no trainer: the processes running before the first freeze
// still run after the last, every segment ran once, and every trial completes.
func TestServerFreezeKeepsTrainersRunning(t *testing.T) {
	e, srv := newKillableEnv(t)
	f := &faultInjector{t: t, e: e, srv: srv}
	keepsRunning(t, e, f, "freeze", freezeSchedule)
}

// TestServerRestartKeepsTrainersRunning: the Temporal server SIGKILLed and restarted on the same SQLite
// file about 10 s later stops no trainer, and the sweep completes with every segment run once.
func TestServerRestartKeepsTrainersRunning(t *testing.T) {
	e, srv := newKillableEnv(t)
	f := &faultInjector{t: t, e: e, srv: srv}
	keepsRunning(t, e, f, "restart", restartSchedule)
}

// keepsRunning runs 3 one-segment trials of ~40 s on one worker through schedule and checks that no
// trainer was stopped or started again and that every trial completed on its first attempt.
func keepsRunning(t *testing.T, e *env, f *faultInjector, name string, schedule []fault) {
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.startWorker("a", "--slots", "3")
	// 40 records of 1,000 steps, one a second, a checkpoint every 5.
	spec := e.spec(name, `
  total_steps: 40000
seeds: [1, 2, 3]
parameters:
  sleep_ms: {value: 1000}
  checkpoint_every: {value: 5}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
concurrency: 3
retries: {max_attempts: 3}
`)
	sweepID := e.submit(spec)
	waitFor(t, 2*time.Minute, "3 trainers running", func() bool { return len(livePIDs(t, pidDir)) == 3 })
	before := livePIDs(t, pidDir)
	sort.Ints(before)
	f.run(schedule)
	after := livePIDs(t, pidDir)
	sort.Ints(after)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("trainer processes %v before the faults, %v after: a trainer was stopped or started again", before, after)
	}
	waitSweepOrDump(t, e, sweepID, 4*time.Minute)
	e.close() // the workers go before the (restarted) server's cleanup stops it
	trials := completedTrials(t, e.results(sweepID), 3, 40000)
	for key, as := range attemptsSeen(t, e.store, e.dir, sweepID, trials, 40000) {
		if len(as) != 1 {
			t.Errorf("%s: attempts %v, want only the first (no trainer started again)", key, as)
		}
	}
	for wf, attempts := range segmentActivityAttempts(t, e, sweepID) {
		if len(attempts) != 1 || attempts[0] != 1 {
			t.Errorf("%s: TrainSegment attempts %v in its history, want one segment on its first attempt", wf, attempts)
		}
	}
	for _, tr := range trials {
		checkAccounting(t, tr, 0, 0)
		if tr.InfraRetries != 0 {
			t.Errorf("trial %s: InfraRetries %d, want 0 (no attempt lost to the server)", tr.TrialID, tr.InfraRetries)
		}
	}
}

// TestCancelReachesTrainerAfterFreeze: with the server there, `rlsweep cancel` reaches a running
// trainer within 2 s, also after the server was frozen for 3 s under it.
func TestCancelReachesTrainerAfterFreeze(t *testing.T) {
	e, srv := newKillableEnv(t)
	f := &faultInjector{t: t, e: e, srv: srv}
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.startWorker("a")
	spec := e.spec("cancelfreeze", `
  total_steps: 100000000
seeds: [1]
parameters:
  sleep_ms: {value: 100}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
`)
	sweepID := e.submit(spec)
	waitFor(t, 2*time.Minute, "the trainer running", func() bool { return len(livePIDs(t, pidDir)) == 1 })
	before := livePIDs(t, pidDir)
	f.run([]fault{{at: time.Second, kind: serverFreeze, dur: 3 * time.Second}})
	time.Sleep(2 * time.Second)
	pids := livePIDs(t, pidDir)
	if fmt.Sprint(before) != fmt.Sprint(pids) {
		t.Errorf("trainer %v before the freeze, %v after: the freeze stopped it", before, pids)
	}
	if len(pids) != 1 {
		t.Fatalf("%d trainers running after the freeze, want 1", len(pids))
	}
	start := time.Now()
	if out, code := e.cli("cancel", sweepID); code != 0 {
		t.Fatalf("cancel exited %d:\n%s", code, out)
	}
	returned := time.Since(start)
	waitFor(t, 30*time.Second, "the trainer to exit", func() bool { return syscall.Kill(pids[0], 0) != nil })
	gone := time.Since(start)
	t.Logf("cancel returned after %.2fs; trainer gone %.2fs after cancel began", returned.Seconds(), gone.Seconds())
	if gone > 2*time.Second {
		t.Errorf("trainer gone %s after cancel, want within 2s", gone.Round(10*time.Millisecond))
	}
}

// TestInfraFaultsConsumeNoAttempts: with retries.max_attempts 2, segments hit by a worker SIGKILL, a
// graceful worker stop and a MinIO outage still complete, and none of those counts as a trainer
// failure; a trainer that crashes once and is then killed with its worker uses one attempt of two.
func TestInfraFaultsConsumeNoAttempts(t *testing.T) {
	t.Run("kill-stop-outage", func(t *testing.T) {
		e := newS3Env(t, "infra")
		// 4 one-segment trials of 300 records of 1,000 steps, 5 a second, a checkpoint every 5.
		spec := e.spec("infra", `
  total_steps: 300000
  grace_period: 1s
method: grid
seeds: [1, 2, 3, 4]
parameters:
  sleep_ms: {value: 200}
  checkpoint_every: {value: 5}
probes: {enabled: false}
concurrency: 4
retries: {max_attempts: 2}
`)
		a := e.startWorker("a", "--slots", "4")
		sweepID := e.submit(spec, "--heartbeat-timeout", "4s")
		// Every trial's segment runs on a, then b, then c: killed on a, stopped on b, through the outage on c.
		if !e.waitTrainers(sweepID, a, 4) {
			t.Fatal("sweep ended before its trainers ran on worker a")
		}
		time.Sleep(300 * time.Millisecond)
		_ = a.Process.Signal(syscall.SIGKILL)
		_ = a.Wait()
		t.Logf("worker a SIGKILLed")
		b := e.startWorker("b", "--slots", "4")
		if e.waitTrainers(sweepID, b, 4) {
			time.Sleep(time.Second)
			_ = b.Process.Signal(syscall.SIGTERM)
			_ = b.Wait()
			t.Logf("worker b stopped (SIGTERM)")
			c := e.startWorker("c", "--slots", "4")
			if e.waitTrainers(sweepID, c, 4) {
				e.minio.kill()
				time.Sleep(30 * time.Second)
				e.minio.start()
				t.Logf("MinIO down 30s")
			}
		}
		waitSweepOrDump(t, e.env, sweepID, 5*time.Minute)
		e.close()
		trials := completedTrials(t, e.results(sweepID), 4, 300000)
		for _, tr := range trials {
			checkAccounting(t, tr, 0, -1)
			if tr.InfraRetries < 2 {
				t.Errorf("trial %s: InfraRetries %d, want at least 2 (a worker killed and a worker stopped under it)", tr.TrialID, tr.InfraRetries)
			}
			e.checkStoredSteps(sweepID, tr.TrialID, 300000)
		}
	})
	t.Run("crash-then-kill", func(t *testing.T) {
		e := newS3Env(t, "crashkill")
		spec := e.spec("crashkill", `
  total_steps: 200000
  grace_period: 1s
method: grid
seeds: [1, 2]
parameters:
  sleep_ms: {value: 200}
  checkpoint_every: {value: 5}
  crash_at: {value: 8000}
probes: {enabled: false}
concurrency: 2
retries: {max_attempts: 2}
`)
		a := e.startWorker("a", "--slots", "2")
		sweepID := e.submit(spec, "--heartbeat-timeout", "4s")
		t.Cleanup(func() {
			m, _ := filepath.Glob(filepath.Join(os.TempDir(), "scripted-trainer-crashed-"+strings.ReplaceAll(sweepID, "/", "_")+"-*"))
			for _, p := range m {
				_ = os.Remove(p)
			}
		})
		waitFor(t, 2*time.Minute, "both trainers to crash on purpose", func() bool {
			m, _ := filepath.Glob(filepath.Join(os.TempDir(), "scripted-trainer-crashed-"+strings.ReplaceAll(sweepID, "/", "_")+"-*"))
			return len(m) == 2
		})
		// The retries (attempt 2 of 2) run; kill their worker.
		if e.waitTrainers(sweepID, a, 2) {
			time.Sleep(time.Second)
			_ = a.Process.Signal(syscall.SIGKILL)
			_ = a.Wait()
			t.Logf("worker a SIGKILLed under the retried trainers")
		}
		e.startWorker("b", "--slots", "2")
		waitSweepOrDump(t, e.env, sweepID, 4*time.Minute)
		e.close()
		trials := completedTrials(t, e.results(sweepID), 2, 200000)
		for _, tr := range trials {
			checkAccounting(t, tr, 1, -1)
			if tr.InfraRetries < 1 {
				t.Errorf("trial %s: InfraRetries %d, want at least 1 (its worker was killed)", tr.TrialID, tr.InfraRetries)
			}
		}
	})
}

// TestStoreOutageLosesNothing: MinIO down for 60 s while 4 trials of 4 segments train (heartbeat
// timeout 10 s): no attempt is retried, every stored metrics stream holds each step once, every
// attempt's log reaches the store once it is back, and no step is trained twice.
func TestStoreOutageLosesNothing(t *testing.T) {
	e := newS3Env(t, "storeoutage")
	f := &faultInjector{t: t, e: e.env, minio: e.minio}
	e.startWorker("a", "--slots", "2")
	e.startWorker("b", "--slots", "2")
	// 160 records of 1,000 steps, 2 a second, a checkpoint every 5; a segment every 40 records.
	spec := e.spec("storeoutage", `
  total_steps: 160000
  grace_period: 1s
  segment_steps: 40000
method: grid
seeds: [1, 2, 3, 4]
parameters:
  sleep_ms: {value: 500}
  checkpoint_every: {value: 5}
probes: {enabled: false}
concurrency: 4
retries: {max_attempts: 3}
`)
	sweepID := e.submit(spec, "--heartbeat-timeout", "10s")
	e.waitFirstCheckpoint(sweepID)
	f.run(storeOutageSchedule)
	waitSweepOrDump(t, e.env, sweepID, 3*time.Minute)
	history := segmentActivityAttempts(t, e.env, sweepID) // before close stops the server
	e.close()
	trials := completedTrials(t, e.results(sweepID), 4, 160000)
	during := 0
	for _, tr := range trials {
		checkAccounting(t, tr, 0, 0)
		if tr.InfraRetries != 0 {
			t.Errorf("trial %s: InfraRetries %d, want 0 (the outage must not stop a heartbeat)", tr.TrialID, tr.InfraRetries)
		}
		e.checkStoredSteps(sweepID, tr.TrialID, 160000)
		during += recordsBetween(storedMetrics(t, e.s3, sweepID, tr.TrialID), f.minioDown, f.minioUp)
	}
	att := attemptsSeen(t, e.s3, e.dir, sweepID, trials, 40000)
	for key, as := range att {
		if len(as) != 1 {
			t.Errorf("%s: attempts %v, want only the first (no attempt retried)", key, as)
		}
	}
	for wf, attempts := range history {
		for _, a := range attempts {
			if a != 1 {
				t.Errorf("%s: TrainSegment attempts %v in its history, want every segment on its first attempt", wf, attempts)
				break
			}
		}
	}
	checkAttemptLogs(t, e.s3, sweepID, att)
	if during == 0 {
		t.Error("no stored record was written while MinIO was down: the outage tested nothing")
	}
	t.Logf("%d stored records written during the outage", during)
}

// TestChaosSweep: 8 trials of 3 segments on two workers while the server is frozen for 3 s five
// times, killed and restarted twice, and MinIO is down for 60 s (chaosSchedule). Every trial
// completes, no attempt counts as a trainer failure, every stored metrics stream holds each step
// once, every attempt's log is stored, and the steps trained twice are reported per trial (none for
// a trial whose trainers all ran to their segment's end).
func TestChaosSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-minute fault scenario")
	}
	e, srv := newKillableS3Env(t, "chaos")
	f := &faultInjector{t: t, e: e.env, srv: srv, minio: e.minio}
	e.startWorker("a", "--slots", "4")
	e.startWorker("b", "--slots", "4")
	// 180 records of 1,000 steps, 2 a second, a checkpoint every 5; a segment every 60 records (30 s).
	spec := e.spec("chaos", `
  total_steps: 180000
  segment_steps: 60000
method: grid
seeds: [1, 2, 3, 4]
parameters:
  lr: {values: [1.0e-4, 1.0e-3]}
  sleep_ms: {value: 500}
  checkpoint_every: {value: 5}
probes: {enabled: false}
concurrency: 8
retries: {max_attempts: 3}
`)
	sweepID := e.submit(spec)
	e.waitFirstCheckpoint(sweepID)
	start := time.Now()
	f.run(chaosSchedule)
	waitSweepOrDump(t, e.env, sweepID, 5*time.Minute)
	t.Logf("sweep done %.1fs after the first fault", time.Since(start).Seconds())
	e.close()
	trials := completedTrials(t, e.results(sweepID), 8, 180000)
	att := attemptsSeen(t, e.s3, e.dir, sweepID, trials, 60000)
	for _, tr := range trials {
		// Attempts stopped: those a later attempt of the same segment followed, as the scratch
		// directories and stored logs show, or as the trial counts them.
		stopped := int64(0)
		for key, as := range att {
			if strings.HasPrefix(key, artifacts.Segment(tr.TrialID)+"/") {
				stopped += int64(len(as) - 1)
			}
		}
		stopped = max(stopped, int64(tr.InfraRetries))
		t.Logf("trial %s: TrainerFailures %d, InfraRetries %d, RetrainedSteps %d, attempts stopped %d",
			tr.TrialID, tr.TrainerFailures, tr.InfraRetries, tr.RetrainedSteps, stopped)
		if stopped == 0 {
			checkAccounting(t, tr, 0, 0)
		} else {
			checkAccounting(t, tr, 0, -1)
			// A stopped trainer re-trains at most what it trained since its last checkpoint.
			if tr.RetrainedSteps > stopped*faultInterval {
				t.Errorf("trial %s: RetrainedSteps %d, want at most %d (%d stopped attempts × the %d-step checkpoint interval)",
					tr.TrialID, tr.RetrainedSteps, stopped*faultInterval, stopped, faultInterval)
			}
		}
		e.checkStoredSteps(sweepID, tr.TrialID, 180000)
	}
	checkAttemptLogs(t, e.s3, sweepID, att)
}

// completedTrials checks that a sweep's results hold n trials, each completed at steps, and returns them.
func completedTrials(t *testing.T, res results.SweepResults, n int, steps int64) []results.TrialSummary {
	t.Helper()
	if len(res.Trials) != n {
		t.Fatalf("results.json has %d trials, want %d", len(res.Trials), n)
	}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != steps {
			t.Errorf("trial %s: %s at step %d (%s), want completed at %d", tr.TrialID, tr.Outcome, tr.Steps, tr.Error, steps)
		}
	}
	return res.Trials
}

// checkAccounting asserts a trial's trainer failures and, unless retrained < 0, its steps re-trained.
func checkAccounting(t *testing.T, tr results.TrialSummary, trainerFailures int, retrained int64) {
	t.Helper()
	if tr.TrainerFailures != trainerFailures {
		t.Errorf("trial %s: TrainerFailures %d, want %d", tr.TrialID, tr.TrainerFailures, trainerFailures)
	}
	if retrained >= 0 && tr.RetrainedSteps != retrained {
		t.Errorf("trial %s: RetrainedSteps %d, want %d", tr.TrialID, tr.RetrainedSteps, retrained)
	}
}

// waitTrainers waits until n scripted trainers of worker w have written a checkpoint and reports
// true, or false as soon as the sweep has finished (its results.json is stored) without that.
func (e *s3Env) waitTrainers(sweepID string, w *exec.Cmd, n int) bool {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if trainersPastCheckpoint(w.Process.Pid) >= n {
			return true
		}
		if _, err := e.s3.Get(context.Background(), artifacts.ResultsKey(sweepID)); err == nil {
			e.t.Logf("the sweep ended before %d trainers ran on worker pid %d", n, w.Process.Pid)
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.t.Fatalf("timed out waiting for %d trainers past a checkpoint on worker pid %d", n, w.Process.Pid)
	return false
}

// waitFirstCheckpoint waits until a trainer's checkpoint is in the store.
func (e *s3Env) waitFirstCheckpoint(sweepID string) {
	e.t.Helper()
	waitFor(e.t, 2*time.Minute, "a first checkpoint in S3", func() bool {
		keys, _ := e.s3.List(context.Background(), artifacts.TrialsDir(sweepID)+"/")
		for _, k := range keys {
			if strings.Contains(k, "/checkpoints/") {
				return true
			}
		}
		return false
	})
}

var storedLog = regexp.MustCompile(`/trials/([^/]+)/logs/segment-(\d+)-attempt-(\d+)(?:\.log$|/.)`)

// attemptsSeen lists, by "<trial>/<segment>", every attempt that left a trace: a scratch directory on a
// worker under dir or a log in store. Every segment (of segmentSteps) of every trial has at least its
// first attempt.
func attemptsSeen(t *testing.T, store artifacts.Store, dir, sweepID string, trials []results.TrialSummary, segmentSteps int64) map[string][]int {
	t.Helper()
	seen := map[string]map[int]bool{}
	note := func(trial string, seg, attempt int) {
		key := fmt.Sprintf("%s/%d", trial, seg)
		if seen[key] == nil {
			seen[key] = map[int]bool{}
		}
		seen[key][attempt] = true
	}
	for _, tr := range trials {
		for seg := 0; int64(seg)*segmentSteps < tr.Steps || seg == 0; seg++ {
			note(artifacts.Segment(tr.TrialID), seg, 1)
		}
	}
	for _, seg := range scanAttempts(t, dir) {
		for _, a := range seg {
			note(a.trial, a.segment, a.attempt)
		}
	}
	keys, err := store.List(context.Background(), artifacts.TrialsDir(sweepID)+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if m := storedLog.FindStringSubmatch(k); m != nil {
			seg, _ := strconv.Atoi(m[2])
			attempt, _ := strconv.Atoi(m[3])
			note(m[1], seg, attempt)
		}
	}
	out := map[string][]int{}
	for key, as := range seen {
		for a := range as {
			out[key] = append(out[key], a)
		}
		sort.Ints(out[key])
	}
	return out
}

// checkAttemptLogs asserts that every attempt in att has its log in the store: the object
// logs/segment-<s>-attempt-<a>.log, or a non-empty prefix logs/segment-<s>-attempt-<a>/.
func checkAttemptLogs(t *testing.T, store artifacts.Store, sweepID string, att map[string][]int) {
	t.Helper()
	n := 0
	for key, as := range att {
		trial, seg, _ := strings.Cut(key, "/")
		for _, a := range as {
			name := fmt.Sprintf("logs/segment-%s-attempt-%d", seg, a)
			if rc, err := store.Get(context.Background(), artifacts.TrialDir(sweepID, trial)+"/"+name+".log"); err == nil {
				rc.Close()
				n++
				continue
			}
			parts, err := store.List(context.Background(), artifacts.TrialDir(sweepID, trial)+"/"+name+"/")
			if err != nil || len(parts) == 0 {
				t.Errorf("trial %s: no log of segment %s attempt %d in the store (%s.log or %s/…)", trial, seg, a, name, name)
				continue
			}
			n++
		}
	}
	t.Logf("%d attempt logs stored", n)
}

// recordsBetween counts the records of a stored metrics stream whose wall_ns falls between from and to.
func recordsBetween(stream []byte, from, to time.Time) int {
	n := 0
	for _, line := range strings.Split(string(stream), "\n") {
		rec, err := metrics.ParseJSONLine([]byte(line))
		if err != nil {
			continue
		}
		if ns, ok := rec.Values["wall_ns"]; ok && ns > float64(from.UnixNano()) && ns < float64(to.UnixNano()) {
			n++
		}
	}
	return n
}

// segmentActivityAttempts returns, by trial workflow ID, the attempt number of each TrainSegment
// activity its history records (the attempt that closed it).
func segmentActivityAttempts(t *testing.T, e *env, sweepID string) map[string][]int32 {
	t.Helper()
	out := map[string][]int32{}
	for _, r := range e.sweepRuns(t, sweepID, true) {
		train := map[int64]bool{}
		for _, ev := range r.events {
			if s := ev.GetActivityTaskScheduledEventAttributes(); s != nil && s.GetActivityType().GetName() == "TrainSegment" {
				train[ev.GetEventId()] = true
			}
			if s := ev.GetActivityTaskStartedEventAttributes(); s != nil && train[s.GetScheduledEventId()] {
				out[r.info.Execution.WorkflowId] = append(out[r.info.Execution.WorkflowId], s.GetAttempt())
			}
		}
	}
	return out
}

// waitSweepOrDump is waitSweep that, when the sweep is not done in time, shows why: `rlsweep status`
// and the tail of every worker's log.
func waitSweepOrDump(t *testing.T, e *env, sweepID string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	for {
		err := e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil)
		if err == nil || everyTrialFailed(err) {
			t.Logf("sweep %s done %s after the waiting began", sweepID, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if ctx.Err() != nil {
			out, _ := e.cli("status", sweepID)
			t.Logf("rlsweep status %s:\n%s", sweepID, out)
			logs, _ := filepath.Glob(filepath.Join(e.dir, "worker-*.log"))
			for _, p := range logs {
				b, _ := os.ReadFile(p)
				t.Logf("%s (last 3000 bytes):\n%s", filepath.Base(p), b[max(0, len(b)-3000):])
			}
			t.Fatalf("sweep %s not done after %s: %v", sweepID, timeout, err)
		}
		time.Sleep(time.Second)
	}
}

// allStopped tells whether every thread of process pid is stopped (state T in /proc).
func allStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			return false
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) || (s[i+2] != 'T' && s[i+2] != 't') {
			return false
		}
	}
	return true
}

// TestServerAwayPastHeartbeatTimeoutStopsTrainer: a server unreachable for longer than the heartbeat
// timeout (8 s here, the server frozen 12 s) makes the worker stop its trainer before the server times
// the attempt out (once the server has gone 8 s - 1 s grace - 2 s without a heartbeat), so the retry
// the server then starts never trains beside it; the trial
// completes, with the lost attempt counted as an infrastructure retry, not a trainer failure.
func TestServerAwayPastHeartbeatTimeoutStopsTrainer(t *testing.T) {
	e, srv := newKillableEnv(t)
	f := &faultInjector{t: t, e: e, srv: srv}
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.startWorker("a", "--slots", "1")
	spec := e.spec("awaylong", `
  total_steps: 30000
  grace_period: 1s
seeds: [1]
parameters:
  sleep_ms: {value: 1000}
  checkpoint_every: {value: 5}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
retries: {max_attempts: 1}
`)
	sweepID := e.submit(spec, "--heartbeat-timeout", "8s")
	waitFor(t, 2*time.Minute, "the trainer running", func() bool { return len(livePIDs(t, pidDir)) == 1 })
	first := livePIDs(t, pidDir)
	start := time.Now()
	done := make(chan struct{})
	var stoppedAfter time.Duration
	go func() {
		defer close(done)
		for time.Since(start) < 12*time.Second {
			if len(livePIDs(t, pidDir)) == 0 {
				stoppedAfter = time.Since(start)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	f.run([]fault{{at: 0, kind: serverFreeze, dur: 12 * time.Second}})
	<-done
	if stoppedAfter == 0 {
		t.Errorf("trainer %v still ran 12 s into the server's absence (heartbeat timeout 8 s)", first)
	} else {
		t.Logf("trainer stopped %.1fs after the server went away (heartbeat timeout 8 s)", stoppedAfter.Seconds())
	}
	waitSweepOrDump(t, e, sweepID, 3*time.Minute)
	e.close()
	if tr := completedTrials(t, e.results(sweepID), 1, 30000)[0]; tr.TrainerFailures != 0 || tr.InfraRetries < 1 {
		t.Errorf("trial: trainer_failures %d, infra_retries %d; want 0 and at least 1 (max_attempts 1 would have failed it)",
			tr.TrainerFailures, tr.InfraRetries)
	}
}
