package sweeps

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
)

// Limits on what a spec may ask for.
const (
	MaxConcurrency = 2000    // Temporal's pending children of one workflow (docs/architecture.md, "Thousands at once")
	MaxTrials      = 100_000 // configurations × seeds, whatever the method
	MaxAttempts    = 100
	// MaxInfraRetries bounds retries.max_infra_retries: at the longest back-off (a minute) about 17 hours.
	MaxInfraRetries = 1000
	MaxSeed         = 1<<32 - 1 // numpy's and most trainers' seed range
	MaxParameters   = 256
	MaxPlanValues   = 2_000_000 // trials × parameters: bounds the plan's memory
)

// Allowed values, in the order messages list them.
var (
	Builtins      = []string{"ppo"}
	Methods       = []string{MethodGrid, MethodRandom, MethodSobol, MethodBayes, MethodPBT}
	Orders        = []string{OrderListed, OrderShuffled}
	Distributions = append(slices.Clone(rangeDists), shapeDists...)
	Goals         = []string{GoalMaximize, GoalMinimize}
	Sources       = metrics.Sources
	// StdoutPresets are the console formats source stdout reads.
	StdoutPresets = metrics.StdoutPresets
	Presets       = metrics.Presets()
	RuleLevels    = diagnostics.RuleLevels
	PruneTypes    = []string{"median", "asha"}

	// RuleNames are the diagnostics rules (docs/diagnostics.md) that diagnostics.rules may override.
	RuleNames = diagnostics.RuleNames()
)

// MaxSegments bounds a trial's segments: each adds about six events to the Trial workflow's history,
// which does not continue-as-new.
const MaxSegments = 1000

