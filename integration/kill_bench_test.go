//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// BenchmarkDetectionToKill measures, over 100 trials that write NaN at step 10,000, the time from the
// divergent record being appended (its wall_ns, written by the trainer) to the trainer process having
// exited (KilledAt in divergence.json). Reports p50 and p99 in milliseconds. record_ms is the time
// between records: 20 ms (never silent) and 500 ms (silent between records, so its segment reads the
// metrics at the idle interval). Run with -benchtime 1x.
func BenchmarkDetectionToKill(b *testing.B) {
	for _, recordMS := range []int{20, 500} {
		b.Run(fmt.Sprintf("record_ms=%d", recordMS), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				detectionToKill(b, recordMS)
			}
		})
	}
}

func detectionToKill(b *testing.B, recordMS int) {
	e := newEnv(b)
	e.startWorker("a", "--slots", "16")
	seeds := ""
	for s := 1; s <= 100; s++ {
		seeds += fmt.Sprintf("%d,", s)
	}
	spec := e.spec("killbench", `
  total_steps: 100000
seeds: [`+seeds[:len(seeds)-1]+`]
parameters:
  fault: {value: 1}
  fault_at: {value: 10000}
  sleep_ms: {value: `+fmt.Sprint(recordMS)+`}
probes: {enabled: false}
concurrency: 16
`)
	sweepID := e.submit(spec)
	var res workflows.SweepResult
	if err := e.client.GetWorkflow(context.Background(), sweepID, "").Get(context.Background(), &res); err != nil {
		b.Fatal(err)
	}
	var lat []float64
	for s := 1; s <= 100; s++ {
		var d sweepstore.Divergence
		e.readJSON(artifacts.DivergenceKey(sweepID, fmt.Sprintf("0-s%d", s)), &d)
		appended := appendedAt(b, d)
		lat = append(lat, float64(d.KilledAt.Sub(appended).Microseconds())/1000)
	}
	sort.Float64s(lat)
	b.ReportMetric(lat[49], "p50-ms")
	b.ReportMetric(lat[98], "p99-ms")
	b.ReportMetric(lat[99], "max-ms")
}

// appendedAt is when the trainer appended the record that fired the stop.
func appendedAt(b *testing.B, d sweepstore.Divergence) time.Time {
	for _, raw := range d.Records {
		var line string
		if err := json.Unmarshal(raw, &line); err != nil {
			b.Fatal(err)
		}
		rec, err := metrics.ParseJSONLine([]byte(line))
		if err == nil && rec.Step == d.Verdict.Step {
			return time.Unix(0, int64(rec.Values["wall_ns"]))
		}
	}
	b.Fatalf("trial %s: the record at step %d is not in the dump", d.TrialID, d.Verdict.Step)
	return time.Time{}
}
