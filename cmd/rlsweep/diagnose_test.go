package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
)

func TestDiagnoseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    DiagnoseOptions
		wantErr string
	}{
		{[]string{"m.jsonl"}, DiagnoseOptions{Path: "m.jsonl", Output: "text", WarmupSteps: -1, Patience: 5}, ""},
		{[]string{"tb", "--preset", "sb3", "-o", "json", "--warmup-steps", "0", "--patience", "2"},
			DiagnoseOptions{Path: "tb", Preset: "sb3", Output: "json", WarmupSteps: 0, Patience: 2}, ""},
		{[]string{"m", "--preset", "ray"}, DiagnoseOptions{}, `--preset: got "ray", want one of "cleanrl", "mlagents", "rl_games", "rsl_rl", "sb3", "skrl"`},
		{[]string{"m", "--output", "yaml"}, DiagnoseOptions{}, `--output: got "yaml", want one of "text", "json"`},
		{[]string{"m", "--patience", "0"}, DiagnoseOptions{}, "--patience: got 0, want an integer ≥ 1"},
		{[]string{"m", "--warmup-steps", "-5"}, DiagnoseOptions{}, "--warmup-steps: got -5, want an integer ≥ 0"},
		{[]string{"m", "--total-steps", "100000"}, DiagnoseOptions{Path: "m", Output: "text", WarmupSteps: -1, TotalSteps: 100000, Patience: 5}, ""},
		{[]string{"m", "--total-steps", "0"}, DiagnoseOptions{}, "--total-steps: got 0, want an integer ≥ 1"},
		{[]string{"m", "--total-steps", "-3"}, DiagnoseOptions{}, "--total-steps: got -3, want an integer ≥ 1"},
		{[]string{"m", "--total-steps", "10", "--warmup-steps", "1"}, DiagnoseOptions{}, "--total-steps: got 10 with --warmup-steps 1, want one of the two"},
		{[]string{"m", "--actions", "3"}, DiagnoseOptions{Path: "m", Output: "text", WarmupSteps: -1, Patience: 5, Actions: 3}, ""},
		{[]string{"m", "--actions", "1"}, DiagnoseOptions{}, "--actions: got 1, want the categorical policy's number of actions (≥ 2)"},
		{[]string{"m", "--actions", "-2"}, DiagnoseOptions{}, "--actions: got -2, want"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *DiagnoseOptions
			f := &Factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := diagnoseCmd(f, func(o *DiagnoseOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				var ec *exitCodeError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ec) || ec.code != exitInvalid {
					t.Fatalf("error = %v, want exit 2 with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// writeRun writes n JSON lines; bad(i) may replace record i's metrics.
func writeRun(t *testing.T, n int, bad func(i int) string) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		m := `"reward": 1, "value_loss": 0.5, "action_std": 0.5, "action_std_min": 0.4, "explained_variance": 0.7, "clip_fraction": 0.1`
		if s := bad(i); s != "" {
			m = s
		}
		fmt.Fprintf(&b, "{\"step\": %d, %s}\n", i*1000, m)
	}
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunDiagnose(t *testing.T) {
	healthy := writeRun(t, 50, func(int) string { return "" })
	nan := writeRun(t, 50, func(i int) string {
		if i == 30 {
			return `"reward": 1, "value_loss": NaN`
		}
		return ""
	})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
	}{
		{"healthy", []string{"diagnose", healthy}, exitOK,
			[]string{"jsonl, 50 records, 0 malformed", "warm-up: steps < 4900, patience 5", "no stop rule fired", "1. [task_design]"}},
		// A sweep with total_steps 200,000 warms up for 20,000 steps, as `--total-steps` replays it.
		{"total steps", []string{"diagnose", "--total-steps", "200000", healthy}, exitOK,
			[]string{"warm-up: steps < 20000, patience 5"}},
		{"nan", []string{"diagnose", nan}, exitDiverged,
			[]string{"STOP  non_finite at step 30000: value_loss = NaN", "1. [diverged] stopped by non_finite"}},
		{"missing", []string{"diagnose", filepath.Join(t.TempDir(), "nope")}, exitInvalid, nil},
		// A climb to 100 over the first 40 records, a plateau, and a fall to 30 (above the start) for the
		// last 12 of 100: too late for a stop rule, judged when the run is over.
		{"collapsed at end", []string{"diagnose", writeRun(t, 100, func(i int) string {
			r := 100 * min(1, float64(i+1)/40)
			if i >= 88 {
				r = 30
			}
			return fmt.Sprintf(`"reward": %g, "value_loss": 0.5`, r+0.5*float64(i%3))
		})}, exitDiverged, []string{"no stop rule fired", "END   collapsed_at_end (the run is over, nothing to stop): reward of the last tenth of the run 30.45, best 100.6 (to step 44000), start 14.2: 81% of the gain lost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
			code := run(context.Background(), tt.args, &Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut})
			if code != tt.wantCode {
				t.Fatalf("exit = %d, want %d; stderr %s", code, tt.wantCode, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// A trial's metrics in a local artifact store take the warm-up from the sweep's spec.json, as the sweep
// did; a flag still wins, and a file elsewhere or a spec that does not decode falls back to the last step.
// The stored metrics are parts (a crashed attempt's, then its retry's from step 30,000 on), read as one
// stream whether PATH names their folder or the trial's metrics.jsonl beside it.
func TestRunDiagnoseReadsStoredSpec(t *testing.T) {
	run50 := writeRun(t, 50, func(int) string { return "" })
	body, err := os.ReadFile(run50)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(body), "\n")
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const sweepID = "sweep/cartpole/1e114cb9"
	for key, part := range map[string]string{
		artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0): strings.Join(lines[:20], ""),
		artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 1): strings.Join(lines[20:40], ""), // crashed at 39,000
		artifacts.MetricsPartKey(sweepID, "0-s1", 0, 2, 0): strings.Join(lines[30:], ""),   // resumed at 30,000
	} {
		if err := store.Put(context.Background(), key, strings.NewReader(part)); err != nil {
			t.Fatal(err)
		}
	}
	sweepDir := filepath.Join(store.Root(), "sweeps", "cartpole", "1e114cb9")
	dir := store.URL(artifacts.MetricsDir(sweepID, "0-s1"))
	spec := filepath.Join(sweepDir, "spec.json")
	for _, tt := range []struct {
		name, spec string
		args       []string
		want       []string
	}{
		{"from spec.json", `{"trainer": {"total_steps": 200000}}`, nil,
			[]string{"total steps: 200000 (trainer.total_steps of " + spec + ")", "warm-up: steps < 20000"}},
		{"flag wins", `{"trainer": {"total_steps": 200000}}`, []string{"--total-steps", "100000"},
			[]string{"warm-up: steps < 10000"}},
		{"spec does not decode", `{"trainer": [`, nil, []string{"warm-up: steps < 4900"}},
	} {
		for _, metrics := range []string{dir, filepath.Join(filepath.Dir(dir), "metrics.jsonl")} {
			t.Run(tt.name+"/"+filepath.Base(metrics), func(t *testing.T) {
				if err := os.WriteFile(spec, []byte(tt.spec), 0o644); err != nil {
					t.Fatal(err)
				}
				out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
				args := append(append([]string{"diagnose"}, tt.args...), metrics)
				if code := run(context.Background(), args, &Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut}); code != exitOK {
					t.Fatalf("exit = %d; stderr %s", code, errOut)
				}
				for _, w := range append(tt.want, metrics+": jsonl, 50 records, 0 malformed") {
					if !strings.Contains(out.String(), w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
			})
		}
	}
}

// SWEEP/TRIAL reads a trial's metrics from the artifact store (--store), whatever store it is, with the
// sweep's total_steps from its stored spec; a trial without metrics is refused naming where they would be.
func TestRunDiagnoseStoredTrialByReference(t *testing.T) {
	run50 := writeRun(t, 50, func(int) string { return "" })
	body, err := os.ReadFile(run50)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	store, err := artifacts.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	const sweepID = "sweep/cartpole/1e114cb9"
	ctx := context.Background()
	for key, v := range map[string]string{
		artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0): string(body),
		artifacts.SpecJSONKey(sweepID):                     `{"name": "cartpole", "trainer": {"total_steps": 200000}}`,
	} {
		if err := store.Put(ctx, key, strings.NewReader(v)); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	if code := run(ctx, []string{"--store", root, "diagnose", "cartpole/1e114cb9/0-s1"}, f); code != exitOK {
		t.Fatalf("exit = %d; stderr %s", code, errOut)
	}
	for _, w := range []string{"cartpole/1e114cb9/0-s1: jsonl, 50 records, 0 malformed", "warm-up: steps < 20000",
		"total steps: 200000 (trainer.total_steps of " + store.URL(artifacts.SpecJSONKey(sweepID)) + ")"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	out.Reset()
	errOut.Reset()
	if code := run(ctx, []string{"--store", root, "diagnose", "cartpole/1e114cb9/7-s9"}, f); code != exitInvalid {
		t.Errorf("a trial without metrics: exit %d, want %d", code, exitInvalid)
	}
	if !strings.Contains(errOut.String(), "no metrics stored under") {
		t.Errorf("stderr = %q, want it to say where the metrics would be", errOut)
	}
}

func TestRunDiagnoseJSON(t *testing.T) {
	path := writeRun(t, 50, func(i int) string {
		if i >= 20 {
			return `"reward": 1, "action_std": 0.001, "action_std_min": 0.001`
		}
		return ""
	})
	out := &bytes.Buffer{}
	code := run(context.Background(), []string{"diagnose", "-o", "json", "--warmup-steps", "0", path},
		&Factory{In: strings.NewReader(""), Out: out, ErrOut: &bytes.Buffer{}})
	if code != exitDiverged {
		t.Fatalf("exit = %d, want 3", code)
	}
	var got struct {
		Stop     diagnostics.Verdict
		Findings []diagnostics.Finding
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	// Patience 5 from the first collapsed record at step 20000: the stop is at step 24000.
	if got.Stop.Rule != diagnostics.RuleStdCollapse || got.Stop.Step != 24000 || got.Stop.Level != diagnostics.Stop {
		t.Errorf("stop = %+v, want std_collapse at step 24000", got.Stop)
	}
	if len(got.Findings) == 0 || got.Findings[0].Cause != diagnostics.CausePolicyDied {
		t.Errorf("findings = %+v, want policy_died first", got.Findings)
	}
}

// --actions reaches the engine: a categorical policy's flat return with its entropy at 1.1 is a policy
// at its maximum entropy for 3 actions (log 3 = 1.10), stopped by never_learned_entropy, and far below
// it for 16 (log 16 = 2.77), not stopped.
func TestDiagnoseActions(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"step":%d,"reward":-200,"entropy":1.1}`+"\n", (i+1)*1000)
	}
	p := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		actions string
		stop    bool
	}{{"3", true}, {"16", false}} {
		code, doc := diagnoseJSON(t, "--actions", tt.actions, p)
		stop, _ := doc["stop"].(map[string]any)
		if (code == exitDiverged) != tt.stop || tt.stop && stop["rule"] != "never_learned_entropy" {
			t.Errorf("--actions %s: exit %d, stop %v; want a never_learned_entropy stop: %v", tt.actions, code, stop, tt.stop)
		}
	}
}

// A run's length when no budget is given is its highest step, not its last record's: rl_games writes
// each scalar against frames, epochs and seconds, and an Isaac Gym task's episode sums against epochs
// come last (an Aliengo run: frames up to 129,024, then epochs 1 to 22), which made the warm-up 2
// steps and judged every rule from the first record.
func TestLastStepIsTheHighest(t *testing.T) {
	recs := []metrics.Record{{Step: 0}, {Step: 1}, {Step: 65536}, {Step: 2}, {Step: 129024}, {Step: 21}, {Step: 22}}
	if got := lastStep(recs); got != 129024 {
		t.Errorf("lastStep = %d, want 129024", got)
	}
}
