package activities

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/sweeps"
)

// ErrWorkerTooSmall marks a segment that asks for more GPUs than its worker has: retrying it on the
// same worker cannot help, so it is not retried (workers of one GPU class should be alike).
const ErrWorkerTooSmall = "WorkerTooSmall"

// MaxTrialsPerGPU bounds --trials-per-gpu: a whole-GPU trial's share of each GPU, 1/N, must be at
// least the smallest fraction a trial may ask for (sweeps.MinGPUFraction).
const MaxTrialsPerGPU = sweeps.GPUUnits / sweeps.MinGPUFractionUnits

// Slots is the GPU pool of a worker started with --gpus. Each GPU's capacity is one GPU, counted in
// sweeps.GPUUnits (ten-thousandths of a GPU, integers, so that shares add up without float drift):
//
//   - A trial whose resources.gpus is a fraction f in (0, 1) holds a share f of one GPU. The pool puts
//     it best-fit: on the GPU with the least free capacity that still fits it (ties in --gpus order),
//     so that GPUs with nothing on them stay free for whole-GPU trials.
//   - A trial whose resources.gpus is a whole number n holds n distinct GPUs, taking 1/perGPU of each
//     (--trials-per-gpu; 1, the whole GPU, by default): the n GPUs with the most free capacity (ties in
//     --gpus order). --trials-per-gpu scales whole-GPU trials only: a fractional trial's share is its
//     fraction whatever --trials-per-gpu says.
//
// No GPU is ever given more than its capacity. A running trial sees only its GPUs through
// CUDA_VISIBLE_DEVICES. Trials that ask for no GPU (resources.gpus 0) hold none and see none; Len of
// them run at once, as many as one-GPU trials.
type Slots struct {
	mu      sync.Mutex
	gpus    []string       // in --gpus order
	free    map[string]int // free capacity per GPU, in sweeps.GPUUnits
	perGPU  int
	noGPU   int           // trials running that asked for no GPU, at most Len
	changed chan struct{} // closed and replaced on every release
}

// Lease is what Acquire gave a trial: its GPUs, in --gpus order, and its share of each.
type Lease struct {
	GPUs  []string
	units int  // taken from each of GPUs, in sweeps.GPUUnits
	noGPU bool // one of the places of trials that ask for no GPU
}

// Share is the part of each of its GPUs the lease holds: 1 for a whole GPU, 0.25 for a quarter.
func (l Lease) Share() float64 { return float64(l.units) / sweeps.GPUUnits }

// MemoryFraction is RLSWEEP_GPU_MEMORY_FRACTION for the lease's trainer: its share of each GPU, in
// shortest form ("0.25", "1"); "" when it holds no GPU.
func (l Lease) MemoryFraction() string {
	if len(l.GPUs) == 0 {
		return ""
	}
	return strconv.FormatFloat(l.Share(), 'f', -1, 64)
}

// NewSlots returns a pool of the GPU IDs in gpus, where a whole-GPU trial takes 1/perGPU of each GPU
// it holds (--trials-per-gpu).
func NewSlots(gpus []string, perGPU int) (*Slots, error) {
	if perGPU < 1 || perGPU > MaxTrialsPerGPU {
		return nil, fmt.Errorf("--trials-per-gpu: got %d, want an integer in [1, %d] (for finer shares, give trials a fractional resources.gpus)", perGPU, MaxTrialsPerGPU)
	}
	s := &Slots{free: map[string]int{}, perGPU: perGPU, changed: make(chan struct{})}
	for _, g := range gpus {
		if _, dup := s.free[g]; dup {
			return nil, fmt.Errorf("--gpus: GPU %s listed twice, want each GPU once (use --trials-per-gpu or a fractional resources.gpus to share one)", g)
		}
		s.gpus = append(s.gpus, g)
		s.free[g] = sweeps.GPUUnits
	}
	return s, nil
}

// Len is the number of one-GPU trials the pool runs at once (GPUs × --trials-per-gpu). Fractional
// trials pack more: MaxTrainers bounds those.
func (s *Slots) Len() int { return len(s.gpus) * s.perGPU }

