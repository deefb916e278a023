//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// The fault sweeps: 1,000 steps per record, a checkpoint every 5 records (the interval steps lost
// are bounded by), 100 ms per record.
const (
	faultStep     = 1000
	faultInterval = 5 * faultStep
)

func faultSpec(total, segment int64, lrs string, seeds string) string {
	return fmt.Sprintf(`
  total_steps: %d
  segment_steps: %d
  grace_period: 1s
method: grid
seeds: %s
parameters:
  lr: {values: %s}
  sleep_ms: {value: 100}
  checkpoint_every: {value: 5}
probes: {enabled: false}
concurrency: 8
retries: {max_attempts: 6}
`, total, segment, seeds, lrs)
}

// Three SIGKILLs of worker processes during a 20-trial sweep on S3: every trial completes, every
// interrupted segment resumes from its last checkpoint, and the stored metrics hold every step once.
func TestWorkerKillsLoseNoSteps(t *testing.T) {
	e := newS3Env(t, "kills")
	workers := map[string]*exec.Cmd{"a": e.startWorker("a", "--slots", "4", "--keep-scratch"), "b": e.startWorker("b", "--slots", "4", "--keep-scratch")}
	const segment = 20000
	spec := e.spec("kills", faultSpec(40000, segment, "[1.0e-4, 3.0e-4, 1.0e-3, 3.0e-3, 1.0e-2]", "[1, 2, 3, 4]"))
	// 10 s, not less: on a loaded machine a worker that is alive but starved can miss a shorter
	// heartbeat timeout, and the server then retries its segment while the first attempt still runs
	// and still stores checkpoints; such a retry is no kill's and resumes from what was stored when it
	// started, which the losses below do not measure.
	sweepID := e.submit(spec, "--heartbeat-timeout", "10s")
	stored := map[string]map[string]resumePoint{}
	for i, victim := range []string{"a", "b", "a2"} {
		w := workers[victim]
		waitFor(t, 2*time.Minute, "worker "+victim+" to run a trainer past its first checkpoint", func() bool {
			return trainersPastCheckpoint(w.Process.Pid) > 0
		})
		time.Sleep(time.Duration(300+i*400) * time.Millisecond) // land between checkpoints, not on one
		if err := w.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = w.Wait()
		// The checkpoints stored when the worker died: its retried segments must resume from them.
		stored[victim] = e.resumePoints(sweepID)
		next := strings.TrimRight(victim, "0123456789") + strconv.Itoa(i/2+2)
		t.Logf("kill %d: SIGKILL worker %s (pid %d), started %s", i+1, victim, w.Process.Pid, next)
		workers[next] = e.startWorker(next, "--slots", "4", "--keep-scratch")
	}
	waitSweep(t, e.client, sweepID, 5*time.Minute)

	e.checkAllCompleted(sweepID, 20, 40000)
	att := scanAttempts(t, e.dir)
	interrupted, maxLost := 0, int64(0)
	for _, seg := range att {
		for i := 0; i+1 < len(seg); i++ {
			prev := seg[i]
			if !prev.started {
				continue
			}
			interrupted++
			// The attempt that resumed prev's work is the next one that ran a trainer. When none did,
			// the retry resumed from a checkpoint at the segment's end (prev trained it all and its
			// worker died before the segment completed) and had nothing left to train.
			next := i + 1
			for next < len(seg) && !seg[next].started {
				next++
			}
			if next == len(seg) {
				end := int64(prev.segment+1) * segment
				t.Logf("trial %s segment %d: attempt %d reached step %d; the attempts after it resumed at the segment's end and ran no trainer",
					prev.trial, prev.segment, prev.attempt, prev.last)
				if prev.last < end {
					t.Errorf("trial %s segment %d: attempt %d reached step %d and no later attempt ran a trainer, want the segment's end %d reached",
						prev.trial, prev.segment, prev.attempt, prev.last, end)
				}
				continue
			}
			cur := seg[next]
			lost := prev.last - cur.from
			maxLost = max(maxLost, lost)
			ckpt := int64(-1) // unknown: the attempt did not die with a killed worker
			if w := workerOf(prev.dir); stored[w] != nil {
				ckpt = int64(cur.segment) * segment // no checkpoint of this segment yet: its start
				if p, ok := stored[w][cur.trial]; ok && p.Segment == cur.segment {
					ckpt = p.Step
				}
			}
			t.Logf("trial %s segment %d: attempt %d reached step %d, attempt %d resumed from %d (last committed checkpoint %d): %d steps lost",
				cur.trial, cur.segment, prev.attempt, prev.last, cur.attempt, cur.from, ckpt, lost)
			// What is lost is what the trainer trained past its last committed checkpoint: at most one
			// interval, and one more while the checkpoint of the interval's end was still uploading when
			// the worker died (a loaded machine's store answers in seconds). That a retry resumes from
			// exactly the committed checkpoint is checked next.
			if lost < 0 || lost > 2*faultInterval {
				t.Errorf("trial %s segment %d lost %d steps, want 0…%d (two checkpoint intervals)", cur.trial, cur.segment, lost, 2*faultInterval)
			}
			if ckpt >= 0 && cur.from != ckpt {
				t.Errorf("trial %s segment %d resumed from step %d, want its last committed checkpoint %d", cur.trial, cur.segment, cur.from, ckpt)
			}
		}
	}
	t.Logf("%d interrupted segments; steps lost per interrupted segment at most %d (checkpoint interval %d)", interrupted, maxLost, faultInterval)
	if interrupted < 3 {
		t.Errorf("%d interrupted segments, want at least one per kill (3)", interrupted)
	}
}

