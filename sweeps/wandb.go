package sweeps

import (
	"fmt"
	"math"
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
		{"concurrency", d.smallInt(&s.Concurrency)},
		{"resources", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"task_queue", d.text(&s.Resources.TaskQueue)}, {"gpu_class", d.text(&s.Resources.GPUClass)},
				{"gpus", d.smallInt(&s.Resources.GPUs)}})
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

// pyNumber reads a number as W&B does (PyYAML): `1e-5` without a dot is a string there, so it is refused
// here with that explanation.
func (d *decoder) pyNumber(v *yaml.Node, path string) (float64, bool) {
	if v.Kind != yaml.ScalarNode {
		d.fail(v, path, describe(v), "a number")
		return 0, false
	}
	x, _ := wandb.Scalar(v)
	switch n := x.(type) {
	case int64:
		return float64(n), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			d.fail(v, path, v.Value, "a finite number")
			return 0, false
		}
		return n, true
	case string:
		if _, err := strconv.ParseFloat(n, 64); err == nil {
			d.fail(v, path, quote(n)+" (a string to W&B, which reads YAML 1.1: a number in exponent form needs a dot and a signed exponent)",
				"a number such as "+wandb.YAML11Hint(n))
			return 0, false
		}
	}
	d.fail(v, path, describe(v), "a number")
	return 0, false
}

func (d *decoder) pyInteger(v *yaml.Node, path string) (int64, bool) {
	if v.Kind == yaml.ScalarNode {
		if x, _ := wandb.Scalar(v); x != nil {
			if n, ok := x.(int64); ok {
				return n, true
			}
		}
	}
	d.fail(v, path, describe(v), "an integer")
	return 0, false
}

// wandbJSONValue reads a W&B value that may be a list or a mapping (net_arch: [64, 64]) as PyYAML does,
// kept as the text json.dumps would write: rlsweep's parameter values are scalars, and the argv renders
// it back as Python's str() of the list or dict.
func (d *decoder) wandbJSONValue(v *yaml.Node, path string) (any, bool) {
	x, ok := wandb.Tree(v)
	if !ok {
		d.fail(v, path, describe(v), "numbers, strings, bools, null, and lists and mappings of them")
		return nil, false
	}
	return wandb.JSON(x), true
}

func (d *decoder) wandbValue(v *yaml.Node, path string, allowNull bool) (any, bool) {
	const want = "a number, string or bool"
	if x, _ := wandb.Scalar(v); allowNull && v.Kind == yaml.ScalarNode && x == (wandb.None{}) {
		return nil, true // in a list of values: W&B passes None
	}
	if v.Kind != yaml.ScalarNode {
		d.fail(v, path, describe(v), want)
		return nil, false
	}
	x, ok := wandb.Scalar(v)
	switch n := x.(type) {
	case wandb.None:
		ok = false
	case float64:
		ok = ok && !math.IsNaN(n) && !math.IsInf(n, 0)
	}
	if !ok {
		d.fail(v, path, describe(v), want)
		return nil, false
	}
	return x, true
}

// wandbParams decodes a W&B parameters mapping (recursively for nested ones), appending leaves to
// s.Parameters under their flat names ("optimizer.lr"), and returns the tree.
func (d *decoder) wandbParams(v *yaml.Node, path, prefix string, s *Spec) []*wandb.Param {
	var tree []*wandb.Param
	d.each(v, path, "a mapping of parameter names to {values | value | min, max | distribution | parameters}", func(name, p string, k, pv *yaml.Node) {
		flat := prefix + name
		if pv.Kind == yaml.MappingNode && hasKey(pv, "parameters") {
			node := &wandb.Param{Name: name, Children: []*wandb.Param{}}
			d.mapping(pv, p, []field{{"parameters", func(cp string, cv *yaml.Node) {
				node.Children = d.wandbParams(cv, cp, flat+".", s)
			}}})
			tree = append(tree, node)
			return
		}
		key := wandbKey(strings.ReplaceAll(flat, ".", "/"))
		if prefix == "" {
			key = wandbKey(name)
		}
		prm := d.wandbLeaf(key, p, k, pv, s)
		s.Parameters = append(s.Parameters, prm)
		tree = append(tree, &wandb.Param{Name: name, JSON: prm.JSON})
	})
	return tree
}

