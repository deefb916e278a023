package metrics

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
)

// The W&B run file (run-<id>.wandb, the SDK's "datastore") is a 7-byte header — ":W&B", 0xBEE1 as a
// little-endian uint16, a version byte 0 — followed by LevelDB's log framing: 32768-byte blocks (the
// header counts toward block 0) of chunks crc u32 LE | length u16 LE | type u8 | data, of type FULL,
// FIRST, MIDDLE or LAST; fewer than 7 bytes left in a block are zero padding. Unlike LevelDB's, the
// checksum is a plain, unmasked CRC-32 (IEEE) of the type byte and the data. Each record is a
// wandb_internal.proto Record message.

const (
	wandbMagic       = ":W&B"
	wandbHeaderLen   = 7
	wandbBlock       = 32768
	wandbChunkHeader = 7
	// maxWandbRecord bounds a record assembled from FIRST/MIDDLE/LAST chunks: a larger one is dropped.
	maxWandbRecord = 64 << 20
)

// Chunk types of the framing.
const (
	wandbFull   = 1
	wandbFirst  = 2
	wandbMiddle = 3
	wandbLast   = 4
)

// wandbLog decodes the framing of a run file fed to it piece by piece, as a writer appends it: next
// returns each whole record once its last chunk has arrived, and waits (returns false) while a
// chunk header, a chunk's data or a record's LAST chunk is missing. A chunk that fails its CRC, has an
// impossible length or an unknown type is counted in malformed and the rest of its block is skipped
// (the framing resynchronises at the next block). It is not safe for concurrent use.
type wandbLog struct {
	buf    []byte // bytes fed and not yet consumed, from buf[pos:]
	pos    int
	off    int64 // file offset of buf[0]
	header bool  // the header was read
	bad    bool  // the file is not a W&B run file: nothing more is decoded
	skipTo int64 // resynchronising: bytes before this offset are skipped
	rec    []byte
	inRec  bool  // rec holds a record's FIRST (and MIDDLE) chunks
	recAt  int64 // offset of that record's FIRST chunk
	// end is the offset just past the last whole record (or the header): where a torn file's
	// complete records end.
	end    int64
	chunks [5]int // verified chunks by type (1–4)

	malformed int
	lastError string // why the last chunk or record was dropped, with its offset
}

// feed appends bytes read from the file.
func (l *wandbLog) feed(b []byte) {
	if l.pos > 0 && l.pos >= len(l.buf)/2 {
		n := copy(l.buf, l.buf[l.pos:])
		l.buf = l.buf[:n]
		l.off += int64(l.pos)
		l.pos = 0
	}
	l.buf = append(l.buf, b...)
}

func (l *wandbLog) drop(at int64, format string, args ...any) {
	l.malformed++
	l.lastError = fmt.Sprintf("offset %d: %s", at, fmt.Sprintf(format, args...))
}

// resync drops the record being assembled and skips to the next block.
func (l *wandbLog) resync(at int64) {
	l.inRec = false
	l.skipTo = (at/wandbBlock + 1) * wandbBlock
}

