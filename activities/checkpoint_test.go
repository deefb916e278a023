package activities_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
)

// outageStore refuses every Put until up, as an unreachable store does, and counts the refusals.
type outageStore struct {
	*artifacts.Local
	mu    sync.Mutex
	up    time.Time
	fails atomic.Int32
}

// downFor takes the store away for d from now.
func (s *outageStore) downFor(d time.Duration) {
	s.mu.Lock()
	s.up = time.Now().Add(d)
	s.mu.Unlock()
}

// downWhenAnnounced takes the store away for d once the trainer has created marker, then creates
// marker.down: a trainer that waits for marker.down announces its checkpoint to a store that is down.
func (s *outageStore) downWhenAnnounced(t *testing.T, marker string, d time.Duration) {
	for {
		if _, err := os.Stat(marker); err == nil {
			s.downFor(d)
			if err := os.WriteFile(marker+".down", nil, 0o644); err != nil {
				t.Error(err)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *outageStore) Put(ctx context.Context, key string, r io.Reader) error {
	s.mu.Lock()
	down := time.Now().Before(s.up)
	s.mu.Unlock()
	if down {
		s.fails.Add(1)
		return errors.New("dial tcp 127.0.0.1:9000: connect: connection refused")
	}
	return s.Local.Put(ctx, key, r)
}

// The store goes away when the trainer announces a checkpoint and stays away for three times the
// stall timeout; meanwhile the trainer trains on to its stop step, announces its last checkpoint and
// exits 0. The worker's wait on the upload is not the trainer's silence: every segment completes with
// its last checkpoint stored and no trainer failure. Several segments run: once the wait ends, the
// loop finds the trainer's exit and its next tick ready at once, and picks one at random.
func TestTrainSegmentStoreWaitIsNotAStall(t *testing.T) {
	const runs = 10
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			f := newFixture(t)
			store := &outageStore{Local: f.store}
			f.acts.Store = store
			marker := filepath.Join(t.TempDir(), "announced")
			in := f.input(4000, nil)
			in.Trainer.StallTimeout = time.Second
			in.Trainer.Environment["MARKER"] = marker
			// The trainer announces its checkpoint only once the store is down, so the worker's first
			// attempt to store it fails however late the watcher below sees the marker.
			in.Trainer.Command = shellTrainer(`printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"
echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-2000.json"
touch "$MARKER"
while [ ! -e "$MARKER.down" ]; do sleep 0.01; done
printf '{"step":2000,"reward":2,"checkpoint":"ckpt-2000.json"}\n' >> "$RLSWEEP_METRICS_FILE"
sleep 0.2
echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-4000.json"
printf '{"step":3000,"reward":3}\n{"step":4000,"reward":4,"checkpoint":"ckpt-4000.json"}\n' >> "$RLSWEEP_METRICS_FILE"`)
			go store.downWhenAnnounced(t, marker, 3*time.Second)
			res, err := f.run(in)
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			if store.fails.Load() == 0 {
				t.Errorf("run %d: the store never refused a Put: the test took nothing away", i)
			}
			want := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-4000.json")
			if res.CheckpointKey != want || res.LastStep != 4000 || res.TrainerFailures != 0 {
				t.Errorf("run %d: result = checkpoint %q at %d, %d trainer failures; want %s at 4000, 0", i, res.CheckpointKey, res.LastStep, res.TrainerFailures, want)
			}
			if got := f.read(want); got != "ckpt\n" {
				t.Errorf("run %d: stored checkpoint %q", i, got)
			}
		})
	}
	wg.Wait()
}

// A trainer is judged on the time the worker watched it: one silent for longer than the stall timeout
// in all, most of that while the worker waited on the store, and that writes again (or exits) within
// the stall timeout after the wait, is not stalled; one that stays silent after the wait is, a stall
// timeout after the wait ended.
func TestTrainSegmentStallClockSkipsTheWorkersWait(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after string // what the trainer does 3.5 s after its checkpoint at 2000
		stall bool
	}{
		{"writes-again", `printf '{"step":3000,"reward":3}\n' >> "$RLSWEEP_METRICS_FILE"`, false},
		{"hangs", `sleep 30`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			store := &outageStore{Local: f.store}
			f.acts.Store = store
			marker := filepath.Join(t.TempDir(), "announced")
			in := f.input(3000, nil)
			in.Trainer.StallTimeout = 1500 * time.Millisecond
			in.Trainer.GracePeriod = 200 * time.Millisecond
			in.Trainer.Environment["MARKER"] = marker
			// The trainer announces its checkpoint only once the store is down, so the worker's first
			// attempt to store it fails however late the watcher below sees the marker.
			in.Trainer.Command = shellTrainer(`printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"
echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-2000.json"
touch "$MARKER"
while [ ! -e "$MARKER.down" ]; do sleep 0.01; done
printf '{"step":2000,"reward":2,"checkpoint":"ckpt-2000.json"}\n' >> "$RLSWEEP_METRICS_FILE"
sleep 3.5
` + tc.after)
			go store.downWhenAnnounced(t, marker, 3*time.Second) // retried after 1 s, then 2 s: stored about 3 s on
			start := time.Now()
			res, err := f.run(in)
			took := time.Since(start)
			if !tc.stall {
				if err != nil {
					t.Fatalf("segment failed: %v", err)
				}
				if res.LastStep != 3000 || res.TrainerFailures != 0 {
					t.Errorf("result: step %d, %d trainer failures; want 3000, 0", res.LastStep, res.TrainerFailures)
				}
				return
			}
			appError(t, err, activities.ErrTrialStalled)
			// Stored about 3 s in, then silent for the stall timeout while watched.
			if took < 4*time.Second || took > 10*time.Second {
				t.Errorf("stall detected after %s, want about 3 s (the wait) + 1.5 s (the stall timeout)", took.Round(10*time.Millisecond))
			}
		})
	}
}

