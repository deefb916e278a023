package sweeps

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweeps/wandb"
	"gopkg.in/yaml.v3"
)

// W&B sweep configs, read as they are (docs/spec.md, "W&B sweep configs"; wandb.IsConfig says which files
// are one). Each becomes an ordinary Spec: its command turns into argv templates (wandb.Command) that
// render, for each trial, exactly the argv W&B's agent would run; its parameters into Parameters, nested
// ones under dotted names. Package wandb reads the config as W&B does; this file decodes it into the Spec,
// reporting problems as the decoder reports them for rlsweep specs.

// Defaults for a W&B config, which says nothing about them.
const (
	// DefaultWandBRunCap is the number of configurations of a random W&B sweep without run_cap (W&B's
	// random search runs until stopped; rlsweep plans a fixed number).
	DefaultWandBRunCap = 20
	// DefaultWandBTotalSteps is trainer.total_steps of a W&B sweep without rlsweep.total_steps: a bound
	// the trainer is told (RLSWEEP_TOTAL_STEPS) and that sets the diagnostics warm-up (10%); the trainer's
	// own arguments decide how long it trains.
	DefaultWandBTotalSteps = 1_000_000_000
	// WandBArgsFile is the file, next to the trial's metrics file, that ${args_json_file} names.
	WandBArgsFile = wandb.ArgsFile
)

// wandbInfo is what a Spec read from a W&B config keeps about it, for Explain.
type wandbInfo struct {
	program     string
	programFrom string // the relative program as written, when it was found next to the config file
	// programAsFile: the command runs program as a file (${program} not after -m); programFirst: as
	// the command's first element, so it must be executable.
	programAsFile, programFirst bool
	programPath                 string // where a relative program that is not next to the config file was looked for
	nameFrom                    string // "project", "name" or "the file name"
	runCapSet                   bool
	target                      bool
	ignored                     []string        // keys accepted and not acted on
	intBounds                   map[string]bool // parameters whose min and max are both written as integers
}

// FormatWandB is Spec.Format for a spec read from a W&B sweep config.
const FormatWandB = "wandb"

// wandbDoc is what the top level of a W&B config gives that becomes more than one field of the Spec.
type wandbDoc struct {
	program, project, name string
	programNode            *yaml.Node   // nil without program
	command                []*yaml.Node // nil without command
	commandLine            int
	tree                   []*wandb.Param
}

// wandb decodes a W&B sweep config into s.
func (d *decoder) wandb(root *yaml.Node, s *Spec, filename string) {
	info := &wandbInfo{}
	s.wandb = info
	s.Format = FormatWandB
	s.Probes.Enabled = false
	s.Trainer.TotalSteps = DefaultWandBTotalSteps
	s.Trainer.Metrics = MetricsSource{Source: metrics.SourceAuto}
	doc := &wandbDoc{}
	d.mapping(root, "", d.wandbFields(doc, s, info))
	if !hasKey(root, "method") {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: root.Line, Field: "method", Got: "nothing",
			Want: "grid or random (W&B requires method)"})
	}
	if len(doc.tree) == 0 && !d.bad["parameters"] {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: d.lineOr("parameters", root.Line), Field: "parameters",
			Got: "none", Want: "at least one parameter (W&B requires parameters)"})
	}
	if (s.Method == MethodRandom || s.Method == MethodBayes) && !info.runCapSet && s.Trials == 0 {
		s.Trials = DefaultWandBRunCap
	}
	if s.Method == MethodGrid {
		if info.runCapSet {
			s.RunCap, s.Trials = s.Trials, 0 // a grid's trial count is the grid's: run_cap caps the runs started
		}
		d.wandbGrid(s)
	}
	wandbName(s, info, doc, filename)
	d.wandbProgram(doc, info, filename)
	s.Trainer.Command = wandb.Command(doc.command, doc.program, doc.tree)
	for _, p := range doc.tree {
		s.Trainer.WandBConfig = append(s.Trainer.WandBConfig, p.Leaves("")...)
	}
}

