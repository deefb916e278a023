package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// DiagnoseOptions are diagnose's inputs.
type DiagnoseOptions struct {
	Path        string
	Preset      string
	Output      string // "text" or "json"
	WarmupSteps int64  // −1: 10% of TotalSteps
	TotalSteps  int64  // the run's step budget; 0: its last step
	Patience    int
	// StepsPerIteration converts an rsl_rl run's iterations to environment steps (0: don't).
	StepsPerIteration int64
	// StepKey names the W&B history key holding the step ("" for _step); W&B runs only.
	StepKey string
	// Actions is a categorical policy's number of actions (0: unknown), for diagnostics.Config.Actions.
	Actions int
}

var diagnoseOutputs = []string{"text", "json"}

func newDiagnoseCmd(f *Factory) *cobra.Command { return diagnoseCmd(f, nil) }

// diagnoseCmd builds the command; runF, when not nil, receives the parsed options instead of running.
func diagnoseCmd(f *Factory, runF func(*DiagnoseOptions) error) *cobra.Command {
	opts := &DiagnoseOptions{}
	cmd := &cobra.Command{
		Use:   "diagnose PATH|SWEEP/TRIAL",
		Short: "Run the diagnostics rules and the doctor on a past run's metrics; exit 3 if a stop rule fires",
		Long: "PATH is a metrics file of JSON lines, a TensorBoard log directory, a CSV file such as SB3's\n" +
			"progress.csv, a trainer's console log (rsl_rl's per-iteration table or SB3's table, told apart by\n" +
			"their content), or a trial's stored metrics in a local artifact store (its metrics folder, or\n" +
			"trials/<trial>/metrics.jsonl beside it: the folder's parts merged into one stream), a W&B run file\n" +
			"(run-<id>.wandb) or run directory, a $WANDB_DIR holding wandb/run-* (read as source auto: TensorBoard\n" +
			"event files under it if it has them, else the newest W&B run), or SWEEP/TRIAL: a\n" +
			"trial's metrics read from the artifact store (--store), with the sweep's total_steps from its stored\n" +
			"spec. The rules engine replays the records as the TrainSegment activity would have seen\n" +
			"them; the doctor then explains the run. Exit code 3 when a stop rule would have fired or the run ended collapsed (collapsed_at_end), 0 otherwise.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if !cmd.Flags().Changed("warmup-steps") {
				opts.WarmupSteps = -1
			} else if opts.WarmupSteps < 0 {
				return invalidInput(fmt.Errorf("--warmup-steps: got %d, want an integer ≥ 0", opts.WarmupSteps))
			} else if cmd.Flags().Changed("total-steps") {
				return invalidInput(fmt.Errorf("--total-steps: got %d with --warmup-steps %d, want one of the two (the warm-up is 10%% of the total)", opts.TotalSteps, opts.WarmupSteps))
			}
			if opts.StepsPerIteration < 0 {
				return invalidInput(fmt.Errorf("--steps-per-iteration: got %d, want an integer ≥ 1 (num_envs × num_steps_per_env)", opts.StepsPerIteration))
			}
			if opts.TotalSteps < 0 || cmd.Flags().Changed("total-steps") && opts.TotalSteps == 0 {
				return invalidInput(fmt.Errorf("--total-steps: got %d, want an integer ≥ 1 (the trainer's total_steps)", opts.TotalSteps))
			}
			if err := opts.validate(); err != nil {
				return invalidInput(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return runDiagnose(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Preset, "preset", "", fmt.Sprintf("tag mapping of the trainer that wrote the metrics, one of %s", metrics.QuotedList(metrics.Presets())))
	fl.StringVarP(&opts.Output, "output", "o", "text", `output format: "text" or "json"`)
	fl.Int64Var(&opts.WarmupSteps, "warmup-steps", 0, "steps during which sustained rules are silent (default 10% of --total-steps)")
	fl.Int64Var(&opts.TotalSteps, "total-steps", 0, "the run's step budget (trainer.total_steps), for the default warm-up as a sweep sets it (default: from the sweep's spec.json when PATH is a trial's metrics in a local artifact store, else the run's last step)")
	fl.IntVar(&opts.Patience, "patience", diagnostics.DefaultPatience, "consecutive records a sustained rule must hold to stop")
	fl.StringVar(&opts.StepKey, "step-key", "", "W&B runs: the logged key that holds the step, such as global_step (default _step, the count of wandb.log calls); as trainer.metrics.step_key")
	fl.Int64Var(&opts.StepsPerIteration, "steps-per-iteration", 0, "environment steps per iteration (num_envs × num_steps_per_env) to convert an rsl_rl run's iterations; as trainer.metrics.steps_per_iteration")
	fl.IntVar(&opts.Actions, "actions", 0, "a categorical policy's number of actions: entropy is then judged against its maximum, log(N) (default: unknown, the run's first entropies stand for it)")
	return cmd
}

func (o *DiagnoseOptions) validate() error {
	var errs []error
	if o.Preset != "" && !slices.Contains(metrics.Presets(), o.Preset) {
		errs = append(errs, fmt.Errorf("--preset: got %q, want one of %s", o.Preset, metrics.QuotedList(metrics.Presets())))
	}
	if !slices.Contains(diagnoseOutputs, o.Output) {
		errs = append(errs, fmt.Errorf("--output: got %q, want one of %s", o.Output, metrics.QuotedList(diagnoseOutputs)))
	}
	if o.Patience < 1 {
		errs = append(errs, fmt.Errorf("--patience: got %d, want an integer ≥ 1", o.Patience))
	}
	if o.Actions < 0 || o.Actions == 1 {
		errs = append(errs, fmt.Errorf("--actions: got %d, want the categorical policy's number of actions (≥ 2), or leave it out when unknown", o.Actions))
	}
	return errors.Join(errs...)
}

// diagnosis is what diagnose found; its JSON form is the --output json document.
type diagnosis struct {
	Path   string `json:"path"`
	Source string `json:"source"`
	Preset string `json:"preset,omitempty"`
	// PresetDetected: the preset was told from the run's tags, not given by --preset.
	PresetDetected bool   `json:"preset_detected,omitempty"`
	Steps          string `json:"steps,omitempty"` // what the steps count
	// SourceRead is the file or directory a wandb or auto source settled on, as "wandb (path)".
	SourceRead  string               `json:"source_read,omitempty"`
	Skipped     int                  `json:"skipped,omitempty"` // values that are not numbers (W&B media, tables, strings)
	SkippedKeys string               `json:"skipped_keys,omitempty"`
	Records     int                  `json:"records"`
	Malformed   int                  `json:"malformed"`
	LastError   string               `json:"last_error,omitempty"`
	WarmupSteps int64                `json:"warmup_steps"`
	TotalSteps  int64                `json:"total_steps,omitempty"`      // the budget the warm-up came from
	TotalsFrom  string               `json:"total_steps_from,omitempty"` // the spec.json it was read from
	Patience    int                  `json:"patience"`
	Stop        *diagnostics.Verdict `json:"stop"`
	// End is the verdict of the rules that judge a run once it is over (collapsed_at_end), when no stop
	// rule fired; nil when none did.
	End      *diagnostics.Verdict  `json:"end,omitempty"`
	Warnings []diagnostics.Verdict `json:"warnings"`
	Findings []diagnostics.Finding `json:"findings"`
	// OOM is what the sweep recorded of a trial diagnosed by reference (SWEEP/TRIAL) that ran out of
	// memory: where, the error and the next smaller value of its memory parameter; "" otherwise.
	OOM     string `json:"oom,omitempty"`
	records []metrics.Record
}

func runDiagnose(f *Factory, opts *DiagnoseOptions) error {
	ref := opts.Path
	var fromStore string // the stored spec.json of a trial diagnosed by reference
	var oom string       // a trial diagnosed by reference that ran out of memory: what the sweep recorded
	if _, err := os.Stat(ref); errors.Is(err, fs.ErrNotExist) {
		if sweepID, trialID, perr := workflows.ParseSweepRef(ref); perr == nil && trialID != "" {
			oom = storedOOM(f, sweepID, trialID)
			path, total, specURL, cleanup, err := fetchStoredTrial(f, sweepID, trialID)
			if err != nil && oom != "" {
				// Out of memory before its first record: the outcome is the diagnosis.
				if opts.Output == "json" {
					enc := json.NewEncoder(f.Out)
					enc.SetIndent("", "  ")
					return enc.Encode(&diagnosis{Path: ref, OOM: oom, Warnings: []diagnostics.Verdict{}, Findings: []diagnostics.Finding{}})
				}
				fmt.Fprintf(f.Out, "%s: no metrics stored\n\n%s\n", ref, oom)
				return nil
			}
			if err != nil {
				return err
			}
			defer cleanup()
			opts.Path = path
			if opts.WarmupSteps == -1 && opts.TotalSteps == 0 {
				opts.TotalSteps, fromStore = total, specURL
			}
		}
	}
	d, err := readRun(opts)
	if err != nil {
		return err
	}
	d.Path, d.OOM = ref, oom
	if fromStore != "" {
		d.TotalsFrom = fromStore
	}
	if opts.WarmupSteps == -1 && opts.TotalSteps == 0 {
		opts.TotalSteps, d.TotalsFrom = storedTotalSteps(opts.Path)
	}
	d.TotalSteps = opts.TotalSteps
	if err := judge(d, opts); err != nil {
		return err
	}
	if opts.Output == "json" {
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(d); err != nil {
			return err
		}
	} else {
		writeDiagnosis(f.Out, d)
	}
	if d.Stop != nil || d.End != nil {
		return withExitCode(exitDiverged, nil)
	}
	return nil
}

// storedOOM is what the sweep recorded of a trial that ended out of memory, or was not started for
// being at or above a value that did — "OUT OF MEMORY on <hardware>" and the error, which holds the
// next smaller value of the memory parameter (the sweep adds it) — or "" when the trial did not, or no
// result of it can be read.
func storedOOM(f *Factory, sweepID, trialID string) string {
	store, err := f.Store()
	if err != nil {
		return ""
	}
	ctx := context.Background()
	ss := sweepstore.New(store)
	trials, err := ss.ReadTrialSummaries(ctx, sweepID)
	if err != nil {
		return ""
	}
	for _, t := range trials {
		if t.TrialID != trialID || t.Outcome != results.OutcomeOOM {
			continue
		}
		where := "OUT OF MEMORY"
		if line := t.Hardware.Line(); line != "" {
			where += " on " + line
		}
		return where + "\n      " + strings.ReplaceAll(t.Error, "\n", "\n      ")
	}
	return ""
}

// fetchStoredTrial copies a stored trial's metrics stream (its merged parts, artifacts.CopyMetrics) from
// the artifact store into a temporary file, and reads the sweep's step budget from its stored spec.
func fetchStoredTrial(f *Factory, sweepID, trialID string) (path string, total int64, specURL string, cleanup func(), err error) {
	store, err := f.Store()
	if err != nil {
		return "", 0, "", nil, err
	}
	ctx := context.Background()
	ss := sweepstore.New(store)
	spec, err := ss.ReadSpec(ctx, sweepID)
	if err != nil {
		return "", 0, "", nil, fmt.Errorf("PATH %s/%s: %w", sweepID, trialID, err)
	}
	dir, err := os.MkdirTemp("", "rlsweep-diagnose-")
	if err != nil {
		return "", 0, "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "metrics.jsonl")
	out, err := os.Create(path)
	if err != nil {
		cleanup()
		return "", 0, "", nil, err
	}
	err = artifacts.CopyMetrics(ctx, store, sweepID, trialID, metrics.LineStep, out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if st, serr := os.Stat(path); serr == nil && st.Size() == 0 {
			err = fmt.Errorf("no metrics stored under %s", store.URL(artifacts.MetricsDir(sweepID, trialID)))
		}
	}
	if err != nil {
		cleanup()
		return "", 0, "", nil, invalidInput(fmt.Errorf("PATH: got %q (sweep %s, trial %s): %w", sweepID+"/"+trialID, sweepID, trialID, err))
	}
	return path, spec.Trainer.TotalSteps, ss.SpecURL(sweepID), cleanup, nil
}

// storedTotalSteps finds the step budget of a trial whose metrics lie in a local artifact store
// (sweeps/<name>/<id>/trials/<trial>/metrics, or metrics.jsonl beside it): trainer.total_steps of the sweep's spec.json, three
// directories up, and that file's path. 0 and "" when PATH lies elsewhere or the spec cannot be read.
func storedTotalSteps(path string) (int64, string) {
	trials := filepath.Dir(filepath.Dir(path))
	if filepath.Base(trials) != "trials" {
		return 0, ""
	}
	specPath := filepath.Join(filepath.Dir(trials), "spec.json")
	b, err := os.ReadFile(specPath)
	if err != nil {
		return 0, ""
	}
	var spec sweeps.Spec
	if json.Unmarshal(b, &spec) != nil || spec.Trainer.TotalSteps <= 0 {
		return 0, ""
	}
	return spec.Trainer.TotalSteps, specPath
}

// readRun reads every record of the metrics at opts.Path, whatever its format (metrics.Detect). Without
// --preset, the preset of a TensorBoard run is told from its tags (metrics.DetectPreset), so a legged_gym
// log is judged on its reward and losses, not on tags no rule knows.
func readRun(opts *DiagnoseOptions) (*diagnosis, error) {
	src := opts.Path
	st, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) && isMetricsDir(storedMetricsDir(src)) {
		src = storedMetricsDir(src) // a trial's metrics.jsonl: the parts in the folder beside it
		st, err = os.Stat(src)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, invalidInput(fmt.Errorf("PATH: got %q, want a metrics .jsonl file, a TensorBoard directory or event file, a progress.csv or monitor.csv, a console log, or a W&B run file or directory: it does not exist", opts.Path))
		}
		return nil, err
	}
	d := &diagnosis{Path: opts.Path, Preset: opts.Preset}
	c := metrics.ReaderConfig{Preset: opts.Preset, StepsPerIteration: opts.StepsPerIteration, StepKey: opts.StepKey}
	wandb := metrics.DetectWandb(src, st)
	if opts.StepKey != "" && wandb == "" {
		return nil, invalidInput(fmt.Errorf("--step-key: got %q for %s, want a W&B run file, run directory or $WANDB_DIR (it names a W&B history key)", opts.StepKey, opts.Path))
	}
	if wandb != "" {
		// A W&B run: its file or run directory (source wandb), or a $WANDB_DIR (source auto, which
		// prefers the TensorBoard files a sync_tensorboard run writes beside it).
		c.Source, c.WandbDir, c.TBDir = wandb, src, src
	} else if st.IsDir() && isMetricsDir(src) {
		merged, err := mergeMetricsDir(src)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(filepath.Dir(merged))
		c.Source, c.MetricsFile = metrics.SourceJSONL, merged
	} else {
		// A directory of event files or one event file, a CSV, a console log or JSON lines.
		var preset string
		if c.Source, preset, err = metrics.Detect(opts.Path); err != nil {
			return nil, err
		}
		if c.Preset == "" {
			c.Preset = preset
		}
		if c.Source == metrics.SourceTensorBoard {
			c.TBDir = opts.Path
		} else {
			c.MetricsFile, c.StdoutFile = opts.Path, opts.Path
		}
	}
	recs, stats, err := drain(c)
	if err != nil {
		return nil, err
	}
	if c.Preset == "" && stats.Preset != "" {
		// Told from the run's tags (metrics.Open does, as a sweep's reader does); read again with it
		// set, so that what the preset implies beyond names (rsl_rl's iterations) applies too.
		c.Preset, d.PresetDetected = stats.Preset, true
		if recs, stats, err = drain(c); err != nil {
			return nil, err
		}
	}
	d.Source, d.Preset, d.records = c.Source, c.Preset, recs
	d.Records, d.Malformed, d.LastError, d.Steps = len(recs), stats.Malformed, stats.LastError, stats.Steps
	d.SourceRead, d.Skipped, d.SkippedKeys = stats.Source, stats.Skipped, stats.SkippedKeys
	if d.Records == 0 {
		return nil, fmt.Errorf("%s: no metrics records (%d malformed; %s)", opts.Path, stats.Malformed, orNone(stats.LastError))
	}
	return d, nil
}

// drain opens the reader c describes and reads every record it has.
func drain(c metrics.ReaderConfig) ([]metrics.Record, metrics.ReaderStats, error) {
	r, err := metrics.Open(c)
	if err != nil {
		return nil, metrics.ReaderStats{}, invalidInput(err)
	}
	defer r.Close()
	recs, err := metrics.ReadAll(r)
	if err != nil {
		return nil, metrics.ReaderStats{}, err
	}
	return recs, r.Stats(), nil
}

// storedMetricsDir is the metrics folder a trial's metrics.jsonl in a local artifact store stands for
// (the same folder name beside it); "" for any other path.
func storedMetricsDir(path string) string {
	if filepath.Base(path) != "metrics.jsonl" {
		return ""
	}
	return filepath.Join(filepath.Dir(path), "metrics")
}

// isMetricsDir tells whether dir is a folder of stored metrics parts (artifacts.MetricsPartKey).
func isMetricsDir(dir string) bool {
	if dir == "" {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && artifacts.IsMetricsPart(e.Name()) {
			return true
		}
	}
	return false
}

// mergeMetricsDir writes the stream of a folder of stored metrics parts (artifacts.ReadMetrics) to a
// file in a new temporary directory and returns the file's path.
func mergeMetricsDir(dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "rlsweep-diagnose-")
	if err != nil {
		return "", err
	}
	f, err := os.Create(filepath.Join(tmp, "metrics.jsonl"))
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	w := bufio.NewWriter(f)
	err = artifacts.ReadMetricsDir(context.Background(), dir, math.MaxInt64, metrics.LineStep, func(line []byte, _ int64) error {
		w.Write(line)
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return f.Name(), nil
}

// sourceName is the source as the output names it: with its console format for stdout.
func sourceName(d *diagnosis) string {
	switch {
	case d.Source == metrics.SourceStdout || d.Source == metrics.SourceCSV:
		return d.Source + " (" + d.Preset + ")"
	case d.Source == metrics.SourceAuto && d.SourceRead != "":
		return d.Source + " → " + d.SourceRead
	case d.Source == metrics.SourceWandb && d.SourceRead != "":
		return d.SourceRead
	}
	return d.Source
}

func orNone(s string) string {
	if s == "" {
		return "no errors"
	}
	return s
}

// judge replays the records through the engine and asks the doctor.
func judge(d *diagnosis, opts *DiagnoseOptions) error {
	cfg := diagnostics.Config{WarmupSteps: opts.WarmupSteps, Patience: opts.Patience, Actions: opts.Actions}
	switch opts.WarmupSteps {
	case -1:
		cfg.WarmupSteps, cfg.TotalSteps = 0, lastStep(d.records)
		if opts.TotalSteps > 0 {
			cfg.TotalSteps = opts.TotalSteps
		}
	case 0:
		cfg.WarmupSteps = -1 // the engine's "none"
	}
	e, err := diagnostics.NewEngine(cfg)
	if err != nil {
		return invalidInput(err)
	}
	for _, r := range d.records {
		e.Observe(r)
	}
	d.WarmupSteps, d.Patience = max(e.WarmupSteps(), 0), opts.Patience
	if v, ok := e.Finish(); ok {
		d.End = &v
	}
	d.Warnings = e.Warnings()
	var stops []diagnostics.Verdict
	if v, ok := e.Stopped(); ok {
		d.Stop = &v
		stops = append(stops, v)
	}
	d.Findings = diagnostics.Diagnose(d.records, stops...)
	return nil
}

func writeDiagnosis(w io.Writer, d *diagnosis) {
	fmt.Fprintf(w, "%s: %s, %d records, %d malformed\n", d.Path, sourceName(d), d.Records, d.Malformed)
	if d.PresetDetected {
		fmt.Fprintf(w, "preset: %s (told from the run's tags; --preset overrides)\n", d.Preset)
	}
	if d.Steps != "" {
		fmt.Fprintf(w, "steps: %s\n", d.Steps)
	}
	if d.LastError != "" {
		fmt.Fprintf(w, "  last malformed: %s\n", d.LastError)
	}
	if d.Skipped > 0 {
		fmt.Fprintf(w, "skipped: %d values that are not numbers (%s)\n", d.Skipped, d.SkippedKeys)
	}
	if d.TotalsFrom != "" {
		fmt.Fprintf(w, "total steps: %d (trainer.total_steps of %s)\n", d.TotalSteps, d.TotalsFrom)
	}
	fmt.Fprintf(w, "warm-up: steps < %d, patience %d\n\n", d.WarmupSteps, d.Patience)
	if d.OOM != "" {
		fmt.Fprintf(w, "%s\n\n", d.OOM)
	}
	if d.Stop != nil {
		v := d.Stop
		fmt.Fprintf(w, "STOP  %s at step %d: %s = %g (threshold %g)\n", v.Rule, v.Step, v.Metric, v.Value, v.Threshold)
		if v.Objective != "" && !math.IsNaN(v.ObjectiveValue) {
			fmt.Fprintf(w, "      %s where the run stood: %g (mean of its last values)\n", v.Objective, v.ObjectiveValue)
		}
		fmt.Fprintf(w, "      %s\n", v.Advice)
		if len(v.Related) > 0 {
			fmt.Fprintf(w, "      related: %v\n", v.Related)
		}
	} else {
		fmt.Fprintln(w, "no stop rule fired")
	}
	if v := d.End; v != nil {
		fmt.Fprintf(w, "END   %s (the run is over, nothing to stop): %s\n      %s\n", v.Rule, v.Detail, v.Advice)
	}
	for _, v := range d.Warnings {
		if d.End != nil && v.Rule == d.End.Rule {
			continue
		}
		fmt.Fprintf(w, "warn  %s from step %d: %s = %g (threshold %g)\n", v.Rule, v.Step, v.Metric, v.Value, v.Threshold)
	}
	fmt.Fprintln(w, "\nfindings:")
	for _, f := range d.Findings {
		fmt.Fprintf(w, "%d. [%s] %s\n", f.Rank, f.Cause, f.Summary)
		for _, ev := range f.Evidence {
			fmt.Fprintf(w, "   evidence: %s = %g at step %d\n", ev.Metric, float64(ev.Value), ev.Step)
		}
		fmt.Fprintf(w, "   advice: %s\n", f.Advice)
	}
}

// lastStep is the highest step of records: a run's length when no budget is given. Not the last
// record's step: a TensorBoard run may log tags on other axes after its steps (rl_games writes each
// scalar against frames, epochs and seconds; Isaac Gym tasks their episode sums against epochs).
func lastStep(records []metrics.Record) int64 {
	var last int64
	for _, r := range records {
		last = max(last, r.Step)
	}
	return last
}
