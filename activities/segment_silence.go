package activities

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer"
)

// metricsFix is how each way of logging reaches rlsweep; the metric sources wandb and auto are named as
// the spec spells them.
const metricsFix = "fix: a script that logs with wandb.log needs `metrics: {source: wandb}` (or `source: auto` with a W&B sweep config); " +
	"one that writes TensorBoard events needs `metrics: {source: tensorboard}` with its SummaryWriter pointed at $" + trainer.EnvTBDir +
	"; JSON lines go to $" + trainer.EnvMetricsFile + " (docs/trainer-contract.md)"

// noRecords fails an attempt whose trainer exited 0 without writing a single metrics record over the
// whole trial: it started fresh (no checkpoint to resume from, so no earlier record of the trial's
// training stands) and its source read nothing. Such a trial has no objective, and a "completed" one
// would hide that nothing was measured. nil when the attempt took in a record or resumed.
func (r *segmentRun) noRecords() error {
	if r.records.Records() > 0 || r.resumedAt > 0 || r.result.ResumedFrom != "" {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trial %s: the trainer exited 0 without writing a single metrics record, so the trial has no objective; %s\n",
		r.in.Trial.ID, r.sourceRead())
	if signs := r.tellTales(); len(signs) > 0 {
		fmt.Fprintf(&b, "but it left signs of logging elsewhere: %s\n", strings.Join(signs, "; "))
	}
	b.WriteString(metricsFix)
	if tail := runner.TailFile(r.logPath, 2048, r.a.masker()); strings.TrimSpace(tail) != "" {
		b.WriteString("\nlog tail:\n" + tail)
	}
	return r.unusable(ErrNoMetrics, b.String())
}

// sourceRead says which source read what, and found nothing.
func (r *segmentRun) sourceRead() string {
	m := r.in.Trainer.Metrics
	switch m.Source {
	case "", metrics.SourceJSONL:
		return fmt.Sprintf("metrics source jsonl read %s (%s) and found nothing there", trainer.EnvMetricsFile, r.metrics)
	case metrics.SourceCSV:
		return fmt.Sprintf("metrics source csv read %s (%s) and found no row there", trainer.EnvMetricsFile, r.metrics)
	case metrics.SourceTensorBoard:
		return fmt.Sprintf("metrics source tensorboard (preset %q) read the event files under %s (%s) and found no scalar it maps",
			m.Preset, trainer.EnvTBDir, r.tbDir)
	case metrics.SourceWandb:
		return fmt.Sprintf("metrics source wandb read the W&B run file under WANDB_DIR (%s: wandb/run-*/run-*.wandb) and found no history row there (%s)",
			r.dir, r.readerSaid())
	case metrics.SourceAuto:
		return fmt.Sprintf("metrics source auto read the W&B run file under WANDB_DIR (%s) and the event files under %s (%s) and found no record in either (%s)",
			r.dir, trainer.EnvTBDir, r.tbDir, r.readerSaid())
	case metrics.SourceStdout:
		return fmt.Sprintf("metrics source stdout (preset %q) read the trainer's output (%s) and found no table it parses",
			m.Preset, r.logPath)
	}
	return fmt.Sprintf("metrics source %s read nothing (%s: %s, %s: %s, output: %s)",
		m.Source, trainer.EnvMetricsFile, r.metrics, trainer.EnvTBDir, r.tbDir, r.logPath)
}

// readerSaid is what the reader counted: malformed records and values left out (not numbers).
func (r *segmentRun) readerSaid() string {
	st := r.reader.Stats()
	out := fmt.Sprintf("%d malformed", st.Malformed)
	if st.LastError != "" {
		out += ", the last: " + st.LastError
	}
	if st.Skipped > 0 {
		out += fmt.Sprintf("; %d values left out as not numbers: %s", st.Skipped, st.SkippedKeys)
	}
	return out
}

// maxTellTaleFiles bounds the files tellTales looks at in the trainer's working directory.
const maxTellTaleFiles = 2000

// tellTales names what the trainer left that shows it logged somewhere its source does not read: W&B
// lines in its output or a wandb directory, TensorBoard event files outside $RLSWEEP_TB_DIR, metrics
// files under other names than $RLSWEEP_METRICS_FILE. The working directory is the attempt's scratch
// directory, whose own files (checkpoints, rlsweep's bookkeeping) are not looked at.
func (r *segmentRun) tellTales() []string {
	var signs []string
	source := r.in.Trainer.Metrics.Source
	if source != "wandb" && logHasWandB(r.logPath) {
		signs = append(signs, `its output has "wandb:" lines: it logs with wandb.log, which `+"`metrics: {source: wandb}`"+` reads`)
	}
	var events, others []string
	wandbDir := false
	seen := 0
	_ = filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxTellTaleFiles {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(r.dir, path)
		if d.IsDir() {
			switch {
			case path == r.ckptDir:
				return filepath.SkipDir
			case d.Name() == "wandb" && source != "wandb":
				wandbDir = true
			}
			return nil
		}
		name := d.Name()
		switch {
		case strings.Contains(name, "tfevents"):
			if source != metrics.SourceTensorBoard || !strings.HasPrefix(path, r.tbDir+string(filepath.Separator)) {
				events = append(events, rel)
			}
		case path == r.metrics || ownScratchFile(name):
		case strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".csv") || strings.HasSuffix(name, ".json") && strings.Contains(name, "metric"):
			others = append(others, rel)
		}
		return nil
	})
	if wandbDir && len(signs) == 0 {
		signs = append(signs, "it made a wandb directory: it logs with wandb.log, which `metrics: {source: wandb}` reads")
	}
	if len(events) > 0 {
		where := "outside $" + trainer.EnvTBDir
		if source != metrics.SourceTensorBoard {
			where = "while the source is " + orDefault(source, metrics.SourceJSONL)
		}
		signs = append(signs, fmt.Sprintf("it wrote TensorBoard event files %s: %s (use `metrics: {source: tensorboard}` and point the writer at $%s)",
			where, listFew(events), trainer.EnvTBDir))
	}
	if len(others) > 0 {
		sign := fmt.Sprintf("it wrote %s, not $%s (%s)", listFew(others), trainer.EnvMetricsFile, filepath.Base(r.metrics))
		if slices.ContainsFunc(others, func(p string) bool { return filepath.Base(p) == "progress.csv" }) && source != metrics.SourceCSV {
			sign += "; SB3's progress.csv is read with `metrics: {source: csv}`"
		}
		signs = append(signs, sign)
	}
	return signs
}