// wandbFields are the top-level keys of a W&B config: what each sets in s, doc and info.
func (d *decoder) wandbFields(doc *wandbDoc, s *Spec, info *wandbInfo) []field {
	ignore := func(key string) func(string, *yaml.Node) {
		return func(string, *yaml.Node) { info.ignored = append(info.ignored, key) }
	}
	refuse := func(want string) func(string, *yaml.Node) {
		return func(p string, v *yaml.Node) { d.fail(v, p, describe(v), want) }
	}
	return []field{
		{"program", func(p string, v *yaml.Node) { doc.programNode = v; d.pyString(&doc.program)(p, v) }},
		{"command", func(p string, v *yaml.Node) { d.wandbCommandList(v, p, doc) }},
		{"method", d.text(&s.Method)},
		{"metric", func(p string, v *yaml.Node) { d.wandbMetric(v, p, s, info) }},
		{"parameters", func(p string, v *yaml.Node) { doc.tree = d.wandbParams(v, p, "", s) }},
		{"run_cap", func(p string, v *yaml.Node) { d.wandbRunCap(v, p, s, info) }},
		{"early_terminate", func(p string, v *yaml.Node) { d.wandbEarlyTerminate(v, p, s) }},
		{"name", d.pyString(&doc.name)},
		{"project", d.pyString(&doc.project)},
		{"entity", ignore("entity")},
		{"description", d.text(&s.Description)},
		{"apiVersion", ignore("apiVersion")},
		{"kind", ignore("kind")},
		{"controller", ignore("controller")},
		{"job", refuse("no job: rlsweep runs the program of the config, not a W&B Launch job")},
		{"image_uri", refuse("no image_uri: rlsweep runs the program of the config, not a W&B Launch image")},
		{"scheduler", func(p string, v *yaml.Node) {
			d.fail(v, p, "a custom scheduler", "no scheduler: rlsweep plans with method grid, random or sobol")
		}},
		{"metrics", refuse("metric: one objective (multi-objective search is not available)")},
		{"rlsweep", func(p string, v *yaml.Node) { d.rlsweepBlock(v, p, s) }},
	}
}

// pyString decodes a value that PyYAML reads as a string.
func (d *decoder) pyString(dst *string) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		if x, ok := wandb.Scalar(v); ok && v.Kind == yaml.ScalarNode {
			if t, isStr := x.(string); isStr {
				*dst = t
				return
			}
		}
		d.fail(v, p, describe(v), "a string")
	}
}

// wandbCommandList decodes command: the argv W&B's agent runs, each element a scalar.
func (d *decoder) wandbCommandList(v *yaml.Node, path string, doc *wandbDoc) {
	doc.commandLine = v.Line
	doc.command = []*yaml.Node{}
	d.list(v, path, "a list of strings (the argv W&B's agent runs, with macros such as ${args})", func(_ int, ep string, e *yaml.Node) {
		if e.Kind != yaml.ScalarNode {
			d.fail(e, ep, describe(e), "a string")
			return
		}
		doc.command = append(doc.command, e)
	})
}

// wandbMetric decodes metric: name, goal (minimize by default, as W&B), target; impute and
// impute_while_running are accepted and not acted on.
func (d *decoder) wandbMetric(v *yaml.Node, path string, s *Spec, info *wandbInfo) {
	s.Metric.Goal = GoalMinimize // W&B's default goal
	if v.Kind == yaml.MappingNode && !hasKey(v, "name") {
		d.fail(v, path+".name", "nothing", "the name of the metric the trainer logs (W&B requires it)")
	}
	ignore := func(key string) func(string, *yaml.Node) {
		return func(string, *yaml.Node) { info.ignored = append(info.ignored, key) }
	}
	d.mapping(v, path, []field{
		{"name", d.text(&s.Metric.Name)},
		{"goal", d.text(&s.Metric.Goal)},
		{"target", func(tp string, tv *yaml.Node) {
			if f, ok := d.pyNumber(tv, tp); ok {
				s.Metric.Target = &f
				info.target = true
			}
		}},
		{"impute", ignore("metric.impute")},
		{"impute_while_running", ignore("metric.impute_while_running")},
	})
}

// wandbRunCap decodes run_cap: the number of trials (the runs started, for a grid).
func (d *decoder) wandbRunCap(v *yaml.Node, path string, s *Spec, info *wandbInfo) {
	if n, ok := d.pyInteger(v, path); ok {
		if n < 1 || n > MaxTrials {
			d.fail(v, path, strconv.FormatInt(n, 10), fmt.Sprintf("an integer in [1, %d]", MaxTrials))
			return
		}
		s.Trials = int(n)
		info.runCapSet = true
	}
}

// wandbName sets the sweep's name: project, else name, else the file's name, made a valid rlsweep name;
// a name that is not the sweep's becomes its description when it has none.
func wandbName(s *Spec, info *wandbInfo, doc *wandbDoc, filename string) {
	switch {
	case doc.project != "":
		s.Name, info.nameFrom = wandb.SanitizeName(doc.project), "project"
	case doc.name != "":
		s.Name, info.nameFrom = wandb.SanitizeName(doc.name), "name"
	default:
		base := filepath.Base(filename)
		s.Name, info.nameFrom = wandb.SanitizeName(strings.TrimSuffix(base, filepath.Ext(base))), "the file name"
	}
	if s.Description == "" && doc.name != "" && info.nameFrom != "name" {
		s.Description = doc.name
	}
}

