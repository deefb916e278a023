package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every bad spec exits 2 and prints, with the path as given, each message of its .want file:
// PATH:LINE: FIELD: got VALUE, want ALLOWED.
func TestValidateBadSpecs(t *testing.T) {
	files, err := filepath.Glob("../../sweeps/testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d bad specs, want at least 30", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			wantText, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI(t, "validate", file)
			if code != exitInvalid {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitInvalid, errOut)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing for a bad spec", out)
			}
			fileLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(file) + `:[0-9]+: `)
			if !fileLine.MatchString(errOut) {
				t.Errorf("stderr lacks %s:LINE:\n%s", file, errOut)
			}
			dir := filepath.Dir(file) + string(filepath.Separator)
			for _, want := range strings.Split(strings.TrimSpace(string(wantText)), "\n") {
				if !strings.Contains(errOut, dir+want) {
					t.Errorf("stderr lacks %q:\n%s", dir+want, errOut)
				}
			}
		})
	}
}

func TestValidateGoodSpecs(t *testing.T) {
	files, err := filepath.Glob("../../sweeps/testdata/good/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no good specs found")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			code, out, errOut := runCLI(t, "validate", file)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit code %d, stderr %q; want 0 and nothing", code, errOut)
			}
			if !regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `: ok: sweep "[^"]+", (grid|random|sobol), [1-9][0-9]* trials\n$`).MatchString(out) {
				t.Errorf("stdout = %q, want %s: ok: sweep NAME, METHOD, N trials", out, file)
			}
		})
	}
}

// Several files: each reported, the good ones too, and one bad file makes the exit code 2.
func TestValidateMixed(t *testing.T) {
	good, bad := "../../sweeps/testdata/good/minimal.yaml", "../../sweeps/testdata/bad/zero-lr.yaml"
	f, out, errOut := testFactory()
	err := runValidate(f, &ValidateOptions{Files: []string{good, bad, good}})
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.code != exitInvalid {
		t.Fatalf("runValidate error %v, want exit code 2", err)
	}
	if n := strings.Count(out.String(), good+`: ok: sweep "minimal", grid, 1 trials`); n != 2 {
		t.Errorf("stdout has %d ok lines for %s, want 2:\n%s", n, good, out)
	}
	if !strings.Contains(errOut.String(), bad+":7: parameters.lr.values[0]: got 0, want a number > 0 for lr") {
		t.Errorf("stderr lacks the zero-lr message:\n%s", errOut)
	}
}

// A 10 MB file is refused as invalid input, not parsed.
func TestValidateTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("# padding padding padding padding\n", 10<<20/34)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "validate", path)
	if code != exitInvalid || !strings.Contains(errOut, path+":1: file: got more than 1048576 bytes") {
		t.Errorf("exit code %d, stderr %q; want 2 and %s:1: file: got more than 1048576 bytes", code, errOut, path)
	}
}

// validate --explain prints what a W&B sweep config becomes: its name, the argv of its first trial as
// W&B's agent would run it (each argument quoted on its own), the metrics source, the objective and the
// number of trials.
func TestValidateExplainWandB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ppo-sweep.yaml")
	config := `program: train.py
method: random
run_cap: 5
metric:
  name: charts/episodic_return
  goal: maximize
command:
  - ${env}
  - ${interpreter}
  - ${program}
  - --env-id=CartPole-v1
  - ${args}
parameters:
  learning-rate: {values: [2.5e-4]}
  ent-coef: {value: 1e-2}
  anneal-lr: {values: [false]}
  optim:
    parameters:
      eps: {value: 1.0e-5}
`
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	program := filepath.Join(filepath.Dir(path), "train.py")
	if err := os.WriteFile(program, []byte("print()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "validate", "--explain", path)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit code %d, stderr %q; want 0 and nothing", code, errOut)
	}
	for _, want := range []string{
		path + `: ok: sweep "ppo-sweep", random, 5 trials`,
		`  read as: a W&B sweep config`,
		`  sweep name: ppo-sweep (from the file name)`,
		`  first trial (0-s1): "/usr/bin/env" "python" "` + program + `" "--env-id=CartPole-v1" "--anneal-lr=False" "--ent-coef=1e-2" "--learning-rate=0.00025" "--optim={'eps': 1e-05}"`,
		`  program: train.py, found next to the config file (trainers run in their trial's directory)`,
		`  metrics: source auto: the W&B run file the trainer's wandb.log writes, or TensorBoard event files under $RLSWEEP_TB_DIR, whichever appears first (rlsweep status SWEEP/TRIAL says which a trial's metrics came from)`,
		`  objective: charts/episodic_return, maximize`,
		`  trials: 5 (5 configurations × 1 seeds, method random, sampler_seed 0; run_cap)`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// Without --explain, only the ok line.
	if _, out, _ := runCLI(t, "validate", path); strings.Contains(out, "first trial") {
		t.Errorf("validate without --explain printed %q", out)
	}
}

