package trainer

import (
	"fmt"

	"github.com/rlsweep/rlsweep/diagnostics"
)

// Metric sources a trainer can write (the spec's trainer.metrics.source).
const (
	SourceJSONL       = "jsonl"
	SourceTensorBoard = "tensorboard"
)

// Sources lists the metric sources OpenReader accepts.
var Sources = []string{SourceJSONL, SourceTensorBoard}

// ReaderStats counts what a metrics reader has read so far.
type ReaderStats struct {
	Records   int    // records returned
	Malformed int    // lines or TFRecords dropped: unparsable, too long, failed CRC, step going backwards
	LastError string // why the last one was dropped, with file and line or offset; "" if none was
}

// Reader follows the metrics a trainer writes while it runs. Poll returns the records that became
// complete since the previous Poll; a source that does not exist yet holds no records. Malformed input
// is counted in Stats, never returned as an error: errors are I/O failures.
type Reader interface {
	Poll() ([]diagnostics.Record, error)
	Stats() ReaderStats
	Close() error
}

// Finisher is a Reader that holds back a record until it is whole (TensorBoard: a step's scalars
// arrive in pieces, as the writer flushes). Finish returns what it holds, once the trainer has exited
// and nothing more will come.
type Finisher interface {
	Finish() []diagnostics.Record
}

// OpenReader returns the reader for a trainer's metrics: source "jsonl" (or "") tails metricsFile,
// "tensorboard" tails the event files under tbDir. preset names a framework's tag mapping (see
// Presets; "" for none) and tags adds custom tag → canonical mappings on top of it (see NewMapping);
// both apply to either source. Nothing is opened until the first Poll.
func OpenReader(source, preset string, tags map[string]string, metricsFile, tbDir string) (Reader, error) {
	m, err := NewMapping(preset, tags)
	if err != nil {
		return nil, err
	}
	switch source {
	case SourceJSONL, "":
		if metricsFile == "" {
			return nil, fmt.Errorf("metrics file: got \"\", want a path for source %q", SourceJSONL)
		}
		t := NewJSONLTail(metricsFile)
		t.mapping = m
		return t, nil
	case SourceTensorBoard:
		if tbDir == "" {
			return nil, fmt.Errorf("tensorboard dir: got \"\", want a directory for source %q", SourceTensorBoard)
		}
		t := NewTensorBoardTail(tbDir)
		t.mapping = m
		return t, nil
	}
	return nil, fmt.Errorf("metrics.source: got %q, want one of %q", source, Sources)
}
