package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

// Detect tells a console log and a progress.csv from JSON lines by their content and name, whatever
// the file is called, and a directory or an event file is TensorBoard.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	fixture := func(name, as string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, as)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(as, content string) string {
		p := filepath.Join(dir, as)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		path, source, preset string
	}{
		{fixture("rsl_rl_v1.log", "train.log"), SourceStdout, PresetRSLRL},
		{fixture("rsl_rl_v4.log", "out.txt"), SourceStdout, PresetRSLRL},
		{fixture("sb3_stdout.log", "sb3.out"), SourceStdout, PresetSB3},
		{fixture("sb3_progress.csv", "progress.csv"), SourceCSV, PresetSB3},
		{write("metrics.jsonl", `{"step":1,"reward":2}`+"\n"), SourceJSONL, ""},
		{write("empty", ""), SourceJSONL, ""},
		{write("events.out.tfevents.1.host", ""), SourceTensorBoard, ""},
		{dir, SourceTensorBoard, ""},
	} {
		source, preset, err := Detect(tt.path)
		if err != nil || source != tt.source || preset != tt.preset {
			t.Errorf("Detect(%s) = %q, %q, %v; want %q, %q", filepath.Base(tt.path), source, preset, err, tt.source, tt.preset)
		}
	}
	if _, _, err := Detect(filepath.Join(dir, "missing")); err == nil {
		t.Error("Detect of a missing path: no error")
	}
}

func TestDetectWandb(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, content, want string
	}{
		{"run-abc.wandb", "", SourceWandb},
		{"history.bin", ":W&B\x00\x00", SourceWandb},
		{"metrics.jsonl", `{"step":1}`, ""},
	} {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := DetectWandb(p, st); got != tt.want {
			t.Errorf("DetectWandb(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
	empty := t.TempDir()
	st, _ := os.Stat(empty)
	if got := DetectWandb(empty, st); got != "" {
		t.Errorf("DetectWandb(an empty directory) = %q, want none", got)
	}
}
