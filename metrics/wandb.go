package metrics

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// W&B history keys that are not metrics: the row counter, the seconds since wandb.init and the wall
// clock.
const (
	wandbStepKey      = "_step"
	wandbRuntimeKey   = "_runtime"
	wandbTimestampKey = "_timestamp"
)

// StepsWandbLog is what _step counts.
const StepsWandbLog = "wandb.log calls (W&B's _step, not the trainer's step: set trainer.metrics.step_key to a logged step such as global_step)"

// maxSkippedNames bounds the names of skipped keys Stats reports.
const maxSkippedNames = 8

// wandbReadChunk is how much WandbTail reads from the run file at a time.
const wandbReadChunk = 1 << 20

// WandbTail follows the W&B run file (run-<id>.wandb) a trainer writes through wandb.init and
// wandb.log, and returns one record per history row (one wandb.log call). It is not safe for
// concurrent use.
//
// The path it is given is the trainer's $WANDB_DIR, a run directory or a .wandb file. Under a
// directory it follows the newest run directory (wandb/run-YYYYMMDD_HHMMSS-<id> or
// offline-run-…, by the time in its name) that holds a .wandb file; until one exists Poll returns
// nothing. When a newer run directory appears (the trainer called wandb.init again), the rest of the
// current file is read, then the new file is followed from its start; its steps continue the same
// series, so rows stepping back below the old run's last step are dropped as malformed.
//
// A row's values are its numeric items, named as the script logged them (HistoryItem.key, or the
// nested_key elements joined with "/"), through the mapping. _step, _runtime and _timestamp are not
// values. Items that are not numbers — media, histograms and tables (JSON objects, or wandb-core's
// multi-element nested_key items of an object with a _type), arrays, strings, booleans, null — are
// left out and counted in Stats().Skipped. NaN, Infinity and -Infinity are values. A row left with no
// values is not returned.
//
// The step is _step (the count of wandb.log calls) or, with a step key, that logged key's value (as
// W&B's define_metric(step_metric=...)); a row without it takes the last value seen (0 before the
// first). A row whose step is not an integer ≥ 0 or is lower than the previous row's is dropped and
// counted as malformed, as JSONLTail does.
//
// Framing damage is counted as malformed (wandbLog). A record that is not yet whole is waited for;
// Finish, once the trainer has exited, counts a torn tail (the file ends inside a record) as malformed.
// A file truncated or replaced under the same path is read again from its start.
type WandbTail struct {
	root     string
	stepKey  string // "" → _step
	mapping  Mapping
	stats    ReaderStats
	file     *wandbFile
	rec      wandbRecord
	lastStep int64 // step of the last returned row, -1 before the first
	keyStep  int64 // the step key's last value
	skipped  map[string]bool
	names    map[string]string // interned value names
	chunk    []byte
	media    map[string]bool // reused by row: nested_key prefixes of objects with a _type
	// exit is the code of the run's exit record, once one was read.
	exit *int64
}

// wandbFile is the reading state of one run file.
type wandbFile struct {
	path    string
	f       *os.File
	off     int64 // bytes read and fed to log
	log     wandbLog
	counted int  // log.malformed already added to the stats
	torn    bool // Finish counted the torn tail
}

// NewWandbTail returns a tail of the W&B run under root ($WANDB_DIR, a run directory or a .wandb
// file); stepKey names the logged key that holds the step ("" for _step). Nothing is opened until
// Poll.
func NewWandbTail(root, stepKey string) *WandbTail {
	return &WandbTail{root: root, stepKey: stepKey, lastStep: -1, skipped: map[string]bool{},
		names: map[string]string{}}
}

// Stats returns the counts of records returned and dropped so far.
func (t *WandbTail) Stats() ReaderStats {
	st := t.stats
	if len(t.skipped) > 0 {
		names := make([]string, 0, len(t.skipped))
		for k := range t.skipped {
			names = append(names, k)
		}
		sort.Strings(names)
		more := ""
		if len(names) > maxSkippedNames {
			more = fmt.Sprintf(" and %d more", len(names)-maxSkippedNames)
			names = names[:maxSkippedNames]
		}
		st.SkippedKeys = strings.Join(names, ", ") + more
	}
	if t.file != nil {
		st.Source = SourceWandb + " (" + t.file.path + ")"
	}
	return st
}

// Close releases the run file. Poll may be called again afterwards and resumes where it stopped.
func (t *WandbTail) Close() error {
	if t.file == nil || t.file.f == nil {
		return nil
	}
	err := t.file.f.Close()
	t.file.f = nil
	return err
}

