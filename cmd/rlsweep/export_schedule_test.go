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

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// results --export-schedule writes a spec replaying the best member's schedule: its start, then each
// exploit's parameters at its step; a replacement takes its parent's schedule up to its start. The
// written spec is valid, and an existing file is never overwritten.
func TestResultsExportSchedule(t *testing.T) {
	dir := t.TempDir()
	store, err := artifacts.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const sweepID = "sweep/pbt/abc"
	specYAML := `name: pbt
trainer: {builtin: ppo, env: Pendulum-v1, total_steps: 40000}
method: pbt
seeds: [1, 2]
parameters:
  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}
  gamma: {min: 0.9, max: 0.999}
  num_envs: {value: 4}
pbt: {population: 4, ready_steps: 10000}
`
	if err := store.Put(ctx, artifacts.SpecYAMLKey(sweepID), strings.NewReader(specYAML)); err != nil {
		t.Fatal(err)
	}
	obj := func(v float64) *float64 { return &v }
	p := func(lr, g float64) map[string]any { return map[string]any{"lr": lr, "gamma": g, "num_envs": int64(4)} }
	res := results.SweepResults{SweepID: sweepID, Name: "pbt", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"},
		Params: []string{"lr", "gamma", "num_envs"}, Trials: []results.TrialSummary{
			{TrialID: "0-s1", Outcome: results.OutcomeCompleted, Objective: obj(-300), Params: p(0.002, 0.95),
				Exploits: []results.Exploit{{Member: "0-s1", From: "1-s2", Step: 20000, Old: p(0.005, 0.93), New: p(0.002, 0.95)}}},
			{TrialID: "1-s2", Outcome: results.OutcomeCompleted, Objective: obj(-200), Params: p(0.001, 0.99)},
			{TrialID: "2-s1", Outcome: results.OutcomeDiverged, Params: p(0.009, 0.9)},
			{TrialID: "4-s1", Outcome: results.OutcomeCompleted, Objective: obj(-150), Params: p(0.0012, 0.98), Parent: "0-s1", StartStep: 30000,
				Exploits: []results.Exploit{{Member: "4-s1", From: "0-s1", Step: 30000, New: p(0.0012, 0.98)}}},
		}}
	b, _ := json.Marshal(res)
	if err := store.Put(ctx, artifacts.ResultsKey(sweepID), bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "replay.yaml")
	code, out, errOut := runCLI(t, "--store", dir, "results", "pbt/abc", "--export-schedule", file)
	if code != exitOK || !strings.Contains(out, "member 4-s1") {
		t.Fatalf("results --export-schedule exited %d: %s%s", code, out, errOut)
	}
	spec, err := sweeps.Load(file)
	if err != nil {
		b, _ := os.ReadFile(file)
		t.Fatalf("the exported spec: %v\n%s", err, b)
	}
	want := []sweeps.ScheduleStep{{Step: 0, Params: p(0.005, 0.93)}, {Step: 20000, Params: p(0.002, 0.95)}, {Step: 30000, Params: p(0.0012, 0.98)}}
	got := spec.PBT.Schedule
	for i := range got { // YAML reads whole numbers as integers, JSON summaries as floats
		for k, v := range got[i].Params {
			if n, ok := v.(int64); ok && k != "num_envs" {
				got[i].Params[k] = float64(n)
			}
		}
	}
	if b, _ := os.ReadFile(file); testing.Verbose() {
		t.Logf("%s", b)
	}
	if spec.Name != "pbt-replay" || spec.Method != sweeps.MethodPBT || spec.PBT.ReadySteps != 10000 || spec.PBT.Population != 2 || !reflect.DeepEqual(got, want) {
		b, _ := os.ReadFile(file)
		t.Errorf("exported spec %s: schedule %v, want %v\n%s", spec.Name, got, want, b)
	}
	trials, err := sweeps.Plan(spec)
	if err != nil || len(trials) != 2 || trials[0].Params["lr"] != 0.005 {
		t.Errorf("the replay's plan %+v (%v), want one member per seed starting with lr 0.005", trials, err)
	}
	code, _, errOut = runCLI(t, "--store", dir, "results", "pbt/abc", "--export-schedule", file)
	if code != exitInvalid || !strings.Contains(errOut, "--export-schedule: got") {
		t.Errorf("exporting over an existing file exited %d (%s), want 2", code, errOut)
	}
}

// TestExportScheduleExamples: every example that advertises results --export-schedule gets, from a
// sweep of it (its members as planned, the best having exploited another at the first ready step), a
// replay spec that rlsweep validate accepts.
func TestExportScheduleExamples(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range examples {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "--export-schedule") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			spec, trials, _, err := loadAndPlan(path)
			if err != nil {
				t.Fatalf("the example: %v", err)
			}
			dir := t.TempDir()
			store, err := artifacts.NewLocal(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			sweepID := "sweep/" + spec.Name + "/abc123"
			if err := store.Put(ctx, artifacts.SpecYAMLKey(sweepID), bytes.NewReader(raw)); err != nil {
				t.Fatal(err)
			}
			res := results.SweepResults{SweepID: sweepID, Name: spec.Name, Metric: spec.Metric, Params: sweeps.ParamNames(spec)}
			for i, tr := range trials {
				obj := float64(i)
				res.Trials = append(res.Trials, results.TrialSummary{TrialID: tr.ID, Seed: tr.Seed, Outcome: results.OutcomeCompleted,
					Objective: &obj, Params: tr.Params})
			}
			if len(trials) < 2 || spec.PBT == nil {
				t.Fatalf("the example plans %d members, method %s: want a pbt population", len(trials), spec.Method)
			}
			best, from := &res.Trials[len(trials)-1], res.Trials[0]
			best.Exploits = []results.Exploit{{Member: best.TrialID, From: from.TrialID, Step: spec.PBT.ReadySteps,
				Old: best.Params, New: from.Params}}
			best.Params = from.Params
			b, _ := json.Marshal(res)
			if err := store.Put(ctx, artifacts.ResultsKey(sweepID), bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "replay.yaml")
			code, out, errOut := runCLI(t, "--store", dir, "results", sweepID, "--export-schedule", file)
			if code != exitOK {
				t.Fatalf("results --export-schedule exited %d: %s%s", code, out, errOut)
			}
			code, out, errOut = runCLI(t, "validate", file)
			if code != exitOK {
				b, _ := os.ReadFile(file)
				t.Fatalf("validate of the exported spec exited %d: %s%s\n%s", code, out, errOut, b)
			}
			replay, err := sweeps.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			if got := replay.PBT.Schedule; len(got) != 2 || got[1].Step != spec.PBT.ReadySteps || replay.PBT.Population != len(spec.Seeds) {
				t.Errorf("the replay's schedule %+v, population %d: want 2 entries, the second at step %d, one member per seed (%d)",
					got, replay.PBT.Population, spec.PBT.ReadySteps, len(spec.Seeds))
			}
		})
	}
	if n == 0 {
		t.Fatal("no example advertises --export-schedule")
	}
}