// wandbLeaf decodes the parameter key, a leaf of the tree written at path.
func (d *decoder) wandbLeaf(key, path string, k, pv *yaml.Node, s *Spec) Parameter {
	fp := "parameters." + key // the field path the checker uses
	d.lines[fp] = k.Line
	prm := Parameter{Name: key, Line: k.Line}
	ints := 0 // bounds written as integers
	dist := ""
	d.mappingAt(pv, path, fp, d.wandbLeafFields(&prm, &ints, &dist))
	d.wandbDistribution(&prm, dist, ints, fp, pv)
	if ints == 2 {
		if s.wandb.intBounds == nil {
			s.wandb.intBounds = map[string]bool{}
		}
		s.wandb.intBounds[key] = true
	}
	return prm
}

// wandbLeafFields are the keys of a W&B parameter: what each sets in prm, the count of integer bounds
// and the distribution as written.
func (d *decoder) wandbLeafFields(prm *Parameter, ints *int, dist *string) []field {
	bound := func(dst **float64) func(string, *yaml.Node) {
		return func(bp string, bv *yaml.Node) {
			if f, ok := d.pyNumber(bv, bp); ok {
				*dst = &f
				if x, _ := wandb.Scalar(bv); x != nil {
					if _, isInt := x.(int64); isInt {
						*ints++
					}
				}
			}
		}
	}
	number := func(dst **float64) func(string, *yaml.Node) {
		return func(bp string, bv *yaml.Node) {
			if f, ok := d.pyNumber(bv, bp); ok {
				*dst = &f
			}
		}
	}
	return []field{
		{"values", func(vp string, vv *yaml.Node) { d.wandbValues(vv, vp, prm) }},
		{"value", func(vp string, vv *yaml.Node) { d.wandbConstant(vv, vp, prm) }},
		{"probabilities", func(vp string, vv *yaml.Node) {
			prm.Probabilities = []float64{}
			d.list(vv, vp, "a list of numbers", func(_ int, ep string, e *yaml.Node) {
				if f, ok := d.pyNumber(e, ep); ok {
					prm.Probabilities = append(prm.Probabilities, f)
				}
			})
		}},
		{"min", bound(&prm.Min)},
		{"max", bound(&prm.Max)},
		{"q", func(qp string, qv *yaml.Node) {
			number(&prm.Q)(qp, qv)
			if x, _ := wandb.Scalar(qv); x != nil {
				_, prm.QInt = x.(int64)
			}
		}},
		{"mu", number(&prm.Mu)},
		{"sigma", number(&prm.Sigma)},
		{"a", number(&prm.A)},
		{"b", number(&prm.B)},
		{"distribution", func(dp string, dv *yaml.Node) {
			d.text(dist)(dp, dv)
			if *dist != "" && !slices.Contains(wandb.Distributions, *dist) {
				d.fail(dv, dp, quote(*dist), oneOf(wandb.Distributions))
				*dist = ""
			}
		}},
	}
}

// wandbValues decodes a parameter's values: scalars, or, when any is a list or a mapping, every value
// kept as its JSON (Parameter.JSON).
func (d *decoder) wandbValues(vv *yaml.Node, vp string, prm *Parameter) {
	prm.Values = []any{}
	if vv.Kind == yaml.SequenceNode && slices.ContainsFunc(vv.Content, func(e *yaml.Node) bool { return e.Kind != yaml.ScalarNode }) {
		prm.JSON = true // lists or mappings among the values: every value is kept as its JSON
	}
	d.list(vv, vp, "a list of values", func(_ int, ep string, e *yaml.Node) {
		if prm.JSON {
			if x, ok := d.wandbJSONValue(e, ep); ok {
				prm.Values = append(prm.Values, x)
			}
		} else if x, ok := d.wandbValue(e, ep, true); ok {
			prm.Values = append(prm.Values, x)
		}
	})
}

// wandbConstant decodes a parameter's value: a scalar, or a list, mapping or null kept as its JSON.
func (d *decoder) wandbConstant(vv *yaml.Node, vp string, prm *Parameter) {
	null := false
	if vv.Kind == yaml.ScalarNode {
		x, _ := wandb.Scalar(vv)
		null = x == (wandb.None{}) // kept as JSON, since a nil Value is no value: the trainer gets None
	}
	if vv.Kind == yaml.SequenceNode || vv.Kind == yaml.MappingNode || null {
		if x, ok := d.wandbJSONValue(vv, vp); ok {
			prm.Value, prm.JSON = x, true
		}
	} else if x, ok := d.wandbValue(vv, vp, false); ok {
		prm.Value = x
	}
}