// Poll returns the rows completed since the previous Poll.
func (t *WandbTail) Poll() ([]Record, error) {
	path, err := WandbRunFile(t.root)
	if err != nil {
		return nil, err
	}
	var recs []Record
	if t.file != nil && path != "" && path != t.file.path {
		// A newer run: take in what the current file still holds, then follow the new one.
		recs, err = t.read(recs)
		t.finishFile()
		t.Close()
		t.file = nil
		if err != nil {
			return recs, err
		}
	}
	if t.file == nil {
		if path == "" {
			return recs, nil
		}
		t.file = &wandbFile{path: path}
	}
	return t.read(recs)
}

// Finish counts a torn tail of the run file as malformed: the trainer has exited, the record it was
// writing will not be completed. It returns no records: WandbTail holds none back.
func (t *WandbTail) Finish() []Record {
	t.finishFile()
	return nil
}

func (t *WandbTail) finishFile() {
	f := t.file
	if f == nil || f.torn {
		return
	}
	if why := f.log.torn(); why != "" {
		f.torn = true
		t.stats.Malformed++
		t.stats.LastError = fmt.Sprintf("%s: torn tail: %s", f.path, why)
	}
}

// ExitCode returns the exit code of the run's exit record, and whether one was read.
func (t *WandbTail) ExitCode() (int64, bool) {
	if t.exit == nil {
		return 0, false
	}
	return *t.exit, true
}

// read decodes what was appended to the current file since the last read.
func (t *WandbTail) read(recs []Record) ([]Record, error) {
	f := t.file
	if err := t.open(f); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return recs, nil
		}
		return recs, err
	}
	if t.chunk == nil {
		t.chunk = make([]byte, wandbReadChunk)
	}
	for {
		n, err := f.f.ReadAt(t.chunk, f.off)
		f.off += int64(n)
		if n > 0 {
			f.log.feed(t.chunk[:n])
			recs = t.decode(f, recs)
		}
		if err == io.EOF || (err == nil && n < len(t.chunk)) {
			return recs, nil
		}
		if err != nil {
			return recs, fmt.Errorf("read %s: %w", f.path, err)
		}
	}
}

// open opens the file on first use, and again from its start when it was truncated or replaced.
func (t *WandbTail) open(f *wandbFile) error {
	if f.f != nil {
		cur, err1 := f.f.Stat()
		now, err2 := os.Stat(f.path)
		switch {
		case err1 != nil || err2 != nil || !os.SameFile(cur, now):
			f.f.Close()
			f.f = nil
			t.restart(f)
		case now.Size() < f.off:
			t.restart(f)
			return nil
		default:
			return nil
		}
	}
	h, err := os.Open(f.path)
	if err != nil {
		return err
	}
	f.f = h
	return nil
}

// restart reads the file again from its start: the trainer began a new one under the same path.
func (t *WandbTail) restart(f *wandbFile) {
	f.off, f.log, f.counted, f.torn = 0, wandbLog{}, 0, false
	t.lastStep, t.keyStep = -1, 0
}

// decode turns the whole records fed so far into rows.
func (t *WandbTail) decode(f *wandbFile, recs []Record) []Record {
	for {
		b, ok := f.log.next()
		if !ok {
			break
		}
		if err := decodeWandbRecord(b, &t.rec); err != nil {
			t.malformed(f, fmt.Sprintf("offset %d: record: %v", f.log.end, err))
			continue
		}
		switch t.rec.kind {
		case wbRecHistory:
			if rec, ok := t.row(f); ok {
				recs = append(recs, rec)
			}
		case wbRecExit:
			code := t.rec.exitCode
			t.exit = &code
		}
	}
	if f.log.malformed > f.counted {
		t.stats.Malformed += f.log.malformed - f.counted
		f.counted = f.log.malformed
		t.stats.LastError = f.path + ": " + f.log.lastError
	}
	return recs
}

func (t *WandbTail) malformed(f *wandbFile, why string) {
	t.stats.Malformed++
	t.stats.LastError = f.path + ": " + why
}

