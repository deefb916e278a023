package metrics

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

var jsonSeeds = []string{
	`{"step": 1, "reward": NaN, "value_loss": Infinity, "x": -Infinity}`,
	`{"step": 2048.0, "checkpoint": "ckpt/1.pt", "nested": {"a": [1, "]"]}, "ok": true, "n": null}`,
	`{"st\u0065p": 1e3, "k\"ey": -0.5e-3}`,
	`{"step": 1, "s": "NaN"}`,
	`{"step": -1}`,
	`{"step": 1,,}`,
	"{\"step\": 1}\n{\"step\": 0}\n\n{\"step\"",
}

// FuzzParseJSONLine checks the parser never panics and agrees with encoding/json on every line
// encoding/json accepts (which excludes the NaN and Infinity tokens).
func FuzzParseJSONLine(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := ParseJSONLine(line)
		var ref map[string]any
		if json.Unmarshal(line, &ref) != nil || !utf8.Valid(line) {
			return
		}
		step, ok := ref["step"].(float64)
		if !ok || step < 0 || step != math.Trunc(step) || step > 1e18 {
			return
		}
		if err != nil {
			t.Fatalf("ParseJSONLine(%q): %v; encoding/json accepts it", line, err)
		}
		if float64(got.Step) != step {
			t.Errorf("step = %d, want %g", got.Step, step)
		}
		n := 0
		for k, v := range ref {
			x, isNum := v.(float64)
			if k == "step" || !isNum {
				continue
			}
			n++
			if got.Values[k] != x {
				t.Errorf("%q = %g, want %g", k, got.Values[k], x)
			}
		}
		if len(got.Values) != n {
			t.Errorf("values = %v, want %d numeric keys of %v", got.Values, n, ref)
		}
		if cp, ok := ref["checkpoint"].(string); ok && got.Checkpoint != cp {
			t.Errorf("checkpoint = %q, want %q", got.Checkpoint, cp)
		}
	})
}

// FuzzJSONLTail checks the tail never panics and that reading a file in two pieces, polling after
// each, gives the same records as reading it whole.
func FuzzJSONLTail(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s+"\n"+s+"\n"), uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		dir := t.TempDir()
		k := int(cut) % (len(data) + 1)
		whole, pieces := filepath.Join(dir, "whole"), filepath.Join(dir, "pieces")
		writeFile(t, whole, data)
		a := NewJSONLTail(whole)
		defer a.Close() // without it a long fuzz run exhausts file descriptors
		ra, _ := a.Poll()
		b := NewJSONLTail(pieces)
		defer b.Close()
		writeFile(t, pieces, data[:k])
		rb, _ := b.Poll()
		writeFile(t, pieces, data[k:])
		more, _ := b.Poll()
		rb = append(rb, more...)
		if !sameRecords(ra, rb) {
			t.Fatalf("whole %v, in pieces at %d %v", ra, k, rb)
		}
		if a.Stats().Records != len(ra) || a.Stats().Malformed != b.Stats().Malformed {
			t.Errorf("stats whole %+v, pieces %+v, %d records", a.Stats(), b.Stats(), len(ra))
		}
	})
}

func sameRecords(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameRecord(a[i], b[i]) {
			return false
		}
	}
	return true
}

// FuzzTensorBoardTail feeds arbitrary bytes as an events file, whole and in two pieces: no panic,
// and the same records either way.
func FuzzTensorBoardTail(f *testing.F) {
	valid := append(fileVersionRecord(), tfrecord(eventBytes(3, simpleValue("r", 1), simpleValue("s", 2)))...)
	f.Add(valid, uint16(20))
	f.Add(valid[:len(valid)-2], uint16(3))
	f.Add([]byte("garbage that is not a TFRecord at all"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := int(cut) % (len(data) + 1)
		ra := readTB(t, data, -1)
		rb := readTB(t, data, k)
		if !sameRecords(ra, rb) {
			t.Fatalf("whole %v, in pieces at %d %v", ra, k, rb)
		}
	})
}

// FuzzDecodeEvent frames arbitrary bytes as a valid TFRecord so the protobuf decoder sees them.
func FuzzDecodeEvent(f *testing.F) {
	f.Add(eventBytes(3, simpleValue("r", 1)))
	f.Add(eventBytes(4, withPlugin(tensorValue("t", dtFloat, nil, pbFixed32(nil, 5, 1)), "scalars")))
	f.Add(eventBytes(5, tensorValue("t", dtInt32, []uint64{1, 1}, pbBytes(nil, 7, []byte{1, 2}))))
	f.Fuzz(func(t *testing.T, event []byte) {
		readTB(t, tfrecord(event), -1)
	})
}

// readTB writes data to an events file, whole (cut < 0) or in two pieces, and reads it to the end.
func readTB(t *testing.T, data []byte, cut int) []Record {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "events.out.tfevents.1")
	r := NewTensorBoardTail(dir)
	defer r.Close()
	var recs []Record
	if cut >= 0 {
		writeFile(t, path, data[:cut])
		got, _ := r.Poll()
		recs = append(recs, got...)
		data = data[cut:]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data)
	got, _ := r.Poll()
	return append(append(recs, got...), r.Finish()...)
}
