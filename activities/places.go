package activities

import (
	"context"
	"sync"
)

// Places counts a worker's trial places by trainer, not by activity: a segment whose trainer has exited
// is still storing its last records, checkpoint and log, and the next trial's segment may start beside
// it meanwhile. The worker makes the SDK's activity slot supplier of it (worker/), so a place is
// reserved for a poll only while fewer than Limit segments hold a running (or starting) trainer.
type Places struct {
	mu        sync.Mutex
	limit     int
	issued    int // slots the SDK holds: reserved for a poll or running an activity
	finishing int // of those, activities whose trainer has exited
	changed   chan struct{}
}

// NewPlaces returns places for limit trainers at once (at least one).
func NewPlaces(limit int) *Places {
	return &Places{limit: max(limit, 1), changed: make(chan struct{})}
}

// Limit is how many trainers run at once.
func (p *Places) Limit() int { return p.limit }

// Reserve waits until a place is free and takes it.
func (p *Places) Reserve(ctx context.Context) error {
	for {
		if p.TryReserve() {
			return nil
		}
		p.mu.Lock()
		wait := p.changed
		free := p.issued-p.finishing < p.limit
		p.mu.Unlock()
		if free {
			continue
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TryReserve takes a place if one is free.
func (p *Places) TryReserve() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.issued-p.finishing >= p.limit {
		return false
	}
	p.issued++
	return true
}

// Release gives back a place that Reserve or TryReserve took (the SDK's slot, once its task is done or
// unused).
func (p *Places) Release() {
	p.mu.Lock()
	p.issued--
	p.wake()
	p.mu.Unlock()
}

// TrainerExited says a running segment's trainer has exited: its place is free for another trainer
// while its activity goes on storing. Called at most once per activity, and followed by ActivityEnded.
func (p *Places) TrainerExited() {
	p.mu.Lock()
	p.finishing++
	p.wake()
	p.mu.Unlock()
}

// ActivityEnded undoes TrainerExited when the activity returns (its slot is released after it).
func (p *Places) ActivityEnded() {
	p.mu.Lock()
	p.finishing--
	p.mu.Unlock()
}

// InUse is how many places are held by a reserved slot or a running trainer.
func (p *Places) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued - p.finishing
}

func (p *Places) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}
