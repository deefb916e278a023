package metrics

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics/metricstest"
)

// wbWriter is a run file under construction in memory (metricstest.WandbWriter, an encoder written
// apart from this package's decoder); b holds its bytes so far.
type wbWriter struct {
	buf bytes.Buffer
	w   *metricstest.WandbWriter
	b   []byte
}

func newWBWriter() *wbWriter {
	w := &wbWriter{}
	w.w, _ = metricstest.NewWandbWriter(&w.buf)
	w.b = w.buf.Bytes()
	return w
}

func (w *wbWriter) record(rec []byte) *wbWriter {
	w.w.Record(rec) // a bytes.Buffer does not fail
	w.b = w.buf.Bytes()
	return w
}

// wbItem is a history item: a key (or, with a "\x00" in it or a "core:" prefix, nested_key elements
// as wandb-core writes them) and its value_json.
type wbItem struct{ key, value string }

func wbHistory(items ...wbItem) []byte {
	out := make([]metricstest.Item, len(items))
	for i, it := range items {
		out[i] = metricstest.Item{Key: it.key, ValueJSON: it.value}
		if parts := strings.Split(it.key, "\x00"); len(parts) > 1 || strings.HasPrefix(it.key, "core:") {
			parts[0] = strings.TrimPrefix(parts[0], "core:")
			out[i] = metricstest.Item{Nested: parts, ValueJSON: it.value}
		}
	}
	return metricstest.History(out...)
}

func wbExit(code int32) []byte { return metricstest.Exit(code) }

func readWandbBytes(t *testing.T, data []byte, stepKey string) ([]Record, *WandbTail) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run-x.wandb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewWandbTail(path, stepKey)
	recs, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	return recs, r
}

func TestWandbValues(t *testing.T) {
	row0 := wbHistory(wbItem{"_step", "0"}, wbItem{"_runtime", "1.5"}, wbItem{"_timestamp", "1700000000.1"},
		wbItem{"reward", "NaN"}, wbItem{"loss", "Infinity"}, wbItem{"kl", "-Infinity"}, wbItem{"lr", "3e-4"})
	row1 := wbHistory(wbItem{"core:train/loss", "2"}, wbItem{"_step", "1"}, wbItem{"note", `"text"`},
		wbItem{"flag", "true"}, wbItem{"none", "null"}, wbItem{"list", "[1,2]"}, wbItem{"hist", `{"_type":"histogram","values":[1]}`},
		wbItem{"tbl\x00_type", `"table-file"`}, wbItem{"tbl\x00size", "12"}, wbItem{"opt\x00lr", "0.5"}, wbItem{"hex", "0x10"}, wbItem{"", "1"})
	row2 := wbHistory(wbItem{"_step", "2"}, wbItem{"img", `{"_type":"image-file"}`}) // no values: not a record
	w := newWBWriter().
		record(pbBytes(nil, 21, nil)). // header record
		record(row0).
		record(pbBytes(nil, 99, []byte("a record type from the future"))).
		record(row1).
		record(row2).
		record(wbExit(-1))
	recs, r := readWandbBytes(t, w.b, "")
	if len(recs) != 2 {
		t.Fatalf("records = %+v, want 2", recs)
	}
	v := recs[0].Values
	if recs[0].Step != 0 || len(v) != 4 || !math.IsNaN(v["reward"]) || !math.IsInf(v["loss"], 1) || !math.IsInf(v["kl"], -1) || v["lr"] != 3e-4 {
		t.Errorf("row 0 = %+v, want step 0, reward NaN, loss +Inf, kl -Inf, lr 3e-4 and no _runtime or _timestamp", recs[0])
	}
	v = recs[1].Values
	if recs[1].Step != 1 || len(v) != 2 || v["train/loss"] != 2 || v["opt/lr"] != 0.5 {
		t.Errorf("row 1 = %+v, want step 1, train/loss 2, opt/lr 0.5", recs[1])
	}
	st := r.Stats()
	// note, flag, none, list, hist, tbl/_type, tbl/size, hex, a nameless item, img
	if st.Records != 2 || st.Malformed != 0 || st.Skipped != 10 || !strings.Contains(st.SkippedKeys, "hist") || !strings.HasPrefix(st.SkippedKeys, `"", flag`) || !strings.HasSuffix(st.SkippedKeys, "note and 2 more") {
		t.Errorf("stats = %+v, want 2 records, 0 malformed, 10 skipped, named from \"\", flag to note and 2 more", st)
	}
	if code, ok := r.ExitCode(); !ok || code != -1 {
		t.Errorf("exit code = %d, %v; want -1", code, ok)
	}
}

