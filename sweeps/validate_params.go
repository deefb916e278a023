package sweeps

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/trainer"
)

// ReservedParamNames are the fixed columns of results.csv, in order (the parameters' columns go after
// the third): a parameter of the same name would make a second column with that header, which CSV
// readers keyed by header (Python's DictReader) confuse.
var ReservedParamNames = []string{"trial_id", "config", "seed", "outcome", "objective", "stop_rule", "steps", "wall_seconds", "error",
	"pruned_step", "pruned_value", "pruned_cutoff", "hw_worker", "hw_cpu", "hw_gpu", "hw_gpu_memory_mib", "hw_driver", "hw_cuda", "hw_precision",
	"precision_setting", "confirm_gpu_class", "target_step", "pareto_rank"}

func (c *checker) parameters() {
	if n := len(c.s.Parameters); n > MaxParameters {
		c.add("parameters", fmt.Sprintf("%d parameters", n), fmt.Sprintf("at most %d", MaxParameters))
	}
	seen := map[string]bool{}
	for i := range c.s.Parameters {
		p := &c.s.Parameters[i]
		path := "parameters." + p.Name
		if !paramNameRe.MatchString(p.Name) {
			c.add(path, quote(p.Name), "a parameter name: a letter or '_', then letters, digits, '_', '.' or '-'")
		} else if slices.Contains(ReservedParamNames, p.Name) {
			c.add(path, quote(p.Name), fmt.Sprintf("a name other than %q (columns of results.csv)", ReservedParamNames))
		}
		if seen[p.Name] {
			c.add(path, "a second definition", "each parameter once")
			continue
		}
		seen[p.Name] = true
		c.parameter(p, path)
		c.builtinParam(p.Name, path)
	}
}

// builtinParam checks that a built-in trainer knows the parameter: it would refuse an unknown key of
// RLSWEEP_PARAMS and fail every trial. The names are the trainer's own table (trainer.PPOParamNames, `rlsweep train --set`).
func (c *checker) builtinParam(name, path string) {
	if c.s.Trainer.Builtin != "ppo" || c.s.Trainer.Command != nil || !paramNameRe.MatchString(name) {
		return
	}
	names := trainer.PPOParamNames()
	if slices.Contains(names, name) || name == trainer.PPOBugParam {
		return
	}
	want := "a hyperparameter of the built-in trainer ppo: " + strings.Join(names, ", ")
	if guess := builtinGuess(name, names, trainer.PPOParamAliases()); guess != "" {
		want += " (did you mean " + guess + "?)"
	}
	c.add(path, quote(name), want)
}

// builtinGuess is the closest known name to a misspelt one, or the name a common alias stands for
// ("lr (learning_rate)"); "" when nothing is close.
func builtinGuess(name string, names []string, aliases map[string]string) string {
	if to, ok := aliases[name]; ok {
		return to + " (" + name + " is called " + to + " here)"
	}
	// Short names are close to too much: "n" is one edit from "lr".
	guess, best := "", min(3, max(1, len(name)/3)+1)
	for _, n := range names {
		if d := EditDistance(name, n); d < best {
			guess, best = n, d
		}
	}
	for _, a := range sortedKeys(aliases) {
		if d := EditDistance(name, a); d < best {
			guess, best = aliases[a]+" ("+a+" is called "+aliases[a]+" here)", d
		}
	}
	return guess
}

