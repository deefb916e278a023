//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
)

// MinIO stopped for 35 s with stall_timeout 15s while 8 one-segment trials train: every trainer reaches
// its stop step during the outage, announces its last checkpoint and exits 0. The worker's waits on the
// store are not the trainers' silence: no trial is TrialStalled, no attempt is spent (trainer failures
// and infrastructure retries 0 in results.json), and every trial's last checkpoint is stored.
func TestStoreOutageTrainerExitsDuringOutage(t *testing.T) {
	e := newS3Env(t, "exitoutage")
	e.startWorker("a", "--slots", "8")
	// 40 records of 1,000 steps, 4 a second (10 s a trial), a checkpoint every 5 records.
	spec := e.spec("exitoutage", `
  total_steps: 40000
  stall_timeout: 15s
method: grid
seeds: [1, 2, 3, 4, 5, 6, 7, 8]
parameters:
  sleep_ms: {value: 250}
  checkpoint_every: {value: 5}
probes: {enabled: false}
concurrency: 8
retries: {max_attempts: 3}
`)
	sweepID := e.submit(spec)
	e.waitFirstCheckpoint(sweepID)
	e.minio.kill()
	down := time.Now()
	time.Sleep(35 * time.Second)
	e.minio.start()
	t.Logf("MinIO down for %s", time.Since(down).Round(100*time.Millisecond))
	waitSweepOrDump(t, e.env, sweepID, 3*time.Minute)
	e.close()
	res := e.results(sweepID)
	trials := completedTrials(t, res, 8, 40000)
	exitedDuring := 0
	for _, tr := range trials {
		if strings.Contains(tr.Error, "TrialStalled") || strings.Contains(tr.Error, "no metrics record") {
			t.Errorf("trial %s: %s", tr.TrialID, tr.Error)
		}
		checkAccounting(t, tr, 0, 0)
		if tr.InfraRetries != 0 {
			t.Errorf("trial %s: InfraRetries %d, want 0 (an outage within the budget spends no attempt)", tr.TrialID, tr.InfraRetries)
		}
		key := artifacts.CheckpointKey(sweepID, tr.TrialID, "ckpt-40000.json")
		if got := string(e.get(key)); got != `{"Step":40000}` {
			t.Errorf("%s holds %q, want the trainer's last checkpoint", key, got)
		}
		e.checkStoredSteps(sweepID, tr.TrialID, 40000)
		// The trainer's last record carries the time it was written: at its stop step, during the outage.
		last := lastStoredRecordTime(t, e, sweepID, tr.TrialID)
		if last.After(down) && last.Before(down.Add(35*time.Second)) {
			exitedDuring++
		}
	}
	if exitedDuring == 0 {
		t.Error("no trainer reached its stop step while MinIO was down: the outage tested nothing")
	}
	t.Logf("%d of 8 trainers exited at their stop step during the outage", exitedDuring)
}

// resumedDir is what the scripted trainer prints resuming from a directory checkpoint, then where it trains from.
var resumedDir = regexp.MustCompile(`resumed from directory \S+/checkpoints/ckpt-(\d+) at step (\d+)\nscripted-trainer \S+: from step (\d+) to`)

// lastStoredRecordTime is the wall_ns of the trial's last stored record.
func lastStoredRecordTime(t *testing.T, e *s3Env, sweepID, trialID string) time.Time {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(storedMetrics(t, e.s3, sweepID, trialID)), []byte("\n"))
	var ns float64
	for i := len(lines) - 1; i >= 0 && ns == 0; i-- {
		_, _ = fmt.Sscanf(string(after(lines[i], `"wall_ns":`)), "%g", &ns)
	}
	return time.Unix(0, int64(ns))
}

func after(b []byte, sep string) []byte {
	if i := bytes.Index(b, []byte(sep)); i >= 0 {
		return b[i+len(sep):]
	}
	return nil
}

