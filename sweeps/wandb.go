package sweeps

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/metrics"
	"gopkg.in/yaml.v3"
)

// W&B sweep configs, read as they are (docs/spec.md, "W&B sweep configs"; isWandB says which files are
// one). Each becomes an ordinary Spec: its command turns into argv templates
// that render, for each trial, exactly the argv W&B's agent would run (wandb/wandb_agent.py and
// wandb/sdk/launch/sweeps/utils.py in github.com/wandb/wandb); its parameters into Parameters, nested
// ones under dotted names.

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
	WandBArgsFile = "wandb-args.json"
)

// W&B's command macros, as its agent expands them.
const (
	wandbEnv         = "/usr/bin/env"
	wandbInterpreter = "python"
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

// isWandB reports whether a top-level mapping is a W&B sweep config: no trainer and no key that only
// rlsweep specs have, and a key that only W&B configs have, or parameters with method or without name
// (an rlsweep spec always has a name; a W&B config that lacks method and program is told so).
func isWandB(root *yaml.Node) bool {
	has := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		has[root.Content[i].Value] = true
	}
	for _, k := range []string{"trainer", "seeds", "trials", "sampler_seed", "probes", "diagnostics", "concurrency",
		"resources", "retries", "artifacts", "regression"} {
		if has[k] {
			return false
		}
	}
	for _, k := range []string{"program", "command", "project", "entity", "run_cap", "controller", "job", "image_uri",
		"scheduler", "apiVersion", "kind", "metrics", "rlsweep"} {
		if has[k] {
			return true
		}
	}
	return has["parameters"] && (has["method"] || !has["name"])
}

// wandbKey is the rlsweep parameter name of a W&B parameter at a path ("optimizer/lr"): its dotted path
// ("optimizer.lr"), under "wandb." when that is a fixed column of results.csv (a W&B parameter named
// seed becomes wandb.seed; the trainer still gets --seed).
func wandbKey(path string) string {
	key := strings.ReplaceAll(path, "/", ".")
	if slices.Contains(ReservedParamNames, key) {
		return "wandb." + key
	}
	return key
}

var wandbEnvVarRe = regexp.MustCompile(`\$\{envvar\:([A-Z0-9_]*)\}`)

// wandbParam is one parameter of the W&B tree: a leaf (a Parameter) or a nested group.
type wandbParam struct {
	name     string
	json     bool          // a leaf whose values are JSON texts (Parameter.JSON)
	children []*wandbParam // nested parameters; nil for a leaf
}

// leaves lists the flat paths ("optimizer/lr") of the leaves under p.
func (p *wandbParam) leaves(prefix string) []string {
	path := prefix + p.name
	if p.children == nil {
		if p.json {
			return []string{path + jsonLeaf}
		}
		return []string{path}
	}
	var out []string
	for _, c := range p.children {
		out = append(out, c.leaves(path+"/")...)
	}
	return out
}