// mappingAt is mapping with the fields' lines also recorded under another path (the checker's).
func (d *decoder) mappingAt(n *yaml.Node, path, alias string, fields []field) {
	d.mapping(n, path, fields)
	if alias == path {
		return
	}
	for k, line := range d.lines {
		if rest, ok := strings.CutPrefix(k, path+"."); ok {
			d.lines[alias+"."+rest] = line
		}
	}
}

// wandbDistribution settles a W&B parameter's distribution: W&B's names for what rlsweep already has
// become rlsweep's (categorical and constant are values and value; log_uniform_values is log_uniform), and
// the forms with exponent bounds (log_uniform, inv_log_uniform, q_log_uniform) become value bounds, the
// same distribution. Keys that do not go with the distribution are refused, as W&B's schema does.
func (d *decoder) wandbDistribution(p *Parameter, dist string, ints int, path string, n *yaml.Node) {
	if dist == "" {
		d.wandbNoDistribution(p, ints, path, n)
		return
	}
	what := "distribution " + dist
	if dist == "categorical" {
		what += " (weights need categorical_w_probabilities)"
	}
	refused := d.wandbAllow(n, path, what, wandb.DistributionKeys(dist)...)
	switch dist {
	case "categorical", "categorical_w_probabilities":
		if p.Values == nil {
			d.wandbRefuse(n, path, "values", "values: [...] with distribution "+dist)
		}
		if dist == "categorical_w_probabilities" && p.Probabilities == nil {
			d.wandbRefuse(n, path, "probabilities", "probabilities: one per value, with distribution categorical_w_probabilities")
		}
		return
	case "constant":
		return
	}
	p.Distribution = dist
	if !refused {
		d.wandbBounds(p, dist, ints, path, n)
	}
}

// wandbNoDistribution settles a parameter without a distribution: values, value, or min and max
// (uniform, int_uniform when both are integers, as W&B infers).
func (d *decoder) wandbNoDistribution(p *Parameter, ints int, path string, n *yaml.Node) {
	switch {
	case p.Values != nil:
		d.wandbAllow(n, path, "values", "values", "probabilities")
	case p.Value != nil:
		d.wandbAllow(n, path, "value", "value")
	case p.Min != nil || p.Max != nil:
		p.Distribution = DistUniform
		if ints == 2 {
			p.Distribution = DistIntUniform
		}
		d.wandbAllow(n, path, "min and max without a distribution", "min", "max")
	default:
		if given := presentKeys(n, "mu", "sigma", "a", "b", "q", "probabilities"); len(given) > 0 {
			d.fail(n, path, "no distribution", "a distribution for "+strings.Join(given, ", "))
		}
	}
}

// wandbAllow refuses each key of wandb.ParamKeys in n that is not one of keys, saying they go with what;
// it reports whether it refused any, and then marks the parameter bad (one message per mistake).
func (d *decoder) wandbAllow(n *yaml.Node, path, what string, keys ...string) bool {
	refused := false
	for _, k := range presentKeys(n, wandb.ParamKeys...) {
		if !slices.Contains(keys, k) {
			d.wandbRefuse(n, path, k, "only "+strings.Join(keys, ", ")+" with "+what)
			refused = true
		}
	}
	if refused {
		d.bad[path] = true
	}
	return refused
}

// wandbRefuse reports key of the parameter at path, on its own line where it is written.
func (d *decoder) wandbRefuse(n *yaml.Node, path, key, want string) {
	d.bad[path+"."+key] = true
	d.errs = append(d.errs, &FieldError{File: d.file, Line: d.lineOr(path+"."+key, n.Line), Field: path + "." + key,
		Got: "a " + key, Want: want})
}

// presentKeys lists the keys of n among keys, in the order of keys.
func presentKeys(n *yaml.Node, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if hasKey(n, k) {
			out = append(out, k)
		}
	}
	return out
}