// next returns the next whole record, or false when more bytes are needed. The record is valid until
// the next call of next or feed.
func (l *wandbLog) next() ([]byte, bool) {
	for !l.bad {
		b := l.buf[l.pos:]
		at := l.off + int64(l.pos)
		if !l.header {
			if len(b) < wandbHeaderLen {
				if !bytes.HasPrefix([]byte(wandbMagic), b[:min(len(b), len(wandbMagic))]) {
					l.notWandb(b)
				}
				return nil, false
			}
			if string(b[:4]) != wandbMagic || binary.LittleEndian.Uint16(b[4:]) != 0xBEE1 || b[6] != 0 {
				l.notWandb(b)
				return nil, false
			}
			l.header, l.end = true, at+wandbHeaderLen
			l.pos += wandbHeaderLen
			continue
		}
		if at < l.skipTo {
			n := int(min(int64(len(b)), l.skipTo-at))
			l.pos += n
			if n == len(b) {
				return nil, false
			}
			continue
		}
		left := wandbBlock - at%wandbBlock
		if left < wandbChunkHeader { // the block's trailer: zero padding
			if int64(len(b)) < left {
				return nil, false
			}
			l.pos += int(left)
			continue
		}
		if len(b) < wandbChunkHeader {
			return nil, false
		}
		crc, n, typ := binary.LittleEndian.Uint32(b), int(binary.LittleEndian.Uint16(b[4:])), b[6]
		if crc == 0 && n == 0 && typ == 0 {
			// Zeros where a chunk should start: space a writer reserved. Nothing is in the rest of
			// the block.
			l.inRec = false
			l.skipTo = at + left
			continue
		}
		if int64(wandbChunkHeader+n) > left {
			l.drop(at, "chunk of %d bytes overruns its block (%d bytes left); rest of the block skipped", n, left-wandbChunkHeader)
			l.resync(at)
			continue
		}
		if len(b) < wandbChunkHeader+n {
			return nil, false
		}
		if crc32.ChecksumIEEE(b[6:wandbChunkHeader+n]) != crc {
			l.drop(at, "chunk fails its CRC; rest of the block skipped")
			l.resync(at)
			continue
		}
		if typ < wandbFull || typ > wandbLast {
			l.drop(at, "chunk type %d, want 1–4 (FULL, FIRST, MIDDLE, LAST); rest of the block skipped", typ)
			l.resync(at)
			continue
		}
		data := b[wandbChunkHeader : wandbChunkHeader+n]
		l.pos += wandbChunkHeader + n
		l.chunks[typ]++
		chunkEnd := at + int64(wandbChunkHeader+n)
		switch typ {
		case wandbFull:
			if l.inRec {
				l.drop(l.recAt, "record's FIRST chunk has no LAST (a FULL chunk follows); record skipped")
				l.inRec = false
			}
			l.end = chunkEnd
			return data, true
		case wandbFirst:
			if l.inRec {
				l.drop(l.recAt, "record's FIRST chunk has no LAST (another FIRST follows); record skipped")
			}
			l.rec = append(l.rec[:0], data...)
			l.inRec, l.recAt = true, at
		default: // MIDDLE, LAST
			if !l.inRec {
				l.drop(at, "chunk continues a record whose FIRST chunk is missing; chunk skipped")
				continue
			}
			if len(l.rec)+n > maxWandbRecord {
				l.drop(l.recAt, "record longer than %d bytes; skipped", maxWandbRecord)
				l.inRec = false
				continue
			}
			l.rec = append(l.rec, data...)
			if typ == wandbLast {
				l.inRec = false
				l.end = chunkEnd
				return l.rec, true
			}
		}
	}
	return nil, false
}

func (l *wandbLog) notWandb(b []byte) {
	l.bad = true
	l.drop(l.off+int64(l.pos), "not a W&B run file: starts with %q, want %q, 0xE1 0xBE, version 0", b[:min(len(b), 8)], wandbMagic)
}

// torn describes what the bytes fed end inside of, once nothing more will be fed: "" when they end
// at a chunk boundary, inside a block's zero padding or inside a stretch being skipped; else where the
// last record was cut, and where the complete records end.
func (l *wandbLog) torn() string {
	if l.bad {
		return ""
	}
	b := l.buf[l.pos:]
	at := l.off + int64(l.pos)
	if !l.header {
		if len(b) == 0 {
			return ""
		}
		return fmt.Sprintf("offset 0: file ends inside its %d-byte header (%d bytes)", wandbHeaderLen, len(b))
	}
	if at < l.skipTo {
		return ""
	}
	if left := wandbBlock - at%wandbBlock; left < wandbChunkHeader && int64(len(b)) < left {
		return "" // inside the block's zero padding
	}
	switch {
	case len(b) > 0 && len(b) < wandbChunkHeader:
		return fmt.Sprintf("offset %d: file ends inside a chunk header (%d of %d bytes); complete records end at %d", at, len(b), wandbChunkHeader, l.end)
	case len(b) > 0:
		n := int(binary.LittleEndian.Uint16(b[4:]))
		return fmt.Sprintf("offset %d: file ends inside a chunk (%d of its %d data bytes); complete records end at %d", at, len(b)-wandbChunkHeader, n, l.end)
	case l.inRec:
		return fmt.Sprintf("offset %d: file ends inside a record (its FIRST chunk has no LAST); complete records end at %d", l.recAt, l.end)
	}
	return ""
}

