package diagnostics

import (
	"math"
	"testing"
)

// BenchmarkEngineObserve judges one healthy 10,000-record run (12 canonical metrics a record, as the
// built-in trainer reports them) with a fresh engine: the per-record cost every trial's worker pays.
func BenchmarkEngineObserve(b *testing.B) {
	const n = 10_000
	records := make([]Record, n)
	for i := range records {
		x := float64(i) / n
		records[i] = Record{Step: int64(i+1) * 512, Values: map[string]float64{
			Reward: 20 + 480*x + 5*math.Sin(float64(i)), EpisodeLength: 20 + 480*x, ValueLoss: 40 * (1 - x),
			PolicyLoss: -0.01, Entropy: 0.69 - 0.5*x, ApproxKL: 0.01, ClipFraction: 0.1,
			ExplainedVariance: 0.8, GradNorm: 0.5, AdvantageAbsMax: 5, LearningRate: 2.5e-4, FPS: 5000,
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
