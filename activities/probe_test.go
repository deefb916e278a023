package activities_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

func runProbe(t *testing.T, in activities.ProbeInput) (*activities.ProbeResult, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &activities.Activities{WorkDir: t.TempDir()}
	env.RegisterActivity(a.RunProbe)
	v, err := env.ExecuteActivity(a.RunProbe, in)
	if err != nil {
		return nil, err
	}
	var r activities.ProbeResult
	return &r, v.Get(&r)
}

func TestRunProbeBuiltin(t *testing.T) {
	cases := []struct {
		name, probe, env, bug string
		passed, skipped       bool
	}{
		{"healthy", "1", "CartPole-v1", "", true, false},
		{"detach-value", "1", "CartPole-v1", "detach-value", false, false},
		{"other action space", "4c", "CartPole-v1", "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			params := map[string]any{"lr": 1e-3}
			if c.bug != "" {
				params[activities.InjectBugParam] = c.bug
			}
			r, err := runProbe(t, activities.ProbeInput{SweepID: "sweep/p/1", Probe: c.probe,
				Trainer: sweeps.Trainer{Builtin: "ppo", Env: c.env}, Params: params, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Passed != c.passed || r.Skipped != c.skipped {
				t.Errorf("got passed %v skipped %v (%s), want %v %v", r.Passed, r.Skipped, r, c.passed, c.skipped)
			}
		})
	}
	_, err := runProbe(t, activities.ProbeInput{Probe: "1", Trainer: sweeps.Trainer{Builtin: "ppo", Env: "CartPole-v1"},
		Params: map[string]any{activities.InjectBugParam: "off-by-one"}})
	appError(t, err, activities.ErrInvalidSpec)
}

// TestRunProbeExternal drives the protocol with shell one-liners standing in for a trainer.
func TestRunProbeExternal(t *testing.T) {
	const good = `{"probe": "2", "gamma": 0.5, "steps": 10000, "evals": [{"obs": [-1], "value": -0.97}, {"obs": [1], "value": 0.99}]}`
	cases := []struct {
		name, script    string
		passed, skipped bool
		errText         string
	}{
		{"good record", `test "$RLSWEEP_PROBE" = 2 && test "$RLSWEEP_PROBE_GAMMA" = 0.5 && test "$RLSWEEP_TOTAL_STEPS" = 10000 && echo '` + good + `' > "$RLSWEEP_PROBE_RESULT"`, true, false, ""},
		{"wrong values", `echo '{"evals": [{"obs": [-1], "value": 0}, {"obs": [1], "value": null}]}' > "$RLSWEEP_PROBE_RESULT"`, false, false, ""},
		{"unsupported", `exit 3`, false, true, ""},
		{"crash", `echo boom >&2; exit 1`, false, false, "exited with status 1; log tail: boom"},
		{"no record", `exit 0`, false, false, "wrote no record"},
		{"bad JSON", `echo '{"evals": [NaN]}' > "$RLSWEEP_PROBE_RESULT"`, false, false, "invalid record"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := runProbe(t, activities.ProbeInput{SweepID: "sweep/p/1", Probe: "2",
				Trainer: sweeps.Trainer{Command: []string{"true"}}, Command: []string{"sh", "-c", c.script}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Passed != c.passed || r.Skipped != c.skipped || !strings.Contains(r.Error, c.errText) {
				t.Errorf("got passed %v skipped %v (%s), want %v %v, error containing %q", r.Passed, r.Skipped, r, c.passed, c.skipped, c.errText)
			}
		})
	}
}

func TestRecordProbes(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &activities.Activities{Store: store}
	env.RegisterActivity(a.RecordProbes)
	in := activities.RecordProbesInput{SweepID: sweepID, Results: []activities.ProbeResult{
		{Probe: "3", Level: 3}, {Probe: "1", Level: 1, Passed: true}, {Probe: "2", Level: 2, Passed: true}}}
	v, err := env.ExecuteActivity(a.RecordProbes, in)
	if err != nil {
		t.Fatal(err)
	}
	var rep activities.ProbeReport
	if err := v.Get(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Passed || rep.Failed != "3" || !strings.Contains(rep.Diagnosis, "probe 3 fails while probes 1–2 pass") {
		t.Errorf("report: got %+v", rep)
	}
	f := &fixture{t: t, store: store}
	var stored activities.ProbeReport
	if err := json.Unmarshal([]byte(f.read(artifacts.ProbesKey(sweepID))), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.Failed != "3" || len(stored.Results) != 3 || stored.Results[0].Probe != "1" {
		t.Errorf("probes.json: got %+v", stored)
	}
}

// TestProbeDiagnosisWithoutVerdict runs all ten probes on real child processes that give no verdict: a
// plain trainer that follows the trainer contract but not the probe protocol, and one that crashes at
// start. Neither diagnosis may blame what probe 1 checks; each says what happened, with the docs to
// read and how to turn the stage off.
func TestProbeDiagnosisWithoutVerdict(t *testing.T) {
	cases := []struct {
		name, script string
		want         []string
	}{
		{"plain trainer", `for s in 2500 5000 7500 "$RLSWEEP_STOP_AT_STEP"; do echo "{\"step\": $s, \"reward\": 1}" >> "$RLSWEEP_METRICS_FILE"; done`,
			[]string{"does not speak the probe protocol", "RLSWEEP_PROBE_RESULT on 10 of 10 probes"}},
		{"crash at start", `echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1`,
			[]string{"the trainer crashed on probe 1", "exited with status 1", "log tail: ModuleNotFoundError: No module named 'torch'"}},
	}
	a := &activities.Activities{WorkDir: t.TempDir()}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var results []activities.ProbeResult
			for _, id := range probes.IDs() {
				r, err := a.RunProbe(context.Background(), activities.ProbeInput{SweepID: "sweep/p/1", Probe: string(id),
					Trainer: sweeps.Trainer{Command: []string{"true"}}, Command: []string{"sh", "-c", c.script}, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, *r)
			}
			rep := probes.Diagnose(results)
			if rep.Passed {
				t.Fatalf("the probe stage passed: %s", rep.Diagnosis)
			}
			for _, want := range append(c.want, "docs/probes.md", "`probes: {enabled: false}`") {
				if !strings.Contains(rep.Diagnosis, want) {
					t.Errorf("diagnosis lacks %q: %s", want, rep.Diagnosis)
				}
			}
			if strings.Contains(rep.Diagnosis, "value loss or optimiser broken") {
				t.Errorf("diagnosis blames the value loss: %s", rep.Diagnosis)
			}
		})
	}
}
