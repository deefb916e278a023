package activities_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
)

// acquireNow takes gpus of s or fails the test if the pool cannot place it at once.
func acquireNow(t *testing.T, s *activities.Slots, gpus float64) activities.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l, err := s.Acquire(ctx, gpus)
	if err != nil {
		t.Fatalf("Acquire(%g) with room for it: %v", gpus, err)
	}
	return l
}

// waits checks that the pool cannot place gpus now: Acquire gives up with its context.
func waits(t *testing.T, s *activities.Slots, gpus float64, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if l, err := s.Acquire(ctx, gpus); err == nil {
		t.Errorf("Acquire(%g) = %v, want it to wait: %s", gpus, l.GPUs, why)
		s.Release(l)
	}
}

func newSlots(t *testing.T, gpus []string, perGPU int) *activities.Slots {
	t.Helper()
	s, err := activities.NewSlots(gpus, perGPU)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Four trials of resources.gpus 0.25 share one GPU at once; a fifth waits until one of them releases.
func TestSlotsFourQuartersShareAGPU(t *testing.T) {
	s := newSlots(t, []string{"0"}, 1)
	var held []activities.Lease
	for range 4 {
		l := acquireNow(t, s, 0.25)
		if !slices.Equal(l.GPUs, []string{"0"}) || l.MemoryFraction() != "0.25" {
			t.Errorf("a 0.25 trial got GPUs %v, memory fraction %q; want GPU 0 and 0.25", l.GPUs, l.MemoryFraction())
		}
		held = append(held, l)
	}
	if s.HasRoom() {
		t.Error("HasRoom with four 0.25 trials on the one GPU")
	}
	waits(t, s, 0.25, "four 0.25 trials fill the GPU")
	got := make(chan activities.Lease)
	go func() {
		l, _ := s.Acquire(context.Background(), 0.25)
		got <- l
	}()
	select {
	case l := <-got:
		t.Fatalf("a fifth 0.25 trial placed on %v with the GPU full", l.GPUs)
	case <-time.After(20 * time.Millisecond):
	}
	s.Release(held[0])
	select {
	case l := <-got:
		if !slices.Equal(l.GPUs, []string{"0"}) {
			t.Errorf("the fifth trial got %v, want GPU 0", l.GPUs)
		}
	case <-time.After(time.Second):
		t.Fatal("the fifth 0.25 trial still waits after one of the four released its share")
	}
}

// A 0.5 trial and a whole one fit on two GPUs together, each on its own GPU, whichever comes first;
// then a second whole trial waits while a second 0.5 fits beside the first.
func TestSlotsHalfAndWholeOnTwoGPUs(t *testing.T) {
	for _, halfFirst := range []bool{true, false} {
		s := newSlots(t, []string{"0", "1"}, 1)
		var half, whole activities.Lease
		if halfFirst {
			half, whole = acquireNow(t, s, 0.5), acquireNow(t, s, 1)
		} else {
			whole, half = acquireNow(t, s, 1), acquireNow(t, s, 0.5)
		}
		if len(half.GPUs) != 1 || len(whole.GPUs) != 1 || half.GPUs[0] == whole.GPUs[0] {
			t.Fatalf("half first %v: 0.5 on %v, whole on %v; want one GPU each, not the same", halfFirst, half.GPUs, whole.GPUs)
		}
		if whole.MemoryFraction() != "1" || half.MemoryFraction() != "0.5" {
			t.Errorf("memory fractions: whole %q, half %q; want 1 and 0.5", whole.MemoryFraction(), half.MemoryFraction())
		}
		waits(t, s, 1, "no GPU is whole free")
		if l := acquireNow(t, s, 0.5); !slices.Equal(l.GPUs, half.GPUs) {
			t.Errorf("a second 0.5 trial on %v, want beside the first on %v", l.GPUs, half.GPUs)
		}
		waits(t, s, 0.01, "both GPUs are full")
		s.Release(whole)
		if l := acquireNow(t, s, 1); !slices.Equal(l.GPUs, whole.GPUs) {
			t.Errorf("a whole trial after the whole one released got %v, want %v", l.GPUs, whole.GPUs)
		}
	}
}

// Fractions go best-fit: onto the GPU with the least free capacity that holds them, so that whole
// GPUs stay free for whole-GPU trials.
func TestSlotsBestFit(t *testing.T) {
	s := newSlots(t, []string{"0", "1", "2"}, 1)
	whole := acquireNow(t, s, 1) // GPU 0
	a := acquireNow(t, s, 0.5)   // GPU 1: ties of free capacity go in --gpus order
	if !slices.Equal(whole.GPUs, []string{"0"}) || !slices.Equal(a.GPUs, []string{"1"}) {
		t.Fatalf("whole on %v, 0.5 on %v; want 0 and 1", whole.GPUs, a.GPUs)
	}
	b := acquireNow(t, s, 0.25) // GPU 1 has 0.5 free, GPU 2 a whole one
	if !slices.Equal(b.GPUs, []string{"1"}) {
		t.Errorf("0.25 with GPU 1 half free and GPU 2 free went to %v, want 1 (best fit)", b.GPUs)
	}
	c := acquireNow(t, s, 0.3) // 0.25 left on GPU 1 does not hold it
	if !slices.Equal(c.GPUs, []string{"2"}) {
		t.Errorf("0.3 with 0.25 free on GPU 1 went to %v, want 2", c.GPUs)
	}
	d := acquireNow(t, s, 0.25) // fills GPU 1 exactly
	if !slices.Equal(d.GPUs, []string{"1"}) {
		t.Errorf("0.25 with 0.25 free on GPU 1 and 0.7 on GPU 2 went to %v, want 1", d.GPUs)
	}
	free := s.Free()
	if free["0"] != 0 || free["1"] != 0 || math.Abs(free["2"]-0.7) > 1e-9 {
		t.Errorf("free = %v, want 0, 0, 0.7", free)
	}
	for _, l := range []activities.Lease{whole, a, b, c, d} {
		s.Release(l)
	}
	if free := s.Free(); free["0"] != 1 || free["1"] != 1 || free["2"] != 1 {
		t.Errorf("free after every release = %v, want every GPU whole", free)
	}
	// Thirds: 1/3 is 3333 units, three of them fit a GPU, the unit left over holds nothing.
	for range 3 {
		if l := acquireNow(t, s, 1.0/3); l.MemoryFraction() != "0.3333" || !slices.Equal(l.GPUs, []string{"0"}) {
			t.Errorf("a third: GPUs %v, memory fraction %q; want GPU 0, 0.3333", l.GPUs, l.MemoryFraction())
		}
	}
	if l := acquireNow(t, s, 0.01); !slices.Equal(l.GPUs, []string{"1"}) {
		t.Errorf("0.01 beside three thirds went to %v, want GPU 1", l.GPUs)
	}
}

// --trials-per-gpu N scales whole-GPU trials only: each takes 1/N of its GPUs, while a fraction takes
// its fraction. With N = 2 on one GPU, a whole trial and two 0.25 trials fill it.
func TestSlotsTrialsPerGPUWithFractions(t *testing.T) {
	s := newSlots(t, []string{"0"}, 2)
	whole := acquireNow(t, s, 1)
	if whole.MemoryFraction() != "0.5" {
		t.Errorf("a whole trial under --trials-per-gpu 2: memory fraction %q, want 0.5", whole.MemoryFraction())
	}
	acquireNow(t, s, 0.25)
	acquireNow(t, s, 0.25)
	waits(t, s, 1, "a whole trial's 0.5 and two 0.25 fill the GPU")
	waits(t, s, 0.25, "a whole trial's 0.5 and two 0.25 fill the GPU")
	s.Release(whole)
	acquireNow(t, s, 1)
	waits(t, s, 0.01, "the GPU is full")
	if _, err := activities.NewSlots([]string{"0"}, activities.MaxTrialsPerGPU+1); err == nil || !strings.Contains(err.Error(), "--trials-per-gpu: got 101") {
		t.Errorf("NewSlots(perGPU 101) = %v, want an error naming --trials-per-gpu", err)
	}
}

// Trials asking for no GPU hold none, see none, and run Len at once.
func TestSlotsNoGPUTrials(t *testing.T) {
	s := newSlots(t, []string{"0"}, 2)
	a, b := acquireNow(t, s, 0), acquireNow(t, s, 0)
	if len(a.GPUs) != 0 || a.MemoryFraction() != "" {
		t.Errorf("a trial asking for no GPU got %v, memory fraction %q; want none", a.GPUs, a.MemoryFraction())
	}
	waits(t, s, 0, "Len (2) trials asking for no GPU run")
	acquireNow(t, s, 1) // they hold no GPU capacity
	s.Release(a)
	acquireNow(t, s, 0)
	s.Release(b)
}

// Under concurrency no GPU is ever given more than its capacity, and shares of every size go through.
// Run with -race.
func TestSlotsNeverOverCommit(t *testing.T) {
	gpus := []string{"0", "1", "2"}
	s := newSlots(t, gpus, 1)
	sizes := []float64{0.25, 0.5, 0.3, 0.01, 0.75, 1, 2, 3, 1.0 / 3}
	var (
		mu    sync.Mutex
		used  = map[string]int{} // in ten-thousandths
		peak  int
		total int
		wg    sync.WaitGroup
	)
	for w := range 24 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 40 {
				g := sizes[r.IntN(len(sizes))]
				l, err := s.Acquire(context.Background(), g)
				if err != nil {
					t.Error(err)
					return
				}
				units := int(math.Round(l.Share() * 10000))
				mu.Lock()
				sum := 0
				for _, id := range l.GPUs {
					used[id] += units
					if used[id] > 10000 {
						t.Errorf("GPU %s holds %d/10000 with a %g trial placed", id, used[id], g)
					}
				}
				for _, id := range gpus {
					sum += used[id]
				}
				peak = max(peak, sum)
				total++
				mu.Unlock()
				time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
				mu.Lock()
				for _, id := range l.GPUs {
					used[id] -= units
				}
				mu.Unlock()
				s.Release(l)
			}
		})
	}
	wg.Wait()
	if total != 24*40 {
		t.Errorf("%d trials placed, want %d", total, 24*40)
	}
	if peak <= 10000 {
		t.Errorf("at most %d/10000 of the GPUs held at once, want more than one GPU's worth packed", peak)
	}
	if free := s.Free(); free["0"] != 1 || free["1"] != 1 || free["2"] != 1 {
		t.Errorf("free after every release = %v, want every GPU whole", free)
	}
}
