package metrics

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A tiny protobuf and TFRecord encoder, independent of the decoder under test, to write event files.

func pbVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func pbKey(b []byte, field, wire int) []byte { return pbVarint(b, uint64(field<<3|wire)) }

func pbBytes(b []byte, field int, data []byte) []byte {
	b = pbKey(b, field, 2)
	b = pbVarint(b, uint64(len(data)))
	return append(b, data...)
}

func pbFixed32(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(pbKey(b, field, 5), v)
}

func pbFixed64(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(pbKey(b, field, 1), v)
}

func pbUint(b []byte, field int, v uint64) []byte { return pbVarint(pbKey(b, field, 0), v) }

// tbVal is a Summary.Value under construction.
type tbVal []byte

func simpleValue(tag string, v float32) tbVal {
	return pbFixed32(pbBytes(nil, 1, []byte(tag)), 2, math.Float32bits(v))
}

func withPlugin(v tbVal, plugin string) tbVal {
	pd := pbBytes(nil, 1, []byte(plugin))
	return pbBytes(v, 9, pbBytes(nil, 1, pd))
}

// tensorValue builds a Summary.Value holding a tensor with the given dtype, shape and fields.
func tensorValue(tag string, dtype uint64, dims []uint64, fields []byte) tbVal {
	t := pbUint(nil, 1, dtype)
	var shape []byte
	for _, d := range dims {
		shape = pbBytes(shape, 2, pbUint(nil, 1, d))
	}
	t = pbBytes(t, 2, shape)
	t = append(t, fields...)
	return pbBytes(pbBytes(nil, 1, []byte(tag)), 8, t)
}

func eventBytes(step int64, vals ...tbVal) []byte {
	e := pbFixed64(nil, 1, math.Float64bits(1.7e9))
	e = pbUint(e, 2, uint64(step))
	var s []byte
	for _, v := range vals {
		s = pbBytes(s, 1, v)
	}
	if len(vals) > 0 {
		e = pbBytes(e, 5, s)
	}
	return e
}