// parameter checks one parameter's kind, then its bounds and values.
func (c *checker) parameter(p *Parameter, path string) {
	kinds := []string{}
	if p.Values != nil {
		kinds = append(kinds, "values")
	}
	if p.Value != nil {
		kinds = append(kinds, "value")
	}
	if p.Min != nil || p.Max != nil {
		kinds = append(kinds, "min/max")
	}
	if len(kinds) == 0 && isShape(p.Distribution) {
		c.shape(p, path)
		return
	}
	if len(kinds) != 1 {
		got := "none of them"
		if len(kinds) > 1 {
			got = strings.Join(kinds, " and ")
		}
		c.add(path, got, "exactly one of values: [...], value: x, min: and max:, or a distribution normal, log_normal or beta (and their q_ forms)")
		return
	}
	if p.Distribution != "" && kinds[0] != "min/max" {
		c.add(path+".distribution", quote(p.Distribution), "no distribution with "+kinds[0]+" (distribution applies to min/max)")
	}
	if kinds[0] != "min/max" && p.Q != nil {
		c.add(path+".q", num(*p.Q), "no q with "+kinds[0]+" (q goes with a q_ distribution)")
	}
	if kinds[0] != "values" && p.Probabilities != nil {
		c.add(path+".probabilities", fmt.Sprintf("%d probabilities", len(p.Probabilities)), "no probabilities with "+kinds[0]+" (they weight values)")
	}
	switch kinds[0] {
	case "values":
		c.values(p, path)
		c.probabilities(p, path)
	case "value":
		if kind := scalarKind(p.Value); kind == "" {
			c.add(path+".value", fmt.Sprintf("%v", p.Value), "a number, string or bool")
		} else if c.argSafe(path+".value", p.Value) {
			c.known(p.Name, path+".value", p.Value)
		}
	default:
		c.bounds(p, path)
	}
}

func (c *checker) values(p *Parameter, path string) {
	if len(p.Values) == 0 {
		c.add(path+".values", "an empty list", "at least one value")
		return
	}
	first := make(map[valueKey]int, len(p.Values))
	for i, v := range p.Values {
		vp := fmt.Sprintf("%s.values[%d]", path, i)
		if c.s.Format == FormatWandB && v == nil {
			continue // W&B's null: the trainer gets None
		}
		if scalarKind(v) == "" {
			c.add(vp, fmt.Sprintf("%v", v), "a number, string or bool")
			continue
		}
		if !c.argSafe(vp, v) {
			continue
		}
		if j, dup := first[keyOf(v)]; dup && c.s.Format != FormatWandB { // W&B allows repeats: they weigh random draws
			c.add(vp, render(v), fmt.Sprintf("each value once (values[%d] is the same)", j))
		} else {
			first[keyOf(v)] = i
		}
		c.known(p.Name, vp, v)
	}
}

func (c *checker) bounds(p *Parameter, path string) {
	if p.Min == nil || p.Max == nil {
		missing := "min"
		if p.Max == nil {
			missing = "max"
		}
		c.add(path+"."+missing, "nothing", "both min and max")
		return
	}
	lo, hi := *p.Min, *p.Max
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		c.add(path, fmt.Sprintf("min %s, max %s", num(lo), num(hi)), "finite bounds")
		return
	}
	if math.IsInf(hi-lo, 0) {
		// Sampling scales by max - min: an infinite width would plan +Inf for every trial.
		c.add(path, fmt.Sprintf("min %s, max %s", num(lo), num(hi)), "a range whose width max - min is finite (at most about 1.8e308)")
		return
	}
	if isShape(p.Distribution) {
		c.add(path, "min and max", "mu and sigma, or a and b, for "+p.Distribution+" (min and max go with "+oneOf(rangeDists)+")")
		return
	}
	if c.s.Method == MethodGrid {
		c.add(path, fmt.Sprintf("a range [%s, %s]", num(lo), num(hi)),
			"values: [...] or value: for method grid (a range cannot be enumerated; use method random or sobol)")
	}
	if !slices.Contains(Distributions, p.Distribution) {
		hint := ""
		if p.Distribution == "log_uniform_values" {
			hint = " (log_uniform takes the bounds themselves, like W&B's log_uniform_values)"
		}
		c.add(path+".distribution", quote(p.Distribution), oneOf(Distributions)+hint)
		return
	}
	if lo >= hi {
		c.add(path+".min", num(lo), fmt.Sprintf("a number < max (%s); for a constant use value:", num(hi)))
	}
	switch p.Distribution {
	case DistLogUniform, DistQLogUniformValues, DistInvLogUniformValues:
		if lo <= 0 {
			c.add(path+".min", num(lo), "a number > 0 for "+p.Distribution)
		}
	case DistIntUniform:
		for _, b := range []struct {
			key string
			v   float64
		}{{"min", lo}, {"max", hi}} {
			if b.v != math.Trunc(b.v) || math.Abs(b.v) > 1<<53 {
				c.add(path+"."+b.key, num(b.v), "an integer for int_uniform")
			}
		}
	}
	c.quantum(p, path)
	c.knownRange(p, path, lo, hi)
}

