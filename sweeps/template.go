package sweeps

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/rlsweep/rlsweep/sweeps/wandb"
)

// TemplateData is what each element of trainer.command (and probes.command) may refer to, as
// {{.Params.lr}}, {{.Seed}}, {{.TrialID}} and so on. The same values reach the process as RLSWEEP_*
// environment variables (docs/trainer-contract.md).
type TemplateData struct {
	SweepID       string
	TrialID       string
	Seed          int64
	Params        map[string]any // parameter name → value: int64, float64, string or bool
	TotalSteps    int64
	StopAtStep    int64 // end of this segment
	CheckpointDir string
	MetricsFile   string
	ResumeFrom    string // empty unless resuming from a checkpoint
	Env           string // trainer.env
}

// RenderCommand evaluates each argv element as its own text/template and returns the argv to execute
// directly, never through a shell: a value lands in exactly the argument that names it, spaces, quotes
// and semicolons included. A template naming a missing parameter or field is an error.
func RenderCommand(argv []string, data TemplateData) ([]string, error) {
	out := make([]string, len(argv))
	for i, arg := range argv {
		t, err := parseArg(i, arg)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("render command[%d] %q: %w", i, arg, err)
		}
		out[i] = b.String()
	}
	return wandb.Finish(out, data.MetricsFile)
}

// parseArg parses one argv element. Loops and nested templates ({{range}}, {{define}}, {{template}},
// {{block}}) are refused: an argument needs none of them, and {{range 1000000000}} would hang a worker.
func parseArg(i int, arg string) (*template.Template, error) {
	t, err := template.New(fmt.Sprintf("command[%d]", i)).Option("missingkey=error").Funcs(wandbFuncs).Parse(arg)
	if err != nil {
		return nil, fmt.Errorf("parse command[%d] %q: %w", i, arg, err)
	}
	if len(t.Templates()) > 1 {
		return nil, fmt.Errorf("parse command[%d] %q: define and block are not allowed", i, arg)
	}
	if t.Tree != nil {
		if bad := forbiddenNode(t.Tree.Root); bad != "" {
			return nil, fmt.Errorf("parse command[%d] %q: %s is not allowed", i, arg, bad)
		}
	}
	return t, nil
}

// forbiddenNode names the first loop or template call in a parse tree, or returns "".
func forbiddenNode(n parse.Node) string {
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return ""
		}
		for _, c := range x.Nodes {
			if bad := forbiddenNode(c); bad != "" {
				return bad
			}
		}
	case *parse.RangeNode:
		return "range"
	case *parse.TemplateNode:
		return "template"
	case *parse.IfNode:
		return firstForbidden(x.List, x.ElseList)
	case *parse.WithNode:
		return firstForbidden(x.List, x.ElseList)
	}
	return ""
}

func firstForbidden(lists ...*parse.ListNode) string {
	for _, l := range lists {
		if l == nil {
			continue
		}
		if bad := forbiddenNode(l); bad != "" {
			return bad
		}
	}
	return ""
}

// commands checks that every template parses and names only known fields and parameters, by rendering
// it against sample data.
func (c *checker) commands() {
	data := c.sampleData()
	c.command("trainer.command", c.s.Trainer.Command, data)
	if c.s.Probes.Command != nil && len(c.s.Probes.Command) == 0 {
		c.add("probes.command", "an empty list", "an argv, or no probes.command to use the trainer's")
	}
	c.command("probes.command", c.s.Probes.Command, data)
}

func (c *checker) command(path string, argv []string, data TemplateData) {
	names := ParamNames(c.s)
	known := "none"
	if len(names) > 0 {
		known = strings.Join(names, ", ")
	}
	want := "a text/template using .SweepID .TrialID .Seed .Params.NAME .TotalSteps .StopAtStep " +
		".CheckpointDir .MetricsFile .ResumeFrom .Env; parameters: " + known
	for i, arg := range argv {
		p := fmt.Sprintf("%s[%d]", path, i)
		t, err := parseArg(i, arg)
		if err == nil {
			err = t.Execute(discard{}, data)
		}
		if err != nil {
			c.add(p, quote(arg)+" ("+templateProblem(err, names)+")", want)
		}
	}
}

