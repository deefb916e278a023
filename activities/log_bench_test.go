package activities_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// peakRSS is the process's peak resident set size since the last resetPeakRSS (VmHWM), in bytes.
func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}

func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// BenchmarkTrainSegmentLog is what storing a trainer's log costs the worker: one segment of a trainer
// that prints mb MiB to stdout (1-MiB lines, 10 ms apart) while the segment flushes every 200 ms, on
// the local store. MB-uploaded/op is the log bytes put to the store, uploaded/log those over the log's
// size (1 when each byte is uploaded once), peak-heap-MB the most heap in use above the start, and
// peak-RSS-MB the worker process's peak resident set during the segment.
func BenchmarkTrainSegmentLog(b *testing.B) {
	for _, mb := range []int{300} {
		b.Run(fmt.Sprintf("log=%dMB", mb), func(b *testing.B) {
			var uploaded, peakHeap, rss int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f := newFixture(b)
				store := &logPuts{Store: f.store} // counts the log bytes put
				f.acts.Store = store
				f.acts.FlushInterval = 200 * time.Millisecond
				in := f.input(int64(100*mb), nil)
				in.Trainer.Command = shellTrainer(`i=0; while [ $i -lt ` + strconv.Itoa(mb) + ` ]; do head -c 1048575 /dev/zero | tr '\0' x; echo; i=$((i+1)); ` +
					`echo "{\"step\":$((i*100)),\"reward\":1}" >> "$RLSWEEP_METRICS_FILE"; sleep 0.01; done`)
				in.Trainer.StallTimeout = time.Minute
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := int64(ms.HeapInuse)
				var peak atomic.Int64
				done := make(chan struct{})
				go func() {
					t := time.NewTicker(5 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-done:
							return
						case <-t.C:
							var m runtime.MemStats
							runtime.ReadMemStats(&m)
							if d := int64(m.HeapInuse) - base; d > peak.Load() {
								peak.Store(d)
							}
						}
					}
				}()
				resetPeakRSS()
				b.StartTimer()
				env := f.env(context.Background(), nil)
				env.SetTestTimeout(5 * time.Minute)
				if _, err := f.runIn(env, in); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				close(done)
				uploaded, peakHeap, rss = store.bytes.Load(), peak.Load(), peakRSS()
				b.StartTimer()
			}
			b.ReportMetric(float64(uploaded)/1e6, "MB-uploaded/op")
			b.ReportMetric(float64(uploaded)/float64(mb<<20), "uploaded/log")
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		})
	}
}
