package sweeps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/trainer"
)

// TestBadSpecs loads every spec under testdata/bad and checks that it fails with Errors whose messages
// contain each line of its .want file, and that every message names file:line and a field.
func TestBadSpecs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("got %d bad specs, want at least 30", len(files))
	}
	for _, file := range files {
		base := filepath.Base(file)
		t.Run(base, func(t *testing.T) {
			wantText, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Load(file)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load(%s) = %v, want Errors", file, err)
			}
			format := regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `:[1-9][0-9]*: [A-Za-z_][^ ]*: got .+, want .+$`)
			for _, e := range errs {
				if !format.MatchString(e.Error()) {
					t.Errorf("message %q does not read %q", e.Error(), "FILE:LINE: FIELD: got VALUE, want ALLOWED")
				}
			}
			for _, want := range strings.Split(strings.TrimSpace(string(wantText)), "\n") {
				want = strings.TrimRight(want, " ")
				if !regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `:[0-9]+: \S+: `).MatchString(want) {
					t.Errorf("%s.want line %q must start with %s:LINE: FIELD:", base, want, base)
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Load(%s) =\n%v\nwant it to contain\n%s", file, err, want)
				}
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestTooLarge checks that a 10 MB spec is refused after reading just past the limit, not parsed.
func TestTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte("# padding padding padding padding padding padding padding padding\n"), 10<<20/66)
	r := &countingReader{r: bytes.NewReader(big)}
	_, err := Decode(r, "big.yaml")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Decode(10 MB) = %v, want Errors", err)
	}
	if want := "big.yaml:1: file: got more than 1048576 bytes"; !strings.Contains(err.Error(), want) {
		t.Errorf("Decode(10 MB) = %v, want it to contain %q", err, want)
	}
	if r.n > MaxSpecBytes+1 {
		t.Errorf("Decode read %d bytes of a 10 MB input, want at most %d", r.n, MaxSpecBytes+1)
	}

	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.As(err, &errs) || !strings.Contains(err.Error(), path+":1: file:") {
		t.Errorf("Load(10 MB file) = %v, want Errors naming %s:1: file", err, path)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-file.yaml")
	var errs Errors
	if err == nil || errors.As(err, &errs) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want an os.ErrNotExist error that is not Errors", err)
	}
}

func TestErrorsAs(t *testing.T) {
	_, err := Decode(strings.NewReader("name: x\nbogus: 1\n"), "s.yaml")
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("errors.As(%v, *FieldError) = false, want true", err)
	}
	if got, want := *fe, (FieldError{File: "s.yaml", Line: 2, Field: "bogus", Got: "an unknown key"}); got.File != want.File || got.Line != want.Line || got.Field != want.Field || got.Got != want.Got {
		t.Errorf("FieldError = %+v, want %+v", got, want)
	}
}

