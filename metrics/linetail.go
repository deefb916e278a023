package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// lineTail follows a text file a process appends to and hands each complete line to a parser: the
// shared machinery of the console and CSV readers. A file that does not exist yet holds no lines; a
// partial last line is kept until its newline arrives; a line longer than MaxLineBytes is skipped
// without being buffered and reported through tooLong; a file truncated or replaced under the same
// path is read again from its start, after onRestart is called.
type lineTail struct {
	path     string
	f        *os.File
	off      int64
	pending  []byte
	skipping bool
	line     int64 // number of the last complete line, for error messages
	chunk    []byte
}

// lineSink receives what a lineTail reads.
type lineSink interface {
	// line is one complete line without its newline (nor a trailing carriage return); n is its number.
	line(b []byte, n int64)
	// tooLong is told about a line longer than MaxLineBytes, which was skipped.
	tooLong(n int64)
	// restart is told that the file was truncated or replaced: what follows is a new file.
	restart()
}

// poll reads what was appended since the last call and hands its complete lines to sink.
func (t *lineTail) poll(sink lineSink) error {
	if t.chunk == nil {
		t.chunk = make([]byte, readChunk)
	}
	if t.f != nil {
		cur, err1 := t.f.Stat()
		now, err2 := os.Stat(t.path)
		switch {
		case err1 != nil || err2 != nil || !os.SameFile(cur, now):
			// Replaced (rotation, rename): first take in what the old file received since the last
			// poll, then follow the new one from its start.
			err := t.readRest(sink)
			t.f.Close()
			t.f = nil
			t.reset()
			sink.restart()
			if err != nil {
				return err
			}
		case now.Size() < t.off:
			t.reset()
			sink.restart()
		}
	}
	if t.f == nil {
		f, err := os.Open(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		t.f = f
	}
	return t.readRest(sink)
}

func (t *lineTail) reset() {
	t.off = 0
	t.pending = t.pending[:0]
	t.skipping = false
	t.line = 0
}

func (t *lineTail) close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

func (t *lineTail) readRest(sink lineSink) error {
	for {
		n, err := t.f.ReadAt(t.chunk, t.off)
		t.off += int64(n)
		t.consume(t.chunk[:n], sink)
		if err == io.EOF || (err == nil && n < len(t.chunk)) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", t.path, err)
		}
	}
}

func (t *lineTail) consume(data []byte, sink lineSink) {
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			if t.skipping {
				return
			}
			if len(t.pending)+len(data) > MaxLineBytes {
				t.pending = t.pending[:0]
				t.skipping = true
				sink.tooLong(t.line + 1)
				return
			}
			t.pending = append(t.pending, data...)
			return
		}
		part := data[:nl]
		data = data[nl+1:]
		t.line++
		if t.skipping {
			t.skipping = false
			continue
		}
		line := part
		if len(t.pending) > 0 {
			t.pending = append(t.pending, part...)
			line = t.pending
		}
		if len(line) > MaxLineBytes {
			sink.tooLong(t.line)
		} else {
			sink.line(bytes.TrimSuffix(line, []byte{'\r'}), t.line)
		}
		t.pending = t.pending[:0]
	}
}

// consoleText returns what a terminal would show of a console line: ANSI escape sequences (colours,
// bold, cursor movement) removed and, where carriage returns redrew the line (progress bars), only
// the text after the last one.
func consoleText(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\r'); i >= 0 {
		b = b[i+1:]
	}
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != 0x1b {
			out = append(out, c)
			continue
		}
		if i+1 < len(b) && b[i+1] == '[' {
			// CSI: parameters and intermediates, then one final byte in 0x40–0x7e.
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		i++ // a two-byte escape
	}
	return out
}