var (
	nameRe      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	paramNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)
	envNameRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	queueRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$`)
	gpuClassRe  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
)

// Validate checks every field of the spec and returns all problems at once as Errors, in file order,
// each naming the file and line when the spec was decoded from YAML. It returns nil for a valid spec.
func (s *Spec) Validate() error {
	if errs := s.validate(); len(errs) > 0 {
		return errs
	}
	return nil
}

func (s *Spec) validate() Errors {
	c := &checker{s: s}
	c.name()
	c.trainer()
	c.metric()
	c.objectives()
	c.method()
	c.seeds()
	c.parameters()
	c.size()
	c.sobolDims()
	c.bayes()
	c.commands()
	c.diagnostics()
	c.earlyTerminate()
	c.pbt()
	c.resources()
	c.confirm()
	c.artifacts()
	c.regression()
	sortErrors(c.errs)
	return c.errs
}

// checker collects problems with their positions.
type checker struct {
	s    *Spec
	errs Errors
	// reported: the fields with a message; badAbove: every field that failed to decode and every
	// field above one. Sets, so a spec with thousands of problems is checked in linear time.
	reported, badAbove map[string]bool
}

// add records a problem at path, unless decoding already reported a problem there (one message per
// mistake, not a cascade).
func (c *checker) add(path, got, want string) {
	if c.reported == nil {
		c.reported, c.badAbove = map[string]bool{}, map[string]bool{}
		for b := range c.s.bad {
			eachAncestor(b, func(a string) { c.badAbove[a] = true })
		}
	}
	if c.reported[path] { // one message per field
		return
	}
	// related to a field that failed to decode: below it (an ancestor of path is bad) or above it
	// (path is an ancestor of, or is, a bad field).
	below := false
	eachAncestor(path, func(a string) { below = below || c.s.bad[a] })
	if below || c.badAbove[path] {
		return
	}
	c.reported[path] = true
	c.errs = append(c.errs, &FieldError{File: c.s.file, Line: c.line(path), Field: path, Got: got, Want: want})
}

// eachAncestor calls f with path and each field above it: "a.b[2].c", "a.b[2]", "a.b", "a".
func eachAncestor(path string, f func(string)) {
	f(path)
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '.' || path[i] == '[' {
			f(path[:i])
		}
	}
}

// addNear records a problem at path, placed on the line of near when path was not written: a missing
// trials is reported where method asks for it.
func (c *checker) addNear(path, near, got, want string) {
	n := len(c.errs)
	c.add(path, got, want)
	if _, written := c.s.lines[path]; !written && len(c.errs) > n {
		c.errs[n].Line = c.line(near)
	}
}

// line is where path was written, or where its closest written parent was.
func (c *checker) line(path string) int {
	for p := path; ; {
		if n, ok := c.s.lines[p]; ok {
			return n
		}
		if p == "" {
			return 0
		}
		if i := strings.LastIndexAny(p, ".["); i >= 0 {
			p = p[:i]
		} else {
			p = ""
		}
	}
}

func oneOf(allowed []string) string {
	switch len(allowed) {
	case 1:
		return allowed[0]
	case 2:
		return allowed[0] + " or " + allowed[1]
	}
	return strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
}

// choice checks an enumerated string field.
func (c *checker) choice(path, got string, allowed []string, hint string) {
	if !slices.Contains(allowed, got) {
		c.add(path, quote(got), oneOf(allowed)+hint)
	}
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// NameRule says what a sweep's name may be.
const NameRule = "1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"

// ValidName says whether s may name a sweep (NameRule).
func ValidName(s string) bool { return nameRe.MatchString(s) }

func (c *checker) name() {
	if !ValidName(c.s.Name) {
		c.add("name", quote(c.s.Name), NameRule)
	}
}

func (c *checker) trainer() {
	t := c.s.Trainer
	switch {
	case t.Builtin != "" && t.Command != nil:
		c.add("trainer", "both builtin and command", "exactly one of builtin or command")
	case t.Builtin == "" && t.Command == nil:
		c.add("trainer", "neither builtin nor command", `exactly one: builtin: ppo, or command: ["python", "train.py", ...]`)
	case t.Builtin != "":
		c.choice("trainer.builtin", t.Builtin, Builtins, "")
		c.choice("trainer.env", t.Env, trainer.BuiltinEnvNames(), " (the builtin trainer's environments)")
	case len(t.Command) == 0:
		c.add("trainer.command", "an empty list", `an argv such as ["python", "train.py", "--lr={{.Params.lr}}"]`)
	case strings.TrimSpace(t.Command[0]) == "":
		c.add("trainer.command[0]", quote(t.Command[0]), "the program to run")
	}
	for _, k := range sortedKeys(t.Environment) {
		switch {
		case !envNameRe.MatchString(k):
			c.add("trainer.environment."+k, quote(k), "an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
		case strings.HasPrefix(k, "RLSWEEP_") || k == "CUDA_VISIBLE_DEVICES":
			c.add("trainer.environment."+k, quote(k), "a name other than RLSWEEP_* and CUDA_VISIBLE_DEVICES, which rlsweep sets")
		}
	}
	if t.TotalSteps <= 0 && (t.TotalSteps != 0 || t.Builtin != "" || t.Command != nil) {
		c.add("trainer.total_steps", strconv.FormatInt(t.TotalSteps, 10), "an integer > 0 (environment steps per trial)")
	} else if t.TotalSteps > 0 && t.SegmentSteps <= 0 || t.SegmentSteps > t.TotalSteps {
		c.add("trainer.segment_steps", strconv.FormatInt(t.SegmentSteps, 10),
			fmt.Sprintf("an integer in (0, %d] (total_steps)", t.TotalSteps))
	} else if t.SegmentSteps > 0 && (t.TotalSteps+t.SegmentSteps-1)/t.SegmentSteps > MaxSegments {
		c.add("trainer.segment_steps", strconv.FormatInt(t.SegmentSteps, 10),
			fmt.Sprintf("at least %d (total_steps / %d: a trial runs at most %d segments, so its history stays under 10,240 events)",
				(t.TotalSteps+MaxSegments-1)/MaxSegments, MaxSegments, MaxSegments))
	}
	if src := t.Metrics.Source; src != "" && src != DefaultSource && t.SegmentSteps > 0 && t.SegmentSteps < t.TotalSteps {
		// A segment resumes from the checkpoint its predecessor announced in a JSON-lines record; the
		// other sources carry no announcement, so every segment would start over.
		c.add("trainer.segment_steps", strconv.FormatInt(t.SegmentSteps, 10),
			fmt.Sprintf("no segment_steps (or %d, total_steps) with metrics.source %s: a segment resumes from the checkpoint its trainer announces in a JSON-lines record's \"checkpoint\" key, which source %s cannot carry", t.TotalSteps, src, src))
	}
	c.choice("trainer.metrics.source", t.Metrics.Source, Sources, "")
	switch {
	case t.Metrics.Source == metrics.SourceStdout:
		c.choice("trainer.metrics.preset", t.Metrics.Preset, StdoutPresets, " (source stdout: the console format to read)")
	case t.Metrics.Preset != "":
		c.choice("trainer.metrics.preset", t.Metrics.Preset, Presets, "")
	}
	switch n := t.Metrics.StepsPerIteration; {
	case n < 0:
		c.add("trainer.metrics.steps_per_iteration", strconv.FormatInt(n, 10), "an integer ≥ 1 (environment steps per iteration: num_envs × num_steps_per_env)")
	case n > 0 && t.Metrics.Source != metrics.SourceTensorBoard && !(t.Metrics.Source == metrics.SourceStdout && t.Metrics.Preset == metrics.PresetRSLRL):
		c.add("trainer.metrics.steps_per_iteration", strconv.FormatInt(n, 10),
			fmt.Sprintf("no steps_per_iteration with source %s (its steps are environment steps already); it converts iterations for source tensorboard or stdout with preset rsl_rl", t.Metrics.Source))
	}
	if _, written := c.s.lines["trainer.metrics.step_key"]; t.Metrics.StepKey != "" || written {
		k := t.Metrics.StepKey
		switch src := t.Metrics.Source; {
		case !slices.Contains(Sources, src):
			// the source's own error says what to write
		case src != metrics.SourceWandb && src != metrics.SourceAuto:
			c.add("trainer.metrics.step_key", quote(k), fmt.Sprintf("no step_key with source %s; it names the W&B history key holding the step, for source wandb or auto (remove it, or set source: wandb)", src))
		case strings.TrimSpace(k) == "":
			c.add("trainer.metrics.step_key", quote(k), "a logged key holding the step, such as global_step (or no step_key: W&B's _step)")
		}
	}
	for _, tag := range sortedKeys(t.Metrics.Tags) {
		name := t.Metrics.Tags[tag]
		if tag == "" || strings.TrimSpace(name) == "" {
			c.add("trainer.metrics.tags."+tag, quote(name), "a metric name such as reward or value_loss")
		}
	}
	if t.StallTimeout < time.Second {
		c.add("trainer.stall_timeout", t.StallTimeout.String(), "a duration of at least 1s, such as 10m")
	}
	if t.GracePeriod <= 0 {
		c.add("trainer.grace_period", t.GracePeriod.String(), "a duration > 0, such as 30s")
	}
}

func (c *checker) metric() {
	if c.s.Objectives != nil {
		return // a metric list: objectives checks each, Metric being one of them
	}
	if strings.TrimSpace(c.s.Metric.Name) == "" {
		c.add("metric.name", quote(c.s.Metric.Name), "a metric name such as reward")
	}
	c.choice("metric.goal", c.s.Metric.Goal, Goals, "")
	if b := c.s.Metric.Bounds; b != nil && !(b[0] < b[1]) {
		c.add("metric.bounds", formatFloats(b[:]), boundsWant)
	}
}

// formatFloats writes xs as a YAML flow list.
func formatFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (c *checker) method() {
	s := c.s
	c.choice("method", s.Method, Methods, "")
	switch s.Method {
	case MethodGrid:
		if s.Trials != 0 {
			c.add("trials", strconv.Itoa(s.Trials), "no trials for method grid (the grid decides the count; use random or sobol to sample)")
		}
		if s.Order != "" {
			c.choice("order", s.Order, Orders, " (shuffled is the default with early_terminate)")
		}
	case MethodBayes:
		if s.MultiObjective() && s.Trials > MaxParetoBayesTrials {
			c.addNear("trials", "method", strconv.Itoa(s.Trials), fmt.Sprintf("an integer in [1, %d] for method bayes with several objectives (each suggestion sorts every result so far into Pareto fronts)", MaxParetoBayesTrials))
		} else if s.Trials < 1 || s.Trials > MaxBayesTrials {
			c.addNear("trials", "method", strconv.Itoa(s.Trials), fmt.Sprintf("an integer in [1, %d] for method bayes (each suggestion weighs every result so far)", MaxBayesTrials))
		}
	case MethodRandom, MethodSobol:
		if s.Trials < 1 || s.Trials > MaxTrials {
			c.addNear("trials", "method", strconv.Itoa(s.Trials), fmt.Sprintf("an integer in [1, %d] for method %s", MaxTrials, s.Method))
		}
	}
	if s.Order != "" && s.Method != MethodGrid && slices.Contains(Methods, s.Method) {
		c.add("order", quote(s.Order), fmt.Sprintf("no order for method %s: only a grid's configurations have a listed order (remove order)", s.Method))
	}
}

func (c *checker) seeds() {
	if len(c.s.Seeds) == 0 {
		c.add("seeds", "an empty list", "at least one seed, such as [1, 2, 3]")
	}
	first := map[int64]int{}
	for i, seed := range c.s.Seeds {
		p := fmt.Sprintf("seeds[%d]", i)
		if seed < 0 || seed > MaxSeed {
			c.add(p, strconv.FormatInt(seed, 10), fmt.Sprintf("an integer in [0, %d] (numpy and torch seeds)", int64(MaxSeed)))
		}
		if j, dup := first[seed]; dup {
			c.add(p, strconv.FormatInt(seed, 10), fmt.Sprintf("each seed once (seeds[%d] is the same)", j))
			continue
		}
		first[seed] = i
	}
}

// size bounds the plan, so that a typo cannot ask for billions of trials.
func (c *checker) size() {
	if !slices.Contains(Methods, c.s.Method) {
		return // the method is reported
	}
	n, ok := c.s.trialCount()
	if ok && n <= MaxTrials && n*len(c.s.Parameters) > MaxPlanValues {
		c.add("parameters", fmt.Sprintf("%d trials × %d parameters", n, len(c.s.Parameters)),
			fmt.Sprintf("at most %d planned values: fewer trials or parameters", MaxPlanValues))
	}
	if !ok || n > MaxTrials {
		if c.s.Method != MethodGrid {
			// trials × seeds: reported at trials, or at seeds when trials alone is within bounds.
			got := fmt.Sprintf("%d trials × %d seeds", c.s.Trials, len(c.s.Seeds))
			if p := len(c.s.Resources.Precision); p > 0 {
				got = fmt.Sprintf("%d trials × %d precision settings × %d seeds", c.s.Trials, p, len(c.s.Seeds))
			}
			c.addNear("trials", "seeds", got, fmt.Sprintf("at most %d trials in all: fewer trials or fewer seeds", MaxTrials))
			return
		}
		configs := 1.0
		for _, p := range c.s.Parameters {
			configs *= float64(max(len(p.Values), 1))
		}
		got := fmt.Sprintf("%.0f configurations × %d seeds", configs, len(c.s.Seeds))
		if p := len(c.s.Resources.Precision); p > 0 {
			got = fmt.Sprintf("%.0f configurations × %d precision settings × %d seeds", configs, p, len(c.s.Seeds))
		}
		c.add("parameters", got, fmt.Sprintf("at most %d trials: fewer values, fewer seeds, or method random", MaxTrials))
	}
}

// sobolDims checks that a sobol sweep samples no more parameters than the sequence has dimensions.
func (c *checker) sobolDims() {
	if c.s.Method != MethodSobol {
		return
	}
	dims := 0
	for _, p := range c.s.Parameters {
		if sampled(p) {
			dims++
		}
	}
	if dims > MaxSobolDims {
		c.add("parameters", fmt.Sprintf("%d sampled parameters", dims), fmt.Sprintf("at most %d for method sobol (use random)", MaxSobolDims))
	}
}

// trialCount is configurations × precision settings × seeds, and false on overflow past MaxTrials.
func (s *Spec) trialCount() (int, bool) {
	configs := 1
	switch s.Method {
	case MethodPBT:
		if s.PBT == nil {
			return 0, true
		}
		return max(s.PBT.Population, 0), true
	case MethodRandom, MethodSobol, MethodBayes:
		configs = max(s.Trials, 0)
	default:
		for _, p := range s.Parameters {
			if len(p.Values) > 0 {
				configs *= len(p.Values)
			}
			if configs > MaxTrials {
				return 0, false
			}
		}
	}
	configs *= s.precisionCount()
	if configs > MaxTrials {
		return 0, false
	}
	n := configs * len(s.Seeds)
	if len(s.Seeds) > 0 && n/len(s.Seeds) != configs {
		return 0, false
	}
	if r := s.rerunTrials(); r > 0 && r <= MaxTrials {
		n += r // bayes: the re-run of the best configurations
	}

	return n, true
}

func (c *checker) diagnostics() {
	g := c.s.Diagnostics
	if g.WarmupSteps < 0 || (c.s.Trainer.TotalSteps > 0 && g.WarmupSteps >= c.s.Trainer.TotalSteps) {
		c.add("diagnostics.warmup_steps", strconv.FormatInt(g.WarmupSteps, 10),
			"an integer in [0, total_steps), 0 meaning 10% of total_steps")
	}
	if g.Patience < 1 {
		c.add("diagnostics.patience", strconv.Itoa(g.Patience), "an integer >= 1 (consecutive records)")
	}
	if g.Actions < 0 || g.Actions == 1 {
		c.add("diagnostics.actions", strconv.Itoa(g.Actions),
			"a categorical policy's number of actions (>= 2), or 0 when it is not known or the policy is Gaussian")
	}
	for _, name := range sortedKeys(g.Rules) {
		r, p := g.Rules[name], "diagnostics.rules."+name
		if !slices.Contains(RuleNames, name) {
			c.add(p, quote(name), "a rule name: "+oneOf(RuleNames))
			continue
		}
		if r.Level != "" {
			c.choice(p+".level", r.Level, RuleLevels, "")
		}
		if r.Threshold != nil && (math.IsNaN(*r.Threshold) || math.IsInf(*r.Threshold, 0)) {
			c.add(p+".threshold", num(*r.Threshold), "a finite number")
		}
		if r.Patience != nil && *r.Patience < 1 {
			c.add(p+".patience", strconv.Itoa(*r.Patience), "an integer >= 1 (consecutive records)")
		}
	}
}

func (c *checker) resources() {
	s := c.s
	if s.Concurrency < 1 || s.Concurrency > MaxConcurrency {
		c.add("concurrency", strconv.Itoa(s.Concurrency), fmt.Sprintf("an integer in [1, %d]", MaxConcurrency))
	}
	if !queueRe.MatchString(s.Resources.TaskQueue) {
		c.add("resources.task_queue", quote(s.Resources.TaskQueue), "a task queue name: letters, digits, '.', '_', '-', '/'")
	}
	switch g := s.Resources.GPUClass; {
	case g == "":
	case !ValidGPUClass(g):
		c.add("resources.gpu_class", quote(g), "a GPU class: lower-case letters, digits, '_', '-', at most 40 characters (e.g. a100, h100, rtx4090)")
	case s.Resources.TaskQueue != DefaultTaskQueue:
		c.add("resources.gpu_class", quote(g), fmt.Sprintf("no gpu_class with task_queue %s: the class picks the queue %s; set one of them",
			quote(s.Resources.TaskQueue), GPUClassQueue(g)))
	}
	if m := s.Resources.MemoryParam; m != "" && m != MemoryParamNone {
		if p := s.Param(m); p == nil || !p.numericParam() {
			var numeric []string
			for i := range s.Parameters {
				if s.Parameters[i].numericParam() {
					numeric = append(numeric, s.Parameters[i].Name)
				}
			}
			want := "none (no out-of-memory bound): the sweep has no numeric parameter"
			if len(numeric) > 0 {
				want = "the numeric parameter that drives a trial's memory, one of " + strings.Join(numeric, ", ") +
					", or none (no out-of-memory bound)"
			}
			c.add("resources.memory_param", quote(m), want)
		}
	}
	c.precision()
	c.checkGPUs()
	if s.Retries.MaxAttempts < 1 || s.Retries.MaxAttempts > MaxAttempts {
		c.add("retries.max_attempts", strconv.Itoa(s.Retries.MaxAttempts), fmt.Sprintf("an integer in [1, %d]", MaxAttempts))
	}
	if s.Retries.MaxInfraRetries < 1 || s.Retries.MaxInfraRetries > MaxInfraRetries {
		c.add("retries.max_infra_retries", strconv.Itoa(s.Retries.MaxInfraRetries), fmt.Sprintf("an integer in [1, %d]", MaxInfraRetries))
	}
}

// precision checks resources.precision: known settings, each once, with a method whose configurations
// are planned (not bayes, whose proposals come one at a time, nor pbt, whose members change parameters),
// and no trainer.environment entry for a variable the settings control.
func (c *checker) precision() {
	s := c.s
	ps := s.Resources.Precision
	if ps == nil {
		return
	}
	allowed := strings.Join(trainer.Precisions, ", ")
	if len(ps) == 0 {
		c.add("resources.precision", "an empty list", "at least one of "+allowed+" (or remove resources.precision)")
	}
	for i, p := range ps {
		path := fmt.Sprintf("resources.precision[%d]", i)
		switch j := slices.Index(ps, p); {
		case !slices.Contains(trainer.Precisions, p):
			c.add(path, quote(p), "one of "+allowed)
		case j < i:
			c.add(path, quote(p), fmt.Sprintf("each setting once (resources.precision[%d] is the same)", j))
		}
	}
	if s.Method == MethodBayes || s.Method == MethodPBT {
		c.add("resources.precision", "["+strings.Join(ps, ", ")+"]", fmt.Sprintf(
			"no precision dimension with method %s: it runs every configuration under each setting, which needs planned configurations (method grid, random or sobol); run the best configurations of this sweep in a grid sweep with resources.precision", s.Method))
	}
	if s.Trainer.Builtin != "" {
		c.add("resources.precision", "["+strings.Join(ps, ", ")+"]", fmt.Sprintf(
			"no precision dimension with trainer.builtin %s: the built-in trainer computes on the CPU in float64, so every setting would train the same run (remove resources.precision, or use a trainer command that runs on a GPU)", s.Trainer.Builtin))
	}
	for _, k := range sortedKeys(s.Trainer.Environment) {
		if slices.Contains(trainer.PrecisionVars, k) {
			c.add("trainer.environment."+k, quote(s.Trainer.Environment[k]), "not set with resources.precision, whose settings set it for each trial (remove one of them)")
		}
	}
}

// artifacts refuses the key: a sweep's artifacts go to the store of the workers that run it (rlsweep
// worker --store, RLSWEEP_STORE) and of the CLI that reads them, not to a store a spec names.
func (c *checker) artifacts() {
	if a := c.s.Artifacts; a != "" {
		got := quote(a)
		if strings.Contains(a, "@") {
			// A URL's user information may hold a password no message repeats.
			got = `a value with "@" in it (not repeated: a URL's user information may hold a password)`
		}
		c.add("artifacts", got, "no artifacts key: a sweep's artifacts go to the workers' store (rlsweep worker --store or RLSWEEP_STORE, the same for the CLI); leave the key out")
	}
}

