package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxLineBytes is the longest metrics line a JSONLTail reads; a longer one is skipped and counted as
// malformed, so a runaway trainer cannot make the worker buffer without bound.
const MaxLineBytes = 1 << 20

// readChunk is how much JSONLTail asks the file for at a time.
const readChunk = 256 << 10

// JSONLTail follows a metrics file that a trainer appends JSON lines to (docs/trainer-contract.md). Each Poll returns
// the records of the complete lines written since the previous Poll. It is not safe for concurrent use.
//
// A file that does not exist yet holds no records. A partial last line is kept until its newline
// arrives. Blank lines are skipped. Lines that do not parse, that are longer than MaxLineBytes, or
// whose step is lower than the previous record's are counted in Stats().Malformed and dropped: a
// malformed line is never fatal. A file truncated or replaced under the same path is read again from
// its start, as a new run of the trainer.
type JSONLTail struct {
	path     string
	f        *os.File
	off      int64  // bytes of f consumed so far
	pending  []byte // the start of a line whose newline has not arrived
	skipping bool   // inside a line longer than MaxLineBytes, dropping until its newline
	line     int64  // number of the last complete line, for error messages
	lastStep int64  // step of the last accepted record, -1 before the first
	chunk    []byte // read buffer, reused
	stats    ReaderStats
	parser   lineParser
	mapping  Mapping // applied to every record; nil keeps keys as written
}

// NewJSONLTail returns a tail of the metrics file at path. Nothing is opened until the first Poll.
func NewJSONLTail(path string) *JSONLTail {
	return &JSONLTail{path: path, lastStep: -1, parser: lineParser{intern: map[string]string{}}}
}

// Poll returns the records of the complete lines appended since the previous Poll, in file order.
// Errors are I/O errors other than the file not existing yet; the records read before one are returned
// with it.
func (t *JSONLTail) Poll() ([]Record, error) {
	if t.chunk == nil {
		t.chunk = make([]byte, readChunk)
	}
	var recs []Record
	if t.f != nil {
		cur, err1 := t.f.Stat()
		now, err2 := os.Stat(t.path)
		switch {
		case err1 != nil || err2 != nil || !os.SameFile(cur, now):
			// The trainer moved to a new file (rotation, rename): first take in what the old one
			// received since the last poll — a NaN record among it must not go unseen — then follow the
			// new one from its start.
			var err error
			recs, err = t.readRest(recs)
			t.f.Close()
			t.f = nil
			t.restart()
			if err != nil {
				return recs, err
			}
		case now.Size() < t.off: // truncated: read it again from its start
			t.restart()
		}
	}
	if t.f == nil {
		f, err := os.Open(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		t.f = f
	}
	return t.readRest(recs)
}

// Stats returns the counts of records read and lines dropped so far.
func (t *JSONLTail) Stats() ReaderStats { return t.stats }

// Close releases the file. Poll may be called again afterwards and resumes where it stopped.
func (t *JSONLTail) Close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// readRest reads the open file from the current offset to its end.
func (t *JSONLTail) readRest(recs []Record) ([]Record, error) {
	for {
		n, err := t.f.ReadAt(t.chunk, t.off)
		t.off += int64(n)
		recs = t.consume(t.chunk[:n], recs)
		if err == io.EOF || (err == nil && n < len(t.chunk)) {
			return recs, nil
		}
		if err != nil {
			return recs, fmt.Errorf("read metrics %s: %w", t.path, err)
		}
	}
}

// restart forgets the position in the file: the trainer started writing a new file.
func (t *JSONLTail) restart() {
	t.off = 0
	t.pending = t.pending[:0]
	t.skipping = false
	t.lastStep = -1
}

// consume splits data into lines, joining the pending partial line, and parses each complete one.
func (t *JSONLTail) consume(data []byte, recs []Record) []Record {
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			t.keepPartial(data)
			return recs
		}
		part := data[:nl+1]
		data = data[nl+1:]
		if t.skipping {
			t.skipping = false
			t.line++
			continue
		}
		line := part
		if len(t.pending) > 0 {
			t.pending = append(t.pending, part...)
			line = t.pending
		}
		if len(line)-1 > MaxLineBytes {
			t.pending = t.pending[:0]
			t.line++
			t.tooLong()
			continue
		}
		recs = t.parseLine(line[:len(line)-1], recs)
		t.pending = t.pending[:0]
	}
	return recs
}

// keepPartial holds the start of a line until its newline arrives, dropping it once it is too long.
func (t *JSONLTail) keepPartial(data []byte) {
	if t.skipping {
		return
	}
	if len(t.pending)+len(data) > MaxLineBytes {
		t.pending = t.pending[:0]
		t.skipping = true
		t.tooLong()
		return
	}
	t.pending = append(t.pending, data...)
}

func (t *JSONLTail) tooLong() {
	t.stats.Malformed++
	t.stats.LastError = fmt.Sprintf("%s:%d: line longer than %d bytes, skipped", t.path, t.line+1, MaxLineBytes)
}

// parseLine parses one complete line (newline removed) and appends its record when it is well formed.
func (t *JSONLTail) parseLine(line []byte, recs []Record) []Record {
	t.line++
	if len(bytes.TrimSpace(line)) == 0 {
		return recs
	}
	t.parser.b, t.parser.i = line, 0
	rec, err := t.parser.record()
	t.parser.b = nil
	if err == nil && rec.Step < t.lastStep {
		err = fmt.Errorf("step: got %d, want ≥ %d (the previous record's step)", rec.Step, t.lastStep)
	}
	if err != nil {
		t.stats.Malformed++
		t.stats.LastError = fmt.Sprintf("%s:%d: %v", t.path, t.line, err)
		return recs
	}
	t.lastStep = rec.Step
	t.stats.Records++
	if t.mapping != nil {
		rec = t.mapping.Apply(rec)
	}
	return append(recs, rec)
}
