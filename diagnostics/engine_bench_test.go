package diagnostics

import (
	"math"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// BenchmarkEngineObserve judges one healthy 10,000-record run (12 canonical metrics a record, as the
// built-in trainer reports them) with a fresh engine: the per-record cost every trial's worker pays.
func BenchmarkEngineObserve(b *testing.B) {
	const n = 10_000
	records := make([]metrics.Record, n)
	for i := range records {
		x := float64(i) / n
		records[i] = metrics.Record{Step: int64(i+1) * 512, Values: map[string]float64{
			metrics.Reward: 20 + 480*x + 5*math.Sin(float64(i)), metrics.EpisodeLength: 20 + 480*x, metrics.ValueLoss: 40 * (1 - x),
			metrics.PolicyLoss: -0.01, metrics.Entropy: 0.69 - 0.5*x, metrics.ApproxKL: 0.01, metrics.ClipFraction: 0.1,
			metrics.ExplainedVariance: 0.8, metrics.GradNorm: 0.5, metrics.AdvantageAbsMax: 5, metrics.LearningRate: 2.5e-4, metrics.FPS: 5000,
		}}
	}
	b.ReportAllocs()
	for b.Loop() {
		e, err := NewEngine(Config{TotalSteps: n * 512})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range records {
			e.Observe(r)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