// wandb decodes a W&B sweep config into s.
func (d *decoder) wandb(root *yaml.Node, s *Spec, filename string) {
	info := &wandbInfo{}
	s.wandb = info
	s.Format = FormatWandB
	s.Probes.Enabled = false
	s.Trainer.TotalSteps = DefaultWandBTotalSteps
	s.Trainer.Metrics = MetricsSource{Source: metrics.SourceAuto}
	var program, project, name string
	var programNode *yaml.Node
	var command []*yaml.Node
	var tree []*wandbParam
	commandLine := 0
	ignore := func(key string) func(string, *yaml.Node) {
		return func(string, *yaml.Node) { info.ignored = append(info.ignored, key) }
	}
	str := func(dst *string) func(string, *yaml.Node) {
		return func(p string, v *yaml.Node) {
			if x, ok := pyScalar(v); ok && v.Kind == yaml.ScalarNode {
				if t, isStr := x.(string); isStr {
					*dst = t
					return
				}
			}
			d.fail(v, p, describe(v), "a string")
		}
	}
	d.mapping(root, "", []field{
		{"program", func(p string, v *yaml.Node) { programNode = v; str(&program)(p, v) }},
		{"command", func(p string, v *yaml.Node) {
			commandLine = v.Line
			command = []*yaml.Node{}
			d.list(v, p, "a list of strings (the argv W&B's agent runs, with macros such as ${args})", func(_ int, ep string, e *yaml.Node) {
				if e.Kind != yaml.ScalarNode {
					d.fail(e, ep, describe(e), "a string")
					return
				}
				command = append(command, e)
			})
		}},
		{"method", d.text(&s.Method)},
		{"metric", func(p string, v *yaml.Node) {
			s.Metric.Goal = GoalMinimize // W&B's default goal
			if v.Kind == yaml.MappingNode && !hasKey(v, "name") {
				d.fail(v, p+".name", "nothing", "the name of the metric the trainer logs (W&B requires it)")
			}
			d.mapping(v, p, []field{
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
		}},
		{"parameters", func(p string, v *yaml.Node) { tree = d.wandbParams(v, p, "", s) }},
		{"run_cap", func(p string, v *yaml.Node) {
			if n, ok := d.pyInteger(v, p); ok {
				if n < 1 || n > MaxTrials {
					d.fail(v, p, strconv.FormatInt(n, 10), fmt.Sprintf("an integer in [1, %d]", MaxTrials))
					return
				}
				s.Trials = int(n)
				info.runCapSet = true
			}
		}},
		{"early_terminate", func(p string, v *yaml.Node) { d.wandbEarlyTerminate(v, p, s) }},
		{"name", str(&name)},
		{"project", str(&project)},
		{"entity", ignore("entity")},
		{"description", d.text(&s.Description)},
		{"apiVersion", ignore("apiVersion")},
		{"kind", ignore("kind")},
		{"controller", ignore("controller")},
		{"job", func(p string, v *yaml.Node) {
			d.fail(v, p, describe(v), "no job: rlsweep runs the program of the config, not a W&B Launch job")
		}},
		{"image_uri", func(p string, v *yaml.Node) {
			d.fail(v, p, describe(v), "no image_uri: rlsweep runs the program of the config, not a W&B Launch image")
		}},
		{"scheduler", func(p string, v *yaml.Node) {
			d.fail(v, p, "a custom scheduler", "no scheduler: rlsweep plans with method grid, random or sobol")
		}},
		{"metrics", func(p string, v *yaml.Node) {
			d.fail(v, p, describe(v), "metric: one objective (multi-objective search is not available)")
		}},
		{"rlsweep", func(p string, v *yaml.Node) { d.rlsweepBlock(v, p, s) }},
	})
	if !hasKey(root, "method") {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: root.Line, Field: "method", Got: "nothing",
			Want: "grid or random (W&B requires method)"})
	}
	if len(tree) == 0 && !d.bad["parameters"] {
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
	// The sweep's name: project, else name, else the file's name, made a valid rlsweep name.
	switch {
	case project != "":
		s.Name, info.nameFrom = sanitizeName(project), "project"
	case name != "":
		s.Name, info.nameFrom = sanitizeName(name), "name"
	default:
		base := filepath.Base(filename)
		s.Name, info.nameFrom = sanitizeName(strings.TrimSuffix(base, filepath.Ext(base))), "the file name"
	}
	if s.Description == "" && name != "" && info.nameFrom != "name" {
		s.Description = name
	}
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
	info.program = program
	runsProgram := command == nil || slices.ContainsFunc(command, func(n *yaml.Node) bool { return n.Value == "${program}" })
	info.programAsFile = command == nil
	for i, n := range command {
		if n.Value == "${program}" && (i == 0 || command[i-1].Value != "-m") {
			info.programAsFile = true
			info.programFirst = info.programFirst || i == 0
		}
	}
	if programNode == nil && runsProgram {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: max(commandLine, 1), Field: "program",
			Got: "nothing", Want: "the training script W&B's agent runs (program: train.py), which command runs as ${program} (an rlsweep spec names it in trainer instead)"})
	}
	s.Trainer.Command = wandbCommand(command, program, tree, info)
	for _, p := range tree {
		s.Trainer.WandBConfig = append(s.Trainer.WandBConfig, p.leaves("")...)
	}
}