func TestWandbStepKey(t *testing.T) {
	w := newWBWriter().
		record(wbHistory(wbItem{"_step", "0"}, wbItem{"loss", "1"})). // before any global_step: step 0
		record(wbHistory(wbItem{"_step", "1"}, wbItem{"global_step", "2048"}, wbItem{"reward", "1"})).
		record(wbHistory(wbItem{"_step", "2"}, wbItem{"reward/time", "1"})). // no global_step: the last one
		record(wbHistory(wbItem{"_step", "3"}, wbItem{"global_step", "4096.0"}, wbItem{"reward", "2"})).
		record(wbHistory(wbItem{"_step", "4"}, wbItem{"global_step", "1024"}, wbItem{"reward", "3"})). // backwards
		record(wbHistory(wbItem{"_step", "5"}, wbItem{"global_step", "1.5"}, wbItem{"reward", "3"})).  // not an integer
		record(wbHistory(wbItem{"_step", "6"}, wbItem{"global_step", "8192"}, wbItem{"reward", "4"}))
	recs, r := readWandbBytes(t, w.b, "global_step")
	var steps []int64
	for _, rec := range recs {
		steps = append(steps, rec.Step)
		if _, ok := rec.Values["global_step"]; ok {
			t.Errorf("step %d: the step key is among the values", rec.Step)
		}
	}
	if want := []int64{0, 2048, 2048, 4096, 8192}; !equalInts(steps, want) {
		t.Errorf("steps = %v, want %v", steps, want)
	}
	st := r.Stats()
	if st.Malformed != 2 || !strings.Contains(st.LastError, "global_step: got 1.5") || !strings.Contains(st.Steps, "global_step") {
		t.Errorf("stats = %+v, want 2 malformed (backwards, 1.5) and steps naming global_step", st)
	}
	recs, r = readWandbBytes(t, w.b, "")
	if len(recs) != 7 || recs[6].Step != 6 || r.Stats().Steps != StepsWandbLog {
		t.Errorf("_step: %d records, stats %+v; want 7 ending at step 6, steps %q", len(recs), r.Stats(), StepsWandbLog)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWandbFraming(t *testing.T) {
	big := make([]wbItem, 0, 3000) // a record spanning FIRST, MIDDLE… LAST over three blocks
	big = append(big, wbItem{"_step", "1"})
	for i := range 3000 {
		big = append(big, wbItem{"k" + strings.Repeat("x", 20) + string(rune('a'+i%26)), "1"})
	}
	w := newWBWriter().record(wbHistory(wbItem{"_step", "0"}, wbItem{"r", "1"})).record(wbHistory(big...)).
		record(wbHistory(wbItem{"_step", "2"}, wbItem{"r", "2"}))
	var l wandbLog
	l.feed(w.b)
	for {
		if _, ok := l.next(); !ok {
			break
		}
	}
	if l.chunks[wandbMiddle] == 0 || l.malformed != 0 || l.torn() != "" {
		t.Fatalf("chunks %v, %d malformed, torn %q: want a record in FIRST, MIDDLE and LAST chunks", l.chunks, l.malformed, l.torn())
	}
	recs, _ := readWandbBytes(t, w.b, "")
	if len(recs) != 3 || recs[2].Values["r"] != 2 {
		t.Fatalf("records = %d, want 3", len(recs))
	}

	t.Run("empty and header only", func(t *testing.T) {
		for _, data := range [][]byte{nil, newWBWriter().b} {
			recs, r := readWandbBytes(t, data, "")
			if st := r.Stats(); len(recs) != 0 || st.Malformed != 0 {
				t.Errorf("%d bytes: %d records, stats %+v; want none and no error", len(data), len(recs), st)
			}
		}
	})
	t.Run("not a run file", func(t *testing.T) {
		recs, r := readWandbBytes(t, []byte(`{"step": 1}`+"\n"), "")
		if st := r.Stats(); len(recs) != 0 || st.Malformed != 1 || !strings.Contains(st.LastError, "not a W&B run file") {
			t.Errorf("%d records, stats %+v; want one malformed: not a W&B run file", len(recs), st)
		}
	})
	t.Run("crc", func(t *testing.T) {
		bad := append([]byte(nil), w.b...)
		bad[wandbHeaderLen+wandbChunkHeader+3] ^= 0xff // the first record's data
		recs, r := readWandbBytes(t, bad, "")
		st := r.Stats()
		// The first block is skipped (the first record and the big one's FIRST chunk); its MIDDLE and
		// LAST chunks are dropped too, then the last record reads.
		if len(recs) != 1 || recs[0].Step != 2 || st.Malformed < 2 || !strings.Contains(st.LastError, "offset") {
			t.Errorf("records %+v, stats %+v: want the last record only, the damage counted with its offset", recs, st)
		}
		if !strings.Contains(st.LastError, "FIRST chunk is missing") {
			t.Errorf("last error %q", st.LastError)
		}
	})
	t.Run("torn", func(t *testing.T) {
		var ends []int64
		var l wandbLog
		l.feed(w.b)
		for {
			if _, ok := l.next(); !ok {
				break
			}
			ends = append(ends, l.end)
		}
		for _, cut := range []int64{ends[0] + 3, ends[0] + 40000, ends[1] - 1, ends[2] - 1} {
			recs, r := readWandbBytes(t, w.b[:cut], "")
			st := r.Stats()
			want := 1
			if cut > ends[1] {
				want = 2
			}
			if len(recs) != want || st.Malformed != 1 || !strings.Contains(st.LastError, "torn tail") ||
				!strings.Contains(st.LastError, "complete records end at") {
				t.Errorf("cut at %d: %d records, stats %+v; want %d and the torn tail counted", cut, len(recs), st, want)
			}
		}
		for _, cut := range ends {
			if _, r := readWandbBytes(t, w.b[:cut], ""); r.Stats().Malformed != 0 {
				t.Errorf("cut at a record's end %d: %+v, want no malformed", cut, r.Stats())
			}
		}
	})
}

// TestWandbRunDirs: under $WANDB_DIR the reader waits for the run file, follows it, and moves to a
// newer run directory once that holds a run file, after reading the rest of the old one.
func TestWandbRunDirs(t *testing.T) {
	root := t.TempDir()
	r := NewWandbTail(root, "")
	defer r.Close()
	poll := func() []Record {
		t.Helper()
		recs, err := r.Poll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if recs := poll(); len(recs) != 0 {
		t.Fatalf("no directory yet: %v", recs)
	}
	old := filepath.Join(root, "wandb", "offline-run-20240101_000000-aaaa")
	os.MkdirAll(filepath.Join(old, "files"), 0o755)
	os.Symlink(old, filepath.Join(root, "wandb", "latest-run"))
	if recs := poll(); len(recs) != 0 {
		t.Fatalf("no run file yet: %v", recs)
	}
	w := newWBWriter().record(wbHistory(wbItem{"_step", "0"}, wbItem{"r", "1"}))
	os.WriteFile(filepath.Join(old, "run-aaaa.wandb"), w.b, 0o644)
	if recs := poll(); len(recs) != 1 {
		t.Fatalf("records = %v, want 1", recs)
	}
	w.record(wbHistory(wbItem{"_step", "1"}, wbItem{"r", "2"}))
	os.WriteFile(filepath.Join(old, "run-aaaa.wandb"), w.b, 0o644)
	newer := filepath.Join(root, "wandb", "run-20240101_000100-bbbb")
	os.MkdirAll(newer, 0o755)
	os.WriteFile(filepath.Join(newer, "run-bbbb.wandb"), newWBWriter().record(wbHistory(wbItem{"_step", "5"}, wbItem{"r", "3"})).b, 0o644)
	recs := poll()
	if len(recs) != 2 || recs[0].Values["r"] != 2 || recs[1].Values["r"] != 3 {
		t.Fatalf("records = %v, want the old run's last row, then the new run's", recs)
	}
	if st := r.Stats(); !strings.Contains(st.Source, "run-bbbb.wandb") {
		t.Errorf("source %q, want the newer run file", st.Source)
	}
	if got, _ := WandbRunFile(newer); got != filepath.Join(newer, "run-bbbb.wandb") {
		t.Errorf("WandbRunFile(run dir) = %q", got)
	}
}

// TestAutoSource: auto settles on the source that yields first, and prefers TensorBoard when both do.
func TestAutoSource(t *testing.T) {
	wbRun := func(root string) {
		run := filepath.Join(root, "wandb", "run-20240101_000000-x")
		os.MkdirAll(run, 0o755)
		w := newWBWriter().record(wbHistory(wbItem{"_step", "0"}, wbItem{"reward", "1"}))
		os.WriteFile(filepath.Join(run, "run-x.wandb"), w.b, 0o644)
	}
	open := func(t *testing.T, root string) Reader {
		r, err := Open(ReaderConfig{Source: SourceAuto, WandbDir: root, TBDir: filepath.Join(root, "tb")})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("wandb", func(t *testing.T) {
		root := t.TempDir()
		r := open(t, root)
		defer r.Close()
		if recs, _ := r.Poll(); len(recs) != 0 {
			t.Fatal(recs)
		}
		wbRun(root)
		recs, err := r.Poll()
		if err != nil || len(recs) != 1 || !strings.HasPrefix(r.Stats().Source, "wandb (") {
			t.Fatalf("records %v, %v, stats %+v: want wandb's row", recs, err, r.Stats())
		}
	})
	t.Run("both", func(t *testing.T) {
		root := t.TempDir()
		wbRun(root)
		os.MkdirAll(filepath.Join(root, "tb"), 0o755)
		ev := tbEventBytes(7, "charts/episodic_return", 5)
		os.WriteFile(filepath.Join(root, "tb", "events.out.tfevents.1"), ev, 0o644)
		r := open(t, root)
		defer r.Close()
		recs, err := ReadAll(r)
		if err != nil || len(recs) != 1 || recs[0].Step != 7 || !strings.HasPrefix(r.Stats().Source, "tensorboard (") {
			t.Fatalf("records %v, %v, stats %+v: want TensorBoard's step 7", recs, err, r.Stats())
		}
	})
	if _, err := Open(ReaderConfig{Source: SourceJSONL, MetricsFile: "m", StepKey: "global_step"}); err == nil || !strings.Contains(err.Error(), "metrics.step_key") {
		t.Errorf("step_key with jsonl: %v", err)
	}
	if _, err := Open(ReaderConfig{Source: SourceWandb}); err == nil {
		t.Error("wandb without a directory: no error")
	}
}

// tbEventBytes is one TFRecord holding an Event with one simple_value at step.
func tbEventBytes(step int64, tag string, v float32) []byte {
	return tfrecord(eventBytes(step, simpleValue(tag, v)))
}
