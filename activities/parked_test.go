package activities

import (
	"context"
	"testing"
	"time"
)

// A trainer that exits cleanly hands its place to the segment parked here for its successor, once:
// the successor is counted in its place, so the queue's worker polls for no other segment meanwhile.
func TestHandOverToAParkedSegment(t *testing.T) {
	a := &Activities{}
	places := NewPlaces(1)
	if err := places.Reserve(context.Background()); err != nil { // the exiting segment's slot
		t.Fatal(err)
	}
	places.Placed()
	s := a.parked.park(parkedTrial("sw", "0-s2"), "key-2")
	if a.handOver(context.Background(), "other-sweep", "0-s2", places) {
		t.Fatal("handed over to a trial of another sweep with the same ID")
	}
	if !a.handOver(context.Background(), "sw", "0-s2", places) {
		t.Fatal("no hand-over to the parked successor")
	}
	places.TrainerExited() // the exiting trainer, after its hand-over
	if got := <-s.handed; got != places {
		t.Fatalf("handed %v, want the exiting segment's places", got)
	}
	if places.TryReserve() {
		t.Fatal("a slot was reserved for another poll while the successor holds the place")
	}
	if a.handOver(context.Background(), "sw", "0-s2", places) {
		t.Fatal("handed over twice")
	}
	if a.parked.disarm("key-2") {
		t.Fatal("disarmed a segment already handed its place")
	}
	// Both end: the place is free again.
	places.ActivityEnded()
	places.Release()
	places.TrainerExited()
	places.ActivityEnded()
	places.Release()
	if n := places.InUse(); n != 0 {
		t.Fatalf("places in use %d after both ended, want 0", n)
	}
}

// A parked segment disarmed by its workflow ends without training; ParkedOnly leaves a running one
// alone, and a segment parked again for the same trial displaces the one left behind.
func TestDisarmParkedSegment(t *testing.T) {
	a := &Activities{}
	s := a.parked.park(parkedTrial("sw", "0-s2"), "key-2")
	if ok, err := a.StopSegment(context.Background(), StopSegmentRequest{Attempt: "key-2", ParkedOnly: true}); !ok || err != nil {
		t.Fatalf("StopSegment = %v, %v; want the parked segment disarmed", ok, err)
	}
	select {
	case <-s.disarmed:
	default:
		t.Fatal("not disarmed")
	}
	if a.handOver(context.Background(), "sw", "0-s2", nil) {
		t.Fatal("handed over to a disarmed segment")
	}
	b := &beats{}
	a.running.Store("key-3", b)
	if ok, _ := a.StopSegment(context.Background(), StopSegmentRequest{Attempt: "key-3", ParkedOnly: true}); ok {
		t.Fatal("ParkedOnly stopped a running segment")
	}
	old := a.parked.park(parkedTrial("sw", "0-s4"), "key-4#1")
	newer := a.parked.park(parkedTrial("sw", "0-s4"), "key-4#2")
	select {
	case <-old.disarmed:
	default:
		t.Fatal("the segment left behind was not disarmed when another parked for its trial")
	}
	if a.parked.leave(old) || !a.parked.leave(newer) {
		t.Fatal("leave: want only the segment still parked to leave")
	}
}

// A parked segment sends no heartbeat: it waits at most half the heartbeat timeout, and no longer
// than leaves its first heartbeat, an interval after it is handed its place, 10 s inside the timeout.
func TestParkLimit(t *testing.T) {
	for _, c := range []struct{ timeout, every, want time.Duration }{
		{2 * time.Minute, 44 * time.Second, time.Minute},
		{time.Minute, 30 * time.Second, 20 * time.Second},
		{10 * time.Second, 5 * time.Second, 0},
		{0, time.Second, 0},
	} {
		if got := parkLimit(c.timeout, c.every); got != c.want {
			t.Errorf("parkLimit(%v, %v) = %v, want %v", c.timeout, c.every, got, c.want)
		}
	}
}