// Ctrl-C on a worker running trainers: each trainer gets SIGTERM and its grace period, writes its
// checkpoint on the way out, and the worker stores it before it exits (--stop-timeout); another worker
// resumes every interrupted segment from exactly there. Before, the worker exited at once and took its
// trainers with it mid-checkpoint, so the retries fell back to the last periodic checkpoint.
func TestWorkerShutdownLetsTrainersCheckpoint(t *testing.T) {
	e := newEnv(t)
	a := e.startWorker("a", "--slots", "4", "--keep-scratch")
	spec := e.spec("graceful", faultSpec(40000, 40000, "[1.0e-4, 3.0e-4]", "[1, 2]"))
	sweepID := e.submit(spec)
	waitFor(t, 2*time.Minute, "4 trainers past their first checkpoint", func() bool {
		return trainersPastCheckpoint(a.Process.Pid) == 4
	})
	time.Sleep(300 * time.Millisecond) // between periodic checkpoints
	start := time.Now()
	if err := a.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	t.Logf("worker a exited %.2fs after SIGINT", time.Since(start).Seconds())
	e.startWorker("b", "--slots", "4", "--keep-scratch")
	waitSweep(t, e.client, sweepID, 3*time.Minute)
	for _, tr := range e.results(sweepID).Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != 40000 {
			t.Errorf("trial %s: %s at step %d, want completed at 40000", tr.TrialID, tr.Outcome, tr.Steps)
		}
	}
	interrupted := 0
	for _, seg := range scanAttempts(t, e.dir) {
		for i := 1; i < len(seg); i++ {
			prev, cur := seg[i-1], seg[i]
			if !prev.started {
				continue
			}
			interrupted++
			if cur.from != prev.last {
				t.Errorf("trial %s: attempt %d stopped at step %d, attempt %d resumed from %d: want the checkpoint written at the stop",
					cur.trial, prev.attempt, prev.last, cur.attempt, cur.from)
			}
		}
	}
	if interrupted != 4 {
		t.Errorf("%d interrupted segments, want the 4 running at the shutdown", interrupted)
	}
}