// ownScratchFile: the files of an attempt's scratch directory that rlsweep writes itself.
func ownScratchFile(name string) bool {
	switch name {
	case "metrics.canonical.jsonl", "attempt.json", "attempt.lock", wandbConfigFile, "stdout.log":
		return true
	}
	return false
}

// logHasWandB says whether the trainer's output has a line W&B's client prints ("wandb: ...").
func logHasWandB(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 1<<20) // the first megabyte: wandb.init prints its lines at the start
	n, _ := f.Read(buf)
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "wandb:") {
			return true
		}
	}
	return false
}

func listFew(paths []string) string {
	slices.Sort(paths)
	if len(paths) > 3 {
		return strings.Join(paths[:3], ", ") + fmt.Sprintf(" and %d more", len(paths)-3)
	}
	return strings.Join(paths, ", ")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// unusable is the error of an attempt whose trainer ran but reported nothing usable: a trainer failure
// (counted in the details like a crash), never retried (ErrNoMetrics, ErrObjectiveMissing).
func (r *segmentRun) unusable(errType, msg string) error {
	r.failTrainer()
	return temporal.NewNonRetryableApplicationError(msg, errType, nil, r.details())
}

// objectiveSeen says whether a record of the trial carried the objective's metric: one of this
// attempt's, an earlier attempt's of the segment (Heartbeat.ObjectiveSeen), or an earlier segment's
// (SegmentInput.ObjectiveSeen).
func (r *segmentRun) objectiveSeen() bool {
	if _, ok := r.records.Objective(); ok {
		r.hb.ObjectiveSeen = true
	}
	return r.in.ObjectiveSeen || r.hb.ObjectiveSeen
}

// objectiveOverdue fails the attempt once its records went past the warm-up (objectiveWatch) and no
// record of the trial carried the objective's metric: without it the trial has no objective, and the
// sweep could rank nothing. It stores the records taken in so far first. Before the warm-up the Trial
// workflow only warns (results.MissingMetricWarning), at each segment's end.
func (r *segmentRun) objectiveOverdue(ctx context.Context) error {
	if r.records.Records() == 0 || r.objectiveSeen() {
		return nil
	}
	when := newObjectiveWatch(r.in).overdue(r.records.LastStep())
	if when == "" {
		return nil
	}
	if err := r.flush(ctx); err != nil {
		r.log(ctx).Warn("storing metrics before failing the trial failed", "error", err)
	}
	return r.objectiveMissing(when)
}

// objectiveAtEnd fails an attempt whose trainer exited 0 with records, none of the trial's carrying the
// objective's metric, either past the warm-up or at the trial's last segment (its last chance to report
// one): such a trial would end "completed" with no objective. Earlier segments that end before the
// warm-up only warn.
func (r *segmentRun) objectiveAtEnd() error {
	if r.records.Records() == 0 || r.objectiveSeen() {
		return nil
	}
	if when := newObjectiveWatch(r.in).atEnd(r.records.LastStep()); when != "" {
		return r.objectiveMissing(when)
	}
	return nil
}

func (r *segmentRun) objectiveMissing(when string) error {
	keys := r.records.MissingMetric()
	carried := "no metric at all, only steps"
	if len(keys) > 0 {
		carried = strings.Join(keys, ", ")
	}
	msg := fmt.Sprintf("trial %s: metric %q: no record of the trial carried the objective's metric %s, so the trial has no objective; its records carry %s",
		r.in.Trial.ID, r.in.Metric, when, carried)
	if near := nearestMetric(r.in.Metric, keys); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	msg += "\nfix: set metric.name to the key the trainer logs, map its tag to the objective with trainer.metrics.tags, or make the trainer log it" +
		" (one it logs only late, a final evaluation, needs diagnostics.warmup_steps past that step)"
	return r.unusable(ErrObjectiveMissing, msg)
}

// nearestMetric is the key of keys most likely meant by metric, or "" when none is close: one whose
// last path component (after '/' or '.') is metric, ignoring case, or else the one of least edit
// distance to metric (whole key or last component), when that distance is at most a third of metric's
// length (at least 2).
func nearestMetric(metric string, keys []string) string {
	if metric == "" || len(keys) == 0 {
		return ""
	}
	want := strings.ToLower(metric)
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for _, k := range sorted {
		lk := strings.ToLower(k)
		if lk == want || lastComponent(lk) == want || strings.HasSuffix(lk, "/"+want) || strings.HasSuffix(lk, "."+want) {
			return k
		}
	}
	best, bestD := "", max(2, len(want)/3)+1
	for _, k := range sorted {
		lk := strings.ToLower(k)
		d := min(sweeps.EditDistance(want, lk), sweeps.EditDistance(want, lastComponent(lk)))
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func lastComponent(k string) string {
	if i := strings.LastIndexAny(k, "/."); i >= 0 {
		return k[i+1:]
	}
	return k
}
