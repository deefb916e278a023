package activities

import (
	"testing"

	"github.com/rlsweep/rlsweep/sweeps"
)

func TestObjectiveWatch(t *testing.T) {
	seg := func(total, stop, warmup, resume int64) SegmentInput {
		in := SegmentInput{StopAtStep: stop, Trial: sweeps.Trial{ResumeStep: resume}}
		in.Trainer.TotalSteps = total
		in.Diagnostics.WarmupSteps = warmup
		return in
	}
	for _, c := range []struct {
		name            string
		in              SegmentInput
		last            int64
		overdue, atEnd  string
		wantWarmup      int64
		wantLastSegment bool
	}{
		{name: "before the default warm-up (10% of total_steps)", in: seg(1000, 500, 0, 0), last: 99, wantWarmup: 100},
		{name: "at the default warm-up", in: seg(1000, 500, 0, 0), last: 100, wantWarmup: 100,
			overdue: "by step 100 (the diagnostics warm-up ends at step 100)", atEnd: "by step 100 (the diagnostics warm-up ends at step 100)"},
		{name: "a set warm-up", in: seg(1000, 500, 300, 0), last: 250, wantWarmup: 300},
		{name: "counted from the pbt member's start", in: seg(1000, 500, 300, 400), last: 650, wantWarmup: 700},
		{name: "the last segment before the warm-up", in: seg(1000, 1000, 2000, 0), last: 1000, wantWarmup: 2000, wantLastSegment: true,
			atEnd: "by the end of its last segment (step 1000)"},
		{name: "the last segment past the warm-up", in: seg(1000, 1000, 0, 0), last: 1000, wantWarmup: 100, wantLastSegment: true,
			overdue: "by step 1000 (the diagnostics warm-up ends at step 100)", atEnd: "by step 1000 (the diagnostics warm-up ends at step 100)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newObjectiveWatch(c.in)
			if w.warmup != c.wantWarmup || w.lastSegment != c.wantLastSegment {
				t.Errorf("newObjectiveWatch = %+v, want warm-up %d, last segment %v", w, c.wantWarmup, c.wantLastSegment)
			}
			if got := w.overdue(c.last); got != c.overdue {
				t.Errorf("overdue(%d) = %q, want %q", c.last, got, c.overdue)
			}
			if got := w.atEnd(c.last); got != c.atEnd {
				t.Errorf("atEnd(%d) = %q, want %q", c.last, got, c.atEnd)
			}
		})
	}
}
