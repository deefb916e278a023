package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// wandbCorpusDir is the corpus of real W&B run files beside the repository, resolved from the
// repository root; the test skips when it is absent.
func wandbCorpusDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "shared", "corpus", "wandb-runs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "EXPECTED.json")); err != nil {
		t.Skipf("the W&B run corpus (shared/corpus/wandb-runs beside the repository) is absent: %v", err)
	}
	return dir
}

// wandbExpected is one file's entry of the corpus's EXPECTED.json.
type wandbExpected struct {
	File                 string         `json:"file"`
	Bytes                int64          `json:"bytes"`
	Framing              string         `json:"framing"` // clean, truncated, empty
	CompleteRecordsEndAt *int64         `json:"complete_records_end_at"`
	HasExitRecord        bool           `json:"has_exit_record"`
	ExitCode             *int64         `json:"exit_code"`
	LastCompleteRecord   *string        `json:"last_complete_record"`
	RecordsByType        map[string]int `json:"records_by_type"`
	ChunksByType         map[string]int `json:"chunks_by_type"`
	HistoryRows          int            `json:"history_rows"`
	StepMin              *int64         `json:"step_min"`
	StepMax              *int64         `json:"step_max"`
	HistoryItemNameField map[string]int `json:"history_item_name_field"`
	MultiPartNestedItems int            `json:"history_items_with_multi_part_nested_key"`
	Keys                 []string       `json:"keys"`
	KeyRowCounts         map[string]int `json:"key_row_counts"`
	ObjectValuedKeys     []string       `json:"object_valued_keys"`
	Reward               *wandbReward   `json:"reward"`
}

type wandbReward struct {
	Key                   string
	First, Last, Min, Max float64
	Rows                  int
	SummaryValue          float64 `json:"summary_value"`
}

func loadWandbExpected(t *testing.T, dir string) []wandbExpected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "EXPECTED.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []wandbExpected `json:"files"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Files) == 0 {
		t.Fatal("EXPECTED.json lists no files")
	}
	return doc.Files
}

// wandbDecoded is what the decoder makes of a whole file, counted as EXPECTED.json counts.
type wandbDecoded struct {
	records      map[string]int
	chunks       map[string]int
	lastRecord   string
	history      int
	stepMin      int64
	stepMax      int64
	steps        bool
	nameField    map[string]int
	multiPart    int
	keyRows      map[string]int // names joined with "." as EXPECTED.json joins them
	objectValued map[string]bool
	exit         *int64
	end          int64
	torn         string
	malformed    int
}

func decodeWandbFile(t *testing.T, data []byte) wandbDecoded {
	t.Helper()
	d := wandbDecoded{records: map[string]int{}, chunks: map[string]int{}, nameField: map[string]int{},
		keyRows: map[string]int{}, objectValued: map[string]bool{}}
	var l wandbLog
	l.feed(data)
	var r wandbRecord
	for {
		b, ok := l.next()
		if !ok {
			break
		}
		if err := decodeWandbRecord(b, &r); err != nil {
			t.Fatalf("record ending at %d: %v", l.end, err)
		}
		name := wandbRecordNames[r.kind]
		d.records[name]++
		d.lastRecord = name
		switch r.kind {
		case wbRecExit:
			code := r.exitCode
			d.exit = &code
		case wbRecHistory:
			d.history++
			for _, it := range r.items {
				var key string
				if len(it.key) > 0 {
					d.nameField["key"]++
					key = string(it.key)
				} else {
					d.nameField["nested_key"]++
					parts := make([]string, len(it.nested))
					for i, p := range it.nested {
						parts[i] = string(p)
					}
					key = strings.Join(parts, ".")
					if len(parts) > 1 {
						d.multiPart++
					}
				}
				switch key {
				case wandbStepKey:
					x, ok := wandbNumber(it.value)
					if !ok {
						t.Fatalf("_step %q is not a number", it.value)
					}
					s := int64(x)
					if !d.steps || s < d.stepMin {
						d.stepMin = s
					}
					if !d.steps || s > d.stepMax {
						d.stepMax = s
					}
					d.steps = true
				case wandbRuntimeKey, wandbTimestampKey:
				default:
					d.keyRows[key]++
					if _, ok := wandbNumber(it.value); !ok {
						d.objectValued[key] = true
					}
				}
			}
		}
	}
	for typ, name := range []string{"", "FULL", "FIRST", "MIDDLE", "LAST"} {
		if typ > 0 {
			d.chunks[name] = l.chunks[typ]
		}
	}
	d.end, d.torn, d.malformed = l.end, l.torn(), l.malformed
	return d
}

