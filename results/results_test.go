package results_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

func TestValuesJSONRoundTrip(t *testing.T) {
	in := results.Values{"reward": 12.5, "nan": math.NaN(), "pinf": math.Inf(1), "ninf": math.Inf(-1),
		"zero": 0, "tiny": 5e-324, "neg": -3}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s is not JSON: %v", b, err)
	}
	if raw["nan"] != "NaN" || raw["pinf"] != "+Inf" || raw["ninf"] != "-Inf" || raw["reward"] != 12.5 {
		t.Errorf("encoded %s, want non-finite values as strings and finite ones as numbers", b)
	}
	var out results.Values
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("Unmarshal(%s): %v", b, err)
	}
	if len(out) != len(in) {
		t.Fatalf("round trip = %v, want %v", out, in)
	}
	for k, want := range in {
		got, ok := out[k]
		if !ok || !(got == want || math.IsNaN(got) && math.IsNaN(want)) || math.Signbit(got) != math.Signbit(want) {
			t.Errorf("round trip [%q] = %v, want %v", k, got, want)
		}
	}
	// Inside a struct too, as TrialSummary carries it.
	s := results.TrialSummary{TrialID: "0-s1", Last: results.Values{"reward": math.NaN()}}
	b, err = json.Marshal(s)
	if err != nil {
		t.Fatalf("Marshal(TrialSummary): %v", err)
	}
	var back results.TrialSummary
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(back.Last["reward"]) {
		t.Errorf("TrialSummary round trip = %+v, %v, want Last.reward NaN", back, err)
	}
	if err := json.Unmarshal([]byte(`{"x":"bogus"}`), &out); err == nil {
		t.Errorf(`Unmarshal({"x":"bogus"}) = nil error, want one`)
	}
}

func ptr(x float64) *float64 { return &x }

// A trial recorded in two parts counts once, the later part's record winning; trials come back in plan
// order (configuration, then seed, numerically).
func TestMergeDedupesAndSorts(t *testing.T) {
	parts := [][]results.TrialSummary{
		{{TrialID: "1-s2", Config: 1, Seed: 2, Outcome: "failed"}, {TrialID: "0-s2", Config: 0, Seed: 2, Outcome: "completed"}},
		{{TrialID: "1-s1", Config: 1, Seed: 1, Outcome: "completed"}, {TrialID: "10-s1", Config: 10, Seed: 1, Outcome: "completed"}},
		{{TrialID: "1-s2", Config: 1, Seed: 2, Outcome: "completed", Objective: ptr(3)}, {TrialID: "0-s1", Config: 0, Seed: 1, Outcome: "diverged"}},
	}
	got := results.Merge(parts, nil)
	var ids []string
	for _, tr := range got {
		ids = append(ids, tr.TrialID)
	}
	if want := []string{"0-s1", "0-s2", "1-s1", "1-s2", "10-s1"}; !slices.Equal(ids, want) {
		t.Errorf("trials = %q, want %q", ids, want)
	}
	for _, tr := range got {
		if tr.TrialID == "1-s2" && (tr.Outcome != "completed" || tr.Objective == nil || *tr.Objective != 3) {
			t.Errorf("1-s2 = %+v, want the last record (completed, objective 3)", tr)
		}
	}
	if none := results.Merge(nil, nil); len(none) != 0 {
		t.Errorf("Merge of no parts = %v, want none", none)
	}
}

// Trials recorded with only their ID and outcome (terminated by hand, never started, no report after a
// cancel) get their configuration, seed and parameters from the plan, and sort among the others.
func TestMergeFillsFromThePlan(t *testing.T) {
	plan := []sweeps.Trial{
		{ID: "0-s1", Config: 0, Seed: 1, Params: map[string]any{"lr": 0.1}}, {ID: "0-s2", Config: 0, Seed: 2, Params: map[string]any{"lr": 0.1}},
		{ID: "1-s1", Config: 1, Seed: 1, Params: map[string]any{"lr": 0.2}}, {ID: "1-s2", Config: 1, Seed: 2, Params: map[string]any{"lr": 0.2}},
	}
	got := results.Merge([][]results.TrialSummary{{
		{TrialID: "1-s2", Outcome: "failed", Error: "trial workflow ended without reporting: terminated"},
		{TrialID: "0-s1", Config: 0, Seed: 1, Params: map[string]any{"lr": 0.1}, Outcome: "completed", Objective: ptr(5)},
		{TrialID: "1-s1", Outcome: "cancelled"},
	}}, plan)
	var rows []string
	for _, tr := range got {
		rows = append(rows, fmt.Sprintf("%s %d %d %v %s", tr.TrialID, tr.Config, tr.Seed, tr.Params["lr"], tr.Outcome))
	}
	if want := []string{"0-s1 0 1 0.1 completed", "1-s1 1 1 0.2 cancelled", "1-s2 1 2 0.2 failed"}; !slices.Equal(rows, want) {
		t.Errorf("trials = %q, want %q", rows, want)
	}
}