// templateFields are the fields a command template may name, as TemplateData has them.
var templateFields = []string{"SweepID", "TrialID", "Seed", "Params", "TotalSteps", "StopAtStep",
	"CheckpointDir", "MetricsFile", "ResumeFrom", "Env"}

// templateFieldErr and templateKeyErr find the name in text/template's errors for a field
// TemplateData lacks and a parameter Params lacks.
var (
	templateFieldErr = regexp.MustCompile(`can't evaluate field (\w+) in type `)
	templateKeyErr   = regexp.MustCompile(`map has no entry for key "([^"]*)"`)
)

// templateProblem shortens a text/template error to what the user needs, with a "did you mean" for a
// field or parameter name that is a case or spelling slip away from one that exists (params: the
// spec's parameter names).
func templateProblem(err error, params []string) string {
	msg := err.Error()
	if m := templateFieldErr.FindStringSubmatch(msg); m != nil {
		name := m[1]
		field := func(guess string) string {
			if strings.EqualFold(name, guess) {
				return fmt.Sprintf(".%s is not a field (fields are case-sensitive); did you mean {{.%s}}?", name, guess)
			}
			return fmt.Sprintf(".%s is not a field; did you mean {{.%s}}?", name, guess)
		}
		param := func(guess string) string {
			return fmt.Sprintf(".%s is not a field; did you mean the parameter {{.Params.%s}}?", name, guess)
		}
		switch {
		case nearestName(name, templateFields, true) != "":
			return field(nearestName(name, templateFields, true))
		case nearestName(name, params, true) != "":
			return param(nearestName(name, params, true))
		case nearestName(name, templateFields, false) != "":
			return field(nearestName(name, templateFields, false))
		case nearestName(name, params, false) != "":
			return param(nearestName(name, params, false))
		}
		return fmt.Sprintf(".%s is not a field; parameters are {{.Params.NAME}}", name)
	}
	if m := templateKeyErr.FindStringSubmatch(msg); m != nil {
		if guess := nearestName(m[1], params, false); guess != "" {
			return fmt.Sprintf("no parameter %q; did you mean {{.Params.%s}}?", m[1], guess)
		}
		return fmt.Sprintf("no parameter %q", m[1])
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// nearestName is the name in names that name differs from only in case (or is one of), else, unless
// caseOnly, the one at the smallest edit distance under 3; "" when none is that close.
func nearestName(name string, names []string, caseOnly bool) string {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return n
		}
	}
	if caseOnly {
		return ""
	}
	guess, best := "", 3
	for _, n := range names {
		if d := EditDistance(strings.ToLower(name), strings.ToLower(n)); d < best {
			guess, best = n, d
		}
	}
	return guess
}

// sampleData holds every template field, with each parameter set to a value it can take.
func (c *checker) sampleData() TemplateData {
	params := make(map[string]any, len(c.s.Parameters))
	for _, p := range c.s.Parameters {
		switch {
		case len(p.Values) > 0:
			params[p.Name] = p.Values[0]
		case p.Value != nil:
			params[p.Name] = p.Value
		case p.Min != nil:
			params[p.Name] = *p.Min
		default:
			params[p.Name] = 0.0
		}
	}
	return TemplateData{SweepID: "sweep", TrialID: "0-s1", Seed: 1, Params: params,
		TotalSteps: c.s.Trainer.TotalSteps, StopAtStep: c.s.Trainer.SegmentSteps,
		CheckpointDir: "/tmp/ckpt", MetricsFile: "/tmp/metrics.jsonl", Env: c.s.Trainer.Env}
}

// discard is an io.Writer that keeps nothing; rendering for validation only needs the error.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
