package metrics

import (
	"fmt"
	"slices"
)

// Metric sources a trainer can write (the spec's trainer.metrics.source).
const (
	SourceJSONL       = "jsonl"
	SourceTensorBoard = "tensorboard"
	SourceStdout      = "stdout" // the trainer's console output; preset rsl_rl or sb3 picks the format
	SourceCSV         = "csv"    // a CSV file such as SB3's progress.csv
	SourceWandb       = "wandb"  // the W&B run file (run-<id>.wandb) under the trainer's $WANDB_DIR
	// SourceAuto follows the W&B run file and the TensorBoard event files and settles on whichever
	// yields records first (see Open).
	SourceAuto = "auto"
)

// Sources lists the metric sources Open accepts.
var Sources = []string{SourceJSONL, SourceTensorBoard, SourceStdout, SourceCSV, SourceWandb, SourceAuto}

// StdoutPresets lists the presets source stdout reads: each names a console format.
var StdoutPresets = []string{PresetRSLRL, PresetSB3}

// ReaderStats counts what a metrics reader has read so far.
type ReaderStats struct {
	Records   int    // records returned
	Malformed int    // lines or TFRecords dropped: unparsable, too long, failed CRC, step going backwards
	LastError string // why the last one was dropped, with file and line or offset; "" if none was
	// Steps says what the records' steps count (StepsEnv, StepsIterations, StepsTrainer, with where
	// they came from); "" before the first record.
	Steps string
	// Skipped counts values left out because they are not numbers (W&B: media, histograms, tables,
	// strings); SkippedKeys names their keys, the first few in order and how many more.
	Skipped     int
	SkippedKeys string
	// Source is the source read and its path, as "wandb (/…/run-<id>.wandb)", for the readers that
	// find their file themselves (wandb, auto once it has settled); "" for the others.
	Source string
	// Preset is the preset told from the records' tags when none was set (presetDetector); "" when one
	// was set or none is told yet.
	Preset string
}

// Reader follows the metrics a trainer writes while it runs. Poll returns the records that became
// complete since the previous Poll; a source that does not exist yet holds no records. Malformed input
// is counted in Stats, never returned as an error: errors are I/O failures.
type Reader interface {
	Poll() ([]Record, error)
	Stats() ReaderStats
	Close() error
}

// Finisher is a Reader that holds back a record until it is whole (TensorBoard: a step's scalars
// arrive in pieces, as the writer flushes). Finish returns what it holds, once the trainer has exited
// and nothing more will come.
type Finisher interface {
	Finish() []Record
}

// Every reader Open returns is a Reader; those that hold a record back are Finishers too.
var (
	_ Reader   = (*JSONLTail)(nil)
	_ Reader   = (*CSVTail)(nil)
	_ Finisher = (*RSLRLConsoleTail)(nil)
	_ Reader   = (*RSLRLConsoleTail)(nil)
	_ Finisher = (*SB3ConsoleTail)(nil)
	_ Reader   = (*SB3ConsoleTail)(nil)
	_ Finisher = (*TensorBoardTail)(nil)
	_ Reader   = (*TensorBoardTail)(nil)
	_ Finisher = (*WandbTail)(nil)
	_ Reader   = (*WandbTail)(nil)
	_ Finisher = (*autoTail)(nil)
	_ Reader   = (*autoTail)(nil)
)

// ReadAll reads r to the end, for a run whose trainer has exited: it polls until two Polls in a row
// return nothing (a TensorBoard reader returns a step's record once its file has gone quiet), then
// takes what a Finisher still holds (the last step, the last block).
func ReadAll(r Reader) ([]Record, error) {
	var recs []Record
	for empty := 0; empty < 2; {
		got, err := r.Poll()
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			empty++
			continue
		}
		empty = 0
		recs = append(recs, got...)
	}
	if f, ok := r.(Finisher); ok {
		recs = append(recs, f.Finish()...)
	}
	return recs, nil
}

// ReaderConfig says which metrics a reader follows.
type ReaderConfig struct {
	Source string            // one of Sources; "" means jsonl
	Preset string            // a framework's mapping (see Presets; for stdout, the console format)
	Tags   map[string]string // custom tag → canonical mappings laid over the preset (see NewMapping)
	// StepsPerIteration, when > 0, converts a trainer's iteration count to environment steps: the
	// record of iteration i gets step (i+1) × StepsPerIteration. It applies to the rsl_rl console
	// format and to TensorBoard steps.
	StepsPerIteration int64
	MetricsFile       string // jsonl and csv: the file
	TBDir             string // tensorboard: the directory of event files
	StdoutFile        string // stdout: the file the trainer's stdout goes to
	// WandbDir is, for wandb and auto, the trainer's $WANDB_DIR (the SDK writes
	// wandb/run-*/run-<id>.wandb under it), a W&B run directory or a .wandb file.
	WandbDir string
	// StepKey, for wandb and auto, names the logged key that holds the step of a W&B history row (as
	// W&B's define_metric(step_metric=...), e.g. global_step); "" is _step, the count of wandb.log calls.
	StepKey string
}

