package sweeps

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wandbCorpusDir is the folder of real W&B sweep configs the corpus tests read: corpus/wandb in the
// shared folder beside the module root, as an absolute path. The configs were written by other people
// and are not kept in this repository (oracle.py, which writes the verdicts, is). The tests skip when
// the folder is absent.
func wandbCorpusDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..") // the module root: this package is one folder below it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "corpus", "wandb")
	if _, err := os.Stat(filepath.Join(dir, "verdicts.tsv")); err != nil {
		t.Skipf("the W&B sweep config corpus is absent (%s: no verdicts.tsv): nothing to check", dir)
	}
	return dir
}

// TestWandBCorpus runs every real W&B sweep config of the corpus folder (wandbCorpusDir;
// PROVENANCE.tsv there says where each comes from) through rlsweep.
//
// What W&B itself makes of each file is in the folder's verdicts.tsv and argv.golden.json, written by
// testdata/wandb/oracle.py from W&B's own rules, not from this package: the verdict from W&B's sweep
// config schema (src/sweeps/config/schema.json and src/sweeps/config/cfg.py,
// schema_violations_from_proposed_config, of github.com/wandb/sweeps) read with PyYAML as `wandb sweep`
// reads the file; the argv from the agent's expansion of the command (wandb/wandb_agent.py, _command_run,
// and wandb/sdk/launch/sweeps/utils.py, create_sweep_command and create_sweep_command_args, of
// github.com/wandb/wandb) applied to rlsweep's first trial. To regenerate them:
//
//	RLSWEEP_WANDB_FIRST_TRIALS=/tmp/first.json go test ./sweeps -run TestWandBCorpus
//	python3 sweeps/testdata/wandb/oracle.py CORPUS_DIR PATH/TO/wandb-sweeps/src/sweeps/config/schema.json /tmp/first.json
//
// Every file W&B rejects is rejected, each problem with file:line, field, value and what is allowed.
// Every file W&B accepts validates and plans as it is, early_terminate included (hyperband in stop
// mode, judged on logged values), and its first trial's argv is the agent's, except the files listed
// in notRunnable. A bayes file's first trial is its first random start-up configuration, method
// random's first with the same sampler_seed.
func TestWandBCorpus(t *testing.T) {
	dir := wandbCorpusDir(t)
	verdicts := readVerdicts(t, filepath.Join(dir, "verdicts.tsv"))
	var golden map[string][]string
	raw, err := os.ReadFile(filepath.Join(dir, "argv.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	// Files W&B accepts that rlsweep cannot run, and the field that says why.
	notRunnable := map[string]string{
		// no program and no command: written for wandb.agent(function=...), a Python function in W&B's process
		"Dkurkcu_energy_penalty_applications_final__sweep_config.yaml": "program",
		"JacobHA_ShapedRL__sweeps_atari-default.yml":                   "program",
		"ANRGUSC_SafeCampus-Multidiscrete__config_sweep.yaml":          "program",
		"contactrika_dedo__dedo_hpsearch_td3_sweep.yaml":               "program", // its command is swallowed by a YAML mistake into name
		// a W&B Launch job instead of a program
		"wandb-sweeps__launch_sweep-launch-jobs.yaml": "job",
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	yml, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	files = append(files, yml...)
	if len(files) < 30 {
		t.Fatalf("%d files in the corpus, want at least 30", len(files))
	}
	first := map[string]map[string]map[string]any{}
	accepted, ran, withET := 0, 0, 0
	for _, path := range files {
		name := filepath.Base(path)
		verdict, ok := verdicts[name]
		if !ok {
			t.Errorf("%s: no verdict in verdicts.tsv (run oracle.py)", name)
			continue
		}
		_, loadErr := Load(path)
		var errs Errors
		if loadErr != nil && !errors.As(loadErr, &errs) {
			t.Errorf("%s: %v, want Errors", name, loadErr)
			continue
		}
		for _, e := range errs {
			if e.File != path || e.Line < 1 || e.Field == "" || e.Got == "" || e.Want == "" {
				t.Errorf("%s: incomplete message %q", name, e.Error())
			}
		}
		if verdict == "reject" {
			if loadErr == nil {
				t.Errorf("%s: W&B rejects it, rlsweep accepted it", name)
			}
			continue
		}
		accepted++
		if field, ok := notRunnable[name]; ok {
			if !slices.ContainsFunc(errs, func(e *FieldError) bool { return e.Field == field }) {
				t.Errorf("%s: got %v, want a problem with %s", name, loadErr, field)
			}
			continue
		}
		for _, e := range errs {
			t.Errorf("%s: W&B accepts it, rlsweep says %s", name, e)
		}
		if len(errs) > 0 {
			continue
		}
		ran++
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(f, path)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.EarlyTerminate != nil {
			withET++
		}
		if s.EarlyTerminate != nil && (s.PruneMode() != PruneStop || len(s.DecisionSteps()) == 0) {
			t.Errorf("%s: early_terminate %+v: mode %q, decision points %v; want stop mode with decision points", name, *s.EarlyTerminate, s.PruneMode(), s.DecisionSteps())
		}
		trials, err := Plan(s)
		if err != nil {
			t.Errorf("%s: plan: %v", name, err)
			continue
		}
		// W&B's agent runs a grid in listed order; rlsweep starts a grid with early_terminate in a
		// shuffled order (Spec.Order), so configuration 0 is what W&B's first run is.
		zero := trials[0]
		for _, tr := range trials {
			if tr.Config == 0 {
				zero = tr
				break
			}
		}
		first[name] = firstChoices(s, zero)
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		argv, err := RenderCommand(s.Trainer.Command, TemplateData{Params: zero.Params, Seed: zero.Seed, MetricsFile: metrics})
		if err != nil {
			t.Errorf("%s: render: %v", name, err)
			continue
		}
		for i, a := range argv {
			if a == filepath.Join(filepath.Dir(metrics), WandBArgsFile) {
				argv[i] = "<args_json_file>"
			}
		}
		want, ok := golden[name]
		if !ok {
			t.Errorf("%s: no argv in argv.golden.json (run oracle.py)", name)
			continue
		}
		if !slices.Equal(argv, want) {
			t.Errorf("%s: configuration 0's argv\n got %q\nwant %q (W&B's agent)", name, argv, want)
		}
	}
	t.Logf("%d files: %d accepted by W&B, %d run as they are (%d with early_terminate)", len(files), accepted, ran, withET)
	if out := os.Getenv("RLSWEEP_WANDB_FIRST_TRIALS"); out != "" {
		b, _ := json.MarshalIndent(first, "", " ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// firstChoices is what a trial chose for each parameter, by the parameter's dotted W&B path, as
// oracle.py reads it: the index into values, or the value drawn (with whether it is a float).
func firstChoices(s *Spec, tr Trial) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, p := range s.Parameters {
		key := p.Name
		if rest, ok := strings.CutPrefix(key, "wandb."); ok && slices.Contains(ReservedParamNames, rest) {
			key = rest
		}
		v := tr.Params[p.Name]
		c := map[string]any{"sampled": v}
		if _, isFloat := v.(float64); isFloat {
			c["float"] = true
		}
		for i, x := range p.Values {
			if x == nil && v == nil || x != nil && v != nil && keyOf(x) == keyOf(v) {
				c["index"] = i
				break
			}
		}
		out[key] = c
	}
	return out
}

func readVerdicts(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) >= 2 {
			out[cols[0]] = cols[1]
		}
	}
	return out
}

// TestWandBSchemaAgreement: for every combination of a distribution (or none) with a set of keys in
// the corpus folder's synthetic.tsv (wandbCorpusDir), rlsweep accepts a random sweep exactly when W&B's schema does
// (oracle.py wrote the verdicts from W&B's schema.json, as for TestWandBCorpus).
func TestWandBSchemaAgreement(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(wandbCorpusDir(t), "synthetic.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) < 400 {
		t.Fatalf("%d cases, want at least 400", len(lines))
	}
	for _, line := range lines {
		verdict, param, _ := strings.Cut(line, "\t")
		config := "program: t.py\nmethod: random\nparameters:\n  x: " + param + "\n"
		s, err := Decode(strings.NewReader(config), "s.yaml")
		if err == nil {
			err = s.Validate()
		}
		var errs Errors
		if err != nil && !errors.As(err, &errs) {
			t.Errorf("%s: %v", param, err)
			continue
		}
		switch {
		case verdict == "accept" && err != nil:
			t.Errorf("W&B accepts %s, rlsweep says %v", param, err)
		case verdict == "reject" && err == nil:
			t.Errorf("W&B rejects %s, rlsweep accepted it", param)
		}
	}
}