// WandBConfigYAML is the run config W&B's agent writes for a run and points WANDB_SWEEP_PARAM_PATH at
// (wandb/wandb_agent.py, _command_run; wandb/sdk/lib/config_util.py, save_config_file_from_dict), which
// wandb.init() reads into wandb.config: "wandb_version: 1", then each top-level parameter, keys sorted
// as W&B's server sends them, as {value: ...}, a nested parameter's value the mapping of its own. The
// values are written in YAML's flow style as PyYAML reads them back (floats always with a dot or an
// exponent PyYAML takes for a float, strings double-quoted).
func WandBConfigYAML(params map[string]any, paths []string) ([]byte, error) {
	root, err := wandbDict(params, paths)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("wandb_version: 1\n")
	if len(root.keys) > 0 {
		b.WriteString("\n")
	}
	for i, k := range root.keys {
		b.WriteString(pyJSONString(k) + ": {value: " + yamlFlow(root.vals[i]) + "}\n")
	}
	return []byte(b.String()), nil
}

// yamlFlow writes v in YAML's flow style so that PyYAML (YAML 1.1) reads back the same Python value: JSON
// (pyJSON) but for floats, which PyYAML takes for floats only with a dot (it writes 1.0e-05 where repr
// writes 1e-05) and whose non-finite values it spells .nan and .inf.
func yamlFlow(v any) string {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
		s := pyFloatRepr(x)
		if !strings.Contains(s, ".") {
			s = strings.Replace(s, "e", ".0e", 1)
		}
		return s
	case pyDict:
		return x.format(pyJSONString, yamlFlow)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = yamlFlow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return pyJSON(v)
}

func isRegularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// maxExpandedNodes bounds the YAML nodes a W&B config may expand to through its aliases.
const maxExpandedNodes = 100_000

// expandAliases resolves anchors, aliases and << merge keys as PyYAML does, copying each aliased node.
// A document that would expand past maxExpandedNodes is reported, not expanded.
func (d *decoder) expandAliases(root *yaml.Node) *yaml.Node {
	count := 0
	var expand func(n *yaml.Node) *yaml.Node
	expand = func(n *yaml.Node) *yaml.Node {
		count++
		if count > maxExpandedNodes {
			return n
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			return expand(n.Alias)
		}
		c := *n
		c.Anchor = ""
		c.Content = nil
		if n.Kind != yaml.MappingNode {
			for _, ch := range n.Content {
				c.Content = append(c.Content, expand(ch))
			}
			return &c
		}
		var merged []*yaml.Node // keys merged in by <<, which the mapping's own keys override
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style == 0 {
				sources := []*yaml.Node{expand(v)}
				if sources[0].Kind == yaml.SequenceNode {
					sources = sources[0].Content
				}
				for _, src := range sources {
					if src.Kind == yaml.MappingNode {
						merged = append(merged, src.Content...)
					}
				}
				continue
			}
			c.Content = append(c.Content, expand(k), expand(v))
		}
		for i := 0; i+1 < len(merged); i += 2 {
			if !hasKey(&c, merged[i].Value) {
				c.Content = append(c.Content, merged[i], merged[i+1])
			}
		}
		return &c
	}
	out := expand(root)
	if count > maxExpandedNodes {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: 1, Field: "yaml",
			Got: fmt.Sprintf("more than %d nodes once aliases are expanded", maxExpandedNodes), Want: "a smaller document"})
		return root
	}
	return out
}