func TestStepsReached(t *testing.T) {
	for _, c := range []struct {
		outcome          string
		steps, last, div int64
		want             int64
	}{
		{"completed", 1000, 1200, 0, 1000}, // a completed trial's steps stand
		{"diverged", 0, 700, 650, 700},     // stopped inside its first segment
		{"diverged", 0, 0, 650, 650},       // no metrics read, the verdict's step
		{"cancelled", 2000, 1500, 0, 2000}, // never less than the segment ends counted
		{"failed", 0, 0, 0, 0},
	} {
		tr := results.TrialSummary{Outcome: c.outcome, Steps: c.steps}
		if got := results.StepsReached(tr, c.last, c.div); got != c.want {
			t.Errorf("StepsReached(%s, steps %d, last %d, divergence %d) = %d, want %d", c.outcome, c.steps, c.last, c.div, got, c.want)
		}
	}
}

// results.New gives each trial that did not complete the steps the store shows it reached, in its own
// copy of the trials; a completed trial's steps, and a trial the store knows nothing of, stand.
func TestNewStepsReached(t *testing.T) {
	spec := &sweeps.Spec{Name: "s", Metric: sweeps.Metric{Name: "reward"}}
	trials := []results.TrialSummary{{TrialID: "0-s1", Outcome: "completed", Steps: 1000}, {TrialID: "1-s1", Outcome: "pruned", Steps: 500},
		{TrialID: "2-s1", Outcome: "failed", Steps: 300}}
	reached := map[string]results.Reached{"0-s1": {LastMetricStep: 1200}, "1-s1": {LastMetricStep: 800, DivergenceStep: 900}}
	r := results.New("s", spec, "completed", trials, reached)
	var got []int64
	for _, tr := range r.Trials {
		got = append(got, tr.Steps)
	}
	if want := []int64{1000, 900, 300}; !slices.Equal(got, want) {
		t.Errorf("steps = %v, want %v", got, want)
	}
	if trials[1].Steps != 500 {
		t.Errorf("results.New changed the trials it was handed: steps %d, want 500", trials[1].Steps)
	}
}