// A trainer that saves its checkpoints as directories (orbax, torch DCP, save_pretrained): each is
// stored as a tree with its manifest, the trial's second segment resumes from the first segment's
// directory, and a segment retried after its worker was SIGKILLed resumes from the last directory
// its predecessor stored — each resumed at the right step (the trainer checks every file of the
// directory and reads its step from it), with every step stored once.
func TestDirectoryCheckpointResumed(t *testing.T) {
	e := newS3Env(t, "dirckpt")
	a := e.startWorker("a", "--slots", "2")
	spec := e.spec("dirckpt", `
  total_steps: 30000
  segment_steps: 15000
  grace_period: 1s
method: grid
seeds: [1, 2]
parameters:
  sleep_ms: {value: 150}
  checkpoint_every: {value: 5}
  ckpt_dir: {value: 1}
probes: {enabled: false}
concurrency: 2
retries: {max_attempts: 2}
`)
	sweepID := e.submit(spec, "--heartbeat-timeout", "4s")
	// Kill the worker once both trials committed a directory checkpoint of their second segment
	// (resume.json names it: stored, manifest last, then the metrics up to it).
	waitFor(t, 2*time.Minute, "a committed directory checkpoint of each trial's second segment", func() bool {
		n := 0
		for _, p := range e.resumePoints(sweepID) {
			if p.Step >= 20000 {
				n++
			}
		}
		return n == 2
	})
	_ = a.Process.Signal(syscall.SIGKILL)
	_ = a.Wait()
	t.Log("worker a SIGKILLed in the trials' second segments")
	e.startWorker("b", "--slots", "2")
	waitSweepOrDump(t, e.env, sweepID, 3*time.Minute)
	e.close()
	trials := completedTrials(t, e.results(sweepID), 2, 30000)
	for _, tr := range trials {
		checkAccounting(t, tr, 0, -1)
		e.checkStoredSteps(sweepID, tr.TrialID, 30000)
		for _, step := range []int64{15000, 30000} {
			key := artifacts.CheckpointKey(sweepID, tr.TrialID, fmt.Sprintf("ckpt-%d", step))
			m, err := artifacts.ReadCheckpointManifest(context.Background(), e.s3, key)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			if len(m.Files) != 4 {
				t.Errorf("%s: manifest lists %d files, want 4 (state.json, latest.json, two weights files)", key, len(m.Files))
			}
		}
		// The attempt after the kill resumed from the last directory stored before it (the log of the
		// killed attempt, which resumed from ckpt-15000, went with its worker's scratch directory).
		var logs bytes.Buffer
		keys, err := e.s3.List(context.Background(), artifacts.LogsDir(sweepID, tr.TrialID)+"/")
		if err != nil {
			t.Fatalf("trial %s: logs: %v", tr.TrialID, err)
		}
		for _, k := range keys {
			logs.Write(e.get(k))
		}
		m := resumedDir.FindStringSubmatch(logs.String())
		if m == nil || m[1] != m[2] || m[2] != m[3] || m[2] < "20000" {
			t.Errorf("trial %s: want the retry after the kill to resume from directory ckpt-N at step N, N from 20000, and train on from N; logs:\n%s",
				tr.TrialID, logs.String())
		}
		if tr.InfraRetries < 1 {
			t.Errorf("trial %s: InfraRetries %d, want at least 1 (its worker was killed)", tr.TrialID, tr.InfraRetries)
		}
	}
}

// A trainer that announces a checkpoint which cannot be stored fails its attempt at once with a message
// naming the path and what is allowed — never retried as a store outage for five minutes: a missing path,
// and a directory holding an absolute symbolic link.
func TestUnreadableCheckpointFailsTheAttempt(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := e.spec("badckpt", `
  total_steps: 20000
method: grid
seeds: [1]
parameters:
  bad_ckpt: {values: [missing, abslink]}
  checkpoint_every: {value: 3}
probes: {enabled: false}
concurrency: 2
retries: {max_attempts: 1}
`)
	start := time.Now()
	sweepID := e.submit(spec)
	waitSweepOrDump(t, e, sweepID, 90*time.Second)
	took := time.Since(start)
	t.Logf("sweep ended after %s", took.Round(100*time.Millisecond))
	if took > time.Minute {
		t.Errorf("the sweep took %s: an unreadable announcement was retried", took.Round(time.Second))
	}
	res := e.results(sweepID)
	if len(res.Trials) != 2 {
		t.Fatalf("%d trials, want 2", len(res.Trials))
	}
	for _, tr := range res.Trials {
		want := map[string]string{"missing": "does not exist", "abslink": "a symbolic link by an absolute path (/etc/hostname)"}[fmt.Sprint(tr.Params["bad_ckpt"])]
		if tr.Outcome != results.OutcomeFailed {
			t.Errorf("trial %s (%v): %s, want failed on its one attempt (retries.max_attempts 1)", tr.TrialID, tr.Params["bad_ckpt"], tr.Outcome)
		}
		for _, part := range []string{want, "ckpt-3000", "RLSWEEP_CHECKPOINT_DIR=", "a regular file or a directory of regular files"} {
			if !strings.Contains(tr.Error, part) {
				t.Errorf("trial %s: error %q lacks %q", tr.TrialID, tr.Error, part)
			}
		}
	}
}
