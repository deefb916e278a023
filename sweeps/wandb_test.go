package sweeps

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/sweeps/wandb"
	"gopkg.in/yaml.v3"
)

// loadWandB writes a W&B config to a file and loads it.
func loadWandB(t *testing.T, yaml string) (*Spec, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

// firstArgv is the argv of a W&B config's first trial.
func firstArgv(t *testing.T, yaml string) []string {
	t.Helper()
	s, err := loadWandB(t, yaml)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	argv, err := RenderCommand(s.Trainer.Command, TemplateData{Params: trials[0].Params, MetricsFile: filepath.Join(t.TempDir(), "m.jsonl")})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return argv
}

// TestWandBMacros: each macro of a W&B command expands to the argv W&B's agent runs
// (wandb/sdk/launch/sweeps/utils.py, create_sweep_command_args; wandb/wandb_agent.py, _command_run),
// the parameters sorted by name as W&B's server hands them to the agent.
func TestWandBMacros(t *testing.T) {
	params := `
parameters:
  lr: {values: [0.001]}
  flag: {values: [false]}
  on: {value: true}
  name: {value: "it's x"}
`
	cases := []struct{ name, command string }{
		{"default", ""},
		{"args", "command: ['${env}', '${interpreter}', '${program}', '${args}']"},
		{"no hyphens", "command: ['${env}', 'python', '${program}', '${args_no_hyphens}']"},
		{"no boolean flags", "command: ['${program}', '${args_no_boolean_flags}']"},
		{"no equals", "command: ['${program}', '${args_no_equals}']"},
		{"json", "command: ['${program}', '${args_json}']"},
		{"hydra", "command: ['${program}', '${args_append_hydra}', '${args_override_hydra}']"},
		{"unknown macro dropped", "command: ['${program}', '${nope}', '${args} ${x}', '${args} x']"},
		{"literal braces", "command: ['${program}', '--fmt={{.x}}']"},
	}
	want := map[string][]string{
		"default":               {"/usr/bin/env", "python", "train.py", "--flag=False", "--lr=0.001", "--name=it's x", "--on=True"},
		"args":                  {"/usr/bin/env", "python", "train.py", "--flag=False", "--lr=0.001", "--name=it's x", "--on=True"},
		"no hyphens":            {"/usr/bin/env", "python", "train.py", "flag=False", "lr=0.001", "name=it's x", "on=True"},
		"no boolean flags":      {"train.py", "--lr=0.001", "--name=it's x", "--on"},
		"no equals":             {"train.py", "--flag", "False", "--lr", "0.001", "--name", "it's x", "--on", "True"},
		"json":                  {"train.py", `{"flag": false, "lr": 0.001, "name": "it's x", "on": true}`},
		"hydra":                 {"train.py", "+flag=False", "+lr=0.001", "+name=it's x", "+on=True", "++flag=False", "++lr=0.001", "++name=it's x", "++on=True"},
		"unknown macro dropped": {"train.py", "${args} x"},
		"literal braces":        {"train.py", "--fmt={{.x}}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := firstArgv(t, "program: train.py\nmethod: grid\n"+c.command+params)
			if !slices.Equal(got, want[c.name]) {
				t.Errorf("got %q\nwant %q", got, want[c.name])
			}
		})
	}
}

