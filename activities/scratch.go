package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
)

// A segment attempt's scratch directory under the worker's work directory holds what its trainer
// writes (stdout.log, metrics, checkpoints) and two files of its own:
//
//   - attempt.lock, locked (flock) for as long as a process owns the directory: the attempt while it
//     runs, then the worker's background uploader while the log waits for the store;
//   - attempt.json (attemptState): whose attempt it is and how much of its log is stored.
//
// When the attempt ends and its whole log is stored, the directory is removed. When the store is
// down, the background uploader keeps trying and removes it once the log is stored. A worker that
// starts takes over the directories no live process holds (a worker killed before it could store
// them) in the same way (ReclaimScratch).
const (
	scratchLock  = "attempt.lock"
	scratchState = "attempt.json"
)

// attemptDirName matches the names of attempt scratch directories: seg<N>-attempt<M>, with -<K> when
// that name was taken.
var attemptDirName = regexp.MustCompile(`^seg\d+-attempt\d+(-\d+)?$`)

// attemptState is attempt.json.
type attemptState struct {
	SweepID string `json:"sweep_id"`
	TrialID string `json:"trial_id"`
	Segment int    `json:"segment"`
	Attempt int32  `json:"attempt"`
	// LogAttempt is the attempt number the log's parts carry (artifacts.LogAttempt); 0 until decided.
	LogAttempt int32 `json:"log_attempt,omitempty"`
	// LogBytes is how many bytes of stdout.log the stored parts hold; LogParts how many parts there are.
	LogBytes int64 `json:"log_bytes"`
	LogParts int   `json:"log_parts"`
	// Kept marks a directory the worker keeps (--keep-scratch) after its log is stored.
	Kept bool `json:"kept,omitempty"`
}

// scratch is an attempt's scratch directory, owned while lock is held.
type scratch struct {
	dir   string
	lock  *os.File
	state attemptState
}

// newScratch creates and locks the scratch directory of an attempt under parent: seg<N>-attempt<M>,
// or with a suffix when a directory of that name is left over (another process's, or one waiting for
// its log to be stored): an existing directory is never reused nor removed here.
func newScratch(parent string, st attemptState) (*scratch, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("segment scratch: %w", err)
	}
	base := fmt.Sprintf("seg%d-attempt%d", st.Segment, st.Attempt)
	for k := 1; ; k++ {
		dir := filepath.Join(parent, base)
		if k > 1 {
			dir = filepath.Join(parent, fmt.Sprintf("%s-%d", base, k))
		}
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrExist) && k < 1000 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("segment scratch: %w", err)
		}
		lock, err := os.OpenFile(filepath.Join(dir, scratchLock), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("segment scratch: %w", err)
		}
		// Blocking: a sweep that locked the new file first finds no attempt.json and lets go at once.
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			lock.Close()
			return nil, fmt.Errorf("segment scratch: lock %s: %w", dir, err)
		}
		s := &scratch{dir: dir, lock: lock, state: st}
		if err := s.save(); err != nil {
			lock.Close()
			return nil, err
		}
		return s, nil
	}
}

// save writes attempt.json atomically.
func (s *scratch) save() error {
	b, _ := json.Marshal(s.state) // cannot fail
	tmp := filepath.Join(s.dir, scratchState+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("segment scratch: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, scratchState)); err != nil {
		return fmt.Errorf("segment scratch: %w", err)
	}
	return nil
}

func (s *scratch) logPath() string { return filepath.Join(s.dir, "stdout.log") }

// logStored tells whether the whole log is stored: there is none, it is empty, or every byte of it is
// in a part.
func (s *scratch) logStored() bool {
	st, err := os.Stat(s.logPath())
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return st.Size() == 0 || s.state.LogParts > 0 && st.Size() <= s.state.LogBytes
}

// release ends the attempt's ownership of its directory: removed when its log is stored (kept, with
// its lock let go, with keep), else handed to the worker's background uploader.
func (s *scratch) release(a *Activities) {
	if !s.logStored() {
		a.uploads().add(s)
		return
	}
	s.done(a.KeepScratch)
}

// done removes the directory (or marks it kept) and lets go of its lock.
func (s *scratch) done(keep bool) {
	if keep {
		s.state.Kept = true
		_ = s.save()
	} else {
		_ = os.RemoveAll(s.dir)
	}
	s.lock.Close()
}

// backgroundUploads stores the logs of attempts that ended while the store was away, one goroutine
// per attempt, retrying with backoff; each reads its log from disk part by part, so memory does not
// grow with the logs.
type backgroundUploads struct {
	a       *Activities
	mu      sync.Mutex
	pending map[string]bool
	wg      sync.WaitGroup
}

// uploadRetryMin and uploadRetryMax bound the background uploader's wait between tries.
var (
	uploadRetryMin = time.Second
	uploadRetryMax = time.Minute
)

func (a *Activities) uploads() *backgroundUploads {
	a.uploadsOnce.Do(func() { a.bg = &backgroundUploads{a: a, pending: map[string]bool{}} })
	return a.bg
}

func (b *backgroundUploads) add(s *scratch) {
	b.mu.Lock()
	b.pending[s.dir] = true
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		wait := uploadRetryMin
		for {
			err := uploadLog(context.Background(), b.a.Store, s)
			if err == nil {
				break
			}
			b.a.logger().Warn("storing the log of an ended attempt failed; will retry",
				"sweep_id", s.state.SweepID, "trial_id", s.state.TrialID, "segment", s.state.Segment,
				"attempt", s.state.Attempt, "retry_in", wait.String(), "error", b.a.masker().MaskString(err.Error()))
			time.Sleep(wait)
			wait = min(2*wait, uploadRetryMax)
		}
		s.done(b.a.KeepScratch)
		b.mu.Lock()
		delete(b.pending, s.dir)
		b.mu.Unlock()
	}()
}