func TestFieldErrorFormat(t *testing.T) {
	tests := []struct {
		e    FieldError
		want string
	}{
		{FieldError{"sweep.yaml", 12, "parameters.lr.min", "-0.001", "a number > 0 for log_uniform"},
			"sweep.yaml:12: parameters.lr.min: got -0.001, want a number > 0 for log_uniform"},
		{FieldError{"", 0, "name", `""`, "a name"}, `name: got "", want a name`},
		{FieldError{"s.yaml", 0, "name", `""`, "a name"}, `s.yaml: name: got "", want a name`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestDecodeDefaults(t *testing.T) {
	s, err := Load("testdata/good/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"method", s.Method, MethodGrid},
		{"seeds", len(s.Seeds) == 1 && s.Seeds[0] == 1, true},
		{"metric", s.Metric, Metric{Name: "reward", Goal: "maximize"}},
		{"probes.enabled", s.Probes.Enabled, true},
		{"diagnostics.enabled", s.Diagnostics.Enabled, true},
		{"diagnostics.patience", s.Diagnostics.Patience, 5},
		{"diagnostics.warmup_steps", s.Diagnostics.WarmupSteps, int64(0)},
		{"WarmupSteps()", s.WarmupSteps(), int64(5000)},
		{"concurrency", s.Concurrency, 4},
		{"resources.task_queue", s.Resources.TaskQueue, "rlsweep-gpu"},
		{"resources.gpus", s.Resources.GPUs, 1.0},
		{"resources.precision", s.Resources.Precision == nil, true},
		{"retries.max_attempts", s.Retries.MaxAttempts, 3},
		{"retries.max_infra_retries", s.Retries.MaxInfraRetries, 30},
		{"trainer.segment_steps", s.Trainer.SegmentSteps, int64(50000)},
		{"trainer.metrics.source", s.Trainer.Metrics.Source, "jsonl"},
		{"trainer.stall_timeout", s.Trainer.StallTimeout, 10 * time.Minute},
		{"trainer.grace_period", s.Trainer.GracePeriod, 30 * time.Second},
		{"early_terminate", s.EarlyTerminate == nil, true},
		{"artifacts", s.Artifacts, ""},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
}

func TestDecodeValues(t *testing.T) {
	s, err := Load("testdata/good/random.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Parameter{}
	for _, p := range s.Parameters {
		byName[p.Name] = p
	}
	if got, want := ParamNames(s), []string{"lr", "ent_coef", "num_envs", "activation", "norm_obs"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ParamNames = %v, want %v (spec order)", got, want)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"lr.distribution", byName["lr"].Distribution, DistLogUniform},
		{"ent_coef.distribution (float bounds)", byName["ent_coef"].Distribution, DistUniform},
		{"num_envs.distribution (integer bounds, as W&B)", byName["num_envs"].Distribution, DistIntUniform},
		{"activation.values[1]", byName["activation"].Values[1], "relu"},
		{"norm_obs.values[0]", byName["norm_obs"].Values[0], true},
		{"lr line", byName["lr"].Line, 14},
		{"stall_timeout", s.Trainer.StallTimeout, 5 * time.Minute},
		{"grace_period", s.Trainer.GracePeriod, 45 * time.Second},
		{"sampler_seed", s.SamplerSeed, int64(42)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v (%T), want %v (%T)", c.field, c.got, c.got, c.want, c.want)
		}
	}

	g, err := Load("testdata/good/grid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if g.Trainer.TotalSteps != 500000 {
		t.Errorf("total_steps 5e5 = %d, want 500000", g.Trainer.TotalSteps)
	}
	if v := g.Parameters[2].Values[0]; v != int64(8) {
		t.Errorf("num_envs.values[0] = %v (%T), want int64 8", v, v)
	}
	if v := g.Parameters[0].Values[0]; v != 3.0e-4 {
		t.Errorf("lr.values[0] = %v (%T), want float64 0.0003", v, v)
	}
}

// TestValidateInCode checks a Spec built without YAML: messages carry no file or line.
func TestValidateInCode(t *testing.T) {
	s := defaults()
	s.Name = "in-code"
	s.Trainer.Command = []string{"python", "train.py", "--lr={{.Params.lr}}"}
	s.Trainer.TotalSteps = 1000
	s.Trainer.SegmentSteps = 1000
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `trainer.command[2]: got "--lr={{.Params.lr}}"`) {
		t.Fatalf("Validate() = %v, want the unknown parameter lr reported", err)
	}
	lo, hi := 1e-4, 1e-2
	s.Parameters = []Parameter{{Name: "lr", Min: &lo, Max: &hi, Distribution: DistLogUniform}}
	s.Method, s.Trials = MethodRandom, 3
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
	s.Parameters = append(s.Parameters, Parameter{Name: "lr", Value: 1.0})
	err := s.Validate()
	if err == nil || err.Error() != "parameters.lr: got a second definition, want each parameter once" {
		t.Errorf("Validate() = %v, want the duplicate parameter reported without a position", err)
	}
}

func TestValidateCases(t *testing.T) {
	const base = "name: t\ntrainer:\n  command: [python, train.py]\n  env: CartPole-v1\n  total_steps: 1000\n"
	tests := []struct {
		name, yaml, want string // want "" means valid
	}{
		{"valid", "", ""},
		{"lr range ok", "method: random\ntrials: 2\nparameters:\n  lr: {min: 1e-5, max: 1e-3, distribution: log_uniform}\n", ""},
		{"nested lr name", "parameters:\n  optimizer.lr: {values: [0.001, -1]}\n", "t.yaml:7: parameters.optimizer.lr.values[1]: got -1, want a number > 0 for optimizer.lr"},
		{"gamma range above 1", "method: random\ntrials: 2\nparameters:\n  gamma: {min: 0.9, max: 1.5}\n", "t.yaml:9: parameters.gamma.max: got 1.5, want a number in (0, 1] for gamma"},
		{"gamma exactly 1", "parameters:\n  gamma: {value: 1}\n", ""},
		{"int_uniform equal bounds", "method: random\ntrials: 2\nparameters:\n  n: {min: 3, max: 3}\n", "parameters.n.min: got 3, want a number < max (3)"},
		{"distribution with values", "parameters:\n  n: {values: [1], distribution: uniform}\n", "parameters.n.distribution: got \"uniform\", want no distribution with values"},
		{"sobol 33 dims", "method: sobol\ntrials: 2\nparameters:\n" + manyRanges(33), "parameters: got 33 sampled parameters, want at most 32 for method sobol"},
		{"warmup past total", "diagnostics: {warmup_steps: 1000}\n", "diagnostics.warmup_steps: got 1000, want an integer in [0, total_steps)"},
		{"artifacts refused", "artifacts: /data/rlsweep\n", "t.yaml:6: artifacts: got \"/data/rlsweep\", want no artifacts key: a sweep's artifacts go to the workers' store (rlsweep worker --store or RLSWEEP_STORE"},
		{"duplicate trainer mapping", "trainer:\n  builtin: ppo\n  env: E\n  total_steps: 10\n  stall_timeout: 10ms\n", "t.yaml:6: trainer: got a second definition (the first is on line 2)"},
		{"big int", "seeds: [99999999999999999999]\n", "seeds[0]: got 99999999999999999999, want an integer"},
		{"actions", "diagnostics: {actions: 4}\n", ""},
		{"bounds", "metric: {name: reward, bounds: [0, 500]}\n", ""},
		{"bounds reversed", "metric: {name: reward, bounds: [500, 0]}\n", "metric.bounds: got [500, 0], want [lowest, highest], two finite numbers with lowest < highest"},
		{"bounds of one", "metric: {name: reward, bounds: [500]}\n", "metric.bounds: got [500], want [lowest, highest]"},
		{"bounds not numbers", "metric: {name: reward, bounds: [a, 1]}\n", "metric.bounds[0]: got \"a\""},
		{"actions 1", "diagnostics: {actions: 1}\n", "diagnostics.actions: got 1, want a categorical policy's number of actions (>= 2), or 0"},
		{"rule patience 0", "diagnostics: {rules: {stalled: {patience: 0}}}\n", "diagnostics.rules.stalled.patience: got 0, want an integer >= 1"},
		{"NUL in a value", "parameters:\n  tag: {value: \"a\\0b\"}\n", `t.yaml:7: parameters.tag.value: got "a\x00b", want a string without a NUL byte (\x00)`},
		{"NUL in values", "parameters:\n  tag: {values: [ok, \"x\\x00\"]}\n", `t.yaml:7: parameters.tag.values[1]: got "x\x00", want a string without a NUL byte (\x00)`},
		{"typo of a top-level key", "trainer2: 1\n", "trainer2: got an unknown key, want one of name, description, trainer, metric, method, trials, sampler_seed, order, seeds, parameters, probes, diagnostics, early_terminate, pbt, concurrency, resources, retries, artifacts, regression, bayes, confirm (did you mean trainer?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.yaml")
			if err := os.WriteFile(path, []byte(base+tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Load() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Load() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A spec's artifacts key is refused without repeating a URL's user information: it may hold a password.
func TestArtifactsKeyNeverEchoesUserInfo(t *testing.T) {
	const base = "name: t\ntrainer:\n  command: [python, train.py]\n  env: CartPole-v1\n  total_steps: 1000\n"
	for _, u := range []string{"s3://AKIAKEY:pw-123456@bucket/prefix", "https://user:pw-123456@host/x", "user:pw-123456@host"} {
		path := filepath.Join(t.TempDir(), "t.yaml")
		if err := os.WriteFile(path, []byte(base+"artifacts: "+u+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil {
			t.Fatalf("Load(artifacts: %s) = nil, want the key refused", u)
		}
		if strings.Contains(err.Error(), "pw-123456") || strings.Contains(err.Error(), "AKIAKEY") {
			t.Errorf("Load(artifacts: %s) error repeats the credentials: %v", u, err)
		}
		if want := `t.yaml:6: artifacts: got a value with "@" in it (not repeated`; !strings.Contains(err.Error(), want) {
			t.Errorf("Load(artifacts: %s) = %v, want it to contain %q", u, err, want)
		}
	}
}

func manyRanges(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("  p" + strings.Repeat("x", i) + ": {min: 0.0, max: 1.0}\n")
	}
	return b.String()
}

// TestManyValues checks that a long values list (near the size limit) is checked in linear time and
// its duplicate found.
func TestManyValues(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: t\ntrainer: {builtin: ppo, env: E, total_steps: 10}\nparameters:\n  x: {values: [")
	for i := range 60000 {
		fmt.Fprintf(&b, "%d, ", i)
	}
	b.WriteString("0]}\n")
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := "t.yaml:4: parameters.x.values[60000]: got 0, want each value once (values[0] is the same)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load() = %v, want %q", err, want)
	}
}

func TestTrialQueue(t *testing.T) {
	for _, tt := range []struct{ resources, want string }{
		{"", "rlsweep-gpu"},
		{"resources: {task_queue: lab-cpus}", "lab-cpus"},
		{"resources: {gpu_class: h100, gpus: 2}", "rlsweep-gpu-h100"},
	} {
		y := "name: q\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}\n" + tt.resources + "\n"
		s, err := Decode(strings.NewReader(y), "q.yaml")
		if err == nil {
			err = s.Validate()
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.resources, err)
		}
		if got := s.Resources.TrialQueue(); got != tt.want {
			t.Errorf("%q: trial queue %q, want %q", tt.resources, got, tt.want)
		}
	}
}

func TestRegressionSection(t *testing.T) {
	base := "name: r\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}\nseeds: [1, 2, 3]\n"
	tests := []struct {
		name, yaml string
		present    bool
		want       Regression
	}{
		{"absent: the defaults", "", false, Regression{Tolerance: 0.05, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75}},
		{"partial: the rest defaulted", "regression: {tolerance: 0.1, max_new_failures: 1}\n", true,
			Regression{Tolerance: 0.1, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75, MaxNewFailures: 1}},
		{"empty mapping", "regression: {}\n", true, DefaultRegression()},
		{"every key", "regression: {tolerance: 0.2, confidence: 0.9, resamples: 5e3, min_prob_improvement: 0.5, max_new_failures: 3}\n", true,
			Regression{Tolerance: 0.2, Confidence: 0.9, Resamples: 5000, MinProbImprovement: 0.5, MaxNewFailures: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Decode(strings.NewReader(base+tt.yaml), "r.yaml")
			if err == nil {
				err = s.Validate()
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Regression != nil; got != tt.present {
				t.Errorf("Regression set = %v, want %v", got, tt.present)
			}
			if got := s.regressionThresholds(); got != tt.want {
				t.Errorf("regressionThresholds() = %+v, want %+v", got, tt.want)
			}
			var back Spec
			b, _ := json.Marshal(s)
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if got := back.regressionThresholds(); got != tt.want {
				t.Errorf("after a JSON round trip: %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestBuiltinParamNames checks that a parameter the built-in trainer does not know is refused with the
// trainer's own list of names and a suggestion, and that every name it knows is accepted.
func TestBuiltinParamNames(t *testing.T) {
	const base = "name: t\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}\nparameters:\n"
	load := func(params string) error {
		s, err := Decode(strings.NewReader(base+params), "t.yaml")
		if err != nil {
			return err
		}
		return s.Validate()
	}
	err := load("  learning_rat: {values: [0.001, 0.003]}\n  clp: {value: 0.2}\n  num_env: {value: 8}\n  n: {value: 1}\n")
	if err == nil {
		t.Fatal("Decode accepted unknown parameters of the built-in trainer")
	}
	msg := err.Error()
	for _, want := range []string{
		`t.yaml:4: parameters.learning_rat: got "learning_rat", want a hyperparameter of the built-in trainer ppo: ` + strings.Join(trainer.PPOParamNames(), ", ") + " (did you mean lr (learning_rate is called lr here)?)",
		`t.yaml:5: parameters.clp: got "clp", want a hyperparameter of the built-in trainer ppo: ` + strings.Join(trainer.PPOParamNames(), ", ") + " (did you mean clip?)",
		`(did you mean num_envs?)`,
		`t.yaml:7: parameters.n: got "n", want a hyperparameter of the built-in trainer ppo: ` + strings.Join(trainer.PPOParamNames(), ", ") + "\n",
	} {
		if !strings.Contains(msg+"\n", want) {
			t.Errorf("Decode =\n%s\nwant it to contain\n%s", msg, want)
		}
	}
	var all strings.Builder
	for _, name := range trainer.PPOParamNames() {
		fmt.Fprintf(&all, "  %s: {value: 1}\n", name)
	}
	// Values are the trainer's to check; every name it knows passes the spec's check.
	if err := load(all.String()); err != nil && strings.Contains(err.Error(), "built-in trainer") {
		t.Errorf("Decode refused a name the built-in trainer knows: %v", err)
	}
	// inject_bug, the built-in trainer's test aid, is not a hyperparameter but the trainer takes it.
	if err := load("  " + trainer.PPOBugParam + ": {value: no-discount}\n"); err != nil {
		t.Errorf("Decode refused %s: %v", trainer.PPOBugParam, err)
	}
	// An external command's parameters are its own business.
	cmd := "name: t\ntrainer: {command: [python, train.py], total_steps: 1000}\nparameters:\n  learning_rat: {value: 0.001}\n"
	if s, err := Decode(strings.NewReader(cmd), "t.yaml"); err != nil {
		t.Errorf("Decode(command trainer) = %v", err)
	} else if err := s.Validate(); err != nil {
		t.Errorf("Validate(command trainer) = %v, want nil", err)
	}
}

// Every sweep spec shipped under examples/ loads and validates, those of the PyTorch and framework
// examples too (their /opt/rlsweep paths are where a worker image puts them).
func TestEveryExampleValidates(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") && !strings.Contains(p, "/wandb/") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 {
		t.Fatalf("found %d example specs, want the 5 of examples/ and those of torch-ppo and frameworks: %v", len(files), files)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// LoadSource returns the very bytes it decoded, so a caller stores the spec it validated.
func TestLoadSourceReturnsTheBytesRead(t *testing.T) {
	want, err := os.ReadFile("../examples/quickstart.yaml")
	if err != nil {
		t.Skip(err)
	}
	s, got, err := LoadSource("../examples/quickstart.yaml")
	if err != nil || s == nil || string(got) != string(want) {
		t.Errorf("LoadSource = %v, %d bytes, %v; want the spec and the file's %d bytes", s != nil, len(got), err, len(want))
	}
	if _, got, err := LoadSource("testdata/no-such-file.yaml"); err == nil || got != nil {
		t.Errorf("LoadSource(missing) = %d bytes, %v; want an error and no bytes", len(got), err)
	}
}
