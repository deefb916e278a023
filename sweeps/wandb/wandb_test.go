package wandb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	"gopkg.in/yaml.v3"
)

func mustNode(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// render runs argv templates as package sweeps' RenderCommand does: each element with Funcs, then Finish.
func render(t *testing.T, argv []string, params map[string]any, metricsFile string) []string {
	t.Helper()
	out := make([]string, len(argv))
	for i, a := range argv {
		tmpl, err := template.New("arg").Option("missingkey=error").Funcs(Funcs([]string{"seed"})).Parse(a)
		if err != nil {
			t.Fatalf("%q: %v", a, err)
		}
		var b strings.Builder
		if err := tmpl.Execute(&b, struct {
			Params      map[string]any
			MetricsFile string
		}{params, metricsFile}); err != nil {
			t.Fatalf("%q: %v", a, err)
		}
		out[i] = b.String()
	}
	out, err := Finish(out, metricsFile)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCommand: a command's macros become templates that render the agent's argv, the top-level
// parameters sorted by name, a nested one as the dict of its leaves, a reserved name looked up under
// wandb.
func TestCommand(t *testing.T) {
	tree := []*Param{
		{Name: "seed"},
		{Name: "opt", Children: []*Param{{Name: "lr"}, {Name: "betas", JSON: true}}},
		{Name: "flag"},
	}
	params := map[string]any{"wandb.seed": int64(3), "opt.lr": 0.001, "opt.betas": "[0.9, 0.99]", "flag": false}
	dir := t.TempDir()
	metricsFile := filepath.Join(dir, "metrics.jsonl")
	cases := []struct {
		command string
		want    []string
	}{
		{"", []string{"/usr/bin/env", "python", "t.py", "--flag=False", "--opt={'betas': [0.9, 0.99], 'lr': 0.001}", "--seed=3"}},
		{"['${program}', '${args_no_boolean_flags}']", []string{"t.py", "--opt={'betas': [0.9, 0.99], 'lr': 0.001}", "--seed=3"}},
		{"['${program}', '${args_json}']", []string{"t.py", `{"flag": false, "opt": {"betas": [0.9, 0.99], "lr": 0.001}, "seed": 3}`}},
		{"['${program}', '${args_json_file}']", []string{"t.py", filepath.Join(dir, ArgsFile)}},
		{"['${program}', '${nope}', 1.0e-3, yes, '{{x}}']", []string{"t.py", "0.001", "True", "{{x}}"}},
	}
	for _, c := range cases {
		var command []*yaml.Node
		if c.command != "" {
			command = mustNode(t, c.command).Content
		}
		argv := Command(command, "t.py", tree)
		if got := render(t, argv, params, metricsFile); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q (templates %q)", c.command, got, c.want, argv)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, ArgsFile)); err != nil || string(b) != `{"flag": false, "opt": {"betas": [0.9, 0.99], "lr": 0.001}, "seed": 3}` {
		t.Errorf("${args_json_file}: %q, %v", b, err)
	}
}

// TestEnvVarWithheld: ${envvar:...} never hands a trainer the worker's own settings or credentials.
func TestEnvVarWithheld(t *testing.T) {
	for _, name := range []string{"RLSWEEP_S3_SECRET", "TEMPORAL_ADDRESS", "AWS_SECRET_ACCESS_KEY"} {
		if v, err := envVar(name); err == nil || v != "" || !strings.Contains(err.Error(), "rlsweep.environment") {
			t.Errorf("%s: got %q, %v", name, v, err)
		}
	}
	t.Setenv("WANDB_TEST_X", "x")
	if v, err := envVar("WANDB_TEST_X"); err != nil || v != "x" {
		t.Errorf("WANDB_TEST_X: got %q, %v", v, err)
	}
}

// TestIsConfig: a document is a W&B config by its keys.
func TestIsConfig(t *testing.T) {
	for text, want := range map[string]bool{
		"name: a\ntrainer: {}\nparameters: {}":      false,
		"program: t.py\nparameters: {}":             true,
		"method: grid\nparameters: {}":              true,
		"name: a\nparameters: {}":                   false,
		"parameters: {}":                            true,
		"project: p\ntrials: 3":                     false,
		"rlsweep: {}\nmethod: random":               true,
		"name: a\nmethod: grid\nparameters: {}":     true,
		"name: a\ndescription: d\nparameters: {}\n": false,
	} {
		if got := IsConfig(mustNode(t, text)); got != want {
			t.Errorf("%q: got %v, want %v", text, got, want)
		}
	}
}

// TestSanitizeName: a W&B name becomes a valid sweep name.
func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{"my project/v2": "my-project-v2", "__x": "x", "": "wandb-sweep", "...": "wandb-sweep",
		strings.Repeat("a", 70): strings.Repeat("a", 63), "ü": "wandb-sweep", "aü": "a--"} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestExpandAliases: aliases are copied and << merges keys a mapping does not have itself; a document
// past MaxExpandedNodes is returned as it is.
func TestExpandAliases(t *testing.T) {
	root := mustNode(t, "base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nlist: [*b]\n")
	out, ok := ExpandAliases(root)
	if !ok {
		t.Fatal("not expanded")
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "base: {x: 1, y: 2}\nother:\n    y: 3\n    x: 1\nlist: [{x: 1, y: 2}]\n"; string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	bomb := mustNode(t, "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n")
	if out, ok := ExpandAliases(bomb); ok || out != bomb {
		t.Errorf("alias bomb: ok %v, same node %v", ok, out == bomb)
	}
}

// TestConfigYAML: the run config has every top-level parameter as {value: ...}, sorted, nested ones as
// mappings, floats as PyYAML reads floats back; a parameter missing from the trial is an error.
func TestConfigYAML(t *testing.T) {
	paths := []string{"lr", "opt/eps", "opt/layers#json", "seed"}
	params := map[string]any{"lr": 1e-05, "opt.eps": 2.0, "opt.layers": `[64, {"act": "relu"}]`, "wandb.seed": int64(1)}
	b, err := ConfigYAML(params, paths, []string{"seed"})
	if err != nil {
		t.Fatal(err)
	}
	want := "wandb_version: 1\n\n\"lr\": {value: 1.0e-05}\n\"opt\": {value: {\"eps\": 2.0, \"layers\": [64, {\"act\": \"relu\"}]}}\n\"seed\": {value: 1}\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if _, err := ConfigYAML(map[string]any{}, paths, nil); err == nil || !strings.Contains(err.Error(), `"lr"`) {
		t.Errorf("missing parameter: %v", err)
	}
}