// TestWandbCorpus decodes every run file of the corpus and checks it against EXPECTED.json: records
// and chunks by type, history rows, keys and rows per key, _step's range, the exit code, how the file
// ends; then reads it through WandbTail and checks the records against the same facts.
func TestWandbCorpus(t *testing.T) {
	dir := wandbCorpusDir(t)
	files := loadWandbExpected(t, dir)
	for _, e := range files {
		t.Run(e.File, func(t *testing.T) {
			path := filepath.Join(dir, filepath.FromSlash(e.File))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != e.Bytes {
				t.Fatalf("%d bytes, want %d", len(data), e.Bytes)
			}
			d := decodeWandbFile(t, data)
			checkWandbDecoded(t, e, d)
			checkWandbReader(t, e, path)
		})
	}
}

func checkWandbDecoded(t *testing.T, e wandbExpected, d wandbDecoded) {
	t.Helper()
	if d.malformed != 0 {
		t.Errorf("framing: %d malformed (last: %s), want 0: every chunk of the corpus verifies", d.malformed, d.lastRecord)
	}
	if !mapsEqual(d.records, e.RecordsByType) {
		t.Errorf("records by type = %v, want %v", d.records, e.RecordsByType)
	}
	if e.ChunksByType != nil && !mapsEqual(d.chunks, e.ChunksByType) {
		t.Errorf("chunks by type = %v, want %v", d.chunks, e.ChunksByType)
	}
	if e.LastCompleteRecord != nil && d.lastRecord != *e.LastCompleteRecord {
		t.Errorf("last complete record = %q, want %q", d.lastRecord, *e.LastCompleteRecord)
	}
	if d.history != e.HistoryRows {
		t.Errorf("history rows = %d, want %d", d.history, e.HistoryRows)
	}
	if e.StepMin != nil {
		if !d.steps || d.stepMin != *e.StepMin || d.stepMax != *e.StepMax {
			t.Errorf("_step %d..%d, want %d..%d", d.stepMin, d.stepMax, *e.StepMin, *e.StepMax)
		}
	} else if d.steps {
		t.Errorf("_step %d..%d, want no _step", d.stepMin, d.stepMax)
	}
	if !mapsEqual(d.nameField, e.HistoryItemNameField) {
		t.Errorf("history item name fields = %v, want %v", d.nameField, e.HistoryItemNameField)
	}
	if d.multiPart != e.MultiPartNestedItems {
		t.Errorf("multi-part nested_key items = %d, want %d", d.multiPart, e.MultiPartNestedItems)
	}
	if !mapsEqual(d.keyRows, e.KeyRowCounts) {
		t.Errorf("rows per key = %v, want %v", d.keyRows, e.KeyRowCounts)
	}
	keys := sortedKeysOf(d.keyRows)
	if !slices.Equal(keys, e.Keys) {
		t.Errorf("keys = %q, want %q", keys, e.Keys)
	}
	if obj := sortedKeysOf(d.objectValued); !slices.Equal(obj, e.ObjectValuedKeys) && len(obj)+len(e.ObjectValuedKeys) > 0 {
		t.Errorf("object-valued keys = %q, want %q", obj, e.ObjectValuedKeys)
	}
	switch {
	case e.HasExitRecord && (d.exit == nil || e.ExitCode == nil || *d.exit != *e.ExitCode):
		t.Errorf("exit code = %v, want %v", ptrString(d.exit), ptrString(e.ExitCode))
	case !e.HasExitRecord && d.exit != nil:
		t.Errorf("exit code = %d, want no exit record", *d.exit)
	}
	switch e.Framing {
	case "truncated":
		if d.torn == "" {
			t.Errorf("the file reads as ending cleanly, want a torn tail")
		}
		if e.CompleteRecordsEndAt == nil || d.end != *e.CompleteRecordsEndAt {
			t.Errorf("complete records end at %d, want %v", d.end, ptrString(e.CompleteRecordsEndAt))
		}
	case "clean", "empty":
		if d.torn != "" {
			t.Errorf("torn tail %q, want a clean end", d.torn)
		}
		if e.CompleteRecordsEndAt != nil && d.end != *e.CompleteRecordsEndAt {
			t.Errorf("complete records end at %d, want %d", d.end, *e.CompleteRecordsEndAt)
		}
	default:
		t.Errorf("EXPECTED.json framing %q: the test knows clean, truncated and empty", e.Framing)
	}
}

