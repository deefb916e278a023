// Command replay-trainer is a test trainer written as a plain W&B or TensorBoard script is: it knows
// nothing of rlsweep's contract beyond the directories it writes to, never checkpoints, ignores
// RLSWEEP_STOP_AT_STEP and exits 0 on SIGTERM. It replays the history rows of a real W&B run file
// (--source), logging each row as the script that wrote it did, with the objective's values scaled by
// its parameter --quality, so configurations differ as real curves do:
//
//	--format=wandb        a W&B run file, $WANDB_DIR/wandb/offline-run-<time>-<id>/run-<id>.wandb,
//	                      written as the wandb SDK writes one (the datastore's 32 KiB blocks of
//	                      checksummed records, each row a history record), flushed row by row
//	--format=tensorboard  a TensorBoard event file under $RLSWEEP_TB_DIR, one event per row
//	--key=K               the row key to scale (default charts/episodic_return); only rows with it replay
//	--rows=N              how many of those rows (default all)
//	--sleep_ms=M          wall time per row (default 10)
//
// Arguments it does not know (a W&B sweep's other parameters) are ignored.
package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/metrics/metricstest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "replay-trainer:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	opt := map[string]string{"format": "wandb", "key": "charts/episodic_return", "sleep_ms": "10", "quality": "1"}
	for _, a := range args {
		if k, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok {
			opt[k] = v
		}
	}
	quality, err := strconv.ParseFloat(opt["quality"], 64)
	if err != nil {
		return fmt.Errorf("--quality: %v", err)
	}
	sleep, _ := strconv.Atoi(opt["sleep_ms"])
	recs, err := metrics.ReadAll(metrics.NewWandbTail(opt["source"], ""))
	if err != nil {
		return fmt.Errorf("--source %s: %v", opt["source"], err)
	}
	key := opt["key"]
	var rows []map[string]float64
	for _, r := range recs {
		if v, ok := r.Values[key]; ok {
			row := map[string]float64{}
			for k, x := range r.Values {
				row[k] = x
			}
			row[key] = v * quality
			rows = append(rows, row)
		}
	}
	if n, err := strconv.Atoi(opt["rows"]); err == nil && n < len(rows) {
		rows = rows[:n]
	}
	if len(rows) == 0 {
		return fmt.Errorf("--source %s has no row with %q", opt["source"], key)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	var w rowWriter
	switch opt["format"] {
	case "wandb":
		w, err = newWandbWriter(os.Getenv("WANDB_DIR"))
	case "tensorboard":
		w, err = newTBWriter(os.Getenv("RLSWEEP_TB_DIR"))
	default:
		err = fmt.Errorf("--format: got %q, want wandb or tensorboard", opt["format"])
	}
	if err != nil {
		return err
	}
	defer w.close(0)
	fmt.Printf("replaying %d rows of %s as %s, quality %g\n", len(rows), opt["source"], opt["format"], quality)
	for i, row := range rows {
		select {
		case <-term:
			fmt.Printf("SIGTERM at row %d\n", i)
			return nil
		default:
		}
		if err := w.write(int64(i), row); err != nil {
			return err
		}
		time.Sleep(time.Duration(sleep) * time.Millisecond)
	}
	return nil
}

type rowWriter interface {
	write(step int64, row map[string]float64) error
	close(exitCode int64)
}

func sortedKeys(row map[string]float64) []string {
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// wandbWriter writes a W&B run file as the SDK frames it (metricstest.WandbWriter), record by record.
type wandbWriter struct {
	f     *os.File
	w     *metricstest.WandbWriter
	start time.Time
}

func newWandbWriter(dir string) (*wandbWriter, error) {
	if dir == "" {
		return nil, fmt.Errorf("WANDB_DIR is not set")
	}
	now := time.Now()
	id := fmt.Sprintf("r%07d", os.Getpid()%10000000)
	run := filepath.Join(dir, "wandb", "offline-run-"+now.Format("20060102_150405")+"-"+id)
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(run, "run-"+id+".wandb"))
	if err != nil {
		return nil, err
	}
	w, err := metricstest.NewWandbWriter(f)
	if err != nil {
		return nil, err
	}
	return &wandbWriter{f: f, w: w, start: now}, w.Record(metricstest.Run(id))
}

func (w *wandbWriter) write(step int64, row map[string]float64) error {
	items := []metricstest.Item{metricstest.Float("_step", float64(step)),
		metricstest.Float("_runtime", time.Since(w.start).Seconds()),
		metricstest.Float("_timestamp", float64(time.Now().UnixNano())/1e9)}
	for _, k := range sortedKeys(row) {
		items = append(items, metricstest.Float(k, row[k]))
	}
	return w.w.Record(metricstest.History(items...))
}

func (w *wandbWriter) close(exitCode int64) {
	w.w.Record(metricstest.Exit(int32(exitCode)))
	w.f.Close()
}

// tbWriter writes a TensorBoard event file: TFRecords of Event protos, one scalar per value.
type tbWriter struct{ f *os.File }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func masked(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

func newTBWriter(dir string) (*tbWriter, error) {
	if dir == "" {
		return nil, fmt.Errorf("RLSWEEP_TB_DIR is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("events.out.tfevents.%d.%s", time.Now().Unix(), host)))
	if err != nil {
		return nil, err
	}
	w := &tbWriter{f: f}
	ev := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	ev = protowire.AppendFixed64(ev, math.Float64bits(float64(time.Now().UnixNano())/1e9))
	ev = protowire.AppendTag(ev, 3, protowire.BytesType)
	ev = protowire.AppendString(ev, "brain.Event:2")
	return w, w.event(ev)
}

func (w *tbWriter) event(data []byte) error {
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = binary.LittleEndian.AppendUint32(b, masked(b[:8]))
	b = append(b, data...)
	b = binary.LittleEndian.AppendUint32(b, masked(data))
	_, err := w.f.Write(b)
	return err
}

func (w *tbWriter) write(step int64, row map[string]float64) error {
	var sum []byte
	for _, k := range sortedKeys(row) {
		v := protowire.AppendTag(nil, 1, protowire.BytesType)
		v = protowire.AppendString(v, k)
		v = protowire.AppendTag(v, 2, protowire.Fixed32Type)
		v = protowire.AppendFixed32(v, math.Float32bits(float32(row[k])))
		sum = protowire.AppendTag(sum, 1, protowire.BytesType)
		sum = protowire.AppendBytes(sum, v)
	}
	ev := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	ev = protowire.AppendFixed64(ev, math.Float64bits(float64(time.Now().UnixNano())/1e9))
	ev = protowire.AppendTag(ev, 2, protowire.VarintType)
	ev = protowire.AppendVarint(ev, uint64(step))
	ev = protowire.AppendTag(ev, 5, protowire.BytesType)
	ev = protowire.AppendBytes(ev, sum)
	return w.event(ev)
}

func (w *tbWriter) close(int64) { w.f.Close() }
