package workflows

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rlsweep/rlsweep/sweeps"
)

// A trial trains by the segment ends its input names; one given none gets those of its trainer alone.
func TestSegmentEnds(t *testing.T) {
	for _, c := range []struct {
		given      []int64
		seg, total int64
		want       []int64
	}{
		{[]int64{100, 300, 1000}, 500, 1000, []int64{100, 300, 1000}},
		{nil, 300, 1000, []int64{300, 600, 900, 1000}},
		{nil, 0, 1000, []int64{1000}},
		{nil, 2000, 1000, []int64{1000}},
	} {
		in := TrialInput{SegmentEnds: c.given, Trainer: sweeps.Trainer{SegmentSteps: c.seg, TotalSteps: c.total}}
		if got := segmentEnds(in); !slices.Equal(got, c.want) {
			t.Errorf("ends %v, segment_steps %d, total_steps %d: got %v, want %v", c.given, c.seg, c.total, got, c.want)
		}
	}
}

// A trial resuming at a step trains from the first segment that ends past it.
func TestFirstSegment(t *testing.T) {
	ends := []int64{100, 300, 1000}
	for _, c := range []struct {
		resume int64
		want   string
	}{
		{0, "0 from 0"},
		{99, "0 from 0"},
		{100, "1 from 100"},
		{300, "2 from 300"},
		{1000, "2 from 300"}, // past the end: the last segment
	} {
		first, start := firstSegment(ends, c.resume)
		if got := fmt.Sprintf("%d from %d", first, start); got != c.want {
			t.Errorf("resume at %d: %s, want %s", c.resume, got, c.want)
		}
	}
}