// A checkpoint saved as a directory (orbax, torch DCP, save_pretrained) is stored as a tree under its
// key with its manifest last, and the next segment gets it back as a directory in its checkpoint
// directory, from which the trainer resumes at the right step.
func TestTrainSegmentDirectoryCheckpoint(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, map[string]any{"ckpt_dir": 1.0, "checkpoint_every": 0.0})
	res, err := f.run(in)
	if err != nil {
		t.Fatal(err)
	}
	key := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-5000")
	if res.CheckpointKey != key || res.LastStep != 5000 {
		t.Fatalf("result: checkpoint %q at %d, want %s at 5000", res.CheckpointKey, res.LastStep, key)
	}
	m, err := artifacts.ReadCheckpointManifest(context.Background(), f.store, key)
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	var paths []string
	for _, file := range m.Files {
		paths = append(paths, file.Path)
	}
	if want := []string{"latest.json", "state.json", "weights/part-0.bin", "weights/part-1.bin"}; !slices.Equal(paths, want) {
		t.Errorf("manifest lists %v, want %v", paths, want)
	}
	if got := f.read(key + "/" + m.Tree + "/state.json"); got != `{"Step":5000}` {
		t.Errorf("stored state.json = %q", got)
	}
	in2 := f.input(8000, map[string]any{"ckpt_dir": 1.0, "checkpoint_every": 0.0})
	in2.Segment, in2.StartStep, in2.ResumeFrom, in2.ResumeStep = 1, 5000, key, 5000
	res2, err := f.run(in2)
	if err != nil {
		t.Fatalf("resumed segment: %v", err)
	}
	if res2.ResumedFrom != key || res2.LastStep != 8000 || res2.Records != 3 {
		t.Errorf("resumed segment: from %q, step %d, %d records; want %s, 8000, 3 (6000–8000)", res2.ResumedFrom, res2.LastStep, res2.Records, key)
	}
	if !strings.Contains(f.log(1, 1), "resumed from directory") {
		t.Errorf("the trainer's log does not say it resumed from a directory:\n%s", f.log(1, 1))
	}
	if got, want := f.storedSteps(), stepsRange(1000, 8000, 1000); !slices.Equal(got, want) {
		t.Errorf("stored steps %v, want %v", got, want)
	}
}

// An announcement that cannot be stored as it is on disk fails the attempt at once — not after the
// store retry budget of five minutes — as the trainer's failure, naming the path and what is allowed.
func TestTrainSegmentUnreadableCheckpointFailsAtOnce(t *testing.T) {
	cases := []struct{ kind, want string }{
		{"missing", "does not exist"},
		{"outside", "not a path inside the checkpoint directory"},
		{"socket", "a socket, neither a regular file nor a directory"},
		{"abslink", "a symbolic link by an absolute path (/etc/hostname)"},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			f := newFixture(t)
			in := f.input(10000, map[string]any{"bad_ckpt": tc.kind, "checkpoint_every": 3.0})
			start := time.Now()
			_, err := f.run(in)
			ae := appError(t, err, activities.ErrCheckpointUnreadable)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failed after %s, want at once (no store retries)", d.Round(time.Millisecond))
			}
			msg := ae.Error()
			for _, part := range []string{tc.want, "ckpt-3000", "a regular file or a directory of regular files", "RLSWEEP_CHECKPOINT_DIR="} {
				if !strings.Contains(msg, part) {
					t.Errorf("error %q lacks %q", msg, part)
				}
			}
			if ae.NonRetryable() {
				t.Error("CheckpointUnreadable is non-retryable, want it retried under retries.max_attempts")
			}
			var hb activities.Heartbeat
			if err := ae.Details(&hb); err != nil || hb.TrainerFailures != 1 {
				t.Errorf("details %+v (%v), want one trainer failure", hb, err)
			}
		})
	}
}