// wandbBounds settles the bounds of a distribution over a range: q defaults to 1.0 (W&B's, a float),
// both bounds are required, int_uniform takes integers, and exponent bounds become value bounds.
func (d *decoder) wandbBounds(p *Parameter, dist string, ints int, path string, n *yaml.Node) {
	if quantised(dist) || dist == "q_log_uniform" {
		if p.Q == nil {
			q := 1.0 // W&B's default, a float: the values stay floats
			p.Q = &q
		}
	}
	needBounds := slices.Contains(rangeDists, dist) || dist == "log_uniform_values" || dist == "inv_log_uniform" || dist == "q_log_uniform"
	if needBounds && (p.Min == nil || p.Max == nil) {
		for _, k := range []string{"min", "max"} {
			if !hasKey(n, k) {
				d.fail(n, path+"."+k, "nothing", "both min and max for distribution "+dist)
			}
		}
		return
	}
	if dist == DistIntUniform && ints != 2 {
		d.fail(n, path, fmt.Sprintf("min %s, max %s", num(*p.Min), num(*p.Max)), "integers for distribution int_uniform (W&B refuses 1.0)")
	}
	exp := func(f *float64, sign float64) *float64 { x := math.Exp(sign * *f); return &x }
	switch dist {
	case "log_uniform_values":
		p.Distribution = DistLogUniform
		if *p.Min <= 0 { // named as written: W&B's log_uniform, which takes exponents, allows it
			d.bad[path+".min"] = true
			d.errs = append(d.errs, &FieldError{File: d.file, Line: d.lineOr(path+".min", n.Line), Field: path + ".min",
				Got: num(*p.Min), Want: "a number > 0 for log_uniform_values (log_uniform takes exponents: min: -2.3 for e^-2.3)"})
		}
	case DistLogUniform: // W&B: the bounds are exponents
		p.Min, p.Max = exp(p.Min, 1), exp(p.Max, 1)
	case "q_log_uniform":
		p.Distribution = DistQLogUniformValues
		p.Min, p.Max = exp(p.Min, 1), exp(p.Max, 1)
	case "inv_log_uniform": // 1/x log-uniform with exponent bounds: x in [e^-max, e^-min]
		p.Distribution = DistInvLogUniformValues
		p.Min, p.Max = exp(p.Max, -1), exp(p.Min, -1)
	}
}

func (d *decoder) lineOr(path string, line int) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	return line
}

// wandbGrid enumerates the ranges W&B's grid search enumerates: int_uniform (every integer from min to
// max) and q_uniform (min, min + q, ... below max, as numpy's arange).
func (d *decoder) wandbGrid(s *Spec) {
	for i := range s.Parameters {
		p := &s.Parameters[i]
		if p.Values != nil { // W&B's grid plans each distinct value once
			var seen []valueKey
			p.Values = slices.DeleteFunc(p.Values, func(v any) bool {
				k := keyOf(v)
				if slices.Contains(seen, k) {
					return true
				}
				seen = append(seen, k)
				return false
			})
		}
		if p.Min == nil || p.Max == nil || *p.Min >= *p.Max {
			continue
		}
		lo, hi := *p.Min, *p.Max
		switch p.Distribution {
		case DistIntUniform:
			if hi-lo >= MaxTrials {
				continue // the checker reports the size
			}
			for x := lo; x <= hi; x++ {
				p.Values = append(p.Values, int64(x))
			}
		case DistQUniform:
			q := *p.Q
			if !(q > 0) || (hi-lo)/q >= MaxTrials {
				continue
			}
			ints := p.QInt && s.wandb.intBounds[p.Name] // numpy's arange gives integers only from integers
			for k := 0; lo+float64(k)*q < hi; k++ {
				x := lo + float64(k)*q
				if ints {
					p.Values = append(p.Values, int64(x))
				} else {
					p.Values = append(p.Values, x)
				}
			}
		default:
			continue
		}
		p.Min, p.Max, p.Q, p.QInt, p.Distribution = nil, nil, nil, false, ""
	}
}

// wandbKey is the rlsweep parameter name of a W&B parameter at a path ("optimizer/lr"): its dotted path,
// under "wandb." when that is a fixed column of results.csv (wandb.Key).
func wandbKey(path string) string { return wandb.Key(path, ReservedParamNames) }

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
