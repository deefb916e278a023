package activities

import (
	"context"
	"testing"
	"time"
)

// A place is held by a trainer, not by its activity: once the trainer has exited, another segment may
// be polled while the first is still storing; the count comes back when the first one's slot is
// released.
func TestPlacesCountTrainers(t *testing.T) {
	p := NewPlaces(2)
	for i := range 2 {
		if !p.TryReserve() {
			t.Fatalf("place %d of 2 not free", i+1)
		}
	}
	if p.TryReserve() {
		t.Fatal("a third place taken with two trainers running")
	}
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got <- p.Reserve(ctx)
	}()
	select {
	case err := <-got:
		t.Fatalf("Reserve returned %v with every place held, want it to wait", err)
	case <-time.After(50 * time.Millisecond):
	}
	p.TrainerExited() // the first segment's trainer exits; its activity stores on
	if err := <-got; err != nil {
		t.Fatalf("Reserve after a trainer exited: %v, want the place", err)
	}
	if n := p.InUse(); n != 2 {
		t.Errorf("in use %d, want 2 (two trainers; the storing segment holds none)", n)
	}
	p.ActivityEnded() // the storing segment returns ...
	if p.TryReserve() {
		t.Error("a place taken between the activity's end and its slot's release")
	}
	p.Release() // ... and the SDK releases its slot
	if n := p.InUse(); n != 2 {
		t.Errorf("in use %d after the first segment's slot went back, want 2", n)
	}
	p.Release()
	p.Release()
	if n := p.InUse(); n != 0 {
		t.Errorf("in use %d with everything released, want 0", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.TryReserve()
	p.TryReserve()
	if err := p.Reserve(ctx); err == nil {
		t.Error("Reserve with a cancelled context and no place returned a place")
	}
}

// On a GPU worker a slot is reserved for a poll only while the GPUs have room and every segment taken
// has its place: one GPU packs four 0.25 trials, one segment at a time is taken unplaced, and a full GPU
// takes none until a trainer exits.
func TestGPUPlacesPackByShare(t *testing.T) {
	slots, err := NewSlots([]string{"0"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := NewGPUPlaces(slots)
	var leases []Lease
	for i := range 4 {
		if !p.TryReserve() {
			t.Fatalf("segment %d of four 0.25 trials: no slot with %v of the GPU free", i+1, slots.Free()["0"])
		}
		if p.TryReserve() {
			t.Fatalf("segment %d: a second slot reserved while one is unplaced", i+1)
		}
		l, err := slots.Acquire(context.Background(), 0.25)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
		p.Placed()
	}
	if p.TryReserve() {
		t.Fatal("a slot reserved with the GPU full")
	}
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got <- p.Reserve(ctx)
	}()
	select {
	case err := <-got:
		t.Fatalf("Reserve returned %v with the GPU full, want it to wait", err)
	case <-time.After(50 * time.Millisecond):
	}
	slots.Release(leases[0]) // the first trainer exits: its share goes back first ...
	if err := <-got; err != nil {
		t.Fatalf("Reserve after a 0.25 share went back: %v, want a slot", err)
	}
	p.TrainerExited() // ... then its place
	if n := p.Waiting(); n != 1 {
		t.Errorf("%d segments unplaced, want 1 (the slot just reserved)", n)
	}
	// A segment that never places (its trial fails before taking its GPUs) frees the unplaced slot when
	// the SDK releases it; one that placed and never ran its trainer, when its activity ends.
	p.Release()
	if !p.TryReserve() {
		t.Fatal("no slot after the unplaced one went back, with 0.25 of the GPU free")
	}
	p.Placed()
	p.Unplaced()
	if n := p.Waiting(); n != 1 {
		t.Errorf("%d segments unplaced after Placed and Unplaced, want 1", n)
	}
	if p.Limit() < 100 {
		t.Errorf("limit %d for one GPU, want at least 100 (trials of 0.01)", p.Limit())
	}
}