// sanitizeName makes a W&B project or sweep name a valid rlsweep sweep name (NameRule): characters
// outside [A-Za-z0-9._-] become '-', a leading '.', '_' or '-' is dropped, at most 63 characters.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	out := strings.TrimLeft(string(b), "._-")
	if len(out) > 63 {
		out = out[:63]
	}
	if out == "" {
		out = "wandb-sweep"
	}
	return out
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
	x, _ := pyScalar(v)
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
				"a number such as "+yaml11Hint(n))
			return 0, false
		}
	}
	d.fail(v, path, describe(v), "a number")
	return 0, false
}

// yaml11Hint rewrites a number such as 1e-5 the way YAML 1.1 reads it as a float: 1.0e-5.
func yaml11Hint(s string) string {
	mant, exp, ok := strings.Cut(strings.ToLower(s), "e")
	if !ok {
		return s
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if exp != "" && exp[0] != '-' && exp[0] != '+' {
		exp = "+" + exp
	}
	return mant + "e" + exp
}

func (d *decoder) pyInteger(v *yaml.Node, path string) (int64, bool) {
	if v.Kind == yaml.ScalarNode {
		if x, _ := pyScalar(v); x != nil {
			if n, ok := x.(int64); ok {
				return n, true
			}
		}
	}
	d.fail(v, path, describe(v), "an integer")
	return 0, false
}

// wandbValue reads a parameter value: a number, string or bool as PyYAML reads it.
// jsonLeaf marks, in a template's leaf path, a parameter whose values are JSON texts.
const jsonLeaf = "#json"

// wandbJSONValue reads a W&B value that may be a list or a mapping (net_arch: [64, 64]) as PyYAML does,
// kept as the text json.dumps would write: rlsweep's parameter values are scalars, and the argv renders
// it back as Python's str() of the list or dict.
func (d *decoder) wandbJSONValue(v *yaml.Node, path string) (any, bool) {
	x, ok := pyTree(v)
	if !ok {
		d.fail(v, path, describe(v), "numbers, strings, bools, null, and lists and mappings of them")
		return nil, false
	}
	return pyJSON(x), true
}

// pyTree reads a node and everything under it as PyYAML does.
func pyTree(n *yaml.Node) (any, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		x, ok := pyScalar(n)
		if f, isFloat := x.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, false
		}
		return x, ok
	case yaml.SequenceNode:
		out := []any{}
		for _, c := range n.Content {
			x, ok := pyTree(c)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case yaml.MappingNode:
		var out pyDict
		for i := 0; i+1 < len(n.Content); i += 2 {
			x, ok := pyTree(n.Content[i+1])
			if !ok || n.Content[i].Kind != yaml.ScalarNode {
				return nil, false
			}
			out.keys, out.vals = append(out.keys, n.Content[i].Value), append(out.vals, x)
		}
		return out, true
	}
	return nil, false
}