// MaxTrainers is the most trials holding GPUs the pool can hold at once: every GPU packed with trials
// of the smallest fraction (or --trials-per-gpu's most).
func (s *Slots) MaxTrainers() int {
	return len(s.gpus) * (sweeps.GPUUnits / sweeps.MinGPUFractionUnits)
}

// wholeUnits is what a whole-GPU trial takes of each of its GPUs.
func (s *Slots) wholeUnits() int { return sweeps.GPUUnits / s.perGPU }

// HasRoom says whether some GPU has capacity left for the smallest trial the pool can be asked to
// place (sweeps.MinGPUFraction; a whole-GPU trial's share under --trials-per-gpu is no smaller). The
// worker polls for another segment only then (worker/).
func (s *Slots) HasRoom() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hasRoom()
}

func (s *Slots) hasRoom() bool {
	for _, g := range s.gpus {
		if s.free[g] >= sweeps.MinGPUFractionUnits {
			return true
		}
	}
	return false
}

// Changed is closed at the next release of capacity.
func (s *Slots) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Acquire waits until the pool can place a trial asking for gpus (resources.gpus: 0, a fraction in
// (0, 1), or a whole number) and takes its share. It fails at once, without retries, if the worker has
// fewer GPUs than a whole-GPU trial asks for.
func (s *Slots) Acquire(ctx context.Context, gpus float64) (Lease, error) {
	n, units := 1, sweeps.GPUFractionUnits(gpus)
	if !sweeps.IsGPUFraction(gpus) {
		n, units = int(gpus), s.wholeUnits()
	}
	if n > len(s.gpus) {
		return Lease{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"resources.gpus: the trial asks for %d GPUs, this worker has %d (--gpus %s): run it on workers with enough GPUs (resources.gpu_class)",
			n, len(s.gpus), strings.Join(s.gpus, ",")), ErrWorkerTooSmall, nil)
	}
	for {
		s.mu.Lock()
		if n <= 0 && s.noGPU < s.Len() {
			s.noGPU++
			s.mu.Unlock()
			return Lease{GPUs: []string{}, noGPU: true}, nil
		}
		if got := s.take(n, units, sweeps.IsGPUFraction(gpus)); n > 0 && got != nil {
			s.mu.Unlock()
			return Lease{GPUs: got, units: units}, nil
		}
		wait := s.changed
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		}
	}
}

// AcquireN is Acquire for a whole number of GPUs.
func (s *Slots) AcquireN(ctx context.Context, n int) (Lease, error) {
	return s.Acquire(ctx, float64(n))
}

// take takes units of each of n distinct GPUs that have them free, or nothing if fewer than n do:
// best-fit (least free first) when bestFit, else the GPUs with the most free first. Called with mu held.
func (s *Slots) take(n, units int, bestFit bool) []string {
	var avail []string
	for _, g := range s.gpus {
		if s.free[g] >= units {
			avail = append(avail, g)
		}
	}
	if len(avail) < n {
		return nil
	}
	sort.SliceStable(avail, func(i, j int) bool {
		if bestFit {
			return s.free[avail[i]] < s.free[avail[j]]
		}
		return s.free[avail[i]] > s.free[avail[j]]
	})
	chosen := map[string]bool{}
	for _, g := range avail[:n] {
		chosen[g] = true
		s.free[g] -= units
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

// Release gives a lease's share of each of its GPUs back.
func (s *Slots) Release(l Lease) {
	if len(l.GPUs) == 0 && !l.noGPU {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.noGPU {
		s.noGPU--
	}
	for _, g := range l.GPUs {
		s.free[g] += l.units
		if s.free[g] > sweeps.GPUUnits {
			panic(fmt.Sprintf("activities: GPU %s released past its capacity", g))
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Free is each GPU's free capacity as a fraction of a GPU, by GPU ID (for tests and status).
func (s *Slots) Free() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]float64, len(s.gpus))
	for _, g := range s.gpus {
		out[g] = float64(s.free[g]) / sweeps.GPUUnits
	}
	return out
}
