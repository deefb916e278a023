package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

func testFactory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &Factory{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}

// runCLI runs the whole command line as main does and returns the exit code and both streams.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	f, out, errOut := testFactory()
	code = run(context.Background(), args, f)
	return code, out.String(), errOut.String()
}

// parseWith runs args through the real root command with sub (built with a runF) in place of the
// command of the same name, so persistent flags and the root's error handling apply as in main.
func parseWith(t *testing.T, f *Factory, sub *cobra.Command, args ...string) error {
	t.Helper()
	root := newRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == sub.Name() {
			root.RemoveCommand(c)
		}
	}
	argsAreInput(sub)
	root.AddCommand(sub)
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}

func TestOptionsFromArgv(t *testing.T) {
	tests := []struct {
		name string
		args []string
		cmd  func(f *Factory, got *any) *cobra.Command
		want any
	}{
		{"validate files", []string{"validate", "a.yaml", "b.yaml"},
			func(f *Factory, got *any) *cobra.Command {
				return newValidateCmd(f, func(o *ValidateOptions) error { *got = *o; return nil })
			},
			ValidateOptions{Files: []string{"a.yaml", "b.yaml"}}},
		{"submit defaults", []string{"submit", "s.yaml"},
			func(f *Factory, got *any) *cobra.Command {
				return newSubmitCmd(f, func(o *SubmitOptions) error { *got = *o; return nil })
			},
			SubmitOptions{File: "s.yaml"}},
		{"submit watch id", []string{"submit", "-w", "--id", "abc123", "s.yaml"},
			func(f *Factory, got *any) *cobra.Command {
				return newSubmitCmd(f, func(o *SubmitOptions) error { *got = *o; return nil })
			},
			SubmitOptions{File: "s.yaml", ID: "abc123", Watch: true}},
		{"status json", []string{"status", "--json", "cartpole/ab12/0-s1"},
			func(f *Factory, got *any) *cobra.Command {
				return newStatusCmd(f, func(o *StatusOptions) error { *got = *o; return nil })
			},
			StatusOptions{Ref: "cartpole/ab12/0-s1", JSON: true}},
		{"watch default interval", []string{"watch", "cartpole/ab12"},
			func(f *Factory, got *any) *cobra.Command {
				return newWatchCmd(f, func(o *WatchOptions) error { *got = *o; return nil })
			},
			WatchOptions{Sweep: "cartpole/ab12", Interval: time.Second}},
		{"watch interval", []string{"watch", "--interval", "250ms", "sweep/cartpole/ab12"},
			func(f *Factory, got *any) *cobra.Command {
				return newWatchCmd(f, func(o *WatchOptions) error { *got = *o; return nil })
			},
			WatchOptions{Sweep: "sweep/cartpole/ab12", Interval: 250 * time.Millisecond}},
		{"results default table", []string{"results", "cartpole/ab12"},
			func(f *Factory, got *any) *cobra.Command {
				return newResultsCmd(f, func(o *ResultsOptions) error { *got = *o; return nil })
			},
			ResultsOptions{Sweep: "cartpole/ab12", Output: "table", Timeout: 30 * time.Second}},
		{"results csv", []string{"results", "-o", "csv", "cartpole/ab12"},
			func(f *Factory, got *any) *cobra.Command {
				return newResultsCmd(f, func(o *ResultsOptions) error { *got = *o; return nil })
			},
			ResultsOptions{Sweep: "cartpole/ab12", Output: "csv", Timeout: 30 * time.Second}},
		{"cancel wait", []string{"cancel", "--wait", "cartpole/ab12"},
			func(f *Factory, got *any) *cobra.Command {
				return newCancelCmd(f, func(o *CancelOptions) error { *got = *o; return nil })
			},
			CancelOptions{Sweep: "cartpole/ab12", Wait: true}},
		{"dev defaults", []string{"dev"},
			func(f *Factory, got *any) *cobra.Command {
				return newDevCmd(f, func(o *DevOptions) error { o.StateDir = ""; *got = *o; return nil })
			},
			DevOptions{Port: 7233, UIPort: 8233, Slots: 2, StopTimeout: 2 * time.Minute, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}}},
		{"dev file", []string{"dev", "--port", "7999", "--ui-port", "8999", "--slots", "4", "--exit", "--stop-timeout", "0", "s.yaml"},
			func(f *Factory, got *any) *cobra.Command {
				return newDevCmd(f, func(o *DevOptions) error { o.StateDir = ""; *got = *o; return nil })
			},
			DevOptions{File: "s.yaml", Port: 7999, UIPort: 8999, Slots: 4, Exit: true, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory()
			var got any
			if err := parseWith(t, f, tt.cmd(f, &got), tt.args...); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestWorkerOptions(t *testing.T) {
	tests := []struct {
		args []string
		want WorkerOptions
	}{
		{[]string{"worker"}, WorkerOptions{Control: true, Queues: []string{"rlsweep-gpu"}, Slots: 1, TrialsPerGPU: 1, StopTimeout: 2 * time.Minute, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}, WorkflowCache: 10000}},
		{[]string{"worker", "--control=false", "--queue", "gpu-a,gpu-b", "--gpus", "0,1,2,3", "--trials-per-gpu", "2", "--work-dir", "/w", "--stop-timeout", "45s"},
			WorkerOptions{Queues: []string{"gpu-a", "gpu-b"}, Slots: 1, GPUs: "0,1,2,3", TrialsPerGPU: 2, WorkDir: "/w", StopTimeout: 45 * time.Second, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}, WorkflowCache: 10000}},
		{[]string{"worker", "--slots", "8", "--queue", "cpu"},
			WorkerOptions{Control: true, Queues: []string{"cpu"}, Slots: 8, TrialsPerGPU: 1, StopTimeout: 2 * time.Minute, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}, WorkflowCache: 10000}},
		{[]string{"worker", "--gpus", "0,1", "--gpu-class", "h100"},
			WorkerOptions{Control: true, Queues: []string{"rlsweep-gpu-h100"}, Slots: 1, GPUs: "0,1", GPUClass: "h100", TrialsPerGPU: 1, StopTimeout: 2 * time.Minute, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}, WorkflowCache: 10000}},
		{[]string{"worker", "--trainer-pid-namespace=false"},
			WorkerOptions{Control: true, Queues: []string{"rlsweep-gpu"}, Slots: 1, TrialsPerGPU: 1, StopTimeout: 2 * time.Minute, Log: LogOptions{"warn", "text"}, WorkflowCache: 10000}},
		{[]string{"worker", "--workflow-cache", "0"},
			WorkerOptions{Control: true, Queues: []string{"rlsweep-gpu"}, Slots: 1, TrialsPerGPU: 1, StopTimeout: 2 * time.Minute, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}}},
		{[]string{"worker", "--queue", "cpu", "--gpu-class", "a100"},
			WorkerOptions{Control: true, Queues: []string{"cpu", "rlsweep-gpu-a100"}, Slots: 1, GPUClass: "a100", TrialsPerGPU: 1, StopTimeout: 2 * time.Minute, TrainerPIDNamespace: true, Log: LogOptions{"warn", "text"}, WorkflowCache: 10000}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := testFactory()
			var got *WorkerOptions
			if err := parseWith(t, f, newWorkerCmd(f, func(o *WorkerOptions) error { got = o; return nil }), tt.args...); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestGlobalFlags(t *testing.T) {
	f, _, _ := testFactory()
	err := parseWith(t, f, newStatusCmd(f, func(*StatusOptions) error { return nil }),
		"--address", "temporal:7233", "--namespace", "ml", "--store", "/data/a", "--ui-url", "http://ui:8080", "status", "x/y")
	if err != nil {
		t.Fatal(err)
	}
	if f.Address != "temporal:7233" || f.Namespace != "ml" || f.StoreURL != "/data/a" || f.UIURL != "http://ui:8080" {
		t.Errorf("factory = %+v, want the four global flags", f)
	}
	if got, want := f.WorkflowURL("sweep/a/b"), "http://ui:8080/namespaces/ml/workflows/sweep%2Fa%2Fb"; got != want {
		t.Errorf("WorkflowURL = %q, want %q", got, want)
	}
}

// Bad input never reaches a server: every case here exits 2 before dialing, with a message naming what
// was wrong, the value given and what is allowed.
func TestBadInputExitsTwo(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"frobnicate"}, []string{`command: got "frobnicate"`, "submit", "validate"}},
		{[]string{"validate"}, []string{"validate: requires at least 1 arg(s), only received 0", "usage: rlsweep validate FILE..."}},
		{[]string{"submit"}, []string{"submit: accepts 1 arg(s), received 0", "usage: rlsweep submit FILE"}},
		{[]string{"submit", "a.yaml", "b.yaml"}, []string{"submit: accepts 1 arg(s), received 2"}},
		{[]string{"submit", "--bogus", "a.yaml"}, []string{"unknown flag: --bogus", "--id", "--watch"}},
		{[]string{"submit", "--watch=maybe", "a.yaml"}, []string{`--watch: got "maybe", want true or false`}},
		{[]string{"submit", "/nonexistent/sweep.yaml"}, []string{"/nonexistent/sweep.yaml", "no such file"}},
		{[]string{"status", "a", "b"}, []string{"status: accepts 1 arg(s), received 2"}},
		{[]string{"status", "nosuch"}, []string{`sweep: got "nosuch", want sweep/<name>/<id>, <name>/<id>`}},
		{[]string{"status", "sweep/onlyname"}, []string{`sweep: got "sweep/onlyname"`}},
		{[]string{"watch", "--interval", "5", "a/b"}, []string{`--interval: got "5", want a duration`}},
		{[]string{"watch", "--interval", "-1s", "a/b"}, []string{"--interval: got -1s, want a positive duration"}},
		{[]string{"watch", "a"}, []string{`sweep: got "a"`}},
		{[]string{"results", "-o", "yaml", "a/b"}, []string{`--output: got "yaml", want one of "table", "json", "csv"`}},
		{[]string{"results", "a/b/c/d"}, []string{`sweep: got "a/b/c/d"`}},
		{[]string{"cancel"}, []string{"cancel: accepts 1 arg(s), received 0"}},
		{[]string{"cancel", "--wait=sometimes", "a/b"}, []string{`--wait: got "sometimes", want true or false`}},
		{[]string{"cancel", "x"}, []string{`sweep: got "x"`}},
		{[]string{"pause", "x"}, []string{`sweep: got "x"`}},
		{[]string{"resume"}, []string{"resume: accepts 1 arg(s), received 0"}},
		{[]string{"set-concurrency", "a/b", "0"}, []string{`N: got "0", want an integer from 1 to 2000`}},
		{[]string{"set-concurrency", "a/b", "2001"}, []string{`N: got "2001", want an integer from 1 to 2000`}},
		{[]string{"set-concurrency", "a/b", "many"}, []string{`N: got "many", want an integer from 1 to 2000`}},
		{[]string{"set-concurrency", "a/b"}, []string{"set-concurrency: accepts 2 arg(s), received 1"}},
		{[]string{"worker", "extra"}, []string{`worker: unknown command "extra"`}},
		{[]string{"worker", "--log-level", "verbose"}, []string{`--log-level: got "verbose", want debug, info, warn or error`}},
		{[]string{"worker", "--log-format", "xml"}, []string{`--log-format: got "xml", want text or json`}},
		{[]string{"dev", "--log-level", "trace"}, []string{`--log-level: got "trace", want debug, info, warn or error`}},
		{[]string{"worker", "--slots", "0"}, []string{"--slots: got 0, want at least 1"}},
		{[]string{"worker", "--workflow-cache", "-1"}, []string{"--workflow-cache: got -1, want 0 or more workflow runs (default 10000)"}},
		{[]string{"worker", "--slots", "x"}, []string{`--slots: got "x", want an integer`}},
		{[]string{"worker", "--trials-per-gpu", "0"}, []string{"--trials-per-gpu: got 0, want an integer in [1, 100]"}},
		{[]string{"worker", "--trials-per-gpu", "101"}, []string{"--trials-per-gpu: got 101, want an integer in [1, 100]"}},
		{[]string{"worker", "--gpus", "0,,1"}, []string{`--gpus: got "0,,1", want comma-separated GPU indices`}},
		{[]string{"worker", "--gpus", "a"}, []string{`--gpus: got "a"`}},
		{[]string{"worker", "--queue", " "}, []string{"--queue: got an empty name"}},
		{[]string{"worker", "--gpu-class", "A100 80GB"}, []string{`--gpu-class: got "A100 80GB", want lower-case letters`}},
		{[]string{"worker", "--gpus", "0,0"}, []string{"--gpus: GPU 0 listed twice"}},
		{[]string{"worker", "--control=false", "--queue", ""}, []string{"--control=false and --queue empty"}},
		{[]string{"dev", "--slots", "0"}, []string{"--slots: got 0, want at least 1"}},
		{[]string{"dev", "--port", "70000"}, []string{"--port: got 70000, want 1 to 65535"}},
		{[]string{"dev", "--ui-port", "70000"}, []string{"--ui-port: got 70000, want 1 to 65535, other than --port 7233"}},
		{[]string{"dev", "--ui-port", "0"}, []string{"--ui-port: got 0, want 1 to 65535"}},
		{[]string{"dev", "--stop-timeout", "-1s"}, []string{"--stop-timeout: got -1s, want a duration ≥ 0"}},
		{[]string{"worker", "--stop-timeout", "-1s"}, []string{"--stop-timeout: got -1s, want a duration ≥ 0"}},
		{[]string{"dev", "--port", "7300", "--ui-port", "7300"}, []string{"--ui-port: got 7300, want 1 to 65535, other than --port 7300"}},
		{[]string{"worker", "--gpus", "0,1", "--slots", "4"}, []string{"--slots: got 4 with --gpus 0,1, want one of the two"}},
		{[]string{"submit", "--id", "a/b", "s.yaml"}, []string{`--id: got "a/b", want 1 to 40 letters, digits, '_' or '-'`}},
		{[]string{"submit", "--id", "x y", "s.yaml"}, []string{`--id: got "x y"`}},
		{[]string{"submit", "--id", "..", "s.yaml"}, []string{`--id: got ".."`}},
		{[]string{"submit", "--id", strings.Repeat("a", 41), "s.yaml"}, []string{`--id: got "aaaa`}},
		{[]string{"dev", "a.yaml", "b.yaml"}, []string{"dev: accepts at most 1 arg(s), received 2"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != exitInvalid {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitInvalid, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}

func TestNoArgumentsPrintsHelp(t *testing.T) {
	code, out, _ := runCLI(t)
	if code != exitOK || !strings.Contains(out, "Available Commands:") || !strings.Contains(out, "submit") {
		t.Errorf("rlsweep with no arguments: exit %d, output %q; want 0 and the help", code, out)
	}
}

// While a sweep runs (or if it ended without writing results.json), results reads the parts stored so
// far, says "partial" rather than guessing "running", and keeps the spec's parameter order.
func TestResultsFromStoredParts(t *testing.T) {
	dir := t.TempDir()
	store, err := artifacts.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	const sweepID = "sweep/parts/abc"
	q := 1.5
	acts := &activities.Activities{Store: store}
	if err := acts.RecordResults(context.Background(), activities.RecordResultsInput{SweepID: sweepID,
		Trials: []results.TrialSummary{{TrialID: "0-s1", Seed: 1, Params: map[string]any{"lr": 0.1},
			Outcome: results.OutcomeCompleted, Objective: &q}}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "--store", dir, "results", "parts/abc", "-o", "json")
	if code != exitOK {
		t.Fatalf("results exited %d: %s", code, errOut)
	}
	var res results.SweepResults
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("results -o json: %v\n%s", err, out)
	}
	if res.Status != "partial" || len(res.Trials) != 1 || res.Trials[0].TrialID != "0-s1" {
		t.Errorf("results = status %q, %d trials; want partial with trial 0-s1", res.Status, len(res.Trials))
	}
}

// results --top ranks configurations as the report's leaderboard does: by the mean objective over the
// completed seeds, in the metric's direction, configurations with no scored seed last.
func TestResultsTop(t *testing.T) {
	dir := t.TempDir()
	store, err := artifacts.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(v float64) *float64 { return &v }
	trial := func(id string, config int, lr float64, outcome string, o *float64) results.TrialSummary {
		return results.TrialSummary{TrialID: id, Config: config, Params: map[string]any{"lr": lr}, Outcome: outcome, Objective: o}
	}
	res := results.SweepResults{SweepID: "sweep/top/abc", Name: "top", Metric: sweeps.Metric{Name: "loss", Goal: "minimize", Bounds: &[2]float64{0, 10}},
		Params: []string{"lr"}, Trials: []results.TrialSummary{
			trial("0-s1", 0, 0.1, results.OutcomeCompleted, obj(1)), trial("0-s2", 0, 0.1, results.OutcomeCompleted, obj(5)),
			trial("0-s3", 0, 0.1, results.OutcomeCompleted, obj(3)),
			trial("1-s1", 1, 0.2, results.OutcomeCompleted, obj(1)), trial("1-s2", 1, 0.2, results.OutcomeDiverged, obj(0)),
			trial("2-s1", 2, 0.3, results.OutcomeFailed, nil), trial("2-s2", 2, 0.3, results.OutcomeFailed, nil),
		}}
	b, _ := json.Marshal(res)
	if err := store.Put(context.Background(), artifacts.ResultsKey(res.SweepID), bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "--store", dir, "results", "--top", "2", "top/abc")
	if code != exitOK {
		t.Fatalf("results --top exited %d: %s", code, errOut)
	}
	// Configuration 0: mean 3, s = 2, 3 ± 4.303·2/√3 = [−1.97, 7.97], clipped to metric.bounds [0, 10];
	// configuration 1 has one scored seed, too few for an interval.
	golden(t, "results-top.golden", out)
	for _, args := range [][]string{{"--top", "-1"}, {"--top", "2", "-o", "json"}} {
		code, _, errOut := runCLI(t, append([]string{"--store", dir, "results", "top/abc"}, args...)...)
		if code != exitInvalid || !strings.Contains(errOut, "--top: got ") {
			t.Errorf("results %v exited %d, stderr %q; want 2 and a --top error", args, code, errOut)
		}
	}
}
