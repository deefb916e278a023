package worker

import (
	"context"
	"sync"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/rlsweep/rlsweep/activities"
)

// packRun is what simulatePolls saw: the most segments running at once, and the most taken from the
// queue but not yet placed at once.
type packRun struct{ maxRunning, maxUnplaced, ran int }

// simulatePolls drives a trial queue's activity slot supplier as the SDK's pollers do (pollers of
// them, each reserving a slot before it polls, releasing it unused when the queue is empty, and
// running each task it takes in a goroutine of its own that releases the slot once the task is done)
// over a queue of segments asking for gpusOf, each running its trainer for hold as TrainSegment does:
// take its GPUs, say Placed, run, give its GPUs back, say TrainerExited and ActivityEnded.
func simulatePolls(t *testing.T, gpus *activities.Slots, cpuSlots, pollers int, gpusOf []float64, hold time.Duration) packRun {
	t.Helper()
	places := trialPlaces(gpus, cpuSlots)
	tuner, err := placeTuner(places)
	if err != nil {
		t.Fatal(err)
	}
	supplier := tuner.GetActivityTaskSlotSupplier()
	queue := make(chan float64, len(gpusOf))
	for _, g := range gpusOf {
		queue <- g
	}
	close(queue)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		mu                sync.Mutex
		running, unplaced int
		out               packRun
		tasks, pollersWG  sync.WaitGroup
	)
	track := func(dRunning, dUnplaced int) {
		mu.Lock()
		defer mu.Unlock()
		running += dRunning
		unplaced += dUnplaced
		out.maxRunning = max(out.maxRunning, running)
		out.maxUnplaced = max(out.maxUnplaced, unplaced)
	}
	for range pollers {
		pollersWG.Go(func() {
			for {
				if _, err := supplier.ReserveSlot(ctx, nil); err != nil {
					t.Errorf("ReserveSlot: %v", err)
					return
				}
				g, ok := <-queue
				if !ok {
					supplier.ReleaseSlot(nil)
					return
				}
				supplier.MarkSlotUsed(nil)
				track(0, 1)
				tasks.Go(func() {
					defer supplier.ReleaseSlot(nil)
					var lease activities.Lease
					if gpus != nil {
						var err error
						if lease, err = gpus.Acquire(ctx, g); err != nil {
							t.Errorf("Acquire(%g): %v", g, err)
							return
						}
					}
					// Counted as placed before the supplier hears of it: once it has, another poller may
					// take the next segment at once, and counting after would see two unplaced.
					track(1, -1)
					places.Placed()
					time.Sleep(hold)
					track(-1, 0)
					if gpus != nil {
						gpus.Release(lease)
					}
					places.TrainerExited()
					places.ActivityEnded()
					mu.Lock()
					out.ran++
					mu.Unlock()
				})
			}
		})
	}
	pollersWG.Wait()
	tasks.Wait()
	if out.ran != len(gpusOf) {
		t.Fatalf("%d segments ran, want %d", out.ran, len(gpusOf))
	}
	return out
}

// A worker with one GPU takes four segments of resources.gpus 0.25 at once, not one (GPUs × --trials-per-gpu),
// and never more than the GPU holds; it holds at most one segment it has not placed.
func TestOneGPUWorkerRunsFourQuarterTrials(t *testing.T) {
	gpus, err := activities.NewSlots([]string{"0"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	quarters := make([]float64, 12)
	for i := range quarters {
		quarters[i] = 0.25
	}
	got := simulatePolls(t, gpus, 1, 4, quarters, 100*time.Millisecond)
	if got.maxRunning != 4 {
		t.Errorf("at most %d segments of 0.25 ran at once on one GPU, want 4", got.maxRunning)
	}
	if got.maxUnplaced > 1 {
		t.Errorf("%d segments taken and not placed at once, want at most 1", got.maxUnplaced)
	}
}

// Whole-GPU trials behind fractional ones: the worker takes one, which waits for a whole GPU while
// taking no further segment, and everything runs.
func TestGPUWorkerMixedShares(t *testing.T) {
	gpus, err := activities.NewSlots([]string{"0", "1"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	mix := []float64{0.5, 1, 0.25, 1, 0.25, 0.5, 2, 0.25, 0.25, 1}
	got := simulatePolls(t, gpus, 1, 4, mix, 30*time.Millisecond)
	if got.maxUnplaced > 1 {
		t.Errorf("%d segments taken and not placed at once, want at most 1", got.maxUnplaced)
	}
	if got.maxRunning < 3 {
		t.Errorf("at most %d segments ran at once on two GPUs with 0.25 and 0.5 trials, want them packed (3 or more)", got.maxRunning)
	}
}

// Without GPUs (--slots 3) the worker runs --slots segments at once, as the SDK's fixed slots would.
func TestCPUWorkerRunsSlots(t *testing.T) {
	got := simulatePolls(t, nil, 3, 4, make([]float64, 9), 50*time.Millisecond)
	if got.maxRunning != 3 {
		t.Errorf("at most %d segments ran at once with --slots 3, want 3", got.maxRunning)
	}
}

var _ sdkworker.SlotSupplier = placeSupplier{}