// Open returns the reader c describes: "jsonl" tails MetricsFile, "tensorboard" the event files under
// TBDir, "stdout" the console log StdoutFile in the format Preset names (rsl_rl or sb3), "csv" the CSV
// file MetricsFile, "wandb" the W&B run file under WandbDir (WandbTail), "auto" both the W&B run file
// under WandbDir and the event files under TBDir, settling on whichever yields records first (autoTail).
// Nothing is opened until the first Poll.
func Open(c ReaderConfig) (Reader, error) {
	r, err := open(c)
	if err != nil || c.Preset != "" || c.Source == SourceStdout {
		return r, err
	}
	return detectPreset(r, c.Tags), nil
}

// open is Open without telling the preset from the tags.
func open(c ReaderConfig) (Reader, error) {
	if c.StepsPerIteration < 0 {
		return nil, fmt.Errorf("metrics.steps_per_iteration: got %d, want an integer ≥ 0", c.StepsPerIteration)
	}
	if c.StepKey != "" && c.Source != SourceWandb && c.Source != SourceAuto {
		return nil, fmt.Errorf("metrics.step_key: got %q with source %q, want it only with source %s or %s (it names a W&B history key)", c.StepKey, c.Source, SourceWandb, SourceAuto)
	}
	switch c.Source {
	case SourceWandb, SourceAuto:
		m, err := NewMapping(c.Preset, c.Tags)
		if err != nil {
			return nil, err
		}
		if c.WandbDir == "" {
			return nil, fmt.Errorf("wandb dir: got \"\", want a directory for source %q", c.Source)
		}
		w := NewWandbTail(c.WandbDir, c.StepKey)
		w.mapping = m
		if c.Source == SourceWandb {
			return w, nil
		}
		if c.TBDir == "" {
			return nil, fmt.Errorf("tensorboard dir: got \"\", want a directory for source %q", SourceAuto)
		}
		t := NewTensorBoardTail(c.TBDir)
		t.mapping, t.stepsPerIter = m, c.StepsPerIteration
		t.iterations = c.Preset == PresetRSLRL
		return &autoTail{wb: w, tb: t}, nil
	case SourceJSONL, "":
		m, err := NewMapping(c.Preset, c.Tags)
		if err != nil {
			return nil, err
		}
		if c.MetricsFile == "" {
			return nil, fmt.Errorf("metrics file: got \"\", want a path for source %q", SourceJSONL)
		}
		t := NewJSONLTail(c.MetricsFile)
		t.mapping = m
		return t, nil
	case SourceTensorBoard:
		m, err := NewMapping(c.Preset, c.Tags)
		if err != nil {
			return nil, err
		}
		if c.TBDir == "" {
			return nil, fmt.Errorf("tensorboard dir: got \"\", want a directory for source %q", SourceTensorBoard)
		}
		t := NewTensorBoardTail(c.TBDir)
		t.mapping, t.stepsPerIter = m, c.StepsPerIteration
		t.iterations = c.Preset == PresetRSLRL
		return t, nil
	case SourceCSV:
		m, err := NewMapping(c.Preset, c.Tags)
		if err != nil {
			return nil, err
		}
		if c.MetricsFile == "" {
			return nil, fmt.Errorf("metrics file: got \"\", want a path for source %q", SourceCSV)
		}
		return NewCSVTail(c.MetricsFile, m), nil
	case SourceStdout:
		if !slices.Contains(StdoutPresets, c.Preset) {
			return nil, fmt.Errorf("metrics.preset: got %q with source %q, want one of %s (the console format)", c.Preset, SourceStdout, QuotedList(StdoutPresets))
		}
		if c.StdoutFile == "" {
			return nil, fmt.Errorf("stdout file: got \"\", want a path for source %q", SourceStdout)
		}
		switch c.Preset {
		case PresetRSLRL:
			m, err := newMapping(consolePresets, c.Preset, c.Tags)
			if err != nil {
				return nil, err
			}
			return NewRSLRLConsoleTail(c.StdoutFile, m, c.StepsPerIteration), nil
		case PresetSB3:
			m, err := NewMapping(c.Preset, c.Tags)
			if err != nil {
				return nil, err
			}
			return NewSB3ConsoleTail(c.StdoutFile, m), nil
		}
		return nil, fmt.Errorf("metrics.preset: got %q with source %q, want one of %s (the console format)", c.Preset, SourceStdout, QuotedList(StdoutPresets))
	}
	return nil, fmt.Errorf("metrics.source: got %q, want one of %s", c.Source, QuotedList(Sources))
}