// row turns the history record in t.rec into a record; false when it is dropped or has no values.
func (t *WandbTail) row(f *wandbFile) (Record, bool) {
	items := t.rec.items
	clear(t.media)
	for i := range items {
		if it := &items[i]; len(it.key) == 0 && len(it.nested) > 1 && string(it.nested[len(it.nested)-1]) == "_type" {
			if t.media == nil {
				t.media = map[string]bool{}
			}
			t.media[string(joinNested(it.nested[:len(it.nested)-1]))] = true
		}
	}
	stepName := t.stepKey
	if stepName == "" {
		stepName = wandbStepKey
	}
	rec := Record{Step: -1, Values: make(map[string]float64, len(items))}
	for i := range items {
		it := &items[i]
		name := t.intern(it)
		switch name {
		case wandbStepKey, wandbRuntimeKey, wandbTimestampKey, stepName:
			if name == stepName {
				step, err := t.stepOf(it.value)
				if err != nil {
					t.malformed(f, fmt.Sprintf("offset %d: history row: %v; row skipped", f.log.end, err))
					return Record{}, false
				}
				rec.Step = step
			}
			continue
		}
		if len(t.media) > 0 && len(it.key) == 0 && len(it.nested) > 1 && t.media[string(joinNested(it.nested[:len(it.nested)-1]))] {
			t.skip(name)
			continue
		}
		x, ok := wandbNumber(it.value)
		if !ok || name == "" {
			t.skip(name)
			continue
		}
		name, x = t.mapping.Lookup(name, x)
		rec.Values[name] = x
	}
	if rec.Step < 0 {
		rec.Step = t.keyStep // the row does not carry the step: the last value seen
	} else {
		t.keyStep = rec.Step
	}
	if rec.Step < t.lastStep {
		t.malformed(f, fmt.Sprintf("offset %d: history row: %s: got %d, want ≥ %d (the previous row's step); row skipped", f.log.end, stepName, rec.Step, t.lastStep))
		return Record{}, false
	}
	if len(rec.Values) == 0 {
		return Record{}, false
	}
	t.lastStep = rec.Step
	t.stats.Records++
	if t.stepKey == "" {
		t.stats.Steps = StepsWandbLog
	} else {
		t.stats.Steps = StepsTrainer + " (the logged key " + t.stepKey + ")"
	}
	return rec, true
}

// stepOf reads a step value: an integer ≥ 0, or a float with an integral value.
func (t *WandbTail) stepOf(v []byte) (int64, error) {
	x, ok := wandbNumber(v)
	if ok && x >= 0 && x == math.Trunc(x) && x < math.MaxInt64 {
		return int64(x), nil
	}
	name := t.stepKey
	if name == "" {
		name = wandbStepKey
	}
	return 0, fmt.Errorf("%s: got %.40s, want an integer ≥ 0", name, v)
}

func (t *WandbTail) skip(name string) {
	t.stats.Skipped++
	if name == "" {
		name = `""`
	}
	if len(t.skipped) < maxInterned {
		t.skipped[name] = true
	}
}

// intern returns the item's name, allocated once per distinct name.
func (t *WandbTail) intern(it *wandbItem) string {
	var b []byte
	switch {
	case len(it.key) > 0 || len(it.nested) == 0:
		b = it.key
	case len(it.nested) == 1:
		b = it.nested[0]
	default:
		b = joinNested(it.nested)
	}
	if s, ok := t.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(t.names) < maxInterned {
		t.names[s] = s
	}
	return s
}

func joinNested(parts [][]byte) []byte {
	var b []byte
	for i, p := range parts {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, p...)
	}
	return b
}

// WandbRunFile finds the run file under root: root itself when it is a file; else the newest
// .wandb file of root when it is a run directory; else that of the newest run directory under
// root/wandb or root (run-YYYYMMDD_HHMMSS-<id> or offline-run-…, ordered by the time in the name) that
// holds one. "" and no error when there is none yet.
func WandbRunFile(root string) (string, error) {
	st, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return root, nil
	}
	if p, err := wandbFileIn(root); p != "" || err != nil {
		return p, err
	}
	for _, d := range []string{filepath.Join(root, "wandb"), root} {
		runs, err := wandbRunDirs(d)
		if err != nil {
			return "", err
		}
		for i := len(runs) - 1; i >= 0; i-- {
			if p, err := wandbFileIn(runs[i]); p != "" || err != nil {
				return p, err
			}
		}
	}
	return "", nil
}

// IsWandbRunDir reports whether dir holds a .wandb file: a W&B run directory.
func IsWandbRunDir(dir string) bool {
	p, err := wandbFileIn(dir)
	return err == nil && p != ""
}

// wandbFileIn returns the last .wandb file of dir by name, "" if it has none.
func wandbFileIn(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	last := ""
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".wandb") {
			last = e.Name() // ReadDir sorts by name
		}
	}
	if last == "" {
		return "", nil
	}
	return filepath.Join(dir, last), nil
}

// wandbRunDirs lists the run directories in dir, oldest first.
func wandbRunDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return nil, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
				return nil, nil
			}
		}
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(strings.TrimPrefix(e.Name(), "offline-"), "run-") {
			names = append(names, e.Name())
		}
	}
	sort.SliceStable(names, func(i, j int) bool {
		a, b := strings.TrimPrefix(names[i], "offline-"), strings.TrimPrefix(names[j], "offline-")
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	for i, n := range names {
		names[i] = filepath.Join(dir, n)
	}
	return names, nil
}