// argSafe refuses a string value holding a NUL byte: a trainer gets its parameters in its argv and
// environment (RLSWEEP_PARAMS, rendered command arguments), C strings that end at the first NUL, so
// the value cannot reach it whole (the process would not even start). The value is shown escaped.
func (c *checker) argSafe(path string, v any) bool {
	s, ok := v.(string)
	if !ok || !strings.ContainsRune(s, 0) {
		return true
	}
	c.add(path, quote(s), "a string without a NUL byte (\\x00): a trainer's parameters reach it in its argv and environment, which cannot carry one; remove the NUL from the value")
	return false
}

// scalarKind names the kind of a parameter value, or "" when it is not a scalar we accept.
func scalarKind(v any) string {
	switch x := v.(type) {
	case int64, int:
		return "number"
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return ""
}

// asFloat converts a numeric parameter value.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// valueKey identifies a scalar value for duplicate checks; 3 and 3.0 are the same value.
type valueKey struct {
	kind string
	num  float64
	text string
	flag bool
}

func keyOf(v any) valueKey {
	if f, ok := asFloat(v); ok {
		return valueKey{kind: "number", num: f}
	}
	switch x := v.(type) {
	case string:
		return valueKey{kind: "string", text: x}
	case bool:
		return valueKey{kind: "bool", flag: x}
	}
	return valueKey{kind: fmt.Sprintf("%T", v)}
}

// render formats a value as it appears in messages and templates.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case float64:
		return num(x)
	}
	return fmt.Sprintf("%v", v)
}

// hyperparameter sanity checks for names PPO users share across frameworks; the last dotted segment is
// matched, so "optimizer.lr" is checked like "lr".
type sanity struct {
	ok   func(float64) bool
	want string
	ints bool
}

var knownParams = func() map[string]sanity {
	positive := sanity{ok: func(f float64) bool { return f > 0 }, want: "a number > 0"}
	unit := sanity{ok: func(f float64) bool { return f > 0 && f <= 1 }, want: "a number in (0, 1]"}
	count := sanity{ok: func(f float64) bool { return f >= 1 && f == math.Trunc(f) }, want: "an integer >= 1", ints: true}
	return map[string]sanity{
		"lr": positive, "learning_rate": positive,
		"clip": positive, "clip_range": positive, "clip_param": positive, "clip_coef": positive,
		"gamma": unit, "gae_lambda": unit, "lam": unit,
		"num_envs": count,
	}
}()

func knownSanity(name string) (sanity, bool) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	k, ok := knownParams[name]
	return k, ok
}

// known checks one value of a well-known hyperparameter.
func (c *checker) known(name, path string, v any) {
	k, ok := knownSanity(name)
	if !ok {
		return
	}
	if text, isText := v.(string); isText && c.s.Format == FormatWandB {
		// W&B passes 1e-4 (a string in YAML 1.1) as written; the trainer's argparse reads the number.
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			v = f
		}
	}
	if f, isNum := asFloat(v); !isNum || !k.ok(f) {
		c.add(path, render(v), k.want+" for "+name)
	}
}

// knownRange checks the bounds of a well-known hyperparameter's range.
func (c *checker) knownRange(p *Parameter, path string, lo, hi float64) {
	k, ok := knownSanity(p.Name)
	if !ok {
		return
	}
	if k.ints && p.Distribution != DistIntUniform {
		c.add(path+".distribution", quote(p.Distribution), "int_uniform for "+p.Name)
	}
	if !k.ok(lo) {
		c.add(path+".min", num(lo), k.want+" for "+p.Name)
	}
	if !k.ok(hi) {
		c.add(path+".max", num(hi), k.want+" for "+p.Name)
	}
}
