package metrics

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Format detection: which source (and preset) the metrics at a path are, for a run read after the
// fact (rlsweep diagnose) rather than named by a spec's trainer.metrics.

// DetectWandb tells whether path is a W&B run: a file that starts with the run file's magic ":W&B" or
// a directory holding a .wandb file (a run directory) give SourceWandb; a directory holding
// wandb/run-* or offline-run-* directories (a $WANDB_DIR) gives SourceAuto. "" for anything else.
func DetectWandb(path string, st fs.FileInfo) string {
	if !st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return ""
		}
		defer f.Close()
		b := make([]byte, 4)
		if n, _ := io.ReadFull(f, b); n == 4 && string(b) == ":W&B" || strings.HasSuffix(path, ".wandb") {
			return SourceWandb
		}
		return ""
	}
	if IsWandbRunDir(path) {
		return SourceWandb
	}
	if p, err := WandbRunFile(path); err == nil && p != "" {
		return SourceAuto
	}
	return ""
}

// sniffBytes is how much of a file Detect looks at.
const sniffBytes = 64 << 10

// Detect tells the source of the metrics at path (not a W&B run: DetectWandb) and the preset its
// format implies, "" when none: a directory, or a file named like an event file (tfevents), is
// TensorBoard (the reader walks either); a .csv file is a CSV (SB3's progress.csv: preset sb3); a file
// showing rsl_rl's "Learning iteration" header is its console log; one holding an SB3 table row of
// time/ total_timesteps is SB3's console log; anything else is read as JSON lines.
func Detect(path string) (source, preset string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if st.IsDir() || strings.Contains(filepath.Base(path), "tfevents") {
		return SourceTensorBoard, "", nil
	}
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return SourceCSV, PresetSB3, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	b := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", "", err
	}
	b = b[:n]
	switch {
	case bytes.Contains(b, []byte("Learning iteration ")):
		return SourceStdout, PresetRSLRL, nil
	case sb3TableRow.Match(b):
		return SourceStdout, PresetSB3, nil
	}
	return SourceJSONL, "", nil
}

// sb3TableRow matches the row of SB3's console table that gives its step.
var sb3TableRow = regexp.MustCompile(`(?m)^\|\s+total_timesteps\s+\|\s+\d+\s+\|`)