func TestWriteCSV(t *testing.T) {
	res := results.SweepResults{
		Params: []string{"lr", "name", "flag"},
		Pareto: []results.ConfigPoint{{Config: 0, Rank: 1}, {Config: 2, Why: results.WhyDiverged}},
		Trials: []results.TrialSummary{
			{TrialID: "0-s1", Config: 0, Seed: 1, Params: map[string]any{"lr": 3e-4, "name": `a,"b"`, "flag": true},
				Outcome: "completed", Objective: ptr(123.25), Steps: 10000, WallSeconds: 1.23456, TargetStep: 4000},
			{TrialID: "1-s1", Config: 1, Seed: 1, Params: map[string]any{"lr": 1.0},
				Outcome: "failed", Steps: 5000, Error: "trainer exited with status 3\nlog tail:\nboom", StopRule: ""},
			{TrialID: "2-s1", Config: 2, Seed: 1, Params: map[string]any{"lr": 0.1, "name": "x\ny"},
				Outcome: "diverged", StopRule: "non_finite", Steps: 7000},
			// Text a spreadsheet would run as a formula is made inert; negative numbers stay numbers.
			{TrialID: "3-s1", Config: 3, Seed: 1, Params: map[string]any{"lr": -0.5, "name": `=HYPERLINK("http://x","y")`, "flag": "@SUM(1)"},
				Outcome: "failed", Error: "+cmd|' /C calc'!A0"},
			{TrialID: "4-s1", Config: 4, Seed: 1, Params: map[string]any{"lr": 0.5, "name": "-2", "flag": "\tTAB"},
				Outcome: "failed", Error: "-oops"},
			{TrialID: "5-s1", Config: 5, Seed: 1, Params: map[string]any{"lr": 1e-5}, Outcome: "pruned", Objective: ptr(12), Steps: 3000,
				Pruning: &results.Pruning{Rule: "asha", Rung: 1, Step: 3000, Value: ptr(11.5), Cutoff: ptr(-20.25)}},
			{TrialID: "6-s1", Config: 6, Seed: 1, Params: map[string]any{"lr": 2.0}, Precision: "fp32", Outcome: "oom", Steps: 0, Error: "out of memory",
				Hardware: &results.Hardware{Worker: "123@gpu-box", Host: "gpu-box", CPU: "AMD EPYC 9654 96-Core Processor",
					GPUs:   []results.GPU{{ID: "0", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559}, {ID: "1", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559}},
					Driver: "550.54.15", CUDA: "12.4", Precision: map[string]string{"XLA_FLAGS": "--xla_gpu_enable_fast_min_max", "NVIDIA_TF32_OVERRIDE": "0"}}},
		},
	}
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, &res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("results.csv does not parse: %v\n%s", err, buf.String())
	}
	want := [][]string{
		{"trial_id", "config", "seed", "lr", "name", "flag", "outcome", "objective", "stop_rule", "steps", "wall_seconds", "error", "pruned_step", "pruned_value", "pruned_cutoff",
			"hw_worker", "hw_cpu", "hw_gpu", "hw_gpu_memory_mib", "hw_driver", "hw_cuda", "hw_precision", "precision_setting", "confirm_gpu_class", "target_step", "pareto_rank"},
		{"0-s1", "0", "1", "0.0003", `a,"b"`, "true", "completed", "123.25", "", "10000", "1.235", "", "", "", "", "", "", "", "", "", "", "", "", "", "4000", "1"},
		{"1-s1", "1", "1", "1", "", "", "failed", "", "", "5000", "0.000", "trainer exited with status 3\nlog tail:\nboom", "", "", "", "", "", "", "", "", "", "", "", "", "", ""}, // the whole cause
		{"2-s1", "2", "1", "0.1", "x\ny", "", "diverged", "", "non_finite", "7000", "0.000", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""},
		{"3-s1", "3", "1", "-0.5", `'=HYPERLINK("http://x","y")`, "'@SUM(1)", "failed", "", "", "0", "0.000", "'+cmd|' /C calc'!A0", "", "", "", "", "", "", "", "", "", "", "", "", "", ""},
		{"4-s1", "4", "1", "0.5", "'-2", "'\tTAB", "failed", "", "", "0", "0.000", "'-oops", "", "", "", "", "", "", "", "", "", "", "", "", "", ""},
		{"5-s1", "5", "1", "1e-05", "", "", "pruned", "12", "", "3000", "0.000", "", "3000", "11.5", "-20.25", "", "", "", "", "", "", "", "", "", "", ""},
		{"6-s1", "6", "1", "2", "", "", "oom", "", "", "0", "0.000", "out of memory", "", "", "",
			"gpu-box", "AMD EPYC 9654 96-Core Processor", "2 × NVIDIA H100 80GB HBM3", "81559", "550.54.15", "12.4", "NVIDIA_TF32_OVERRIDE=0 XLA_FLAGS=--xla_gpu_enable_fast_min_max", "fp32", "", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("results.csv has %d rows, want %d:\n%s", len(rows), len(want), buf.String())
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d = %q, want %q", i, rows[i], want[i])
		}
	}
}

// Params read back from results.json are float64 whatever the plan made them: the integer 32 and the
// float 32 are one configuration.
func TestParamsKey(t *testing.T) {
	a := results.ParamsKey(map[string]any{"num_envs": int64(32), "lr": 3e-4, "act": "tanh"})
	b := results.ParamsKey(map[string]any{"act": "tanh", "lr": 0.0003, "num_envs": 32.0})
	if a != b {
		t.Errorf("ParamsKey = %s and %s, want equal", a, b)
	}
	if c := results.ParamsKey(map[string]any{"act": "relu", "lr": 0.0003, "num_envs": 32.0}); c == a {
		t.Errorf("ParamsKey of different values = %s for both", c)
	}
}

func fp(x float64) *float64 { return &x }

// ConfigScore is the IQM over the scored seeds; a diverged seed, or no scored seed, makes the
// configuration infeasible.
func TestConfigScore(t *testing.T) {
	done := func(v float64) results.TrialSummary {
		return results.TrialSummary{Outcome: results.OutcomeCompleted, Objective: fp(v)}
	}
	if v, ok := results.ConfigScore([]results.TrialSummary{done(1), done(100), done(3), done(2)}); !ok || v != 2.5 {
		t.Errorf("ConfigScore(1, 100, 3, 2) = %v, %v; want the IQM 2.5", v, ok)
	}
	if _, ok := results.ConfigScore([]results.TrialSummary{done(1), {Outcome: results.OutcomeDiverged}}); ok {
		t.Error("a configuration with a diverged seed is scored, want infeasible")
	}
	if _, ok := results.ConfigScore([]results.TrialSummary{{Outcome: results.OutcomeFailed}}); ok {
		t.Error("a configuration without a scored seed is scored, want infeasible")
	}
}

