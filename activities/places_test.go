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
