package metrics

import (
	"path/filepath"
	"testing"
)

// FuzzWandbTail feeds arbitrary bytes as a W&B run file, whole and in two pieces, polling after each:
// no panic, and the same records and counts either way.
func FuzzWandbTail(f *testing.F) {
	valid := newWBWriter().record(wbHistory(wbItem{"_step", "0"}, wbItem{"r", "NaN"})).
		record(wbHistory(wbItem{"core:train/loss", "1e-3"}, wbItem{"_step", "1"}, wbItem{"t\x00_type", `"table"`})).
		record(wbExit(0)).b
	f.Add(valid, uint16(20))
	f.Add(valid[:len(valid)-2], uint16(3))
	f.Add(valid[:wandbHeaderLen], uint16(5))
	f.Add([]byte("garbage that is not a W&B run file"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := int(cut) % (len(data) + 1)
		ra, sa := readWandbPieces(t, data, -1)
		rb, sb := readWandbPieces(t, data, k)
		if !sameRecords(ra, rb) {
			t.Fatalf("whole %v, in pieces at %d %v", ra, k, rb)
		}
		if sa.Records != len(ra) || sa.Malformed != sb.Malformed || sa.Skipped != sb.Skipped {
			t.Errorf("stats whole %+v, pieces %+v, %d records", sa, sb, len(ra))
		}
	})
}

// FuzzWandbRecord frames arbitrary bytes as a valid record so the record and history decoders see them.
func FuzzWandbRecord(f *testing.F) {
	f.Add(wbHistory(wbItem{"_step", "3"}, wbItem{"r", "-Infinity"}))
	f.Add(wbHistory(wbItem{"a\x00b", "2"}, wbItem{"a\x00_type", `"x"`}))
	f.Add(wbExit(255))
	f.Fuzz(func(t *testing.T, rec []byte) {
		readWandbPieces(t, newWBWriter().record(rec).record(rec).b, -1)
	})
}

// readWandbPieces writes data to a run file, whole (cut < 0) or in two pieces, and reads it to the end.
func readWandbPieces(t *testing.T, data []byte, cut int) ([]Record, ReaderStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run-x.wandb")
	r := NewWandbTail(path, "")
	defer r.Close()
	var recs []Record
	if cut >= 0 {
		writeFile(t, path, data[:cut])
		got, _ := r.Poll()
		recs = append(recs, got...)
		data = data[cut:]
	}
	writeFile(t, path, data)
	got, _ := r.Poll()
	recs = append(append(recs, got...), r.Finish()...)
	return recs, r.Stats()
}