// wandbProgram settles the program the command runs and how it runs it, and reports a missing program
// that the command runs.
func (d *decoder) wandbProgram(doc *wandbDoc, info *wandbInfo, filename string) {
	program := doc.program
	// The trainer runs in its trial's directory, not where W&B's agent would have been started: a relative
	// program that exists next to the config file is run from there.
	if program != "" && !filepath.IsAbs(program) {
		if p := filepath.Join(filepath.Dir(filename), program); isRegularFile(p) {
			if abs, err := filepath.Abs(p); err == nil {
				program, info.programFrom = abs, program
			}
		}
	}
	if program != "" && !filepath.IsAbs(program) && info.programFrom == "" {
		// Not found: kept as written for the command, resolved against the config's directory for
		// CheckTrainerPath's message.
		if abs, err := filepath.Abs(filepath.Join(filepath.Dir(filename), program)); err == nil {
			info.programPath = abs
		}
	}
	doc.program, info.program = program, program
	command := doc.command
	runsProgram := command == nil || slices.ContainsFunc(command, func(n *yaml.Node) bool { return n.Value == "${program}" })
	info.programAsFile = command == nil
	for i, n := range command {
		if n.Value == "${program}" && (i == 0 || command[i-1].Value != "-m") {
			info.programAsFile = true
			info.programFirst = info.programFirst || i == 0
		}
	}
	if doc.programNode == nil && runsProgram {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: max(doc.commandLine, 1), Field: "program",
			Got: "nothing", Want: "the training script W&B's agent runs (program: train.py), which command runs as ${program} (an rlsweep spec names it in trainer instead)"})
	}
}

// expandAliases resolves anchors, aliases and << merge keys as PyYAML does (wandb.ExpandAliases); a
// document that would expand past wandb.MaxExpandedNodes is reported and returned as it is.
func (d *decoder) expandAliases(root *yaml.Node) *yaml.Node {
	out, ok := wandb.ExpandAliases(root)
	if !ok {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: 1, Field: "yaml",
			Got: fmt.Sprintf("more than %d nodes once aliases are expanded", wandb.MaxExpandedNodes), Want: "a smaller document"})
	}
	return out
}

func isRegularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// rlsweepBlock decodes the `rlsweep:` block of a W&B config: rlsweep's own settings, under the names of
// the spec (trainer keys without the trainer. prefix). Problems are reported under the spec's names.
func (d *decoder) rlsweepBlock(v *yaml.Node, path string, s *Spec) {
	t := &s.Trainer
	d.mapping(v, path, []field{
		{"metrics", func(p string, v *yaml.Node) {
			t.Metrics = MetricsSource{} // the block replaces the W&B default, not merges with it
			d.metricsSource(&t.Metrics)(p, v)
		}},
		{"total_steps", d.bigInt(&t.TotalSteps)},
		{"segment_steps", d.bigInt(&t.SegmentSteps)},
		{"environment", d.textMap(&t.Environment)},
		{"stall_timeout", d.duration(&t.StallTimeout)},
		{"grace_period", d.duration(&t.GracePeriod)},
		{"seeds", func(p string, v *yaml.Node) { d.seeds(v, p, s) }},
		{"trials", d.smallInt(&s.Trials)},
		{"sampler_seed", d.bigInt(&s.SamplerSeed)},
		{"order", d.text(&s.Order)},
		{"concurrency", d.smallInt(&s.Concurrency)},
		{"resources", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"task_queue", d.text(&s.Resources.TaskQueue)}, {"gpu_class", d.text(&s.Resources.GPUClass)},
				{"gpus", d.float(&s.Resources.GPUs)}, {"memory_param", d.text(&s.Resources.MemoryParam)}})
		}},
		{"retries", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"max_attempts", d.smallInt(&s.Retries.MaxAttempts)},
				{"max_infra_retries", d.smallInt(&s.Retries.MaxInfraRetries)}})
		}},
		{"diagnostics", func(p string, v *yaml.Node) { d.diagnostics(v, p, &s.Diagnostics) }},
		{"bayes", func(p string, v *yaml.Node) { d.bayesSection(v, p, s) }},
		{"probes", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"enabled", d.flag(&s.Probes.Enabled)}, {"command", d.textList(&s.Probes.Command)}})
		}},
	})
	// The checker names fields as the spec does (trainer.metrics.source, seeds[0]); give them the lines
	// written under rlsweep.
	trainerKeys := []string{"metrics", "total_steps", "segment_steps", "environment", "stall_timeout", "grace_period"}
	for k, line := range d.lines {
		rest, ok := strings.CutPrefix(k, path+".")
		if !ok {
			continue
		}
		top := rest
		if i := strings.IndexAny(top, ".["); i >= 0 {
			top = top[:i]
		}
		if slices.Contains(trainerKeys, top) {
			d.lines["trainer."+rest] = line
		} else {
			d.lines[rest] = line
		}
	}
}

// wandbFuncs are the template functions of W&B commands (wandb.Funcs); RenderCommand passes every argv
// through wandb.Finish.
var wandbFuncs = wandb.Funcs(ReservedParamNames)

// WandBConfigYAML is the run config W&B's agent writes for a run and points WANDB_SWEEP_PARAM_PATH at
// (wandb.ConfigYAML), for a trial's params and the spec's Trainer.WandBConfig.
func WandBConfigYAML(params map[string]any, paths []string) ([]byte, error) {
	return wandb.ConfigYAML(params, paths, ReservedParamNames)
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