// PendingUploads is how many ended attempts' logs wait for the store.
func (a *Activities) PendingUploads() int {
	b := a.uploads()
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// WaitUploads waits until the background uploads have stored every ended attempt's log, or ctx ends;
// it returns how many are still pending. A stopping worker calls it so the logs of attempts that
// ended while the store was away are not left for the next worker on this work directory.
func (a *Activities) WaitUploads(ctx context.Context) int {
	done := make(chan struct{})
	go func() {
		a.uploads().wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return a.PendingUploads()
}

// ReclaimScratch takes over the attempt directories under the work directory that no live process
// holds — left by a worker that was killed — stores what of their logs is not stored yet, in the
// background, and removes them. It returns how many it took over. Directories a running attempt or
// another worker's uploader holds (attempt.lock is locked) are left alone, as are those without
// attempt.json and those kept with --keep-scratch.
func (a *Activities) ReclaimScratch() (int, error) {
	if a.WorkDir == "" {
		return 0, nil
	}
	n := 0
	err := filepath.WalkDir(a.WorkDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() || !attemptDirName.MatchString(d.Name()) {
			return nil
		}
		if s := claimScratch(p); s != nil {
			n++
			a.uploads().add(s)
		}
		return filepath.SkipDir
	})
	return n, err
}

// claimScratch locks a leftover attempt directory; nil when a live process holds it, or it is not one
// to take over.
func claimScratch(dir string) *scratch {
	lock, err := os.Open(filepath.Join(dir, scratchLock))
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil
	}
	// The directory may have been removed by its owner between the open and the lock.
	var held, now syscall.Stat_t
	if syscall.Fstat(int(lock.Fd()), &held) != nil || syscall.Stat(lock.Name(), &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
		lock.Close()
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, scratchState))
	var st attemptState
	if err != nil || json.Unmarshal(b, &st) != nil || st.Kept || st.SweepID == "" || st.TrialID == "" {
		lock.Close()
		return nil
	}
	return &scratch{dir: dir, lock: lock, state: st}
}

// uploadLog stores the bytes of an attempt's log that no part holds yet (artifacts.LogPartKey), reading
// the file a section at a time; attempt.json records each part stored. The parts' attempt number is
// decided (and recorded) before the first is stored, so a retry never stores the log under two numbers.
func uploadLog(ctx context.Context, store Store, s *scratch) error {
	f, err := os.Open(s.logPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the trainer never started
	}
	if err != nil {
		return fmt.Errorf("read trainer log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read trainer log: %w", err)
	}
	size := st.Size()
	if size <= s.state.LogBytes && s.state.LogParts > 0 {
		return nil
	}
	if s.state.LogAttempt == 0 {
		n, err := artifacts.LogAttempt(ctx, store, s.state.SweepID, s.state.TrialID, s.state.Segment, s.state.Attempt)
		if err != nil {
			return err
		}
		s.state.LogAttempt = n
		if err := s.save(); err != nil {
			return err
		}
	}
	for first := true; first || s.state.LogBytes < size; first = false {
		n := min(size-s.state.LogBytes, maxLogPart)
		key := artifacts.LogPartKey(s.state.SweepID, s.state.TrialID, s.state.Segment, s.state.LogAttempt, s.state.LogParts)
		if err := store.Put(ctx, key, io.NewSectionReader(f, s.state.LogBytes, n)); err != nil {
			return fmt.Errorf("store trainer log: %w", err)
		}
		s.state.LogBytes += n
		s.state.LogParts++
		if err := s.save(); err != nil {
			return err
		}
	}
	return nil
}

// maxLogPart bounds one log part, so a retry after a failed upload re-sends at most that much.
const maxLogPart = 64 << 20
