// Package metrics is the one home of the metric record: what a trainer reports each iteration, every
// reader that turns a trainer's output into records, the canonical line codec, and format detection.
//
// It is a pure package: only the standard library, no Temporal, AWS, network or processes. The trainer
// contract's environment variables stay in package trainer; the artifact store (artifacts) keeps the
// bytes of stored lines and parses none of them: it is handed LineStep.
//
// # The record
//
// Record is one training iteration: its environment step, every numeric value it carried (NaN and
// ±Inf kept) and the checkpoint it announced. The canonical metric names (Reward, ValueLoss, Entropy,
// …, listed in CanonicalMetrics) are the keys the diagnostics rules and reports know; a preset
// (Mapping, NewMapping) maps a framework's own tags onto them. Float and Record's MarshalJSON give
// the NaN-safe JSON form the results and divergence dumps use.
//
// # The line codec
//
// A stored metrics line is canonical JSON: AppendRecordJSON writes it (step first, keys sorted,
// NaN/Infinity as Python writes them), ParseJSONLine reads any trainer's JSON line back into a Record,
// and LineStep reads a line's step without decoding the rest, for merging a trial's stored parts.
//
// # The sources
//
//   - SourceJSONL: a file of JSON lines (JSONLTail), the contract's RLSWEEP_METRICS_FILE.
//   - SourceTensorBoard: TensorBoard event files under a directory (TensorBoardTail).
//   - SourceStdout: a trainer's console log, rsl_rl's per-iteration table (RSLRLConsoleTail) or SB3's
//     table (SB3ConsoleTail), picked by the preset.
//   - SourceCSV: a CSV file such as SB3's progress.csv or monitor.csv (CSVTail).
//   - SourceWandb: the W&B run file under the trainer's $WANDB_DIR (WandbTail).
//   - SourceAuto: the W&B run file and TensorBoard event files, settling on whichever yields records
//     first.
//
// Open builds the reader a ReaderConfig (a spec's trainer.metrics) names. Detect and DetectWandb tell
// which source a path holds when no spec says it (rlsweep diagnose).
//
// # The reader interface
//
// Every reader is a Reader: Poll returns the records completed since the previous Poll (a file that
// does not exist yet has none), Stats counts what was read and dropped (malformed input is counted,
// never an error), Close releases the files. A reader that holds a record back until it is whole
// (TensorBoard, the console tables, W&B) is also a Finisher: Finish returns what it holds once the
// trainer has exited. ReadAll drains a reader of a finished run.
//
// # Adding a reader
//
// Add a Source constant (and to Sources), a type with Poll, Stats and Close (and Finish if it holds
// records back) in its own file, an assertion beside the others in reader.go, a case in Open, and, if
// a path can be told to hold it, a case in Detect. Follow a growing file with lineTail where the format
// is line-based; map tags with a Mapping; count malformed input in ReaderStats. Add tests with fixtures
// under testdata and a fuzz test of the parser.
package metrics