// TestWandBArgsJSONFile: ${args_json_file} names a file holding ${args_json}'s JSON.
func TestWandBArgsJSONFile(t *testing.T) {
	s, err := loadWandB(t, "program: t.py\nmethod: grid\ncommand: ['${program}', '--config', '${args_json_file}']\nparameters:\n  lr: {values: [0.5]}\n")
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := Plan(s)
	metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
	argv, err := RenderCommand(s.Trainer.Command, TemplateData{Params: trials[0].Params, MetricsFile: metrics})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(filepath.Dir(metrics), WandBArgsFile)
	if !slices.Equal(argv, []string{"t.py", "--config", file}) {
		t.Fatalf("argv %q", argv)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != `{"lr": 0.5}` {
		t.Errorf("file %q, %v; want {\"lr\": 0.5}", b, err)
	}
}

// TestWandBEnvVar: ${envvar:NAME} is the variable's value where the trainer starts, or NAME when unset.
func TestWandBEnvVar(t *testing.T) {
	t.Setenv("WANDB_TEST_DATA", "/data/x")
	os.Unsetenv("WANDB_TEST_UNSET")
	got := firstArgv(t, "program: t.py\nmethod: grid\ncommand:\n- ${program}\n- --data=${envvar:WANDB_TEST_DATA}/y\n- ${envvar:WANDB_TEST_UNSET}\nparameters:\n  a: {value: 1}\n")
	want := []string{"t.py", "--data=/data/x/y", "WANDB_TEST_UNSET"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWandBYAML11: values and command elements are typed as PyYAML types them and written as Python's
// str() writes them.
func TestWandBYAML11(t *testing.T) {
	got := firstArgv(t, `program: t.py
method: grid
command:
- ${program}
- 10
- 0.10
- yes
- 1_000
- 0x10
- 1e-3
- 1.0
- ${args}
parameters:
  a: {value: 1e-3}
  b: {value: 1.0e-3}
  c: {value: 0.10}
  d: {value: on}
  e: {value: 1e16}
  f: {value: 1.0e+16}
  g: {value: 123456789.0}
  h: {value: 0.00001}
  i: {value: !!float 3}
  j: {value: "007"}
  k: {value: 010}
`)
	want := []string{"t.py", "10", "0.1", "True", "1000", "16", "1e-3", "1.0",
		"--a=1e-3", "--b=0.001", "--c=0.1", "--d=True", "--e=1e16", "--f=1e+16", "--g=123456789.0", "--h=1e-05", "--i=3.0", "--j=007", "--k=8"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestWandBNested: nested parameters reach the trainer as one dict, as W&B passes them; dotted keys stay
// flat names (Hydra overrides); both are rlsweep parameters under dotted names.
func TestWandBNested(t *testing.T) {
	yaml := `program: t.py
method: grid
command:
- ${program}
- ${args}
- ${args_json}
parameters:
  agent.algorithm.entropy_coef: {values: [0.01]}
  optimizer:
    parameters:
      lr: {values: [0.001]}
      kind: {value: adam}
      nadam:
        parameters:
          beta: {values: [0.9]}
`
	got := firstArgv(t, yaml)
	want := []string{"t.py", "--agent.algorithm.entropy_coef=0.01", "--optimizer={'kind': 'adam', 'lr': 0.001, 'nadam': {'beta': 0.9}}",
		`{"agent.algorithm.entropy_coef": 0.01, "optimizer": {"kind": "adam", "lr": 0.001, "nadam": {"beta": 0.9}}}`}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	s, _ := loadWandB(t, yaml)
	if names := ParamNames(s); !slices.Equal(names, []string{"agent.algorithm.entropy_coef", "optimizer.lr", "optimizer.kind", "optimizer.nadam.beta"}) {
		t.Errorf("parameters %q", names)
	}
}

// TestWandBSpec: the rest of a W&B config: name from project or the file, W&B's defaults (goal minimize,
// no probes, TensorBoard), run_cap, target, the rlsweep block, grid over int_uniform and q_uniform.
func TestWandBSpec(t *testing.T) {
	s, err := loadWandB(t, `program: t.py
project: My Project
entity: me
description: d
method: random
run_cap: 7
metric: {name: rollout/ep_rew_mean, target: 200}
parameters:
  lr: {distribution: log_uniform_values, min: 1.0e-5, max: 1.0e-2}
rlsweep:
  metrics: {source: jsonl}
  seeds: [1, 2]
  total_steps: 1000
`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "My-Project" || s.Metric.Goal != "minimize" || s.Probes.Enabled || s.Trials != 7 ||
		s.Trainer.Metrics.Source != "jsonl" || len(s.Seeds) != 2 || s.Trainer.TotalSteps != 1000 || *s.Metric.Target != 200 || s.Format != FormatWandB {
		t.Errorf("spec %+v", s)
	}
	s, err = loadWandB(t, "program: t.py\nmethod: random\nparameters:\n  lr: {min: 0.1, max: 0.2}\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "sweep" || s.Trials != DefaultWandBRunCap || s.Trainer.Metrics.Source != "auto" {
		t.Errorf("defaults: name %q, trials %d, source %q", s.Name, s.Trials, s.Trainer.Metrics.Source)
	}
	s, err = loadWandB(t, "program: t.py\nmethod: grid\nparameters:\n  n: {distribution: int_uniform, min: 2, max: 4}\n  x: {distribution: q_uniform, min: 0, max: 1, q: 0.25}\n  k: {distribution: q_uniform, min: 0, max: 10, q: 5}\n  f: {distribution: q_uniform, min: 8.0, max: 24, q: 8}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Parameters; !slices.Equal(got[0].Values, []any{int64(2), int64(3), int64(4)}) ||
		!slices.Equal(got[1].Values, []any{0.0, 0.25, 0.5, 0.75}) || !slices.Equal(got[2].Values, []any{int64(0), int64(5)}) ||
		!slices.Equal(got[3].Values, []any{8.0, 16.0}) { // numpy's arange(8.0, 24, 8): floats
		t.Errorf("grid values %v %v %v %v", got[0].Values, got[1].Values, got[2].Values, got[3].Values)
	}
}

// TestWandBRefused: what W&B refuses, and what rlsweep cannot do yet, is refused with the line, the
// field, the value and what is allowed.
func TestWandBRefused(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"program: t.py\nmethod: random\nparameters:\n  lr: {distribution: log_uniform_values, min: 1e-5, max: 1.0}\n",
			`sweep.yaml:4: parameters.lr.min: got "1e-5" (a string to W&B, which reads YAML 1.1: a number in exponent form needs a dot and a signed exponent), want a number such as 1.0e-5`},
		{"program: t.py\nmethod: custom\nparameters:\n  lr: {min: 0.1, max: 0.2}\n",
			`sweep.yaml:2: method: got "custom", want grid, random, sobol, bayes or pbt`},
		{"program: t.py\nmethod: random\nrlsweep: {bayes: {startup_trials: 5}}\nparameters:\n  lr: {min: 0.1, max: 0.2}\n",
			`sweep.yaml:3: bayes: got a bayes section with method random, want no bayes section, or method bayes`},
		{"program: t.py\nmethod: random\nearly_terminate: {type: hyperband}\nparameters:\n  lr: {min: 0.1, max: 0.2}\n",
			`sweep.yaml:3: early_terminate.min_iter: got min_iter 0 and max_iter 0, want min_iter or max_iter, an integer > 0 (with both, max_iter wins, as in W&B)`},
		{"program: t.py\nmethod: random\nparameters:\n  lr: {distribution: uniform, values: [1, 2]}\n",
			`sweep.yaml:4: parameters.lr.values: got a values, want only min, max with distribution uniform`},
		{"program: t.py\nmethod: random\nparameters:\n  n: {distribution: int_uniform, min: 1.0, max: 4}\n",
			`sweep.yaml:4: parameters.n: got min 1, max 4, want integers for distribution int_uniform`},
		{"program: t.py\nmethod: random\nparameters:\n  x: {distribution: normal, sigma: -1}\n",
			`sweep.yaml:4: parameters.x.sigma: got -1, want a number >= 0`},
		{"program: t.py\nmethod: random\nparameters:\n  x: {values: [a, b], probabilities: [0.5, 0.6]}\n",
			`sweep.yaml:4: parameters.x.probabilities: got a sum of 1.1, want probabilities that sum to 1`},
		{"program: t.py\nmethod: grid\nparameters:\n  x: {distribution: normal}\n",
			`sweep.yaml:4: parameters.x.distribution: got "normal", want a list of values`},
		{"method: random\nparameters:\n  x: {min: 0.0, max: 1.0}\n",
			`sweep.yaml:1: program: got nothing, want the training script`},
		{"program: t.py\nmethod: random\nparameters:\n  x: {values: [a, b], distribution: categorical, probabilities: [0.5, 0.5]}\n",
			`sweep.yaml:4: parameters.x.probabilities: got a probabilities, want only values with distribution categorical (weights need categorical_w_probabilities)`},
		{"program: t.py\nmethod: grid\nmetric: {goal: maximize}\nparameters:\n  x: {value: 1}\n", `sweep.yaml:3: metric.name: got nothing, want the name of the metric`},
		{"program: t.py\nparameters:\n  x: {value: 1}\n", `sweep.yaml:1: method: got nothing, want grid or random (W&B requires method)`},
		// no program, no method, no name: W&B's metric and parameters (JacobHA/ShapedRL), not an rlsweep spec
		{"metric:\n  goal: maximize\n  name: eval/auc\n  method: random\nparameters:\n  x: {values: [1, 2]}\n",
			`sweep.yaml:1: method: got nothing, want grid or random (W&B requires method)`},
		{"program: t.py\nmethod: grid\nparameters: {}\n", `sweep.yaml:3: parameters: got none, want at least one parameter (W&B requires parameters)`},
		{"program: t.py\nmethod: random\nparameters:\n  x: {distribution: lognormal}\n",
			`sweep.yaml:4: parameters.x.distribution: got "lognormal", want constant, categorical`},
	}
	for _, c := range cases {
		_, err := loadWandB(t, c.yaml)
		var errs Errors
		if !errors.As(err, &errs) {
			t.Errorf("%q: got %v, want Errors", c.yaml, err)
			continue
		}
		found := false
		for _, e := range errs {
			msg := e.Error()
			msg = msg[strings.LastIndex(msg, "sweep.yaml:"):]
			found = found || strings.HasPrefix(msg, c.want)
		}
		if !found {
			t.Errorf("%q:\n got %v\nwant %s...", c.yaml, err, c.want)
		}
	}
}

// TestDistributions: every distribution samples within its bounds, quantises to multiples of q (integers
// when q is), keeps its scale, and plans the same trials for the same sampler seed.
func TestDistributions(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		p          Parameter
		lo, hi     float64
		mean, tol  float64 // of the values (or of their logarithm when logMean)
		logMean    bool
		quantum    float64
		integerOut bool
	}{
		{p: Parameter{Distribution: DistUniform, Min: f(-1), Max: f(3)}, lo: -1, hi: 3, mean: 1, tol: 0.05},
		{p: Parameter{Distribution: DistLogUniform, Min: f(1e-5), Max: f(1e-1)}, lo: 1e-5, hi: 1e-1, mean: math.Log(1e-3), tol: 0.1, logMean: true},
		{p: Parameter{Distribution: DistIntUniform, Min: f(2), Max: f(5)}, lo: 2, hi: 5, mean: 3.5, tol: 0.05, quantum: 1, integerOut: true},
		{p: Parameter{Distribution: DistQUniform, Min: f(0), Max: f(1), Q: f(0.25)}, lo: 0, hi: 1, mean: 0.5, tol: 0.05, quantum: 0.25},
		{p: Parameter{Distribution: DistQUniform, Min: f(0), Max: f(256), Q: f(8), QInt: true}, lo: 0, hi: 256, mean: 128, tol: 4, quantum: 8, integerOut: true},
		{p: Parameter{Distribution: DistQLogUniformValues, Min: f(16), Max: f(4096), Q: f(16), QInt: true}, lo: 16, hi: 4096, mean: math.Log(256), tol: 0.1, logMean: true, quantum: 16, integerOut: true},
		{p: Parameter{Distribution: DistInvLogUniformValues, Min: f(1e-4), Max: f(1)}, lo: 1e-4, hi: 1, mean: math.Log(1e-2), tol: 0.1, logMean: true},
		{p: Parameter{Distribution: DistNormal, Mu: f(3), Sigma: f(2)}, lo: -100, hi: 100, mean: 3, tol: 0.1},
		{p: Parameter{Distribution: DistQNormal, Mu: f(10), Sigma: f(3), Q: f(2), QInt: true}, lo: -100, hi: 100, mean: 10, tol: 0.2, quantum: 2, integerOut: true},
		{p: Parameter{Distribution: DistLogNormal, Mu: f(-2), Sigma: f(0.5)}, lo: 0, hi: 100, mean: -2, tol: 0.05, logMean: true},
		{p: Parameter{Distribution: DistQLogNormal, Mu: f(3), Sigma: f(0.5), Q: f(1)}, lo: 0, hi: 1e6, mean: math.Exp(3 + 0.125), tol: 1, quantum: 1},
		{p: Parameter{Distribution: DistBeta, A: f(2), B: f(5)}, lo: 0, hi: 1, mean: 2.0 / 7, tol: 0.01},
		{p: Parameter{Distribution: DistQBeta, A: f(1), B: f(1), Q: f(0.1)}, lo: 0, hi: 1, mean: 0.5, tol: 0.02, quantum: 0.1},
		{p: Parameter{Values: []any{"a", "b", "c"}, Probabilities: []float64{0.8, 0.2, 0}}},
	}
	for _, c := range cases {
		c.p.Name = "x"
		s := &Spec{Name: "d", Method: MethodRandom, Trials: 4000, SamplerSeed: 7, Seeds: []int64{1}, Metric: Metric{Name: "r", Goal: "maximize"},
			Trainer:     Trainer{Command: []string{"t"}, TotalSteps: 10, SegmentSteps: 10, Metrics: MetricsSource{Source: "jsonl"}, StallTimeout: 60e9, GracePeriod: 1e9},
			Diagnostics: Diagnostics{Enabled: true, Patience: 5}, Concurrency: 1, Resources: Resources{TaskQueue: "q", GPUs: 0}, Retries: Retries{MaxAttempts: 1, MaxInfraRetries: 1},
			Parameters: []Parameter{c.p}}
		name := c.p.Distribution
		if name == "" {
			name = "probabilities"
		}
		t.Run(name, func(t *testing.T) {
			trials, err := Plan(s)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Plan(s)
			if !slices.EqualFunc(trials, again, func(a, b Trial) bool { return a.Params["x"] == b.Params["x"] }) {
				t.Error("two plans of one spec differ")
			}
			if c.p.Values != nil {
				count := map[any]int{}
				for _, tr := range trials {
					count[tr.Params["x"]]++
				}
				if count["c"] != 0 || math.Abs(float64(count["a"])/4000-0.8) > 0.03 {
					t.Errorf("counts %v, want a 80%%, b 20%%, c never", count)
				}
				return
			}
			sum := 0.0
			for _, tr := range trials {
				var x float64
				switch v := tr.Params["x"].(type) {
				case int64:
					if !c.integerOut {
						t.Fatalf("got integer %d, want a float", v)
					}
					x = float64(v)
				case float64:
					if c.integerOut {
						t.Fatalf("got float %v, want an integer", v)
					}
					x = v
				}
				if x < c.lo || x > c.hi {
					t.Fatalf("%v outside [%v, %v]", x, c.lo, c.hi)
				}
				if c.quantum > 0 {
					if k := x / c.quantum; math.Abs(k-math.Round(k)) > 1e-9 {
						t.Fatalf("%v is not a multiple of %v", x, c.quantum)
					}
				}
				if c.logMean {
					x = math.Log(x)
				}
				sum += x
			}
			if mean := sum / float64(len(trials)); math.Abs(mean-c.mean) > c.tol {
				t.Errorf("mean %v, want %v ± %v", mean, c.mean, c.tol)
			}
		})
	}
}

// TestBetaPPF against known quantiles.
func TestBetaPPF(t *testing.T) {
	for _, c := range []struct{ u, a, b, want float64 }{
		{0.5, 2, 2, 0.5}, {0.5, 2, 5, 0.26444998329566}, {0.9, 1, 1, 0.9}, {0.1, 0.5, 0.5, 0.024471741852423}, {0.99, 5, 1, math.Pow(0.99, 0.2)},
	} {
		if got := betaPPF(c.u, c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("betaPPF(%v, %v, %v) = %v, want %v", c.u, c.a, c.b, got, c.want)
		}
	}
}

// TestWandBProgramNextToConfig: trainers run in their trial's directory, so a relative program found
// next to the config file runs from there; one that is not a file there (a module for -m) stays as
// written.
func TestWandBProgramNextToConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for program, want := range map[string]string{"train.py": filepath.Join(dir, "train.py"), "pkg.train": "pkg.train"} {
		path := filepath.Join(dir, "sweep.yaml")
		if err := os.WriteFile(path, []byte("program: "+program+"\nmethod: grid\nparameters:\n  a: {value: 1}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		trials, _ := Plan(s)
		argv, _ := RenderCommand(s.Trainer.Command, TemplateData{Params: trials[0].Params})
		if got := []string{"/usr/bin/env", "python", want, "--a=1"}; !slices.Equal(argv, got) {
			t.Errorf("program %s: argv %q, want %q", program, argv, got)
		}
	}
}

// TestWandBEnvVarWithheld: ${envvar:...} cannot hand a trainer the worker's own settings, which never
// reach it (docs/trainer-contract.md).
func TestWandBEnvVarWithheld(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
	_, err := loadWandB(t, "program: t.py\nmethod: grid\ncommand:\n- ${program}\n- --key=${envvar:AWS_SECRET_ACCESS_KEY}\nparameters:\n  a: {value: 1}\n")
	if err == nil || !strings.Contains(err.Error(), "trainer.command[1]") || strings.Contains(err.Error(), "hunter2") ||
		!strings.Contains(err.Error(), "the worker's AWS_* variables never reach a trainer") {
		t.Errorf("got %v, want trainer.command[1] refused without the value", err)
	}
}

// TestWandBSpecJSON: a W&B spec travels as JSON (Temporal payloads, spec.json) and is planned again from
// it by the workflow: W&B's rules for values (repeats, null, 1e-4 as a string) hold there too, and the
// plan and argv are the same.
func TestWandBSpecJSON(t *testing.T) {
	s, err := loadWandB(t, "program: t.py\nmethod: random\nrun_cap: 4\nparameters:\n  lr: {values: [1e-4, 3.0e-4, 1e-4]}\n  act: {values: [relu, null]}\n  opt:\n    parameters:\n      eps: {distribution: q_log_uniform_values, min: 1.0e-8, max: 1.0e-4, q: 1.0e-8}\n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want, _ := Plan(s)
	got, err := Plan(&back)
	if err != nil {
		t.Fatalf("plan from JSON: %v", err)
	}
	for i := range want {
		a, _ := RenderCommand(s.Trainer.Command, TemplateData{Params: want[i].Params})
		b, _ := RenderCommand(back.Trainer.Command, TemplateData{Params: got[i].Params})
		if !slices.Equal(a, b) {
			t.Errorf("trial %d: argv %q from JSON, want %q", i, b, a)
		}
	}
}

// TestWandBListValues: lists and mappings as values (net_arch: [64, 64]) reach the trainer as W&B passes
// them, Python's str() of the list or dict, and as JSON in ${args_json}.
func TestWandBListValues(t *testing.T) {
	got := firstArgv(t, `program: t.py
method: grid
command:
- ${program}
- ${args}
- ${args_json}
parameters:
  net_arch: {values: [[64, 64], [256, 256]]}
  kw: {value: {act: tanh, sizes: [1, 2.5], ortho: false, x: null}}
  opt:
    parameters:
      betas: {value: [0.9, 0.999]}
`)
	want := []string{"t.py", "--kw={'act': 'tanh', 'ortho': False, 'sizes': [1, 2.5], 'x': None}", "--net_arch=[64, 64]", "--opt={'betas': [0.9, 0.999]}",
		`{"kw": {"act": "tanh", "ortho": false, "sizes": [1, 2.5], "x": null}, "net_arch": [64, 64], "opt": {"betas": [0.9, 0.999]}}`}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestExplainProgramNotFound: --explain says when a relative program will not be found from the trial's
// directory, where trainers run.
func TestExplainProgramNotFound(t *testing.T) {
	s, err := loadWandB(t, "program: scripts/train.py\nmethod: grid\nparameters:\n  a: {value: 1}\n")
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := Plan(s)
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(lines, "program: scripts/train.py is not next to the config file: trainers run in their trial's directory, so give its absolute path (or put the config file beside it)") {
		t.Errorf("explain:\n%s", strings.Join(lines, "\n"))
	}
}

// TestWandBAliases: anchors, aliases and << merges work in W&B configs, as PyYAML reads them; an alias
// bomb is refused.
func TestWandBAliases(t *testing.T) {
	got := firstArgv(t, `program: t.py
method: grid
parameters:
  lr: &lr {values: [0.001]}
  actor_lr: *lr
  base: &base {value: 1}
  other:
    <<: *base
`)
	if want := []string{"/usr/bin/env", "python", "t.py", "--actor_lr=0.001", "--base=1", "--lr=0.001", "--other=1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	bomb := "program: t.py\nmethod: grid\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\nparameters:\n  a: {value: 1}\n"
	if _, err := loadWandB(t, bomb); err == nil || !strings.Contains(err.Error(), "nodes once aliases are expanded") {
		t.Errorf("alias bomb: got %v", err)
	}
}

// run_cap on a grid caps the runs started (Spec.RunCap, which the scheduler honours); the grid itself is
// planned whole.
func TestWandBGridRunCap(t *testing.T) {
	s, err := loadWandB(t, "program: t.py\nmethod: grid\nrun_cap: 2\nparameters:\n  lr: {values: [0.1, 0.01, 0.001]}\n")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if s.RunCap != 2 || s.Trials != 0 || len(trials) != 3 {
		t.Errorf("run_cap %d, trials %d, planned %d; want 2, 0, 3", s.RunCap, s.Trials, len(trials))
	}
}

// TestWandBLogUniformValuesBound: a W&B log_uniform_values parameter with min <= 0 (W&B's schema wants
// min > 0) is refused under the name written in the file, once; rlsweep's own log_uniform is not
// named, since W&B's log_uniform takes exponents, where a negative min is right.
func TestWandBLogUniformValuesBound(t *testing.T) {
	_, err := loadWandB(t, "program: t.py\nmethod: random\nparameters:\n  step-penalty:\n    distribution: log_uniform_values\n    min: -0.1\n    max: -0.001\n")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("got %v, want one problem", err)
	}
	want := "sweep.yaml:6: parameters.step-penalty.min: got -0.1, want a number > 0 for log_uniform_values"
	if msg := errs[0].Error(); !strings.HasSuffix(msg, want) && !strings.Contains(msg, want+" ") {
		t.Errorf("got %s\nwant %s ...", msg, want)
	}
}

// TestWandBNullValue: a constant null (value: null or ~), which W&B's schema accepts, reaches the
// trainer as W&B's agent passes it: None in the flags, null in the JSON.
func TestWandBNullValue(t *testing.T) {
	cfg := "program: train.py\nmethod: random\nparameters:\n  ckpt: {value: null}\n  lr: {value: 0.1}\n  resume: {value: ~}\n" +
		"command: ['${program}', '${args}', '${args_no_hyphens}', '${args_json}']\n"
	want := []string{"train.py", "--ckpt=None", "--lr=0.1", "--resume=None", "ckpt=None", "lr=0.1", "resume=None",
		`{"ckpt": null, "lr": 0.1, "resume": null}`}
	if got := firstArgv(t, cfg); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestWandBConfigYAML: the run config a W&B script reads through wandb.config (WANDB_SWEEP_PARAM_PATH)
// holds every top-level parameter as {value: ...}, nested ones as their mapping, and reads back as the
// values W&B's agent would write; floats keep a dot, so PyYAML reads 1e-05 as a float.
func TestWandBConfigYAML(t *testing.T) {
	s, err := loadWandB(t, `program: t.py
method: grid
parameters:
  lr: {value: 0.00001}
  optimizer:
    parameters:
      name: {value: adam}
      beta: {value: 0.9}
  arch: {value: [64, 64]}
  flag: {value: true}
  note: {value: "a: b"}
  none: {value: null}
  epochs: {values: [3]}
`)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WandBConfigYAML(trials[0].Params, s.Trainer.WandBConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := `wandb_version: 1

"arch": {value: [64, 64]}
"epochs": {value: 3}
"flag": {value: true}
"lr": {value: 1.0e-05}
"none": {value: null}
"note": {value: "a: b"}
"optimizer": {value: {"beta": 0.9, "name": "adam"}}
`
	if string(b) != want {
		t.Errorf("run config =\n%s\nwant\n%s", b, want)
	}
	var got map[string]any
	if err := yaml.Unmarshal(b, &got); err != nil {
		t.Fatalf("the run config is not YAML: %v", err)
	}
	value := func(k string) any { m, _ := got[k].(map[string]any); return m["value"] }
	if got["wandb_version"] != 1 || value("lr") != 1e-05 || value("flag") != true || value("note") != "a: b" || value("none") != nil ||
		fmt.Sprint(value("optimizer")) != "map[beta:0.9 name:adam]" || fmt.Sprint(value("arch")) != "[64 64]" {
		t.Errorf("run config reads back as %v", got)
	}
	if spec := mustDecodeSpec(t); len(spec.Trainer.WandBConfig) != 0 {
		t.Errorf("an rlsweep spec has a W&B run config: %v", spec.Trainer.WandBConfig)
	}
}

func mustDecodeSpec(t *testing.T) *Spec {
	t.Helper()
	s, err := Decode(strings.NewReader("name: n\ntrainer: {command: [t], total_steps: 10}\nparameters: {a: {values: [1]}}\n"), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWandBDistributionsTranslated: every distribution W&B's schema allows is one of rlsweep's or one
// that wandbDistribution renames (a value list, a constant, or bounds given as exponents).
func TestWandBDistributionsTranslated(t *testing.T) {
	renamed := []string{"constant", "categorical", "categorical_w_probabilities", "log_uniform_values", "inv_log_uniform", "q_log_uniform"}
	for _, d := range wandb.Distributions {
		if !slices.Contains(Distributions, d) && !slices.Contains(renamed, d) {
			t.Errorf("W&B distribution %s is neither rlsweep's nor renamed by wandbDistribution", d)
		}
	}
}
