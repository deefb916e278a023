package activities

import (
	"context"
	"fmt"
)

// Slots is a pool of GPU slots: each running trial holds one, and sees only its GPU through
// CUDA_VISIBLE_DEVICES. A GPU appears perGPU times, so several small trials can share one.
type Slots struct {
	free chan string
	n    int
}

// NewSlots returns a pool with perGPU slots for each GPU ID in gpus.
func NewSlots(gpus []string, perGPU int) (*Slots, error) {
	if perGPU < 1 {
		return nil, fmt.Errorf("--trials-per-gpu: got %d, want at least 1", perGPU)
	}
	s := &Slots{free: make(chan string, len(gpus)*perGPU), n: len(gpus) * perGPU}
	for i := 0; i < perGPU; i++ {
		for _, g := range gpus {
			s.free <- g
		}
	}
	return s, nil
}

// Len is the number of slots, which is how many segments a worker runs at once.
func (s *Slots) Len() int { return s.n }

// Acquire waits for a free slot and returns its GPU ID.
func (s *Slots) Acquire(ctx context.Context) (string, error) {
	select {
	case g := <-s.free:
		return g, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Release gives a slot back.
func (s *Slots) Release(gpu string) { s.free <- gpu }