// A second Ctrl-C does not wait: the first asks the worker to let its trainers checkpoint (here they
// ignore SIGTERM and have a minute's grace), the second ends the worker at once, and its trainers with it.
func TestWorkerSecondInterruptStopsAtOnce(t *testing.T) {
	e := newEnv(t)
	pidDir := filepath.Join(e.dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := e.startWorker("a", "--slots", "2", "--keep-scratch")
	spec := e.spec("impatient", `
  total_steps: 1000000
  grace_period: 60s
seeds: [1, 2]
parameters:
  sleep_ms: {value: 100}
  ignore_term: {value: 1}
  pid_dir: {value: `+strconv.Quote(pidDir)+`}
probes: {enabled: false}
concurrency: 2
`)
	// A grace period of a minute needs a heartbeat timeout above it (sweeps.CheckGracePeriod).
	if out, code := e.cli("submit", spec, "--heartbeat-timeout", "2m"); code != 0 {
		t.Fatalf("submit exited %d:\n%s", code, out)
	}
	waitFor(t, 2*time.Minute, "2 trainers running", func() bool { return len(livePIDs(t, pidDir)) == 2 })
	pids := livePIDs(t, pidDir)
	if err := a.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the graceful stop is under way: the trainers ignore its SIGTERM
	start := time.Now()
	if err := a.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = a.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("worker still running 10s after the second Ctrl-C, want it gone at once")
	}
	waitFor(t, 10*time.Second, "the trainers to die with the worker", func() bool {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				return false
			}
		}
		return true
	})
	t.Logf("worker and trainers gone %.2fs after the second Ctrl-C", time.Since(start).Seconds())
}

// The dev server SIGKILLed mid-sweep and restarted on the same port and SQLite file: the sweep completes.
func TestDevServerKillAndRestart(t *testing.T) {
	e, srv := newKillableEnv(t)
	e.startWorker("a", "--slots", "4", "--keep-scratch")
	e.startWorker("b", "--slots", "4", "--keep-scratch")
	spec := e.spec("restart", faultSpec(30000, 10000, "[1.0e-4, 1.0e-3, 1.0e-2]", "[1, 2, 3, 4]"))
	sweepID := e.submit(spec, "--heartbeat-timeout", "5s")
	waitFor(t, 2*time.Minute, "trials to store metrics", func() bool {
		keys, _ := e.store.List(context.Background(), artifacts.TrialsDir(sweepID)+"/")
		return len(keys) >= 8
	})
	if _, err := e.store.Get(context.Background(), artifacts.ResultsKey(sweepID)); err == nil {
		t.Fatal("the sweep finished before the server was killed: the test would prove nothing")
	}
	srv.Kill()
	t.Logf("dev server killed at %s", time.Now().Format(time.TimeOnly))
	time.Sleep(3 * time.Second)
	startKillableServer(t, e) // its cleanup stops it
	t.Logf("dev server restarted on %s with %s", e.addr, filepath.Join(e.dir, "temporal.db"))
	waitSweep(t, e.client, sweepID, 5*time.Minute)
	e.close() // the workers go before the restarted server's cleanup stops it
	res := e.results(sweepID)
	if len(res.Trials) != 12 {
		t.Fatalf("results.json has %d trials, want 12", len(res.Trials))
	}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != 30000 {
			t.Errorf("trial %s: %s at step %d, want completed at 30000", tr.TrialID, tr.Outcome, tr.Steps)
		}
		checkSteps(t, e, sweepID, tr.TrialID, faultStep, 30000, faultStep)
	}
}