// The keys of a W&B config rlsweep accepts without acting on them are named when it validates, not only
// under --explain.
func TestValidateNotesIgnoredWandBKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(path, []byte("program: t.py\nentity: me\nmethod: random\nmetric: {name: loss, impute: 1}\nparameters:\n  lr: {min: 0.001, max: 0.1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "validate", path)
	if code != 0 {
		t.Fatalf("validate exited %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"accepted, not used by rlsweep: ", "entity", "metric.impute", "no run_cap: 20 trials"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("validate's notes = %q, want %q", errOut, want)
		}
	}
}

// validate checks the trainer's program on this machine: a relative command[0] against the spec file's
// directory (missing or not executable: exit 2, FILE:LINE: trainer.command[0]), a bare name on PATH, a
// W&B program run as a file next to the config file; a module after -m is not checked.
func TestValidateTrainerPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("scripts/run.sh", "#!/bin/sh\n", 0o755)
	write("scripts/plain.sh", "#!/bin/sh\n", 0o644)
	write("train.py", "print()\n", 0o644)
	rl := func(cmd string) string {
		return "name: t\ntrainer:\n  command: [" + cmd + "]\n  total_steps: 1000\nparameters:\n  lr: {values: [0.1]}\n"
	}
	tests := []struct {
		name, file, text, want string // want "" means valid
	}{
		{"relative executable", "ok.yaml", rl(`scripts/run.sh, "--lr={{.Params.lr}}"`), ""},
		{"dot-slash executable", "ok2.yaml", rl("./scripts/run.sh"), ""},
		{"missing", "missing.yaml", rl("scripts/train.sh"),
			`missing.yaml:3: trainer.command[0]: got "scripts/train.sh" (resolved to ` + filepath.Join(dir, "scripts/train.sh") + `; no such file), want an executable file: fix the path or make it executable (chmod +x)`},
		{"not executable", "plain.yaml", rl("./scripts/plain.sh"),
			`plain.yaml:3: trainer.command[0]: got "./scripts/plain.sh" (resolved to ` + filepath.Join(dir, "scripts/plain.sh") + `; not executable), want an executable file: fix the path or make it executable (chmod +x)`},
		{"a directory", "dir.yaml", rl("./scripts"),
			`dir.yaml:3: trainer.command[0]: got "./scripts" (resolved to ` + filepath.Join(dir, "scripts") + `; a directory), want an executable file`},
		{"bare name on PATH", "sh.yaml", rl("sh, -c, true"), ""},
		{"bare name not on PATH", "nope.yaml", rl("rlsweep-no-such-trainer"),
			`nope.yaml:3: trainer.command[0]: got "rlsweep-no-such-trainer" (not found in any directory of PATH), want a program found on PATH`},
		{"template not checked", "tmpl.yaml", rl(`"{{.Env}}"`), ""},
		{"W&B program next to the config", "w1.yaml", "program: train.py\nmethod: random\nparameters:\n  lr: {min: 0.1, max: 0.2}\n", ""},
		{"W&B program missing", "w2.yaml", "method: random\nprogram: nope.py\nparameters:\n  lr: {min: 0.1, max: 0.2}\n",
			`w2.yaml:2: program: got "nope.py" (resolved to ` + filepath.Join(dir, "nope.py") + `; no such file), want a file: put the training script next to the config file, or give its absolute path in program`},
		{"W&B module after -m not checked", "w3.yaml", "program: pkg.train\ncommand: [\"${env}\", \"${interpreter}\", -m, \"${program}\", \"${args}\"]\nmethod: random\nparameters:\n  lr: {min: 0.1, max: 0.2}\n", ""},
		{"W&B program run directly must be executable", "w4.yaml", "program: train.py\ncommand: [\"${program}\", \"${args}\"]\nmethod: random\nparameters:\n  lr: {min: 0.1, max: 0.2}\n",
			`w4.yaml:1: program: got "train.py" (resolved to ` + filepath.Join(dir, "train.py") + `; not executable), want an executable file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(tt.file, tt.text, 0o644)
			code, out, errOut := runCLI(t, "validate", path)
			if tt.want == "" {
				if code != exitOK {
					t.Errorf("exit code %d, stderr %q; want 0", code, errOut)
				}
				return
			}
			if code != exitInvalid || out != "" || !strings.Contains(errOut, filepath.Join(dir, tt.want)) {
				t.Errorf("exit code %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, filepath.Join(dir, tt.want))
			}
		})
	}
}

// validate and submit refuse a trainer.grace_period that does not end PartitionMargin before the
// heartbeat timeout (the default, or --heartbeat-timeout): a worker cut off from the server could not
// stop its trainer in time for the retry elsewhere.
func TestGracePeriodMustFitTheHeartbeatTimeout(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "grace.yaml")
	if err := os.WriteFile(spec, []byte("name: grace\ntrainer:\n  builtin: ppo\n  env: CartPole-v1\n  total_steps: 1000\n  grace_period: 119s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := spec + ": trainer.grace_period: got 1m59s with a heartbeat timeout of 2m0s, want less than 1m58s (the heartbeat timeout less 2s)"
	if code, _, errOut := runCLI(t, "validate", spec); code != exitInvalid || !strings.Contains(errOut, want) {
		t.Errorf("validate: exit %d, stderr %q; want exit %d with %q", code, errOut, exitInvalid, want)
	}
	if code, _, errOut := runCLI(t, "validate", "--heartbeat-timeout", "3m", spec); code != 0 {
		t.Errorf("validate --heartbeat-timeout 3m: exit %d, stderr %q; want 0 (1m59s fits in 3m less 2s)", code, errOut)
	}
	want = "trainer.grace_period: got 1m59s with a heartbeat timeout of 30s, want less than 28s"
	// submit refuses before it reaches for the server (there is none here).
	if code, _, errOut := runCLI(t, "--address", "127.0.0.1:1", "submit", "--heartbeat-timeout", "30s", spec); code != exitInvalid || !strings.Contains(errOut, want) {
		t.Errorf("submit: exit %d, stderr %q; want exit %d with %q", code, errOut, exitInvalid, want)
	}
}