// A bayes sweep's results list its re-run configurations with the search's score and interval and
// the fresh seeds' score, best search score first. The interval needs MinIntervalSeeds scored search
// seeds and is clipped to metric.bounds; with fewer there is no interval and no inside verdict.
func TestConfirmations(t *testing.T) {
	spec, err := sweeps.Decode(bytes.NewReader([]byte("name: b\ntrainer: {command: [t], total_steps: 10}\nmethod: bayes\ntrials: 4\nseeds: [1, 2, 3]\nmetric: {name: reward, bounds: [0, 500]}\nparameters:\n  x: {min: 0.0, max: 1.0}\n")), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr := func(c int, seed int64, v float64) results.TrialSummary {
		return results.TrialSummary{TrialID: sweeps.TrialID(c, seed), Config: c, Seed: seed, Params: map[string]any{"x": float64(c)},
			Outcome: results.OutcomeCompleted, Objective: fp(v)}
	}
	trials := []results.TrialSummary{tr(0, 1, 10), tr(0, 2, 12), tr(0, 3, 11), tr(0, 4, 40), tr(1, 1, 20), tr(1, 2, 22), tr(1, 3, 21), tr(1, 4, 21),
		tr(2, 1, 5), tr(2, 2, 6), tr(2, 3, 7), tr(3, 1, 300), tr(3, 2, 2), tr(3, 3, 400), tr(3, 5, 100), tr(4, 1, 30), tr(4, 2, 31), tr(4, 5, 30)}
	// Configuration 4 ran on two of the search's seeds only (its third failed).
	r := results.New("s", spec, "completed", trials, nil)
	if len(r.Confirmations) != 4 {
		t.Fatalf("%d confirmations, want configurations 3, 4, 1 and 0", len(r.Confirmations))
	}
	c := r.Confirmations[0]
	// Configuration 3: mean 234, s = 206.0, t(0.975, 2) = 4.303, one re-run seed:
	// 234 ± 4.303·206.0·√(1/3 + 1) = 234 ± 1023.4, clipped to [0, 500].
	if c.Config != 3 || *c.SearchLow != 0 || *c.SearchHigh != 500 || c.Inside == nil || !*c.Inside {
		t.Errorf("first confirmation = %+v, want configuration 3 with [0, 500] (clipped), re-run 100 inside", c)
	}
	if c := r.Confirmations[1]; c.Config != 4 || c.SearchLow != nil || c.Inside != nil || *c.RerunScore != 30 {
		t.Errorf("second confirmation = %+v, want configuration 4 with no interval (two search seeds) and no verdict", c)
	}
	// Configuration 1: mean 21, s = 1, t(0.975, 2) = 4.303, one re-run seed: 21 ± 4.303·√(4/3) = 21 ± 4.969.
	if c := r.Confirmations[2]; c.Config != 1 || *c.SearchScore != 21 || math.Abs(*c.SearchLow-(21-4.969)) > 1e-3 ||
		math.Abs(*c.SearchHigh-(21+4.969)) > 1e-3 || *c.RerunScore != 21 || c.Inside == nil || !*c.Inside || c.SearchSeeds != 3 || c.RerunSeeds != 1 {
		t.Errorf("third confirmation = %+v, want configuration 1, search 21 in [16.03, 25.97], re-run 21 inside", c)
	}
	if c := r.Confirmations[3]; c.Config != 0 || *c.RerunScore != 40 || c.Inside == nil || *c.Inside {
		t.Errorf("fourth confirmation = %+v, want configuration 0, re-run 40 outside [6.03, 15.97]", c)
	}
	b, _ := json.Marshal(r)
	for _, name := range []string{`"confirmations"`, `"search_score"`, `"search_low"`, `"search_high"`, `"rerun_score"`, `"rerun_seeds"`, `"inside"`} {
		if !bytes.Contains(b, []byte(name)) {
			t.Errorf("results.json lacks %s", name)
		}
	}
}

func TestFormatExploit(t *testing.T) {
	e := results.Exploit{From: "3-s1", Step: 60000, Old: map[string]any{"lr": 0.001, "gamma": 0.99, "num_envs": int64(4)},
		New: map[string]any{"lr": 0.0012, "gamma": 0.99, "num_envs": int64(8)}}
	if got, want := results.FormatExploit(e), "step 60000 from 3-s1: lr 0.001→0.0012, num_envs 4→8"; got != want {
		t.Errorf("FormatExploit() = %q, want %q", got, want)
	}
	e.Old = nil
	if got, want := results.FormatExploit(e), "step 60000 from 3-s1: gamma 0.99, lr 0.0012, num_envs 8"; got != want {
		t.Errorf("FormatExploit() = %q, want %q", got, want)
	}
}

// TestAttemptCountsAlwaysPresent: results.json carries trainer_failures, infra_retries and
// retrained_steps for every trial, 0 when none, so a reader need not tell "none" from "not reported".
func TestAttemptCountsAlwaysPresent(t *testing.T) {
	b, err := json.Marshal(results.TrialSummary{TrialID: "0-s1", Outcome: results.OutcomeCompleted})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"trainer_failures":0`, `"infra_retries":0`, `"retrained_steps":0`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s: no %s", b, key)
		}
	}
}