// MinIO stopped for 30 s mid-sweep: the SDK retries every upload, and afterwards every artifact is in
// the bucket and complete — the metrics stream byte for byte as the trainers' own output dictates, every
// checkpoint with the content the trainer wrote, every attempt's log.
func TestMinioOutage(t *testing.T) {
	e := newS3Env(t, "outage")
	e.startWorker("a", "--slots", "4", "--keep-scratch")
	e.startWorker("b", "--slots", "4", "--keep-scratch")
	spec := e.spec("outage", faultSpec(60000, 30000, "[1.0e-4, 1.0e-3, 1.0e-2]", "[1, 2]"))
	sweepID := e.submit(spec)
	waitFor(t, 2*time.Minute, "a first checkpoint in S3", func() bool {
		keys, _ := e.s3.List(context.Background(), artifacts.TrialsDir(sweepID)+"/")
		return len(keys) > 0
	})
	e.minio.kill()
	down := time.Now()
	time.Sleep(30 * time.Second)
	up := time.Now()
	e.minio.start()
	t.Logf("MinIO down for %s", time.Since(down).Round(100*time.Millisecond))
	waitSweep(t, e.client, sweepID, 5*time.Minute)

	e.checkAllCompleted(sweepID, 6, 60000)
	att := scanAttempts(t, e.dir)
	retried, checked, during := 0, 0, 0
	// The log of an attempt that ended while MinIO was down is stored by its worker's background
	// uploader, which waits up to a minute between tries and may store it after the sweep has ended:
	// each log is read again until it matches, for up to 2 minutes in all.
	logsBy := time.Now().Add(2 * time.Minute)
	for _, seg := range att {
		retried += len(seg) - 1
		for _, a := range seg {
			if !a.started {
				continue
			}
			checked++
			for _, raw := range a.records {
				rec, _ := metrics.ParseJSONLine(raw)
				if ns, ok := rec.Values["wall_ns"]; ok && ns > float64(down.UnixNano()) && ns < float64(up.UnixNano()) {
					during++
				}
			}
			logKey := artifacts.LogDir(sweepID, a.trial, a.segment, int32(a.attempt))
			local, err := os.ReadFile(filepath.Join(a.dir, "stdout.log"))
			if err != nil {
				t.Fatal(err)
			}
			var stored bytes.Buffer
			eventually(time.Until(logsBy), func() bool {
				stored.Reset()
				err = artifacts.ReadLog(context.Background(), e.s3, sweepID, a.trial, a.segment, int32(a.attempt), &stored)
				return err == nil && sha256.Sum256(stored.Bytes()) == sha256.Sum256(local)
			})
			if err != nil {
				t.Errorf("%s: %v", logKey, err)
			} else if sha256.Sum256(stored.Bytes()) != sha256.Sum256(local) {
				t.Errorf("%s differs from the trainer's log", logKey)
			}
		}
	}
	for trial, want := range expectedMetrics(t, att) {
		key := artifacts.MetricsDir(sweepID, trial)
		if got := sha256.Sum256(storedMetrics(t, e.s3, sweepID, trial)); got != sha256.Sum256(want) {
			t.Errorf("%s: stream sha256 %x, want %x (from the trainer's own records)", key, got, sha256.Sum256(want))
		}
		ckpts, err := e.s3.List(context.Background(), artifacts.CheckpointKey(sweepID, trial, ""))
		if err != nil {
			t.Fatal(err)
		}
		if len(ckpts) < 60000/faultInterval {
			t.Errorf("trial %s: %d checkpoints stored, want at least %d", trial, len(ckpts), 60000/faultInterval)
		}
		for _, k := range ckpts {
			step := checkpointStep(k)
			if got, want := string(e.get(k)), fmt.Sprintf(`{"Step":%d}`, step); got != want {
				t.Errorf("%s holds %q, want %q", k, got, want)
			}
		}
	}
	if during == 0 {
		t.Error("no trainer wrote a record while MinIO was down: the outage tested nothing")
	}
	t.Logf("%d records written during the outage; %d attempts checked (%d retried), every metrics stream, log and checkpoint complete",
		during, checked, retried)
}