// checkWandbReader reads the file through WandbTail, given the file and its run directory, and checks
// the records against the expected keys, rows and reward series. EXPECTED.json joins a nested_key's
// elements with "."; the reader, as the script logged them, with "/": the corpus has no multi-part
// nested_key (checked above), so its names are the same.
func checkWandbReader(t *testing.T, e wandbExpected, path string) {
	t.Helper()
	for _, root := range []string{path, filepath.Dir(path)} {
		r := NewWandbTail(root, "")
		recs, err := ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
		st := r.Stats()
		rows := map[string]int{}
		var lastStep int64 = -1
		for _, rec := range recs {
			if rec.Step < lastStep {
				t.Errorf("step %d after %d", rec.Step, lastStep)
			}
			lastStep = rec.Step
			for k := range rec.Values {
				rows[k]++
			}
		}
		want := map[string]int{}
		skipped := 0
		for k, n := range e.KeyRowCounts {
			if slices.Contains(e.ObjectValuedKeys, k) {
				skipped += n
				continue
			}
			want[k] = n
		}
		if !mapsEqual(rows, want) {
			t.Errorf("%s: rows per value = %v, want %v", root, rows, want)
		}
		if st.Records != len(recs) || st.Skipped != skipped {
			t.Errorf("%s: stats %+v, want %d records, %d skipped", root, st, len(recs), skipped)
		}
		if skipped > 0 && (st.SkippedKeys == "" || !strings.Contains(st.SkippedKeys, e.ObjectValuedKeys[0])) {
			t.Errorf("%s: skipped keys %q, want them to name %q", root, st.SkippedKeys, e.ObjectValuedKeys[0])
		}
		if e.StepMin != nil && len(recs) > 0 && (recs[0].Step < *e.StepMin || lastStep != *e.StepMax) {
			t.Errorf("%s: steps %d..%d, want within %d..%d ending at the last", root, recs[0].Step, lastStep, *e.StepMin, *e.StepMax)
		}
		if len(recs) > 0 && st.Steps != StepsWandbLog {
			t.Errorf("%s: steps %q, want %q", root, st.Steps, StepsWandbLog)
		}
		wantMalformed := 0
		if e.Framing == "truncated" {
			wantMalformed = 1
			if !strings.Contains(st.LastError, "torn tail") || !strings.Contains(st.LastError, "complete records end at") {
				t.Errorf("%s: last error %q, want the torn tail and where the complete records end", root, st.LastError)
			}
		}
		if st.Malformed != wantMalformed {
			t.Errorf("%s: %d malformed (%s), want %d", root, st.Malformed, st.LastError, wantMalformed)
		}
		if code, ok := r.ExitCode(); ok != e.HasExitRecord || ok && code != *e.ExitCode {
			t.Errorf("%s: exit code %d, %v; want %v", root, code, ok, ptrString(e.ExitCode))
		}
		if e.Reward != nil {
			checkWandbReward(t, *e.Reward, recs)
		}
		if e.Bytes > 0 && !strings.Contains(st.Source, path) {
			t.Errorf("%s: source %q, want it to name %s", root, st.Source, path)
		}
	}
}