// Record fields (wandb_internal.proto). The record's type is the one of its oneof fields it carries.
const (
	wbRecHistory = 2
	wbRecExit    = 18
)

// wandbRecordNames names the record types, by field number, for counts and messages.
var wandbRecordNames = map[int]string{
	2: "history", 3: "summary", 4: "output", 5: "config", 6: "files", 7: "stats", 8: "artifact", 9: "tbrecord",
	10: "alert", 11: "telemetry", 12: "metric", 13: "output_raw", 17: "run", 18: "exit", 20: "final",
	21: "header", 22: "footer", 23: "preempting", 26: "environment", 100: "request",
}

// wandbRecord is what rlsweep needs of a Record: its type, a history record's items, an exit
// record's code.
type wandbRecord struct {
	kind     int // field number of the record type; 0 when it carries none
	items    []wandbItem
	exitCode int64
}

// wandbItem is one HistoryItem: key (1) or nested_key (2, repeated), and value_json (16).
type wandbItem struct {
	key    []byte
	nested [][]byte
	value  []byte
}

// decodeWandbRecord decodes a Record message into r (its slices reused). Fields other than the
// record's type are skipped, as are the contents of types other than history and exit.
func decodeWandbRecord(b []byte, r *wandbRecord) error {
	r.kind, r.exitCode = 0, 0
	for i := range r.items {
		r.items[i].nested = r.items[i].nested[:0]
	}
	r.items = r.items[:0]
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, _, data, err := p.next()
		if err != nil {
			return err
		}
		if wire != wireBytes {
			continue
		}
		switch field {
		case 1, 16, 19, 200: // num, control, uuid, _info: not the record's type
			continue
		case wbRecHistory:
			if err := r.history(data); err != nil {
				return err
			}
		case wbRecExit:
			if err := r.exit(data); err != nil {
				return err
			}
		}
		if r.kind == 0 {
			r.kind = field
		}
	}
	return nil
}

func (r *wandbRecord) history(b []byte) error {
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, _, data, err := p.next()
		if err != nil {
			return err
		}
		if field != 1 || wire != wireBytes {
			continue
		}
		if len(r.items) < cap(r.items) {
			r.items = r.items[:len(r.items)+1]
		} else {
			r.items = append(r.items, wandbItem{})
		}
		it := &r.items[len(r.items)-1]
		it.key, it.value, it.nested = nil, nil, it.nested[:0]
		q := protoBuf{data}
		for len(q.b) > 0 {
			f, w, _, d, err := q.next()
			if err != nil {
				return err
			}
			if w != wireBytes {
				continue
			}
			switch f {
			case 1:
				it.key = d
			case 2:
				it.nested = append(it.nested, d)
			case 16:
				it.value = d
			}
		}
	}
	return nil
}

func (r *wandbRecord) exit(b []byte) error {
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, v, _, err := p.next()
		if err != nil {
			return err
		}
		if field == 1 && wire == wireVarint {
			r.exitCode = int64(int32(v))
		}
	}
	return nil
}

// wandbNumber parses a value_json that holds a number: a JSON number, or the bare NaN, Infinity and
// -Infinity that Python's json module (and so wandb) writes for non-finite floats. Anything else — an
// object (media, histograms, tables), an array, a string, true, false, null — is not a number.
func wandbNumber(v []byte) (float64, bool) {
	v = bytes.TrimSpace(v)
	switch string(v) {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	case "":
		return 0, false
	}
	// JSON numbers only: strconv would also take hex, underscores, "inf" and the like.
	for i, c := range v {
		switch {
		case c >= '0' && c <= '9':
		case c == '-' || c == '+' || c == 'e' || c == 'E':
			if i == 0 && c != '-' {
				return 0, false
			}
		case c == '.':
		default:
			return 0, false
		}
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return x, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