func (d *decoder) wandbValue(v *yaml.Node, path string, allowNull bool) (any, bool) {
	const want = "a number, string or bool"
	if x, _ := pyScalar(v); allowNull && v.Kind == yaml.ScalarNode && x == (pyNone{}) {
		return nil, true // in a list of values: W&B passes None
	}
	if v.Kind != yaml.ScalarNode {
		d.fail(v, path, describe(v), want)
		return nil, false
	}
	x, ok := pyScalar(v)
	switch n := x.(type) {
	case pyNone:
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

// wandbDists are the distribution names a W&B parameter may give.
var wandbDists = []string{"constant", "categorical", "categorical_w_probabilities", DistIntUniform, DistUniform, DistQUniform,
	DistLogUniform, "log_uniform_values", "inv_log_uniform", DistInvLogUniformValues, "q_log_uniform", DistQLogUniformValues,
	DistNormal, DistQNormal, DistLogNormal, DistQLogNormal, DistBeta, DistQBeta}

// wandbParams decodes a W&B parameters mapping (recursively for nested ones), appending leaves to
// s.Parameters under their flat names ("optimizer.lr"), and returns the tree.
func (d *decoder) wandbParams(v *yaml.Node, path, prefix string, s *Spec) []*wandbParam {
	var tree []*wandbParam
	d.each(v, path, "a mapping of parameter names to {values | value | min, max | distribution | parameters}", func(name, p string, k, pv *yaml.Node) {
		flat := prefix + name
		if pv.Kind == yaml.MappingNode && hasKey(pv, "parameters") {
			node := &wandbParam{name: name, children: []*wandbParam{}}
			d.mapping(pv, p, []field{{"parameters", func(cp string, cv *yaml.Node) {
				node.children = d.wandbParams(cv, cp, flat+".", s)
			}}})
			tree = append(tree, node)
			return
		}
		key := wandbKey(strings.ReplaceAll(flat, ".", "/"))
		if prefix == "" {
			key = wandbKey(name)
		}
		fp := "parameters." + key // the field path the checker uses
		d.lines[fp] = k.Line
		prm := Parameter{Name: key, Line: k.Line}
		ints := 0
		bound := func(dst **float64) func(string, *yaml.Node) {
			return func(bp string, bv *yaml.Node) {
				if f, ok := d.pyNumber(bv, bp); ok {
					*dst = &f
					if x, _ := pyScalar(bv); x != nil {
						if _, isInt := x.(int64); isInt {
							ints++
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
		dist := ""
		d.mappingAt(pv, p, fp, []field{
			{"values", func(vp string, vv *yaml.Node) {
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
			}},
			{"value", func(vp string, vv *yaml.Node) {
				null := false
				if vv.Kind == yaml.ScalarNode {
					x, _ := pyScalar(vv)
					null = x == (pyNone{}) // kept as JSON, since a nil Value is no value: the trainer gets None
				}
				if vv.Kind == yaml.SequenceNode || vv.Kind == yaml.MappingNode || null {
					if x, ok := d.wandbJSONValue(vv, vp); ok {
						prm.Value, prm.JSON = x, true
					}
				} else if x, ok := d.wandbValue(vv, vp, false); ok {
					prm.Value = x
				}
			}},
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
				if x, _ := pyScalar(qv); x != nil {
					_, prm.QInt = x.(int64)
				}
			}},
			{"mu", number(&prm.Mu)},
			{"sigma", number(&prm.Sigma)},
			{"a", number(&prm.A)},
			{"b", number(&prm.B)},
			{"distribution", func(dp string, dv *yaml.Node) {
				d.text(&dist)(dp, dv)
				if dist != "" && !slices.Contains(wandbDists, dist) {
					d.fail(dv, dp, quote(dist), oneOf(wandbDists))
					dist = ""
				}
			}},
		})
		d.wandbDistribution(&prm, dist, ints, fp, pv)
		if ints == 2 {
			if s.wandb.intBounds == nil {
				s.wandb.intBounds = map[string]bool{}
			}
			s.wandb.intBounds[key] = true
		}
		s.Parameters = append(s.Parameters, prm)
		tree = append(tree, &wandbParam{name: name, json: prm.JSON})
	})
	return tree
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

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// wandbDistribution settles a W&B parameter's distribution: W&B's names for what rlsweep already has
// become rlsweep's (categorical and constant are values and value; log_uniform_values is log_uniform), and
// the forms with exponent bounds (log_uniform, inv_log_uniform, q_log_uniform) become value bounds, the
// same distribution. Keys that do not go with the distribution are refused, as W&B's schema does.
func (d *decoder) wandbDistribution(p *Parameter, dist string, ints int, path string, n *yaml.Node) {
	bad := func(key, want string) {
		d.bad[path+"."+key] = true
		d.errs = append(d.errs, &FieldError{File: d.file, Line: d.lineOr(path+"."+key, n.Line), Field: path + "." + key,
			Got: "a " + key, Want: want})
	}
	has := func(keys ...string) []string {
		var out []string
		for _, k := range keys {
			if hasKey(n, k) {
				out = append(out, k)
			}
		}
		return out
	}
	refused := false
	allow := func(what string, keys ...string) {
		for _, k := range has("values", "value", "probabilities", "min", "max", "q", "mu", "sigma", "a", "b") {
			if !slices.Contains(keys, k) {
				bad(k, "only "+strings.Join(keys, ", ")+" with "+what)
				refused = true
			}
		}
		if refused {
			d.bad[path] = true // one message per mistake
		}
	}
	switch dist {
	case "":
		switch {
		case p.Values != nil:
			allow("values", "values", "probabilities")
		case p.Value != nil:
			allow("value", "value")
		case p.Min != nil || p.Max != nil:
			p.Distribution = DistUniform
			if ints == 2 {
				p.Distribution = DistIntUniform
			}
			allow("min and max without a distribution", "min", "max")
		default:
			if len(has("mu", "sigma", "a", "b", "q", "probabilities")) > 0 {
				d.fail(n, path, "no distribution", "a distribution for "+strings.Join(has("mu", "sigma", "a", "b", "q", "probabilities"), ", "))
			}
		}
		return
	case "categorical", "categorical_w_probabilities":
		if dist == "categorical" {
			allow("distribution categorical (weights need categorical_w_probabilities)", "values")
		} else {
			allow("distribution "+dist, "values", "probabilities")
		}
		if p.Values == nil {
			bad("values", "values: [...] with distribution "+dist)
		}
		if dist == "categorical_w_probabilities" && p.Probabilities == nil {
			bad("probabilities", "probabilities: one per value, with distribution categorical_w_probabilities")
		}
		return
	case "constant":
		allow("distribution constant", "value")
		return
	case DistNormal, DistLogNormal:
		allow("distribution "+dist, "mu", "sigma")
	case DistQNormal, DistQLogNormal:
		allow("distribution "+dist, "mu", "sigma", "q")
	case DistBeta:
		allow("distribution beta", "a", "b")
	case DistQBeta:
		allow("distribution q_beta", "a", "b", "q")
	case DistQUniform, "q_log_uniform", DistQLogUniformValues:
		allow("distribution "+dist, "min", "max", "q")
	default:
		allow("distribution "+dist, "min", "max")
	}
	p.Distribution = dist
	if refused {
		return
	}
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

// wandbCommand turns a W&B command (W&B's default when there is none) into argv templates.
func wandbCommand(command []*yaml.Node, program string, tree []*wandbParam, info *wandbInfo) []string {
	var elems []string
	if command == nil {
		elems = []string{"${env}", "${interpreter}", "${program}", "${args}"}
	} else {
		for _, n := range command {
			x, ok := pyScalar(n)
			if !ok {
				x = n.Value
			}
			elems = append(elems, pyStr(x))
		}
	}
	type top struct {
		name  string
		paths []string
	}
	var tops []top
	var all []string
	for _, p := range tree {
		ls := p.leaves("")
		tops = append(tops, top{p.name, ls})
		all = append(all, ls...)
	}
	// W&B's server hands the agent a run's config with its keys sorted (Go's encoding/json sorts them), so
	// the flags come in that order, not the file's.
	slices.SortStableFunc(tops, func(a, b top) int { return strings.Compare(a.name, b.name) })
	call := func(fn string, paths []string, extra ...string) string {
		args := append(extra, ".Params")
		for _, p := range paths {
			args = append(args, strconv.Quote(p))
		}
		return "{{" + fn + " " + strings.Join(args, " ") + "}}"
	}
	var argv []string
	for _, e := range elems {
		if wandbEnvVarRe.MatchString(e) {
			argv = append(argv, envVarTemplate(e))
			continue
		}
		if !strings.HasPrefix(e, "${") || !strings.HasSuffix(e, "}") {
			argv = append(argv, literalTemplate(e))
			continue
		}
		switch e[2 : len(e)-1] {
		case "env":
			argv = append(argv, wandbEnv)
		case "interpreter":
			argv = append(argv, wandbInterpreter)
		case "program":
			argv = append(argv, literalTemplate(program))
		case "args":
			for _, t := range tops {
				argv = append(argv, "--"+t.name+"="+call("wandbValue", t.paths))
			}
		case "args_no_hyphens":
			for _, t := range tops {
				argv = append(argv, t.name+"="+call("wandbValue", t.paths))
			}
		case "args_append_hydra":
			for _, t := range tops {
				argv = append(argv, "+"+t.name+"="+call("wandbValue", t.paths))
			}
		case "args_override_hydra":
			for _, t := range tops {
				argv = append(argv, "++"+t.name+"="+call("wandbValue", t.paths))
			}
		case "args_no_equals":
			for _, t := range tops {
				argv = append(argv, "--"+t.name, call("wandbValue", t.paths))
			}
		case "args_no_boolean_flags":
			for _, t := range tops {
				argv = append(argv, call("wandbFlag", t.paths))
			}
		case "args_json":
			argv = append(argv, call("wandbJSON", all))
		case "args_json_file":
			argv = append(argv, call("wandbJSONFile", all, ".MetricsFile"))
		}
		// Any other ${...} is dropped, as W&B's agent drops a macro it does not know.
	}
	return argv
}

// literalTemplate is a template that renders s as it is.
func literalTemplate(s string) string {
	if !strings.Contains(s, "{{") && !strings.Contains(s, "}}") {
		return s
	}
	return "{{" + strconv.Quote(s) + "}}"
}

// envVarTemplate renders ${envvar:NAME} from the worker's environment at run time (NAME itself when it is
// not set, as W&B's agent does), the rest as it is.
func envVarTemplate(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range wandbEnvVarRe.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > last {
			b.WriteString("{{" + strconv.Quote(s[last:m[0]]) + "}}")
		}
		b.WriteString("{{envvar " + strconv.Quote(s[m[2]:m[3]]) + "}}")
		last = m[1]
	}
	if last < len(s) {
		b.WriteString("{{" + strconv.Quote(s[last:]) + "}}")
	}
	return b.String()
}

// Markers a template function returns for RenderCommand to act on: an argument to leave out
// (${args_no_boolean_flags} with a false bool), and the JSON to write to the ${args_json_file} file.
const (
	omitArgMark  = "\x00rlsweep:omit\x00"
	argsFileMark = "\x00rlsweep:args-json-file\x00"
)

// wandbFuncs are the template functions of W&B commands.
var wandbFuncs = map[string]any{
	"wandbValue": func(params map[string]any, paths ...string) (string, error) {
		v, err := wandbTree(params, paths)
		return pyStr(v), err
	},
	"wandbFlag": func(params map[string]any, paths ...string) (string, error) {
		v, err := wandbTree(params, paths)
		name := strings.TrimSuffix(strings.SplitN(paths[0], "/", 2)[0], jsonLeaf)
		if b, ok := v.(bool); ok {
			if b {
				return "--" + name, err
			}
			return omitArgMark, err
		}
		return "--" + name + "=" + pyStr(v), err
	},
	"wandbJSON": func(params map[string]any, paths ...string) (string, error) {
		v, err := wandbDict(params, paths)
		return pyJSON(v), err
	},
	"wandbJSONFile": func(_ string, params map[string]any, paths ...string) (string, error) {
		v, err := wandbDict(params, paths)
		return argsFileMark + pyJSON(v), err
	},
	"envvar": func(name string) (string, error) {
		for _, prefix := range []string{"RLSWEEP_", "TEMPORAL_", "AWS_"} {
			if strings.HasPrefix(name, prefix) {
				// The worker's own settings and credentials never reach a trainer (docs/trainer-contract.md).
				return "", fmt.Errorf("${envvar:%s}: the worker's %s* variables never reach a trainer; set what the trainer needs in rlsweep.environment", name, prefix)
			}
		}
		if v, ok := os.LookupEnv(name); ok {
			return v, nil
		}
		return name, nil
	},
}

// wandbTree is a top-level parameter's value: the leaf itself, or the dict of a nested one.
func wandbTree(params map[string]any, paths []string) (any, error) {
	if len(paths) == 1 && !strings.Contains(paths[0], "/") { // a leaf at the top
		return wandbLeaf(params, paths[0])
	}
	d, err := wandbDict(params, paths)
	if err != nil || len(d.keys) != 1 {
		return d, err
	}
	return d.vals[0], nil
}

func wandbLeaf(params map[string]any, path string) (any, error) {
	path, isJSON := strings.CutSuffix(path, jsonLeaf)
	key := wandbKey(path)
	v, ok := params[key]
	if !ok {
		return nil, fmt.Errorf("map has no entry for key %q", key)
	}
	if text, isText := v.(string); isJSON && isText {
		return parseOrderedJSON(text)
	}
	return v, nil
}

// parseOrderedJSON reads JSON with objects as pyDict (keys sorted) and integers as int64.
func parseOrderedJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var read func() (any, error)
	read = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '[':
				out := []any{}
				for dec.More() {
					x, err := read()
					if err != nil {
						return nil, err
					}
					out = append(out, x)
				}
				_, err := dec.Token()
				return out, err
			case '{':
				var out pyDict
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					x, err := read()
					if err != nil {
						return nil, err
					}
					out = out.set([]string{fmt.Sprint(k)}, x)
				}
				_, err := dec.Token()
				return out, err
			}
		case json.Number:
			if !strings.ContainsAny(t.String(), ".eE") {
				if n, err := t.Int64(); err == nil {
					return n, nil
				}
			}
			return t.Float64()
		case nil:
			return pyNone{}, nil
		}
		return tok, nil
	}
	return read()
}

// wandbDict builds the nested dict of leaf paths, in their order.
func wandbDict(params map[string]any, paths []string) (pyDict, error) {
	var root pyDict
	for _, path := range paths {
		v, err := wandbLeaf(params, path)
		if err != nil {
			return root, err
		}
		root = root.set(strings.Split(strings.TrimSuffix(path, jsonLeaf), "/"), v)
	}
	return root, nil
}

func (d pyDict) set(keys []string, v any) pyDict {
	// Keys stay sorted: W&B's server hands the agent a run's config with every mapping's keys sorted.
	i, found := slices.BinarySearch(d.keys, keys[0])
	if !found {
		var zero any = pyDict{}
		if len(keys) == 1 {
			zero = v
		}
		d.keys, d.vals = slices.Insert(d.keys, i, keys[0]), slices.Insert(d.vals, i, zero)
	}
	if len(keys) == 1 {
		d.vals[i] = v
		return d
	}
	child, _ := d.vals[i].(pyDict)
	d.vals[i] = child.set(keys[1:], v)
	return d
}

// finishArgv applies the markers of wandbFuncs to a rendered argv: leaves out omitted arguments and
// writes the ${args_json_file} JSON next to the metrics file, passing its path.
func finishArgv(argv []string, metricsFile string) ([]string, error) {
	out := argv[:0]
	for _, a := range argv {
		switch {
		case a == omitArgMark:
			continue
		case strings.HasPrefix(a, argsFileMark):
			dir := os.TempDir()
			if metricsFile != "" {
				dir = filepath.Dir(metricsFile)
			}
			path := filepath.Join(dir, WandBArgsFile)
			if err := os.WriteFile(path, []byte(strings.TrimPrefix(a, argsFileMark)), 0o644); err != nil {
				return nil, fmt.Errorf("write the ${args_json_file} file: %w", err)
			}
			a = path
		}
		out = append(out, a)
	}
	return out, nil
}
