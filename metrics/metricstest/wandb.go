// Package metricstest writes the files trainers write, for tests: W&B run files as the wandb SDK
// frames them. It is an encoder written apart from package metrics' decoder, from W&B's datastore
// format (a 7-byte header, then LevelDB log chunks in 32 KiB blocks checksummed with plain CRC-32,
// each record a protobuf Record), so a test of the decoder does not check it against itself.
package metricstest

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"strconv"
)

const (
	block       = 32768
	chunkHeader = 7 // crc u32 | length u16 | type u8
	chunkFull   = 1
	chunkFirst  = 2
	chunkMiddle = 3
	chunkLast   = 4
)

// Record fields of W&B's wandb_internal.proto.
const (
	recordHistory = 2
	recordRun     = 17
	recordExit    = 18
)

// WandbHeader is the run file's header: ":W&B", 0xBEE1 little-endian, version 0.
var WandbHeader = []byte{':', 'W', '&', 'B', 0xE1, 0xBE, 0}

// WandbWriter writes a W&B run file: the header, then each record framed in chunks as the SDK does
// (FULL when it fits the rest of the block, else FIRST, MIDDLE…, LAST; fewer than 7 bytes left in a
// block are zero padding). Each Record call writes its bytes at once, so a reader tailing the file
// sees it grow record by record.
type WandbWriter struct {
	w   io.Writer
	off int64
}

// NewWandbWriter writes the header to w and returns the writer of the records after it.
func NewWandbWriter(w io.Writer) (*WandbWriter, error) {
	if _, err := w.Write(WandbHeader); err != nil {
		return nil, err
	}
	return &WandbWriter{w: w, off: int64(len(WandbHeader))}, nil
}

// Record frames one encoded Record (History, Exit, Run, or any bytes) and writes it.
func (w *WandbWriter) Record(rec []byte) error {
	var out []byte
	first := true
	for {
		left := block - w.off%block
		if left < chunkHeader {
			out = append(out, make([]byte, left)...)
			w.off += left
			left = block
		}
		n := min(int64(len(rec)), left-chunkHeader)
		last := n == int64(len(rec))
		typ := byte(chunkMiddle)
		switch {
		case first && last:
			typ = chunkFull
		case first:
			typ = chunkFirst
		case last:
			typ = chunkLast
		}
		body := append([]byte{typ}, rec[:n]...)
		out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
		out = binary.LittleEndian.AppendUint16(out, uint16(n))
		out = append(out, body...)
		w.off += chunkHeader + n
		rec, first = rec[n:], false
		if last {
			break
		}
	}
	_, err := w.w.Write(out)
	return err
}

// Item is one history item: its name as the Python writer puts it (Key), or as wandb-core does
// (Nested, the name's elements), and its value as JSON text ("1.5", "NaN", `{"_type": "video-file"}`).
type Item struct {
	Key       string
	Nested    []string
	ValueJSON string
}

// Float is an item holding a number as Python's json writes it (NaN, Infinity, -Infinity included).
func Float(key string, v float64) Item {
	text := strconv.FormatFloat(v, 'g', -1, 64)
	switch {
	case math.IsInf(v, 1):
		text = "Infinity"
	case math.IsInf(v, -1):
		text = "-Infinity"
	}
	return Item{Key: key, ValueJSON: text}
}

// History encodes a Record holding one history row (wandb.log's call) of the items.
func History(items ...Item) []byte {
	var h []byte
	for _, it := range items {
		var m []byte
		if len(it.Nested) > 0 {
			for _, p := range it.Nested {
				m = appendBytes(m, 2, []byte(p))
			}
		} else {
			m = appendBytes(m, 1, []byte(it.Key))
		}
		m = appendBytes(m, 16, []byte(it.ValueJSON))
		h = appendBytes(h, 1, m)
	}
	return appendBytes(appendVarint(nil, 1, 0), recordHistory, h) // num = 0, then the row
}

// Exit encodes the Record of a run's end with its exit code.
func Exit(code int32) []byte {
	return appendBytes(nil, recordExit, appendVarint(nil, 1, uint64(int64(code))))
}

// Run encodes the Record that opens a run, with its ID.
func Run(id string) []byte {
	return appendBytes(nil, recordRun, appendBytes(nil, 1, []byte(id)))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3)
	return binary.AppendUvarint(b, v)
}

func appendBytes(b []byte, field int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}