// waitSweep waits for the sweep workflow (its last run) to complete, or to fail because every trial
// failed (the test then reads its results).
func waitSweep(t *testing.T, c client.Client, sweepID string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	for {
		err := c.GetWorkflow(ctx, sweepID, "").Get(ctx, nil)
		if err == nil || everyTrialFailed(err) {
			t.Logf("sweep %s done %s after the waiting began", sweepID, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("sweep %s not done after %s: %v", sweepID, timeout, err)
		}
		time.Sleep(time.Second) // the server may be restarting
	}
}

// checkStoredSteps asserts a trial's stored metrics stream in S3 holds every step from faultStep to last, once.
func (e *s3Env) checkStoredSteps(sweepID, trialID string, last int64) {
	e.t.Helper()
	want := int64(faultStep)
	sc := bufio.NewScanner(bytes.NewReader(storedMetrics(e.t, e.s3, sweepID, trialID)))
	for sc.Scan() {
		rec, err := metrics.ParseJSONLine(sc.Bytes())
		if err != nil || rec.Step != want {
			e.t.Errorf("trial %s: stored line %q, want step %d (a duplicate or missing step)", trialID, sc.Text(), want)
			return
		}
		want += faultStep
	}
	if want != last+faultStep {
		e.t.Errorf("trial %s: stored steps end at %d, want %d", trialID, want-faultStep, last)
	}
}

// resumePoints reads every trial's resume.json — the checkpoint a retry must resume from, as
// TrainSegment commits it after the upload — by trial ID.
func (e *s3Env) resumePoints(sweepID string) map[string]resumePoint {
	keys, err := e.s3.List(context.Background(), artifacts.TrialsDir(sweepID)+"/")
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]resumePoint{}
	for _, k := range keys {
		if m := trialResume.FindStringSubmatch(k); m != nil {
			var p resumePoint
			if err := json.Unmarshal(e.get(k), &p); err != nil {
				e.t.Fatalf("%s: %v", k, err)
			}
			out[m[1]] = p
		}
	}
	return out
}

type resumePoint struct {
	Segment int
	Step    int64
}

var trialResume = regexp.MustCompile(`/trials/([^/]+)/resume\.json$`)

var workDir = regexp.MustCompile(`/work-([a-z0-9]+)/`)

// workerOf names the worker whose scratch directory holds dir.
func workerOf(dir string) string {
	if m := workDir.FindStringSubmatch(dir); m != nil {
		return m[1]
	}
	return ""
}

var ckptName = regexp.MustCompile(`ckpt-(\d+)\.json$`)

func checkpointStep(key string) int64 {
	m := ckptName.FindStringSubmatch(key)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// attempt is one TrainSegment attempt as its scratch directory on a worker shows it.
type attempt struct {
	trial            string
	segment, attempt int
	dir              string
	started          bool  // the trainer ran (its log says from where)
	from, last       int64 // the step it started from, the last step it wrote
	records          [][]byte
}

var attemptDir = regexp.MustCompile(`^seg(\d+)-attempt(\d+)$`)
var fromLine = regexp.MustCompile(`from step (\d+) to`)

// scanAttempts finds every attempt under the test's worker directories, grouped by trial and segment
// and sorted by attempt.
func scanAttempts(t *testing.T, root string) map[string][]attempt {
	out := map[string][]attempt{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		m := attemptDir.FindStringSubmatch(d.Name())
		if m == nil {
			return nil
		}
		a := attempt{trial: filepath.Base(filepath.Dir(p)), dir: p}
		a.segment, _ = strconv.Atoi(m[1])
		a.attempt, _ = strconv.Atoi(m[2])
		if log, err := os.ReadFile(filepath.Join(p, "stdout.log")); err == nil {
			if f := fromLine.FindSubmatch(log); f != nil {
				a.started = true
				a.from, _ = strconv.ParseInt(string(f[1]), 10, 64)
				a.last = a.from
			}
		}
		if raw, err := os.ReadFile(filepath.Join(p, "metrics.jsonl")); err == nil {
			for _, line := range bytes.Split(raw, []byte{'\n'}) {
				if rec, err := metrics.ParseJSONLine(line); err == nil {
					a.records = append(a.records, line)
					a.last = rec.Step
				}
			}
		}
		key := fmt.Sprintf("%s/%d", a.trial, a.segment)
		out[key] = append(out[key], a)
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, seg := range out {
		sort.Slice(seg, func(i, j int) bool { return seg[i].attempt < seg[j].attempt })
	}
	return out
}

// expectedMetrics computes, per trial, the metrics stream the trainers' own records dictate: each
// attempt, in order, keeps the lines below its first step and appends its records re-encoded
// canonically (a record that only announces a checkpoint at the step just written adds no line).
func expectedMetrics(t *testing.T, att map[string][]attempt) map[string][]byte {
	var all []attempt
	for _, seg := range att {
		all = append(all, seg...)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.segment != b.segment {
			return a.segment < b.segment
		}
		return a.attempt < b.attempt
	})
	type line struct {
		step int64
		text []byte
	}
	lines := map[string][]line{}
	for _, a := range all {
		var fresh []line
		for i, raw := range a.records {
			rec, _ := metrics.ParseJSONLine(raw)
			if len(rec.Values) == 0 && i > 0 && len(fresh) > 0 && rec.Step == fresh[len(fresh)-1].step {
				continue
			}
			fresh = append(fresh, line{rec.Step, metrics.AppendRecordJSON(nil, rec)})
		}
		if len(fresh) == 0 {
			continue
		}
		var kept []line
		for _, l := range lines[a.trial] {
			if l.step < fresh[0].step {
				kept = append(kept, l)
			}
		}
		lines[a.trial] = append(kept, fresh...)
	}
	out := map[string][]byte{}
	for trial, ls := range lines {
		var b []byte
		for _, l := range ls {
			b = append(b, l.text...)
		}
		out[trial] = b
	}
	return out
}

// trainersPastCheckpoint counts the scripted trainers started by the worker process pid that have
// written a checkpoint.
func trainersPastCheckpoint(pid int) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after the last ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		// A trainer's parent is its supervisor, whose parent is the worker.
		if len(f) < 2 || parentPID(f[1]) != strconv.Itoa(pid) || !strings.Contains(s, "(scripted-traine") {
			continue
		}
		cwd, err := os.Readlink(filepath.Join(filepath.Dir(p), "cwd"))
		if err != nil {
			continue
		}
		if ck, _ := filepath.Glob(filepath.Join(cwd, "checkpoints", "ckpt-*.json")); len(ck) > 0 {
			n++
		}
	}
	return n
}