// Bounds of the regression section.
const (
	MinRegressionResamples = 100
	MaxRegressionResamples = 50_000 // per configuration, inside one activity
)

func (c *checker) regression() {
	r := c.s.Regression
	if r == nil {
		return
	}
	if !(r.Tolerance > 0 && r.Tolerance <= 1) {
		c.add("regression.tolerance", num(r.Tolerance), "a relative IQM change in (0, 1], such as 0.05 for 5%")
	}
	if !(r.Confidence > 0.5 && r.Confidence < 1) {
		c.add("regression.confidence", num(r.Confidence), "a confidence level in (0.5, 1), such as 0.95")
	}
	if r.Resamples < MinRegressionResamples || r.Resamples > MaxRegressionResamples {
		c.add("regression.resamples", strconv.Itoa(r.Resamples),
			fmt.Sprintf("an integer in [%d, %d] bootstrap resamples (rliable uses 2000)", MinRegressionResamples, MaxRegressionResamples))
	}
	if !(r.MinProbImprovement >= 0.5 && r.MinProbImprovement <= 1) {
		c.add("regression.min_prob_improvement", num(r.MinProbImprovement),
			"a probability in [0.5, 1], such as 0.75 (0.5 turns the check off)")
	}
	if r.MaxNewFailures < 0 || r.MaxNewFailures > len(c.s.Seeds) {
		c.add("regression.max_new_failures", strconv.Itoa(r.MaxNewFailures),
			fmt.Sprintf("an integer in [0, %d] (the number of seeds)", len(c.s.Seeds)))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
