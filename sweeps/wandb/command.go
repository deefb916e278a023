package wandb

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// W&B's command macros, as its agent expands them.
const (
	env         = "/usr/bin/env"
	interpreter = "python"
)

// DefaultCommand is the command W&B's agent runs for a config without one.
var DefaultCommand = []string{"${env}", "${interpreter}", "${program}", "${args}"}

var envVarRe = regexp.MustCompile(`\$\{envvar\:([A-Z0-9_]*)\}`)

// JSONLeaf marks, in a template's leaf path, a parameter whose values are JSON texts.
const JSONLeaf = "#json"

// Param is one parameter of a W&B config's tree: a leaf or a nested group.
type Param struct {
	Name     string
	JSON     bool     // a leaf whose values are JSON texts (the text json.dumps writes of a list or dict)
	Children []*Param // nested parameters; nil for a leaf
}

// Leaves lists the flat paths ("optimizer/lr") of the leaves under p, below prefix; a JSON leaf's path
// ends in JSONLeaf.
func (p *Param) Leaves(prefix string) []string {
	path := prefix + p.Name
	if p.Children == nil {
		if p.JSON {
			return []string{path + JSONLeaf}
		}
		return []string{path}
	}
	var out []string
	for _, c := range p.Children {
		out = append(out, c.Leaves(path+"/")...)
	}
	return out
}

// top is a top-level parameter and the leaf paths under it: one flag of ${args}.
type top struct {
	name  string
	paths []string
}

// Command turns a W&B command (nil: W&B's default) into argv templates for package sweeps'
// RenderCommand with Funcs: each element as PyYAML reads and Python's str() writes it, each macro as
// W&B's agent expands it, ${program} as program.
func Command(command []*yaml.Node, program string, tree []*Param) []string {
	elems := DefaultCommand
	if command != nil {
		elems = nil
		for _, n := range command {
			x, ok := Scalar(n)
			if !ok {
				x = n.Value
			}
			elems = append(elems, Str(x))
		}
	}
	var tops []top
	var all []string
	for _, p := range tree {
		ls := p.Leaves("")
		tops = append(tops, top{p.Name, ls})
		all = append(all, ls...)
	}
	// W&B's server hands the agent a run's config with its keys sorted (Go's encoding/json sorts them), so
	// the flags come in that order, not the file's.
	slices.SortStableFunc(tops, func(a, b top) int { return strings.Compare(a.name, b.name) })
	var argv []string
	for _, e := range elems {
		switch {
		case envVarRe.MatchString(e):
			argv = append(argv, envVarTemplate(e))
		case !strings.HasPrefix(e, "${") || !strings.HasSuffix(e, "}"):
			argv = append(argv, literalTemplate(e))
		default:
			argv = append(argv, macro(e[2:len(e)-1], program, tops, all)...)
		}
	}
	return argv
}

// macro expands one ${...} of a command; any other than W&B's is dropped, as W&B's agent drops a macro
// it does not know.
func macro(name, program string, tops []top, all []string) []string {
	var argv []string
	each := func(arg func(t top) []string) []string {
		for _, t := range tops {
			argv = append(argv, arg(t)...)
		}
		return argv
	}
	value := func(t top) string { return call("wandbValue", t.paths) }
	switch name {
	case "env":
		return []string{env}
	case "interpreter":
		return []string{interpreter}
	case "program":
		return []string{literalTemplate(program)}
	case "args":
		return each(func(t top) []string { return []string{"--" + t.name + "=" + value(t)} })
	case "args_no_hyphens":
		return each(func(t top) []string { return []string{t.name + "=" + value(t)} })
	case "args_append_hydra":
		return each(func(t top) []string { return []string{"+" + t.name + "=" + value(t)} })
	case "args_override_hydra":
		return each(func(t top) []string { return []string{"++" + t.name + "=" + value(t)} })
	case "args_no_equals":
		return each(func(t top) []string { return []string{"--" + t.name, value(t)} })
	case "args_no_boolean_flags":
		return each(func(t top) []string { return []string{call("wandbFlag", t.paths)} })
	case "args_json":
		return []string{call("wandbJSON", all)}
	case "args_json_file":
		return []string{call("wandbJSONFile", all, ".MetricsFile")}
	}
	return nil
}

// call is the template calling one of Funcs with the run's parameters and leaf paths.
func call(fn string, paths []string, extra ...string) string {
	args := append(extra, ".Params")
	for _, p := range paths {
		args = append(args, strconv.Quote(p))
	}
	return "{{" + fn + " " + strings.Join(args, " ") + "}}"
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
	for _, m := range envVarRe.FindAllStringSubmatchIndex(s, -1) {
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
