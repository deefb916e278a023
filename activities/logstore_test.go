package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/runner"
)

// logPuts is a store counting the bytes Put under the trials' logs folders, streaming them through,
// and failing every Put while down is set.
type logPuts struct {
	artifacts.Store
	bytes atomic.Int64
	down  atomic.Bool
}

func (s *logPuts) Put(ctx context.Context, key string, r io.Reader) error {
	if s.down.Load() {
		return errors.New("store unavailable")
	}
	if strings.Contains(key, "/logs/") {
		r = &countReader{r: r, n: &s.bytes}
	}
	return s.Store.Put(ctx, key, r)
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// attemptDirs lists the attempt scratch directories left under the work directory.
func attemptDirs(t testing.TB, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && regexp.MustCompile(`^seg\d+-attempt\d+`).MatchString(d.Name()) {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// waitUploads waits for the background uploads of ended attempts to finish.
func waitUploads(t testing.TB, a *activities.Activities) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n := a.WaitUploads(ctx); n > 0 {
		t.Fatalf("%d background uploads still pending after 10s", n)
	}
}

// bigLogTrainer writes mb MiB to stdout, one MiB line at a time, with a record after each.
func bigLogTrainer(mb int) []string {
	return shellTrainer(`i=0; while [ $i -lt ` + itoa(mb) + ` ]; do head -c 1048575 /dev/zero | tr '\0' x; echo; i=$((i+1)); ` +
		`echo "{\"step\":$((i*100)),\"reward\":1}" >> "$RLSWEEP_METRICS_FILE"; done`)
}

// A 50 MB trainer log is uploaded once, byte for byte, across the segment's many flushes, without
// ever being held whole in memory.
func TestTrainSegmentLogUploadedOnce(t *testing.T) {
	const mb = 50
	f := newFixture(t)
	puts := &logPuts{Store: f.store}
	f.acts.Store = puts
	f.acts.FlushInterval = 20 * time.Millisecond
	in := f.input(100*mb, nil)
	in.Trainer.Command = bigLogTrainer(mb)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := f.run(in)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	const size = mb << 20
	if got := puts.bytes.Load(); got != size {
		t.Errorf("log bytes uploaded = %d, want %d (each byte once)", got, size)
	}
	t.Logf("allocated %d KB, %d log parts", (after.TotalAlloc-before.TotalAlloc)>>10, countParts(t, f))
	// Held whole, the log alone would allocate its 50 MB. Each flush allocates a little of its own (the
	// copy buffers of a log part's and a metrics part's Put, attempt.json), and a slow machine flushes
	// more often: 28 parts and 3 MB on a quiet one, 125 parts and 12 MB on a loaded CI run. Half the
	// log's size tells the two apart.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/2 {
		t.Errorf("allocated %d MB while storing a %d MB log, want well under its size", alloc>>20, mb)
	}
	var n countWriter
	if err := artifacts.ReadLog(context.Background(), f.store, sweepID, "0-s1", 0, 1, &n); err != nil || n != size {
		t.Errorf("stored log: %d bytes (%v), want %d", n, err, size)
	}
	if res.LogKey != artifacts.LogDir(sweepID, "0-s1", 0, 1) {
		t.Errorf("LogKey = %q, want the attempt's log folder", res.LogKey)
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// A segment that ended, its log stored, leaves no scratch directory behind.
func TestTrainSegmentRemovesScratch(t *testing.T) {
	f := newFixture(t)
	if _, err := f.run(f.input(5000, nil)); err != nil {
		t.Fatal(err)
	}
	if dirs := attemptDirs(t, f.acts.WorkDir); len(dirs) > 0 {
		t.Errorf("scratch directories left after the segment: %v", dirs)
	}
	if log := f.log(0, 1); !strings.Contains(log, "from step 0 to 5000") {
		t.Errorf("stored log = %q, want the trainer's output", log)
	}
}

// An attempt that fails while the store is away keeps its scratch directory; its log is stored by the
// worker's background uploader once the store is back, and the directory is removed then.
func TestTrainSegmentLogStoredAfterStoreRecovers(t *testing.T) {
	defer activities.SetUploadRetry(20 * time.Millisecond)()
	f := newFixture(t)
	puts := &logPuts{Store: f.store}
	puts.down.Store(true)
	f.acts.Store = puts
	f.acts.StoreRetry = 200 * time.Millisecond // the attempt gives up on the store soon
	_, err := f.run(f.input(10000, map[string]any{"crash_at": 3000.0}))
	if err == nil {
		t.Fatal("the attempt succeeded with the store down")
	}
	if dirs := attemptDirs(t, f.acts.WorkDir); len(dirs) != 1 {
		t.Fatalf("scratch directories while the store is down: %v, want the failed attempt's", dirs)
	}
	time.Sleep(100 * time.Millisecond) // a few failed tries
	puts.down.Store(false)
	waitUploads(t, f.acts)
	if log := f.log(0, 1); !strings.Contains(log, "crashing on purpose at step 3000") {
		t.Errorf("stored log = %q, want the crashed trainer's", log)
	}
	if dirs := attemptDirs(t, f.acts.WorkDir); len(dirs) > 0 {
		t.Errorf("scratch directories left once the log is stored: %v", dirs)
	}
}

// leftover makes an attempt directory as a killed worker leaves it: the log partly stored.
func leftover(t *testing.T, workDir string, segment int, log, stored string) string {
	t.Helper()
	dir := filepath.Join(workDir, artifacts.TrialsDir(sweepID), "0-s1", "seg"+itoa(segment)+"-attempt1")
	if err := os.MkdirAll(filepath.Join(dir, "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	st := map[string]any{"sweep_id": sweepID, "trial_id": "0-s1", "segment": segment, "attempt": 1,
		"log_attempt": 1, "log_bytes": len(stored), "log_parts": 1}
	b, _ := json.Marshal(st)
	for name, data := range map[string]string{"attempt.json": string(b), "attempt.lock": "", "stdout.log": log,
		"checkpoints/ckpt-1.json": "{}"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A starting worker takes over the attempt directories a killed worker left: it stores the rest of
// their logs and removes them, and leaves alone a directory a live attempt holds locked.
func TestReclaimScratch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dead := leftover(t, f.acts.WorkDir, 0, "stored part\nnot yet stored\n", "stored part\n")
	if err := f.store.Put(ctx, artifacts.LogPartKey(sweepID, "0-s1", 0, 1, 0), strings.NewReader("stored part\n")); err != nil {
		t.Fatal(err)
	}
	live := leftover(t, f.acts.WorkDir, 1, "running\n", "")
	lock, err := os.Open(filepath.Join(live, "attempt.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	n, err := f.acts.ReclaimScratch()
	if err != nil || n != 1 {
		t.Fatalf("ReclaimScratch = %d, %v, want 1 directory taken over", n, err)
	}
	waitUploads(t, f.acts)
	if got := f.log(0, 1); got != "stored part\nnot yet stored\n" {
		t.Errorf("stored log = %q, want the whole log, each byte once", got)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("leftover directory %s: %v, want it removed", dead, err)
	}
	if _, err := os.Stat(filepath.Join(live, "stdout.log")); err != nil {
		t.Errorf("the live attempt's directory was touched: %v", err)
	}
	if keys, _ := f.store.List(ctx, artifacts.LogDir(sweepID, "0-s1", 1, 1)); len(keys) > 0 {
		t.Errorf("the live attempt's log was stored by the sweep: %v", keys)
	}
}

func countParts(t *testing.T, f *fixture) int {
	keys, err := f.store.List(context.Background(), artifacts.LogDir(sweepID, "0-s1", 0, 1)+"/")
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loggedEnv is an activity environment whose log, at Warn and above, goes to the returned buffer.
func (f *fixture) loggedEnv() (*testsuite.TestActivityEnvironment, *syncBuffer) {
	buf := &syncBuffer{}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := s.NewTestActivityEnvironment()
	env.SetTestTimeout(20 * time.Second)
	env.RegisterActivity(f.acts.TrainSegment)
	return env, buf
}

// A failed attempt logs an ERROR line with the trial's sweep ID, trial ID, segment and attempt, its error
// type, and its message with the worker's secrets masked.
func TestTrainSegmentFailureIsLogged(t *testing.T) {
	f := newFixture(t)
	f.acts.Secrets = runner.NewMasker(map[string]string{"AWS_SECRET_ACCESS_KEY": "canary-secret-1234"})
	env, buf := f.loggedEnv()
	in := f.input(1000, nil)
	in.Trainer.Command = shellTrainer(`echo "key canary-secret-1234"; exit 3`)
	if _, err := f.runIn(env, in); err == nil {
		t.Fatal("the crashing trainer's attempt succeeded")
	}
	var line string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "level=ERROR") && strings.Contains(l, "segment attempt failed") {
			line = l
		}
	}
	for _, want := range []string{"sweep_id=" + sweepID, "trial_id=0-s1", "segment=0", "attempt=1", "error_type=TrainerCrashed", "status 3", "[secret AWS_SECRET_ACCESS_KEY]"} {
		if !strings.Contains(line, want) {
			t.Errorf("failure log line %q lacks %q; log:\n%s", line, want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "canary-secret-1234") {
		t.Errorf("the worker's log holds a secret:\n%s", buf.String())
	}
}

// A segment run again with the same attempt number (a trial re-run) stores its log beside the earlier
// one under the next free attempt number: a stored log is never overwritten.
func TestTrainSegmentRerunKeepsEarlierLog(t *testing.T) {
	f := newFixture(t)
	in := f.input(1000, nil)
	in.Trainer.Command = shellTrainer(`echo first run; echo '{"step":1000,"reward":1}' >> "$RLSWEEP_METRICS_FILE"`)
	if _, err := f.run(in); err != nil {
		t.Fatal(err)
	}
	in.Trainer.Command = shellTrainer(`echo second run; echo '{"step":1000,"reward":2}' >> "$RLSWEEP_METRICS_FILE"`)
	res, err := f.run(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.log(0, 1); got != "first run\n" {
		t.Errorf("first run's log = %q, want it kept", got)
	}
	if got := f.log(0, 2); got != "second run\n" || res.LogKey != artifacts.LogDir(sweepID, "0-s1", 0, 2) {
		t.Errorf("second run's log = %q at %q, want it under attempt 2", got, res.LogKey)
	}
}

// The warnings a segment logs while the store is away name the trial too.
func TestTrainSegmentStoreWarningNamesTheTrial(t *testing.T) {
	defer activities.SetUploadRetry(20 * time.Millisecond)()
	f := newFixture(t)
	puts := &logPuts{Store: f.store}
	puts.down.Store(true)
	f.acts.Store = puts
	f.acts.StoreRetry = 200 * time.Millisecond
	env, buf := f.loggedEnv()
	if _, err := f.runIn(env, f.input(2000, nil)); err == nil {
		t.Fatal("the attempt succeeded with the store down")
	}
	found := false
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "store operation failed") {
			found = true
			if !strings.Contains(l, "trial_id=0-s1") || !strings.Contains(l, "sweep_id="+sweepID) {
				t.Errorf("store warning %q does not name the trial", l)
			}
		}
	}
	if !found {
		t.Errorf("no store warning logged:\n%s", buf.String())
	}
	puts.down.Store(false)
	waitUploads(t, f.acts)
}