func tfrecord(data []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = binary.LittleEndian.AppendUint32(b, MaskedCRC(b[:8]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, MaskedCRC(data))
}

// fileVersionRecord is the first record of every TensorFlow event file: wall_time and
// file_version "brain.Event:2".
func fileVersionRecord() []byte {
	e := pbFixed64(nil, 1, math.Float64bits(1.7e9))
	return tfrecord(pbBytes(e, 3, []byte("brain.Event:2")))
}

func TestMaskedCRC(t *testing.T) {
	// CRC-32C("123456789") = 0xE3069283 (the Castagnoli check value); masked by hand:
	// rotr15(0xE3069283) = 0x25070C0D, + 0xa282ead8 = 0xC78AB0E5 (mod 2³²).
	tests := []struct {
		in   []byte
		want uint32
	}{
		{[]byte("123456789"), 0xc78ab0e5},
		{nil, 0xa282ead8}, // CRC of nothing is 0: only the delta remains
		// The length 24 of the file_version event: every TensorFlow event file starts with the bytes
		// 18 00 00 00 00 00 00 00 a3 7f 4b 22.
		{[]byte{24, 0, 0, 0, 0, 0, 0, 0}, 0x224b7fa3},
	}
	for _, tt := range tests {
		if got := MaskedCRC(tt.in); got != tt.want {
			t.Errorf("MaskedCRC(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
	if got := fileVersionRecord()[:12]; string(got) != "\x18\x00\x00\x00\x00\x00\x00\x00\xa3\x7f\x4b\x22" {
		t.Errorf("file_version header = % x, want 18 00 .. a3 7f 4b 22", got)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func pollOnce(t *testing.T, r Reader) []Record {
	t.Helper()
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func readAll(t *testing.T, r Reader) []Record {
	t.Helper()
	recs, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestTensorBoardValueKinds(t *testing.T) {
	dir := t.TempDir()
	f32 := binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.25))
	f64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(-1.5))
	var b []byte
	b = append(b, fileVersionRecord()...)
	b = append(b, tfrecord(eventBytes(100,
		simpleValue("a/simple", 1.5),
		withPlugin(tensorValue("a/float_val", dtFloat, nil, pbBytes(nil, 5, f32)), "scalars"),
		tensorValue("a/float_unpacked", dtFloat, nil, pbFixed32(nil, 5, math.Float32bits(2))),
		tensorValue("a/double_val", dtDouble, nil, pbBytes(nil, 6, f64)),
		tensorValue("a/content", dtDouble, []uint64{1}, pbBytes(nil, 4, f64)),
		tensorValue("a/int64", dtInt64, nil, pbUint(nil, 10, 7)),
		tensorValue("a/nan", dtFloat, nil, pbBytes(nil, 4, binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN()))))),
		tensorValue("skip/vector", dtFloat, []uint64{2}, pbBytes(nil, 5, append(f32, f32...))),
		withPlugin(tensorValue("skip/hist", dtDouble, nil, pbBytes(nil, 6, f64)), "histograms"),
	))...)
	writeFile(t, filepath.Join(dir, "events.out.tfevents.1.host"), b)
	r := idleTail(dir)
	recs := pollOnce(t, r)
	if len(recs) != 0 {
		t.Fatalf("first Poll = %v, want the step held until the file stops growing", recs)
	}
	recs = pollOnce(t, r)
	if len(recs) != 1 || recs[0].Step != 100 {
		t.Fatalf("second Poll = %v, want one record at step 100", recs)
	}
	want := map[string]float64{"a/simple": 1.5, "a/float_val": 0.25, "a/float_unpacked": 2, "a/double_val": -1.5,
		"a/content": -1.5, "a/int64": 7, "a/nan": math.NaN()}
	if !sameRecord(recs[0], Record{Step: 100, Values: want}) {
		t.Errorf("values = %v, want %v", recs[0].Values, want)
	}
	if st := r.Stats(); st.Records != 1 || st.Malformed != 0 {
		t.Errorf("Stats = %+v, want 1 record, none malformed", st)
	}
}

func TestTensorBoardPluginRememberedPerTag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.out.tfevents.1")
	text := tensorValue("notes", dtDouble, nil, pbBytes(nil, 6, binary.LittleEndian.AppendUint64(nil, 0)))
	writeFile(t, path, tfrecord(eventBytes(1, withPlugin(text, "text"), simpleValue("r", 1))))
	// Later events carry no metadata: the plugin first seen still applies.
	writeFile(t, path, tfrecord(eventBytes(2, text, simpleValue("r", 2))))
	r := idleTail(dir)
	recs := append(pollOnce(t, r), pollOnce(t, r)...)
	if len(recs) != 2 {
		t.Fatalf("records = %v, want 2", recs)
	}
	for _, rec := range recs {
		if _, ok := rec.Values["notes"]; ok {
			t.Errorf("record %v holds the text plugin's tag", rec)
		}
	}
}

func TestTensorBoardTailing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.out.tfevents.1")
	rec1 := tfrecord(eventBytes(1, simpleValue("Train/mean_reward", 3)))
	rec1b := tfrecord(eventBytes(1, simpleValue("Loss/value_function", 0.5)))
	rec2 := tfrecord(eventBytes(2, simpleValue("Train/mean_reward", 4)))
	r, err := Open(ReaderConfig{Source: SourceTensorBoard, Preset: PresetRSLRL, TBDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if recs := pollOnce(t, r); len(recs) != 0 {
		t.Fatalf("no directory yet: got %v", recs)
	}
	writeFile(t, path, append(fileVersionRecord(), rec1...))
	writeFile(t, path, rec1b[:len(rec1b)-3]) // a partial record: waited for
	if recs := pollOnce(t, r); len(recs) != 0 {
		t.Fatalf("partial: got %v, want nothing yet", recs)
	}
	writeFile(t, path, rec1b[len(rec1b)-3:])
	writeFile(t, path, rec2)
	recs := pollOnce(t, r)
	want := Record{Step: 1, Values: map[string]float64{Reward: 3, ValueLoss: 0.5}}
	if len(recs) != 1 || !sameRecord(recs[0], want) {
		t.Fatalf("got %v, want [%v]", recs, want)
	}
	if recs = pollOnce(t, r); len(recs) != 0 { // no new data yet: step 2 may have more scalars coming
		t.Errorf("got %v, want step 2 held back", recs)
	}
	recs = r.(Finisher).Finish() // the trainer exited: nothing more comes
	if len(recs) != 1 || recs[0].Step != 2 {
		t.Errorf("got %v, want step 2", recs)
	}
	if st := r.Stats(); st.Malformed != 0 || st.Records != 2 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestTensorBoardCorruption(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.out.tfevents.1")
	bad := tfrecord(eventBytes(2, simpleValue("r", 2)))
	bad[len(bad)-6] ^= 0xff // data no longer matches its CRC
	var b []byte
	b = append(b, tfrecord(eventBytes(1, simpleValue("r", 1)))...)
	b = append(b, bad...)
	b = append(b, tfrecord(eventBytes(3, simpleValue("r", 3)))...)
	badLen := tfrecord(eventBytes(4, simpleValue("r", 4)))
	badLen[9] ^= 0x01 // the length's CRC fails: the rest of the file cannot be framed
	b = append(b, badLen...)
	b = append(b, tfrecord(eventBytes(5, simpleValue("r", 5)))...)
	writeFile(t, path, b)
	r := idleTail(dir)
	recs := append(pollOnce(t, r), pollOnce(t, r)...)
	if got := steps(recs); !equalSteps(got, []int64{1, 3}) {
		t.Errorf("steps = %v, want [1 3]", got)
	}
	st := r.Stats()
	if st.Malformed != 2 || !strings.Contains(st.LastError, "length fails its CRC") {
		t.Errorf("Stats = %+v, want 2 malformed, the last a bad length", st)
	}
	// The file is rewritten from the start (a restarted trainer): read again.
	if err := os.WriteFile(path, tfrecord(eventBytes(7, simpleValue("r", 7))), 0o644); err != nil {
		t.Fatal(err)
	}
	recs = append(pollOnce(t, r), pollOnce(t, r)...)
	if got := steps(recs); !equalSteps(got, []int64{7}) {
		t.Errorf("after rewrite steps = %v, want [7]", got)
	}
}

func TestTensorBoardSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b", "events.out.tfevents.2"), tfrecord(eventBytes(20, simpleValue("r", 2))))
	writeFile(t, filepath.Join(dir, "a", "events.out.tfevents.9"), tfrecord(eventBytes(10, simpleValue("r", 1))))
	writeFile(t, filepath.Join(dir, "events.out.tfevents.1"), tfrecord(eventBytes(5, simpleValue("r", 0))))
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("not an event file"))
	r := idleTail(dir)
	recs := append(pollOnce(t, r), pollOnce(t, r)...)
	// Name order: a/..., b/..., then events.out... at the top.
	if got := steps(recs); !equalSteps(got, []int64{10, 20, 5}) {
		t.Errorf("steps = %v, want [10 20 5]", got)
	}
	// A new file (a restarted trainer) is picked up.
	writeFile(t, filepath.Join(dir, "events.out.tfevents.3"), tfrecord(eventBytes(30, simpleValue("r", 3))))
	recs = append(pollOnce(t, r), pollOnce(t, r)...)
	if got := steps(recs); !equalSteps(got, []int64{30}) {
		t.Errorf("steps = %v, want [30]", got)
	}
}

// A run directory given as a symbolic link is read where it points.
func TestTensorBoardSymlinkedDir(t *testing.T) {
	real, links := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(real, "events.out.tfevents.1"), tfrecord(eventBytes(7, simpleValue("r", 1))))
	link := filepath.Join(links, "run")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := idleTail(link)
	recs := append(pollOnce(t, r), pollOnce(t, r)...)
	if got := steps(recs); !equalSteps(got, []int64{7}) {
		t.Errorf("steps = %v, want [7]", got)
	}
}

