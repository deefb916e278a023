package artifacts

import (
	"context"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// LastAttemptReach reads how far the latest attempt of a segment that stored metrics got: the highest
// step of that attempt's parts, not of earlier attempts' or other segments'.
func TestLastAttemptReach(t *testing.T) {
	s := newMetricsStore(t)
	ctx := context.Background()
	put := func(seg int, att int32, seq int, steps ...int) {
		if err := s.Put(ctx, MetricsPartKey(mSweep, mTrial, seg, att, seq), strings.NewReader(lines("w", steps...))); err != nil {
			t.Fatal(err)
		}
	}
	if att, last, err := LastAttemptReach(ctx, s, mSweep, mTrial, 0, metrics.LineStep); err != nil || att != 0 || last != 0 {
		t.Fatalf("no metrics: attempt %d, last %d, %v; want 0, 0, nil", att, last, err)
	}
	put(0, 1, 0, 1000, 2000)
	put(0, 1, 1, 3000, 9000) // attempt 1 went far
	put(0, 2, 0, 2000, 3000)
	put(0, 2, 1, 4000, 5000) // the latest attempt of segment 0
	put(1, 1, 0, 6000, 7000) // another segment
	att, last, err := LastAttemptReach(ctx, s, mSweep, mTrial, 0, metrics.LineStep)
	if err != nil || att != 2 || last != 5000 {
		t.Errorf("segment 0: attempt %d, last %d, %v; want attempt 2 at step 5000", att, last, err)
	}
}
