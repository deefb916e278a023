package activities

import (
	"context"
	"sync"
)

// Places counts a worker's trial places by trainer, not by activity: a segment whose trainer has exited
// is still storing its last records, checkpoint and log, and the next trial's segment may start beside
// it meanwhile. The worker makes the SDK's activity slot supplier of it (worker/), so a slot is
// reserved for a poll only while there is a place for another trainer:
//
//   - Without GPUs (NewPlaces, --slots): while fewer than Limit segments hold a running (or starting)
//     trainer.
//   - On a GPU worker (NewGPUPlaces): while the GPU pool has capacity left for another trial
//     (Slots.HasRoom) and every segment the queue's worker holds has its place (Placed) or is done
//     with it, but one: a worker takes one segment at a time that it has not placed yet. The number of
//     trials at once is then what the GPUs hold — four trials of resources.gpus 0.25 on one GPU — and
//     a worker whose GPUs are full takes no segment another worker could run. Once the one segment
//     it took waits for capacity (a whole-GPU trial on a GPU shared by fractional ones), the worker
//     polls for no other until it is placed.
type Places struct {
	mu        sync.Mutex
	limit     int
	gpus      *Slots // nil: a place is one of limit
	issued    int    // slots the SDK holds: reserved for a poll or running an activity
	placed    int    // of those, activities holding their place (Placed) whose trainer has not exited
	finishing int    // of those, activities whose trainer has exited
	changed   chan struct{}
}

// maxUnplaced is how many segments one trial queue's worker on GPUs holds without a place: the one it
// polls for or has just taken and is placing. More would keep segments from idle workers.
const maxUnplaced = 1

// NewPlaces returns places for limit trainers at once (at least one).
func NewPlaces(limit int) *Places {
	return &Places{limit: max(limit, 1), changed: make(chan struct{})}
}

// NewGPUPlaces returns the places of a trial queue's worker on the GPU pool gpus: as many trainers as
// the GPUs hold (see Places), bounded by what they could hold at most (Slots.MaxTrainers, and Len
// trials asking for no GPU).
func NewGPUPlaces(gpus *Slots) *Places {
	return &Places{limit: gpus.MaxTrainers() + gpus.Len() + maxUnplaced, gpus: gpus, changed: make(chan struct{})}
}

// Limit is how many trainers run at once, at most.
func (p *Places) Limit() int { return p.limit }

// Reserve waits until a place is free and takes it.
func (p *Places) Reserve(ctx context.Context) error {
	for {
		p.mu.Lock()
		wait := p.changed
		p.mu.Unlock()
		var gpuWait <-chan struct{}
		if p.gpus != nil {
			gpuWait = p.gpus.Changed()
		}
		if p.TryReserve() {
			return nil
		}
		select {
		case <-wait:
		case <-gpuWait:
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
	if p.gpus != nil && (p.issued-p.finishing-p.placed >= maxUnplaced || !p.gpus.HasRoom()) {
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

// Placed says a segment has its place: its GPUs, or none when it asks for none. Called at most once per
// activity, and followed by TrainerExited or, if its trainer never ran, Unplaced.
func (p *Places) Placed() {
	p.mu.Lock()
	p.placed++
	p.wake()
	p.mu.Unlock()
}

// Inherit counts the trainer of a parked segment that a segment of this worker's queue handed its
// place to (Activities.handOver), before that segment's TrainerExited: the place stays taken, and no
// slot is reserved for another poll. The inheriting segment then calls TrainerExited and
// ActivityEnded (or Unplaced) as a placed one does, and Release for the slot it never took.
func (p *Places) Inherit() {
	p.mu.Lock()
	p.issued++
	p.placed++
	p.mu.Unlock()
}

// Unplaced undoes Placed for a segment whose trainer never ran, as its activity returns.
func (p *Places) Unplaced() {
	p.mu.Lock()
	p.placed--
	p.wake()
	p.mu.Unlock()
}

// TrainerExited says a running segment's trainer has exited: its place is free for another trainer
// while its activity goes on storing. Called at most once per activity, after Placed, and followed by
// ActivityEnded.
func (p *Places) TrainerExited() {
	p.mu.Lock()
	p.placed--
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

// Waiting is how many segments hold a slot without a place: polled for, or placing.
func (p *Places) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued - p.finishing - p.placed
}

func (p *Places) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}
