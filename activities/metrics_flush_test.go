package activities_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

// putCounter is the store with the bytes and objects Put under a prefix counted.
type putCounter struct {
	artifacts.Store
	prefix string
	mu     sync.Mutex
	bytes  int64
	puts   int
}

func (s *putCounter) Put(ctx context.Context, key string, r io.Reader) error {
	if !strings.HasPrefix(key, s.prefix) {
		return s.Store.Put(ctx, key, r)
	}
	cr := &countingReader{r: r}
	err := s.Store.Put(ctx, key, cr)
	s.mu.Lock()
	s.bytes += cr.n
	s.puts++
	s.mu.Unlock()
	return err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Every flush uploads only the records read since the previous one: over a segment of 400 records
// with a checkpoint (and so a flush) every 10, the metrics bytes put to the store are exactly the
// bytes of the final stream — linear in the run's length, where storing the whole file again at every
// flush puts about flushes/2 times as much.
func TestTrainSegmentFlushUploadsOnlyNewRecords(t *testing.T) {
	f := newFixture(t)
	counter := &putCounter{Store: f.store, prefix: artifacts.MetricsDir(sweepID, "0-s1")}
	f.acts.Store = counter
	in := f.input(400000, nil)
	in.Trainer.Command = shellTrainer(`i=1; while [ $i -le 400 ]; do
  s=$((i*1000))
  if [ $((i%10)) -eq 0 ]; then
    echo c > "$RLSWEEP_CHECKPOINT_DIR/ckpt-$s.json"
    printf '{"step":%d,"reward":%d.5,"value_loss":0.25,"checkpoint":"ckpt-%d.json"}\n' $s $i $s >> "$RLSWEEP_METRICS_FILE"
  else
    printf '{"step":%d,"reward":%d.5,"value_loss":0.25}\n' $s $i >> "$RLSWEEP_METRICS_FILE"
  fi
  i=$((i+1))
done`)
	if _, err := f.run(in); err != nil {
		t.Fatal(err)
	}
	stream := f.metrics()
	if n := strings.Count(stream, "\n"); n != 400 {
		t.Fatalf("stored stream holds %d records, want 400", n)
	}
	if counter.puts < 40 {
		t.Errorf("%d metrics puts, want at least one per checkpoint (40)", counter.puts)
	}
	if counter.bytes != int64(len(stream)) {
		t.Errorf("%d metrics bytes put over %d puts for a %d-byte stream (%.1f×), want each record put once",
			counter.bytes, counter.puts, len(stream), float64(counter.bytes)/float64(len(stream)))
	}
}
