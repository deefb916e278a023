package activities

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
)

// benchPuts is a store counting the bytes Put under a prefix.
type benchPuts struct {
	artifacts.Store
	prefix string
	bytes  int64
}

func (s *benchPuts) Put(ctx context.Context, key string, r io.Reader) error {
	if strings.HasPrefix(key, s.prefix) {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		s.bytes += int64(len(b))
		return s.Store.Put(ctx, key, strings.NewReader(string(b)))
	}
	return s.Store.Put(ctx, key, r)
}

// BenchmarkSegmentMetricsFlush is what storing a segment's metrics costs: a segment attempt takes in
// records of about 600 bytes each (canonical JSON, 20 metrics) and flushes its metrics to a local store
// every `every` records — the 30-s flush of a trainer writing 100 records per 30 s, or a checkpoint's
// flush — then once at its end. One op is one segment; MB-uploaded/op is the metrics bytes put to the
// store, uploaded/stream those bytes over the size of the final stream (1 when every record is
// uploaded once). See docs/BENCHMARKS.md.
func BenchmarkSegmentMetricsFlush(b *testing.B) {
	for _, c := range []struct{ records, every int }{{10_000, 100}, {100_000, 1_000}} {
		b.Run(fmt.Sprintf("records=%d/every=%d", c.records, c.every), func(b *testing.B) {
			if testing.Short() && c.records > 10_000 {
				b.Skip("long")
			}
			ctx := context.Background()
			rec := metrics.Record{Values: map[string]float64{}}
			for i := 0; i < 20; i++ {
				rec.Values[fmt.Sprintf("train/metric_%02d", i)] = 0.123456789 * float64(i+1)
			}
			var uploaded, stream int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := b.TempDir()
				local, err := artifacts.NewLocal(filepath.Join(dir, "store"))
				if err != nil {
					b.Fatal(err)
				}
				in := SegmentInput{SweepID: "sweep/bench/ab12", Trial: sweeps.Trial{ID: "0-s1"}}
				puts := &benchPuts{Store: local, prefix: artifacts.MetricsDir(in.SweepID, in.Trial.ID)}
				canon, err := os.Create(filepath.Join(dir, "canon.jsonl"))
				if err != nil {
					b.Fatal(err)
				}
				r := &segmentRun{a: &Activities{Store: puts}, in: in, ledger: attemptLedger{attempt: 1}, canon: canon, records: runner.NewSegmentLog(canon, "", 0)}
				m := r.a.masker()
				b.StartTimer()
				for s := 1; s <= c.records; s++ {
					rec.Step = int64(s) * 1000
					if _, err := r.observe(ctx, rec, m); err != nil {
						b.Fatal(err)
					}
					if s%c.every == 0 {
						if err := r.flushMetrics(ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := r.flushMetrics(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				st, err := canon.Stat()
				if err != nil {
					b.Fatal(err)
				}
				uploaded, stream = puts.bytes, st.Size()
				canon.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(uploaded)/1e6, "MB-uploaded/op")
			b.ReportMetric(float64(stream)/float64(c.records), "B/record")
			b.ReportMetric(float64(uploaded)/float64(stream), "uploaded/stream")
		})
	}
}
