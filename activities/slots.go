package activities

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"go.temporal.io/sdk/temporal"
)

// ErrWorkerTooSmall marks a segment that asks for more GPUs than its worker has: retrying it on the
// same worker cannot help, so it is not retried (workers of one GPU class should be alike).
const ErrWorkerTooSmall = "WorkerTooSmall"

// Slots is the GPU pool of a worker started with --gpus: a running trial holds as many GPUs as its
// spec's resources.gpus asks for, and sees only those through CUDA_VISIBLE_DEVICES. Each GPU takes
// perGPU trials at once (--trials-per-gpu), so several small trials can share one; a trial holding
// several GPUs never gets the same GPU twice.
type Slots struct {
	mu      sync.Mutex
	gpus    []string       // in --gpus order
	free    map[string]int // free places per GPU
	perGPU  int
	changed chan struct{} // closed and replaced on every release
}

// NewSlots returns a pool with perGPU places on each GPU ID in gpus.
func NewSlots(gpus []string, perGPU int) (*Slots, error) {
	if perGPU < 1 {
		return nil, fmt.Errorf("--trials-per-gpu: got %d, want at least 1", perGPU)
	}
	s := &Slots{free: map[string]int{}, perGPU: perGPU, changed: make(chan struct{})}
	for _, g := range gpus {
		if _, dup := s.free[g]; dup {
			return nil, fmt.Errorf("--gpus: GPU %s listed twice, want each GPU once (use --trials-per-gpu to share one)", g)
		}
		s.gpus = append(s.gpus, g)
		s.free[g] = perGPU
	}
	return s, nil
}

// Len is the number of single-GPU trials the pool runs at once, which is how many segments a worker
// takes at once.
func (s *Slots) Len() int { return len(s.gpus) * s.perGPU }

// AcquireN waits until n distinct GPUs each have a free place and takes one place on each, choosing
// the least loaded GPUs (ties in --gpus order). It fails at once if the worker has fewer than n GPUs.
func (s *Slots) AcquireN(ctx context.Context, n int) ([]string, error) {
	if n > len(s.gpus) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"resources.gpus: the trial asks for %d GPUs, this worker has %d (--gpus %s): run it on workers with enough GPUs (resources.gpu_class)",
			n, len(s.gpus), strings.Join(s.gpus, ",")), ErrWorkerTooSmall, nil)
	}
	if n <= 0 {
		return []string{}, nil
	}
	for {
		s.mu.Lock()
		if got := s.take(n); got != nil {
			s.mu.Unlock()
			return got, nil
		}
		wait := s.changed
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// take takes one place on each of the n least loaded GPUs with a free place, or nothing if fewer than
// n have one. Called with mu held.
func (s *Slots) take(n int) []string {
	var avail []string
	for _, g := range s.gpus {
		if s.free[g] > 0 {
			avail = append(avail, g)
		}
	}
	if len(avail) < n {
		return nil
	}
	sort.SliceStable(avail, func(i, j int) bool { return s.free[avail[i]] > s.free[avail[j]] })
	chosen := map[string]bool{}
	for _, g := range avail[:n] {
		chosen[g] = true
		s.free[g]--
	}
	// CUDA_VISIBLE_DEVICES lists them in --gpus order.
	got := make([]string, 0, n)
	for _, g := range s.gpus {
		if chosen[g] {
			got = append(got, g)
		}
	}
	return got
}

// Release gives one place on each GPU back.
func (s *Slots) Release(gpus ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range gpus {
		s.free[g]++
	}
	close(s.changed)
	s.changed = make(chan struct{})
}
