package activities_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rlsweep/rlsweep/sweeps"
)

// BenchmarkTrainSegment is what TrainSegment costs around a trainer that does nothing: one segment of
// the scripted trainer that writes one record (with its final checkpoint) and exits — the orchestration
// benchmark's trainer at sleep_ms 0 — at the worker's default poll interval, on the local store. One op
// is one segment: scratch directory, trainer process start and exit, checkpoint, metrics and log
// stored, result. See docs/BENCHMARKS.md.
func BenchmarkTrainSegment(b *testing.B) {
	f := newFixture(b)
	f.acts.PollInterval, f.acts.FlushInterval = 0, 0 // the worker's defaults
	in := f.input(1000, map[string]any{"sleep_ms": 0, "step_size": 1000, "checkpoint_every": 0})
	in.Diagnostics = sweeps.Diagnostics{Enabled: false}
	env := f.env(context.Background(), nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in.Trial.ID = fmt.Sprintf("%d-s1", i)
		if _, err := env.ExecuteActivity(f.acts.TrainSegment, in); err != nil {
			b.Fatal(err)
		}
	}
}
