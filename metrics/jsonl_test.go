package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseJSONLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Record
	}{
		{"minimal", `{"step": 0}`, Record{Step: 0}},
		{"values", `{"step": 2048, "reward": 1.5, "value_loss": -2e-3, "n": 7}`,
			Record{Step: 2048, Values: map[string]float64{"reward": 1.5, "value_loss": -2e-3, "n": 7}}},
		{"integral float step", `{"step": 1e6}`, Record{Step: 1000000}},
		{"float step with zero fraction", `{"step":2048.0}`, Record{Step: 2048}},
		{"large integer step kept exactly", `{"step": 9007199254740993}`, Record{Step: 9007199254740993}},
		{"non-numeric ignored", `{"step":1,"ok":true,"no":false,"x":null,"name":"run","nested":{"a":[1,{"b":"}"}]},"arr":[1,2]}`,
			Record{Step: 1}},
		{"checkpoint", `{"step": 5, "checkpoint": "ckpt/5.pt"}`, Record{Step: 5, Checkpoint: "ckpt/5.pt"}},
		{"escaped key and checkpoint", `{"step": 5, "che\u0063kpoint": "a\"b\\c\u00e9", "r\u00e9": 1}`,
			Record{Step: 5, Checkpoint: "a\"b\\cé", Values: map[string]float64{"ré": 1}}},
		{"surrogate pair", `{"step":1,"\ud83d\ude00":2}`, Record{Step: 1, Values: map[string]float64{"😀": 2}}},
		{"whitespace", " \t{ \"step\" :\t3 , \"a\" : 1 }\r ", Record{Step: 3, Values: map[string]float64{"a": 1}}},
		{"duplicate key last wins", `{"step":1,"a":1,"a":2}`, Record{Step: 1, Values: map[string]float64{"a": 2}}},
		{"NaN string is text", `{"step":1,"s":"NaN"}`, Record{Step: 1}},
		{"overflow is infinite", `{"step":1,"big":1e400}`, Record{Step: 1, Values: map[string]float64{"big": math.Inf(1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJSONLine([]byte(tt.line))
			if err != nil {
				t.Fatalf("ParseJSONLine(%s): %v", tt.line, err)
			}
			if !sameRecord(got, tt.want) {
				t.Errorf("ParseJSONLine(%s) = %+v, want %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestParseJSONLineNonFinite(t *testing.T) {
	got, err := ParseJSONLine([]byte(`{"step": 10, "a": NaN, "b": Infinity, "c": -Infinity, "d":-0}`))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got.Values["a"]) || !math.IsInf(got.Values["b"], 1) || !math.IsInf(got.Values["c"], -1) {
		t.Errorf("got %v, want NaN, +Inf, -Inf", got.Values)
	}
	if d := got.Values["d"]; d != 0 || !math.Signbit(d) {
		t.Errorf("d = %v, want -0", d)
	}
}

func TestParseJSONLineErrors(t *testing.T) {
	tests := []struct {
		line    string
		wantErr string
	}{
		{``, "want a JSON object"},
		{`[1]`, "want a JSON object"},
		{`{"reward": 1}`, `step: got no "step" key`},
		{`{"step": -1}`, "step: got -1, want an integer ≥ 0"},
		{`{"step": 1.5}`, "step: got 1.5, want an integer ≥ 0"},
		{`{"step": NaN}`, "step: got NaN"},
		{`{"step": Infinity}`, "step: got Infinity"},
		{`{"step": 99999999999999999999}`, "step: got 99999999999999999999"},
		{`{"step": "3"}`, `step: got no "step" key`},
		{`{"step": 1,}`, "want a string"},
		{`{"step": 1} x`, "want the end of the line"},
		{`{"step": 1`, `want "," or "}"`},
		{`{"step": 01}`, `got "01}", want a value`},
		{`{"step": 1, "a": nan}`, `want "null"`},
		{`{"step": 1, "a": -NaN}`, "want a value"},
		{`{"step": 1, "a": Inf}`, `want "Infinity"`},
		{`{"step": 1, "a": 1.}`, "digits after '.'"},
		{`{"step": 1, "a": 1e}`, "digits in the exponent"},
		{`{"step": 1, "a": .5}`, "want a value"},
		{`{"step": 1, "a": +1}`, "want a value"},
		{`{"step": 1, "a": tru}`, `want "true"`},
		{"{\"step\": 1, \"a\x01\": 1}", "no control character"},
		{`{"step": 1, "a\q": 1}`, "valid escape sequence"},
		{`{"step": 1, "a\u12": 1}`, "four hex digits"},
		{`{"step": 1, "a": [1, 2`, "end of a nested"},
		{`{"step": 1, "a": "x`, `closing '"'`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, err := ParseJSONLine([]byte(tt.line))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseJSONLine(%q) error = %v, want one containing %q", tt.line, err, tt.wantErr)
			}
		})
	}
}

func sameRecord(a, b Record) bool {
	if a.Step != b.Step || a.Checkpoint != b.Checkpoint || len(a.Values) != len(b.Values) {
		return false
	}
	for k, v := range a.Values {
		w, ok := b.Values[k]
		if !ok || !(v == w || (math.IsNaN(v) && math.IsNaN(w))) {
			return false
		}
	}
	return true
}

// appendFile appends s to the file at path, creating it.
func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func steps(recs []Record) []int64 {
	out := []int64{}
	for _, r := range recs {
		out = append(out, r.Step)
	}
	return out
}

func equalSteps(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestJSONLTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	tail := NewJSONLTail(path)
	defer tail.Close()
	poll := func(want ...int64) {
		t.Helper()
		recs, err := tail.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if got := steps(recs); !equalSteps(got, append([]int64{}, want...)) {
			t.Errorf("Poll steps = %v, want %v", got, want)
		}
	}
	poll() // missing file: nothing yet, no error
	appendFile(t, path, "{\"step\": 1, \"reward\": NaN}\n{\"step\": 2")
	poll(1) // the partial second line waits
	appendFile(t, path, ", \"reward\": 3}\n\ngarbage\n{\"step\": 1}\n")
	poll(2) // blank line skipped, garbage and the step going back counted
	appendFile(t, path, "{\"step\": 2}\r\n{\"step\": 4}\n")
	poll(2, 4) // a repeated step is monotonic
	poll()
	st := tail.Stats()
	if st.Records != 4 || st.Malformed != 2 {
		t.Errorf("Stats = %+v, want 4 records, 2 malformed", st)
	}
	if !strings.Contains(st.LastError, "metrics.jsonl:5: step: got 1, want ≥ 2") {
		t.Errorf("LastError = %q, want the line number and the step problem", st.LastError)
	}
}

func TestJSONLTailLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	tail := NewJSONLTail(path)
	long := `{"step": 1, "pad": "` + strings.Repeat("x", MaxLineBytes) + `"}`
	// Written in pieces so the long line spans several Polls and read chunks.
	appendFile(t, path, "{\"step\": 0}\n"+long[:MaxLineBytes/2])
	recs, _ := tail.Poll()
	appendFile(t, path, long[MaxLineBytes/2:]+"\n{\"step\": 2}\n")
	more, _ := tail.Poll()
	recs = append(recs, more...)
	if got := steps(recs); !equalSteps(got, []int64{0, 2}) {
		t.Errorf("steps = %v, want [0 2]", got)
	}
	if st := tail.Stats(); st.Malformed != 1 || !strings.Contains(st.LastError, "longer than") {
		t.Errorf("Stats = %+v, want the long line counted", st)
	}
	// A line just under the limit is read.
	ok := `{"step": 3, "pad": "` + strings.Repeat("y", MaxLineBytes-40) + `"}`
	appendFile(t, path, ok+"\n")
	recs, _ = tail.Poll()
	if got := steps(recs); !equalSteps(got, []int64{3}) {
		t.Errorf("steps = %v, want [3]", got)
	}
}

func TestJSONLTailTruncatedAndReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.jsonl")
	tail := NewJSONLTail(path)
	appendFile(t, path, "{\"step\": 10}\n{\"step\": 20}\n")
	tail.Poll()
	if err := os.WriteFile(path, []byte("{\"step\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, _ := tail.Poll()
	if got := steps(recs); !equalSteps(got, []int64{1}) {
		t.Errorf("after truncation steps = %v, want [1]", got)
	}
	other := filepath.Join(dir, "new.jsonl")
	appendFile(t, other, "{\"step\": 0}\n{\"step\": 5}\n")
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	recs, _ = tail.Poll()
	if got := steps(recs); !equalSteps(got, []int64{0, 5}) {
		t.Errorf("after replacement steps = %v, want [0 5]", got)
	}
}

// A file rotated away (renamed, a new one created at the path) still gives up what it received since
// the last poll before the tail follows the new file: here the NaN that should stop the run.
func TestJSONLTailRotationKeepsTheOldFilesTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.jsonl")
	tail := NewJSONLTail(path)
	defer tail.Close()
	appendFile(t, path, "{\"step\": 10}\n{\"step\": 20}\n")
	if recs, _ := tail.Poll(); !equalSteps(steps(recs), []int64{10, 20}) {
		t.Fatalf("first poll steps = %v, want [10 20]", steps(recs))
	}
	appendFile(t, path, "{\"step\": 30, \"value_loss\": NaN}\n")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, "{\"step\": 40}\n")
	recs, err := tail.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(recs); !equalSteps(got, []int64{30, 40}) {
		t.Errorf("after rotation steps = %v, want [30 40]: the old file's last record, then the new file", got)
	}
}

func TestOpenPreset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	appendFile(t, path, `{"step": 1, "train/entropy_loss": -0.5, "rollout/ep_rew_mean": 3, "mine": 1}`+"\n")
	r, err := Open(ReaderConfig{Source: SourceJSONL, Preset: PresetSB3, Tags: map[string]string{"mine": "-grad_norm"}, MetricsFile: path})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := r.Poll()
	if err != nil || len(recs) != 1 {
		t.Fatalf("Poll = %v, %v; want one record", recs, err)
	}
	want := map[string]float64{"entropy": 0.5, "reward": 3, "grad_norm": -1}
	if !sameRecord(recs[0], Record{Step: 1, Values: want}) {
		t.Errorf("values = %v, want %v", recs[0].Values, want)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name, source, preset string
		tags                 map[string]string
		wantErr              string
	}{
		{"source", "ray", "", nil, `metrics.source: got "ray", want one of "jsonl", "tensorboard", "stdout", "csv", "wandb", "auto"`},
		{"stdout preset", "stdout", "cleanrl", nil, `metrics.preset: got "cleanrl" with source "stdout", want one of "rsl_rl", "sb3"`},
		{"preset", "jsonl", "ray", nil, `metrics.preset: got "ray", want one of "cleanrl", "mlagents", "rl_games", "rsl_rl", "sb3", "skrl"`},
		{"tag", "jsonl", "", map[string]string{"x": "rewards"}, `metrics.tags["x"]: got "rewards", want a canonical metric`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(ReaderConfig{Source: tt.source, Preset: tt.preset, Tags: tt.tags, MetricsFile: "m.jsonl", TBDir: "tb", StdoutFile: "out.log"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Open error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
