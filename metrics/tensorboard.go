package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// castagnoli is the CRC-32C table TFRecord framing checksums with.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is added to the rotated CRC by TFRecord's masking (tensorflow/core/lib/hash/crc32c.h).
const maskDelta = 0xa282ead8

// MaskedCRC returns the masked CRC-32C (Castagnoli) that TFRecord framing stores after the length and
// after the data: rotate the CRC right by 15 bits, then add 0xa282ead8 (mod 2³²).
func MaskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + maskDelta
}

// maxTFRecord bounds a record's declared length: a larger one means the length itself is corrupt.
const maxTFRecord = 64 << 20

// tfrecordHeader is the u64 little-endian length plus its masked CRC.
const tfrecordHeader = 12

// TensorBoardTail follows the TensorBoard event files (events.out.tfevents.*) a trainer writes under a
// directory, subdirectories included, and returns their scalars grouped by step. It is not safe for
// concurrent use.
//
// Files are read in path name order, each from where the previous Poll stopped. A partial record at
// the end of a file is waited for. A record whose data fails its CRC is counted in Stats().Malformed
// and skipped; a length that fails its CRC cannot be trusted, so the rest of that file is skipped
// (counted once) until the file is truncated or replaced, which restarts it from the top. Values whose
// tag was first seen with a plugin other than "scalars" (histograms, text, hparams, ...) are ignored.
//
// Scalars of one step arrive as separate events; they are grouped into one Record, which is returned
// when an event with another step arrives, or at the first Poll that finds no new data in that file.
type TensorBoardTail struct {
	dir     string
	files   map[string]*tbFile
	stats   ReaderStats
	mapping Mapping
	plugins map[string]string // tag → plugin name, remembered from the tag's first event
	tags    map[string]string // interned tag names
	ev      tbEvent
	// stepsPerIter, when > 0, turns the step of iteration i into (i+1) × stepsPerIter environment steps.
	stepsPerIter int64
	// iterations: the steps are the trainer's iteration count (rsl_rl), for Stats().Steps.
	iterations bool
	// groupIdle: how long a file goes without new bytes before its current step is taken as whole
	// (tbGroupIdle; tests of decoding set 0).
	groupIdle time.Duration
}

// tbFile is the reading state of one events file.
type tbFile struct {
	path    string
	f       *os.File
	off     int64
	buf     []byte // bytes read but not yet consumed: a partial record
	dead    bool   // a corrupt length was found; wait for a truncation or replacement
	group   Record
	grouped bool      // group holds values not yet returned
	lastNew time.Time // when bytes were last appended
}

// tbGroupIdle is how long a file must have had nothing appended before the step it was writing is
// taken as whole. torch's SummaryWriter flushes every 10 events, and frameworks log more scalars than
// that per step, so one poll that finds nothing new does not mean the step is complete.
const tbGroupIdle = time.Second

// NewTensorBoardTail returns a tail of the event files under dir. Nothing is opened until Poll.
func NewTensorBoardTail(dir string) *TensorBoardTail {
	return &TensorBoardTail{dir: dir, files: map[string]*tbFile{}, groupIdle: tbGroupIdle,
		plugins: map[string]string{}, tags: map[string]string{}}
}

// Stats returns the counts of records returned and TFRecords dropped so far.
func (t *TensorBoardTail) Stats() ReaderStats { return t.stats }

// Close releases every open file.
func (t *TensorBoardTail) Close() error {
	var errs []error
	for _, f := range t.files {
		if f.f != nil {
			errs = append(errs, f.f.Close())
			f.f = nil
		}
	}
	return errors.Join(errs...)
}

// Poll returns the records completed since the previous Poll, file by file in name order. A directory
// that does not exist yet holds no records.
func (t *TensorBoardTail) Poll() ([]Record, error) {
	paths, err := t.eventFiles()
	if err != nil {
		return nil, err
	}
	var recs []Record
	for _, p := range paths {
		f := t.files[p]
		if f == nil {
			f = &tbFile{path: p}
			t.files[p] = f
		}
		if recs, err = t.pollFile(f, recs); err != nil {
			return recs, err
		}
	}
	return recs, nil
}

// eventFiles lists the event files under the directory, sorted by path.
func (t *TensorBoardTail) eventFiles() ([]string, error) {
	var paths []string
	// A run directory given as a symbolic link (a shared log folder linked into a sweep's) is read
	// where it points: WalkDir does not follow its root.
	root := t.dir
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.Contains(d.Name(), "tfevents") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list event files in %s: %w", t.dir, err)
	}
	sort.Strings(paths)
	return paths, nil
}

// pollFile reads what was appended to one file and decodes its complete records.
func (t *TensorBoardTail) pollFile(f *tbFile, recs []Record) ([]Record, error) {
	if err := f.open(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return recs, nil
		}
		return recs, err
	}
	n, err := f.readNew()
	if err != nil {
		return recs, err
	}
	if n == 0 {
		if time.Since(f.lastNew) >= t.groupIdle {
			recs = t.flush(f, recs)
		}
		return recs, nil
	}
	f.lastNew = time.Now()
	return t.consume(f, recs), nil
}

// Finish returns the step each file was still grouping: the trainer has exited, nothing more comes.
func (t *TensorBoardTail) Finish() []Record {
	paths := make([]string, 0, len(t.files))
	for p := range t.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var recs []Record
	for _, p := range paths {
		recs = t.flush(t.files[p], recs)
	}
	return recs
}

