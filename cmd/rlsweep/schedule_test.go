package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

func TestScheduleCreateArgv(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want ScheduleCreateOptions
	}{
		{"defaults", []string{"schedule", "create", "nightly", "s.yaml", "--cron", "0 3 * * *", "--baseline", "nightly"},
			ScheduleCreateOptions{Name: "nightly", File: "s.yaml", Cron: "0 3 * * *", Baseline: "nightly", Overlap: "skip",
				CatchupWindow: time.Hour}},
		{"every flag", []string{"schedule", "create", "n", "s.yaml", "--cron", "@daily", "--baseline", "sweep/a/b",
			"--overlap", "buffer_one", "--catchup-window", "30m", "--webhook", "env:HOOK", "--tolerance", "0.1", "--paused"},
			ScheduleCreateOptions{Name: "n", File: "s.yaml", Cron: "@daily", Baseline: "sweep/a/b", Overlap: "buffer_one",
				CatchupWindow: 30 * time.Minute, Webhook: "env:HOOK", Tolerance: 0.1, ToleranceSet: true, Paused: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := testFactory()
			var got *ScheduleCreateOptions
			cmd := newScheduleCmd(f, func(o *ScheduleCreateOptions) error { got = o; return nil }, nil)
			if err := parseWith(t, f, cmd, tt.args...); err != nil {
				t.Fatal(err)
			}
			if got == nil || !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestScheduleActionArgv(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		args []string
		want ScheduleOptions
	}{
		{[]string{"schedule", "list"}, ScheduleOptions{Action: "list"}},
		{[]string{"schedule", "describe", "n"}, ScheduleOptions{Action: "describe", Name: "n"}},
		{[]string{"schedule", "pause", "n", "--note", "flaky GPU"}, ScheduleOptions{Action: "pause", Name: "n", Note: "flaky GPU"}},
		{[]string{"schedule", "unpause", "n"}, ScheduleOptions{Action: "unpause", Name: "n"}},
		{[]string{"schedule", "trigger", "n", "--overlap", "allow_all"}, ScheduleOptions{Action: "trigger", Name: "n", Overlap: "allow_all"}},
		{[]string{"schedule", "backfill", "n", "--start", "2026-01-02T03:00:00Z", "--end", "2026-01-04T03:00:00Z"},
			ScheduleOptions{Action: "backfill", Name: "n", Start: start, End: start.Add(48 * time.Hour)}},
		{[]string{"schedule", "delete", "n"}, ScheduleOptions{Action: "delete", Name: "n"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			f, _, _ := testFactory()
			var got *ScheduleOptions
			cmd := newScheduleCmd(f, nil, func(o *ScheduleOptions) error { got = o; return nil })
			if err := parseWith(t, f, cmd, tt.args...); err != nil {
				t.Fatal(err)
			}
			if got == nil || !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestScheduleBadInput(t *testing.T) {
	create := []string{"schedule", "create", "nightly", "s.yaml", "--cron", "0 3 * * *", "--baseline", "b"}
	tests := []struct {
		name string
		args []string
		want []string // every one must appear in stderr
	}{
		{"overlap", append(create, "--overlap", "sometimes"),
			[]string{`--overlap: got "sometimes", want one of allow_all, buffer_all, buffer_one, cancel_other, skip, terminate_other`}},
		{"several at once", []string{"schedule", "create", "bad/name", "s.yaml", "--catchup-window", "1s", "--tolerance", "2", "--webhook", "ftp://x"},
			[]string{`name: got "bad/name"`, `--cron: got ""`, `--baseline: got ""`, "--catchup-window: got 1s, want at least 10s",
				"--tolerance: got 2, want a relative IQM change in (0, 1], such as 0.05 for 5%", `--webhook: got "ftp://x"`}},
		{"explicit zero tolerance", append(create, "--tolerance", "0"), []string{"--tolerance: got 0, want a relative IQM change in (0, 1]"}},
		{"catchup not a duration", append(create, "--catchup-window", "soon"), []string{`--catchup-window: got "soon", want a duration`}},
		{"trigger overlap", []string{"schedule", "trigger", "n", "--overlap", "x"}, []string{`--overlap: got "x", want one of allow_all`}},
		{"backfill times", []string{"schedule", "backfill", "n", "--start", "yesterday", "--end", "now"},
			[]string{`--start: got "yesterday", want an RFC 3339 time`, `--end: got "now", want an RFC 3339 time`}},
		{"backfill order", []string{"schedule", "backfill", "n", "--start", "2026-01-02T03:00:00Z", "--end", "2026-01-01T03:00:00Z"},
			[]string{"--end: got 2026-01-01T03:00:00Z, want after --start 2026-01-02T03:00:00Z"}},
		{"missing name", []string{"schedule", "describe"}, []string{"describe: accepts 1 arg(s), received 0; usage: rlsweep schedule describe NAME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitInvalid {
				t.Errorf("exit code = %d, want %d; stderr %s", code, exitInvalid, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, w)
				}
			}
		})
	}
}

func TestRegressionAction(t *testing.T) {
	a := regressionAction(&ScheduleCreateOptions{Name: "nightly", Baseline: "base", Tolerance: 0.1, ToleranceSet: true, Webhook: "env:HOOK"})
	if a.Workflow != workflows.WorkflowTypeRegression || a.ID != "regression/nightly" || a.TaskQueue != workflows.ControlQueue {
		t.Errorf("action = %+v, want Regression with ID regression/nightly on the control queue", a)
	}
	in, ok := a.Args[0].(workflows.RegressionInput)
	if !ok || in.SpecKey != "schedules/nightly/spec.yaml" || in.Baseline != "base" || in.Thresholds.Tolerance != 0.1 || in.WebhookURL != "env:HOOK" {
		t.Errorf("action input = %+v, want the stored spec's key, the baseline, tolerance and webhook", a.Args[0])
	}
}

// Without --tolerance the schedule overrides nothing: the pinned spec's regression section decides.
func TestRegressionActionWithoutOverride(t *testing.T) {
	a := regressionAction(&ScheduleCreateOptions{Name: "nightly", Baseline: "base"})
	if in := a.Args[0].(workflows.RegressionInput); in.Thresholds != (regression.Thresholds{}) {
		t.Errorf("action thresholds = %+v, want none (the spec's decide)", in.Thresholds)
	}
}

func TestDescribeThresholds(t *testing.T) {
	withSection := &sweeps.Spec{Regression: &sweeps.Regression{Tolerance: 0.1, Confidence: 0.9, Resamples: 500,
		MinProbImprovement: 0.8, MaxNewFailures: 1}}
	tests := []struct {
		name string
		spec *sweeps.Spec
		opts ScheduleCreateOptions
		want string
	}{
		{"defaults", &sweeps.Spec{}, ScheduleCreateOptions{},
			"tolerance 0.05, confidence 0.95, resamples 2000, min_prob_improvement 0.75, max_new_failures 0; from the defaults (the spec has no regression section)"},
		{"spec", withSection, ScheduleCreateOptions{},
			"tolerance 0.1, confidence 0.9, resamples 500, min_prob_improvement 0.8, max_new_failures 1; from the spec's regression section"},
		{"--tolerance over the spec", withSection, ScheduleCreateOptions{Tolerance: 0.2, ToleranceSet: true},
			"tolerance 0.2 (--tolerance), confidence 0.9, resamples 500, min_prob_improvement 0.8, max_new_failures 1; from the spec's regression section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeThresholds(tt.spec, &tt.opts); got != tt.want {
				t.Errorf("describeThresholds = %q, want %q", got, tt.want)
			}
		})
	}
}

// schedule create checks the baseline before anything is made: one that does not exist, or that no
// configuration of the spec could be compared with, is a --baseline error (exit 2) naming the value
// and what exists or what differs, and nothing is stored. No Temporal server answers at --address:
// the check must come before the schedule is created.
func TestScheduleCreateChecksBaseline(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(key string, res results.SweepResults) {
		b, _ := json.Marshal(res)
		if err := store.Put(ctx, key, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	reward := sweeps.Metric{Name: "reward", Goal: "maximize"}
	put(artifacts.StoredBaselineKey("other-params"), results.SweepResults{Metric: reward, Params: []string{"clip"},
		Trials: []results.TrialSummary{{TrialID: "0-s1", Params: map[string]any{"clip": 0.2}}}})
	put(artifacts.StoredBaselineKey("other-values"), results.SweepResults{Metric: reward, Params: []string{"lr"},
		Trials: []results.TrialSummary{{TrialID: "0-s1", Params: map[string]any{"lr": 0.5}}}})
	put(artifacts.StoredBaselineKey("other-metric"), results.SweepResults{Metric: sweeps.Metric{Name: "loss", Goal: "minimize"},
		Params: []string{"lr"}, Trials: []results.TrialSummary{{TrialID: "0-s1", Params: map[string]any{"lr": 0.001}}}})
	spec := filepath.Join(dir, "nightly.yaml")
	if err := os.WriteFile(spec, []byte("name: nightly\ntrainer: {command: [/bin/true], total_steps: 1000}\n"+
		"metric: {name: reward, goal: maximize}\nseeds: [1]\nparameters:\n  lr: {values: [0.001, 0.003]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		baseline string
		want     []string
	}{
		{"nosuch", []string{`--baseline: got "nosuch"`, "stored: other-metric, other-params, other-values", "rlsweep baseline set"}},
		{"sweep/nightly/ab12", []string{`--baseline: got "sweep/nightly/ab12"`, "sweeps/nightly/ab12/results.json does not exist"}},
		{"nightly/ab12", []string{`--baseline: got "nightly/ab12"`, "did you mean the sweep sweep/nightly/ab12?"}},
		{"other-params", []string{`--baseline: got "other-params"`, "the baseline's parameters are [clip], " + spec + "'s are [lr]"}},
		{"other-values", []string{`--baseline: got "other-values"`, `both vary [lr], over different values: the baseline has {"lr":0.5}, ` + spec + ` plans {"lr":0.001}`}},
		{"other-metric", []string{`--baseline: got "other-metric"`, "whose objective is minimize loss; " + spec + "'s is maximize reward"}},
	}
	for _, tt := range tests {
		t.Run(tt.baseline, func(t *testing.T) {
			code, _, errOut := runCLI(t, "--address", "127.0.0.1:1", "--store", store.Root(), "schedule", "create", "nightly", spec,
				"--cron", "0 3 * * *", "--baseline", tt.baseline)
			if code != exitInvalid {
				t.Errorf("exit code %d, want 2; stderr %q", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if keys, err := store.List(ctx, "schedules/"); err != nil || len(keys) > 0 {
				t.Errorf("store holds %v (%v) after a refused create, want nothing under schedules/", keys, err)
			}
		})
	}
}