func checkWandbReward(t *testing.T, w wandbReward, recs []Record) {
	t.Helper()
	var got []float64
	for _, r := range recs {
		if v, ok := r.Values[w.Key]; ok {
			got = append(got, v)
		}
	}
	if len(got) != w.Rows {
		t.Fatalf("%s: %d rows, want %d", w.Key, len(got), w.Rows)
	}
	if got[0] != w.First || got[len(got)-1] != w.Last || slices.Min(got) != w.Min || slices.Max(got) != w.Max {
		t.Errorf("%s: %g → %g (%g..%g), want %g → %g (%g..%g)", w.Key, got[0], got[len(got)-1],
			slices.Min(got), slices.Max(got), w.First, w.Last, w.Min, w.Max)
	}
	if got[len(got)-1] != w.SummaryValue {
		t.Errorf("%s: last %g, want the summary's %g", w.Key, got[len(got)-1], w.SummaryValue)
	}
}

// TestWandbCorpusLiveTail replays each corpus file into a growing file under a WANDB_DIR layout in
// pieces of random size (fixed seed), cut also inside chunk headers, just before and after block
// boundaries and inside records, polling between writes: the rows must be exactly those of a
// whole-file read, and the torn tails the same.
func TestWandbCorpusLiveTail(t *testing.T) {
	dir := wandbCorpusDir(t)
	files := loadWandbExpected(t, dir)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, e := range files {
		t.Run(e.File, func(t *testing.T) {
			path := filepath.Join(dir, filepath.FromSlash(e.File))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			whole := NewWandbTail(path, "")
			want, err := ReadAll(whole)
			if err != nil {
				t.Fatal(err)
			}
			whole.Finish()
			cuts := wandbCuts(t, data, rng)
			if testing.Short() && len(cuts) > 400 {
				cuts = thinCuts(cuts, 400)
			}
			got, st := replayWandb(t, data, cuts)
			if !recordsEqual(got, want) {
				t.Errorf("live tail: %d records, want the whole-file read's %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			if ws := whole.Stats(); st.Malformed != ws.Malformed || st.Records != ws.Records || st.Skipped != ws.Skipped {
				t.Errorf("live tail stats %+v, want %+v", st, ws)
			}
		})
	}
}

// wandbCuts returns the offsets at which the replay writes: random pieces of 1 B to 40 KiB, plus each
// block boundary and the bytes around it, 3 bytes into chunk headers and the middle of records.
func wandbCuts(t *testing.T, data []byte, rng *rand.Rand) []int {
	set := map[int]bool{}
	for at := 0; at < len(data); {
		n := 1 + rng.IntN(40<<10)
		if rng.IntN(4) == 0 {
			n = 1 + rng.IntN(16)
		}
		at += n
		set[min(at, len(data))] = true
	}
	for b := wandbBlock; b < len(data); b += wandbBlock {
		for _, d := range []int{-4, -1, 0, 1, 3, 8} {
			if b+d > 0 && b+d < len(data) {
				set[b+d] = true
			}
		}
	}
	var l wandbLog
	l.feed(data)
	prev := l.end
	for i := 0; ; i++ {
		if _, ok := l.next(); !ok {
			break
		}
		if i%7 == 0 { // inside the next chunk's header, and inside the record just read
			set[int(min(l.end+3, int64(len(data))))] = true
			set[int((prev+l.end)/2)] = true
		}
		prev = l.end
	}
	set[len(data)] = true
	cuts := make([]int, 0, len(set))
	for c := range set {
		if c > 0 {
			cuts = append(cuts, c)
		}
	}
	sort.Ints(cuts)
	return cuts
}

// thinCuts keeps n of the cuts, evenly spread, and the last.
func thinCuts(cuts []int, n int) []int {
	out := make([]int, 0, n+1)
	for i := 0; i < n; i++ {
		out = append(out, cuts[i*len(cuts)/n])
	}
	if out[len(out)-1] != cuts[len(cuts)-1] {
		out = append(out, cuts[len(cuts)-1])
	}
	return out
}

// replayWandb writes data into $WANDB_DIR/wandb/run-…/run-x.wandb up to each cut, polling a
// WandbTail of $WANDB_DIR after each write and once before the run directory exists, and returns what
// it read, Finish included.
func replayWandb(t *testing.T, data []byte, cuts []int) ([]Record, ReaderStats) {
	t.Helper()
	root := t.TempDir()
	r := NewWandbTail(root, "")
	defer r.Close()
	var got []Record
	poll := func() {
		recs, err := r.Poll()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, recs...)
	}
	poll()
	run := filepath.Join(root, "wandb", "run-20240101_000000-x")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	poll()
	f, err := os.Create(filepath.Join(run, "run-x.wandb"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := 0
	for _, c := range cuts {
		if _, err := f.Write(data[at:c]); err != nil {
			t.Fatal(err)
		}
		at = c
		poll()
	}
	poll()
	got = append(got, r.Finish()...)
	return got, r.Stats()
}

func recordsEqual(a, b []Record) bool {
	return firstDiff(a, b) < 0
}

// firstDiff is the index of the first record that differs (NaN equals NaN), -1 when none does.
func firstDiff(a, b []Record) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i].Step != b[i].Step || len(a[i].Values) != len(b[i].Values) {
			return i
		}
		for k, x := range a[i].Values {
			y, ok := b[i].Values[k]
			if !ok || x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				return i
			}
		}
	}
	return -1
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ptrString(p *int64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// TestWandbCorpusDamage cuts a real run file inside a history record (a killed writer) and flips a
// byte in the middle of it (a damaged chunk): the cut file gives the whole file's rows up to the last
// complete record and one malformed torn tail naming where the complete records end; the damaged one
// loses the rest of that block only, and reads every row after it.
func TestWandbCorpusDamage(t *testing.T) {
	dir := wandbCorpusDir(t)
	path := filepath.Join(dir, "conceptppo", "run-20230723_093735-mxaehod4", "run-mxaehod4.wandb")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := readWandbPieces(t, data, -1)
	// The history records' ends, and the number of rows up to each.
	var l wandbLog
	l.feed(data)
	var r wandbRecord
	type end struct {
		start, end int64
		rows       int
	}
	var hist []end
	prev := l.end
	for {
		b, ok := l.next()
		if !ok {
			break
		}
		if decodeWandbRecord(b, &r) == nil && r.kind == wbRecHistory {
			hist = append(hist, end{prev, l.end, len(hist) + 1})
		}
		prev = l.end
	}
	h := hist[len(hist)/2]
	cut := (h.start + h.end) / 2
	got, st := readWandbPieces(t, data[:cut], -1)
	if !recordsEqual(got, whole[:h.rows-1]) {
		t.Errorf("cut at %d: %d records, want the whole file's first %d", cut, len(got), h.rows-1)
	}
	if want := fmt.Sprintf("complete records end at %d", h.start); st.Malformed != 1 || !strings.Contains(st.LastError, want) {
		t.Errorf("cut at %d: stats %+v, want one malformed saying %q", cut, st, want)
	}

	bad := append([]byte(nil), data...)
	at := (h.start + h.end) / 2
	bad[at] ^= 0x5a
	got, st = readWandbPieces(t, bad, -1)
	nextBlock := (at/wandbBlock + 1) * wandbBlock
	if len(hist) != len(whole) {
		t.Fatalf("%d history records, %d rows: the test wants one row per record", len(hist), len(whole))
	}
	// Lost: the record holding the flipped byte and every record starting in the rest of its block.
	var want []Record
	for i, e := range hist {
		if !(e.end > at && e.start < nextBlock) {
			want = append(want, whole[i])
		}
	}
	t.Logf("byte %d flipped: %d of %d records, %d malformed: %s", at, len(got), len(whole), st.Malformed, st.LastError)
	if st.Malformed < 1 || !strings.Contains(st.LastError, "offset") || len(want) == len(whole) || !recordsEqual(got, want) {
		t.Errorf("byte %d flipped: %d records, want the whole file's %d less the %d of the damaged block; stats %+v",
			at, len(got), len(whole), len(whole)-len(want), st)
	}
}