// parentPID is the parent of the process whose ID is pid, "" if it is gone.
func parentPID(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) >= 2 {
		return f[1]
	}
	return ""
}

// newKillableEnv is newEnv with a dev server this test can SIGKILL and restart on the same SQLite file.
func newKillableEnv(t *testing.T) (*env, *devserver.Server) {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), addr: freeAddr(t)}
	var err error
	if e.store, err = artifacts.NewLocal(filepath.Join(e.dir, "artifacts")); err != nil {
		t.Fatal(err)
	}
	srv := startKillableServer(t, e)
	t.Cleanup(e.close)
	return e, srv
}

func startKillableServer(t *testing.T, e *env) *devserver.Server {
	t.Helper()
	_, portText, _ := strings.Cut(e.addr, ":")
	port, _ := strconv.Atoi(portText)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{Port: port, UIPort: -1, DBFile: filepath.Join(e.dir, "temporal.db"),
		SearchAttributes: workflows.SearchAttributes(), Log: logFile(t, filepath.Join(e.dir, "temporal.log"))})
	if err != nil {
		t.Fatalf("start dev server: %v", err)
	}
	t.Cleanup(srv.Stop)
	c, err := client.Dial(client.Options{HostPort: e.addr, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	e.client = c
	return srv
}

// checkAllCompleted checks that results.json has trials trials, every one completed at steps, with each
// step stored once in its metrics stream: nothing a fault interrupted was lost or written twice.
func (e *s3Env) checkAllCompleted(sweepID string, trials int, steps int64) {
	e.t.Helper()
	res := e.results(sweepID)
	if len(res.Trials) != trials {
		e.t.Fatalf("results.json has %d trials, want %d", len(res.Trials), trials)
	}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != steps {
			e.t.Errorf("trial %s: %s at step %d, want completed at %d", tr.TrialID, tr.Outcome, tr.Steps, steps)
		}
		e.checkStoredSteps(sweepID, tr.TrialID, steps)
	}
}

// everyTrialFailed says whether a sweep's workflow ended failed because every trial failed
// (workflows.ErrAllTrialsFailed): it has ended, its results written.
func everyTrialFailed(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == workflows.ErrAllTrialsFailed
}