func TestTensorBoardGarbageEvent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "events.out.tfevents.1"), tfrecord([]byte{0x2a, 0xff})) // field 5, truncated
	r := idleTail(dir)
	pollOnce(t, r)
	if st := r.Stats(); st.Malformed != 1 || !strings.Contains(st.LastError, "event: malformed protobuf") {
		t.Errorf("Stats = %+v, want one malformed event", st)
	}
}

// idleTail is a tail that takes a step as whole at the first poll that finds nothing new, for tests of
// decoding; TestTensorBoardHoldsAStepUntilWhole tests the wait.
func idleTail(dir string) *TensorBoardTail {
	r := NewTensorBoardTail(dir)
	r.groupIdle = 0
	return r
}

// torch's SummaryWriter flushes every 10 events; a step of 12 scalars can be split across polls. The
// step is returned once, whole: when a later step begins, after tbGroupIdle without new bytes, or at
// Finish. One poll that finds nothing new used to return the first half as a record of its own.
func TestTensorBoardHoldsAStepUntilWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.out.tfevents.1")
	r := NewTensorBoardTail(dir)
	r.groupIdle = 200 * time.Millisecond
	defer r.Close()
	writeFile(t, path, append(fileVersionRecord(), tfrecord(eventBytes(100, simpleValue("reward", 1)))...))
	if recs, _ := r.Poll(); len(recs) != 0 {
		t.Fatalf("first half: got %v, want nothing yet", recs)
	}
	if recs, _ := r.Poll(); len(recs) != 0 {
		t.Fatalf("an empty poll right after: got %v, want step 100 still held", recs)
	}
	writeFile(t, path, tfrecord(eventBytes(100, simpleValue("value_loss", 0.5))))
	writeFile(t, path, tfrecord(eventBytes(200, simpleValue("reward", 2))))
	recs, _ := r.Poll()
	want := Record{Step: 100, Values: map[string]float64{"reward": 1, "value_loss": 0.5}}
	if len(recs) != 1 || !sameRecord(recs[0], want) {
		t.Fatalf("got %v, want step 100 whole: %v", recs, want)
	}
	time.Sleep(250 * time.Millisecond)
	if recs, _ := r.Poll(); len(recs) != 1 || recs[0].Step != 200 {
		t.Errorf("after the idle wait: got %v, want step 200", recs)
	}
	if recs := r.Finish(); len(recs) != 0 {
		t.Errorf("Finish after everything was returned: %v, want nothing", recs)
	}
}