// open opens the file on first use, and again from its start when it was truncated or replaced.
func (f *tbFile) open() error {
	if f.f != nil {
		cur, err1 := f.f.Stat()
		now, err2 := os.Stat(f.path)
		switch {
		case err1 != nil || err2 != nil || !os.SameFile(cur, now):
			f.f.Close()
			f.f = nil
			f.restart()
		case now.Size() < f.off:
			f.restart()
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

func (f *tbFile) restart() {
	f.off = 0
	f.buf = f.buf[:0]
	f.dead = false
}

// readNew appends the bytes written since the last read to f.buf.
func (f *tbFile) readNew() (int, error) {
	st, err := f.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", f.path, err)
	}
	size := st.Size() - f.off
	if size <= 0 || f.dead {
		return 0, nil
	}
	start := len(f.buf)
	f.buf = append(f.buf, make([]byte, size)...)
	n, err := f.f.ReadAt(f.buf[start:], f.off)
	f.buf = f.buf[:start+n]
	f.off += int64(n)
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("read %s: %w", f.path, err)
	}
	return n, nil
}

// consume decodes every complete TFRecord in f.buf and keeps the partial one at its end.
func (t *TensorBoardTail) consume(f *tbFile, recs []Record) []Record {
	b := f.buf
	for len(b) >= tfrecordHeader && !f.dead {
		n := binary.LittleEndian.Uint64(b)
		if MaskedCRC(b[:8]) != binary.LittleEndian.Uint32(b[8:12]) || n > maxTFRecord {
			f.dead = true
			t.malformed(f, "record length fails its CRC; rest of the file skipped")
			b = b[:0]
			break
		}
		total := tfrecordHeader + int(n) + 4
		if len(b) < total {
			break
		}
		data := b[tfrecordHeader : tfrecordHeader+int(n)]
		if MaskedCRC(data) != binary.LittleEndian.Uint32(b[tfrecordHeader+int(n):total]) {
			t.malformed(f, "record data fails its CRC; record skipped")
		} else if err := decodeEvent(data, &t.ev); err != nil {
			t.malformed(f, "event: "+err.Error())
		} else {
			recs = t.add(f, recs)
		}
		b = b[total:]
	}
	f.buf = append(f.buf[:0], b...)
	return recs
}

func (t *TensorBoardTail) malformed(f *tbFile, why string) {
	t.stats.Malformed++
	consumed := f.off - int64(len(f.buf))
	t.stats.LastError = fmt.Sprintf("%s: near offset %d: %s", f.path, consumed, why)
}

// add puts the scalars of the decoded event into f's group, returning the previous group first when
// the step changed.
func (t *TensorBoardTail) add(f *tbFile, recs []Record) []Record {
	ev := &t.ev
	for _, v := range ev.values {
		plugin, seen := t.plugins[string(v.tag)]
		if !seen {
			plugin = string(v.plugin)
			t.plugins[string(v.tag)] = plugin
		}
		if !v.scalar || (plugin != "" && plugin != "scalars") {
			continue
		}
		if t.otherAxis(string(v.tag)) {
			continue // the same value again on another step axis (rsl_rl's and rl_games' /time, rl_games' /iter)
		}
		if f.grouped && f.group.Step != ev.step {
			recs = t.flush(f, recs)
		}
		if !f.grouped {
			f.group = Record{Step: ev.step, Values: make(map[string]float64, 24)}
			f.grouped = true
		}
		name, x := t.mapping.Lookup(t.tagName(v.tag), v.value)
		f.group.Values[name] = x
	}
	return recs
}

// tagName returns the tag as a string, allocated once per distinct tag.
func (t *TensorBoardTail) tagName(tag []byte) string {
	if s, ok := t.tags[string(tag)]; ok {
		return s
	}
	s := string(tag)
	if len(t.tags) < maxInterned {
		t.tags[s] = s
	}
	return s
}

// flush returns f's pending group as a record.
func (t *TensorBoardTail) flush(f *tbFile, recs []Record) []Record {
	if !f.grouped {
		return recs
	}
	f.grouped = false
	t.stats.Records++
	rec := f.group
	switch {
	case t.stepsPerIter > 0:
		rec.Step = (rec.Step + 1) * t.stepsPerIter
		t.stats.Steps = fmt.Sprintf("%s (iteration × %d)", StepsEnv, t.stepsPerIter)
	case t.iterations:
		t.stats.Steps = StepsIterations
	default:
		t.stats.Steps = StepsTrainer + " (the event step)"
	}
	return append(recs, rec)
}

// otherAxisSuffixes mark a tag that repeats another tag's values on another step axis: wall-clock seconds
// (rsl_rl writes Train/mean_reward/time beside Train/mean_reward; rl_games rewards/time beside
// rewards/step) or epochs (rl_games' rewards/iter, whose other tags are keyed by frames). Such a tag is
// ignored when the tag it repeats (the base, or the base's /step) was seen before it, so two step axes
// are never interleaved.
var otherAxisSuffixes = []string{"/time", "/iter"}

// otherAxis reports whether tag repeats a tag already seen on another step axis.
func (t *TensorBoardTail) otherAxis(tag string) bool {
	for _, suffix := range otherAxisSuffixes {
		base, ok := strings.CutSuffix(tag, suffix)
		if !ok {
			continue
		}
		if _, seen := t.plugins[base]; seen {
			return true
		}
		if _, seen := t.plugins[base+"/step"]; seen {
			return true
		}
	}
	return false
}
