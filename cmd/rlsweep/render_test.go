package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func f64(x float64) *float64 { return &x }

func midSweepStatus() *workflows.SweepStatus {
	return &workflows.SweepStatus{
		SweepID: "sweep/cartpole-lr/ab12cd34", Name: "cartpole-lr", Phase: workflows.PhaseRunning, Total: 18, Started: 11,
		Running: []string{"9-s1", "10-s2", "8-s3"},
		Counts:  map[string]int{"completed": 5, "diverged": 2, "failed": 1},
		Leader: &results.TrialSummary{TrialID: "4-s2", Objective: f64(487.25),
			Params: map[string]any{"lr": 0.001, "clip": 0.2}},
		Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}, Concurrency: 3, Runs: 1,
		Since: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

// training is a running trial's live state: its heartbeat at step of total, with a windowed objective
// and its trend.
func training(step, total int64, windowed float64, trend ...float64) liveTrial {
	return liveTrial{Training: true, Beat: true, Heartbeat: activities.Heartbeat{Step: step, TotalSteps: total,
		Windowed: f64(windowed), Trend: trend}}
}

func TestRenderStatus(t *testing.T) {
	bestRow := report.Row{Config: 4, Params: map[string]any{"lr": 0.001, "clip": 0.2}, Trials: 3, Scored: 3, IQM: 481.33333333}
	tests := []struct {
		name string
		st   *workflows.SweepStatus
		live map[string]liveTrial
		best *bestConfig
	}{
		// 8-s3: started, no heartbeat yet.
		{"status-running.golden", midSweepStatus(), map[string]liveTrial{"9-s1": training(120000, 500000, 312.456, 20, 45, 80, 150, 240, 312),
			"10-s2": training(4000, 500000, 21.5, 21.5), "8-s3": {Training: true}}, nil},
		{"status-best.golden", func() *workflows.SweepStatus {
			st := midSweepStatus()
			st.Running = []string{"9-s1", "10-s2", "8-s3", "11-s1"}
			st.Standby = []string{"12-s1"}
			return st
		}(), map[string]liveTrial{"9-s1": training(120000, 500000, 312.456, 20, 45, 80, 150, 240, 312),
			"10-s2": training(4000, 500000, 21.5), "8-s3": {}, "11-s1": {}}, &bestConfig{Row: bestRow, Previous: 1}},
		{"status-paused.golden", func() *workflows.SweepStatus {
			st := midSweepStatus()
			st.Paused, st.Running, st.Leader = true, nil, nil
			return st
		}(), nil, nil},
		{"status-pruning.golden", func() *workflows.SweepStatus {
			st := midSweepStatus()
			st.Counts["pruned"] = 9
			st.Pruning = &scheduler.PruningStatus{Rule: "asha", Rungs: []scheduler.RungStatus{
				{Step: 4000, Reached: 5, Stopped: 3}, {Step: 12000, Reached: 2, Stopped: 1}, {Step: 36000}}}
			return st
		}(), map[string]liveTrial{"9-s1": training(120000, 500000, 312.456)}, nil},
		{"status-pbt.golden", func() *workflows.SweepStatus {
			st := midSweepStatus()
			st.PBT = &scheduler.PBTStatus{Members: 9, Exploits: 14, Replaced: 1, ReadyStep: 120000}
			return st
		}(), map[string]liveTrial{"9-s1": training(120000, 500000, 312.456)}, nil},
		{"status-planning.golden", &workflows.SweepStatus{SweepID: "sweep/x/1", Phase: workflows.PhasePlanning, Counts: map[string]int{}}, nil, nil},
		{"status-completed.golden", &workflows.SweepStatus{SweepID: "sweep/x/1", Phase: workflows.PhaseCompleted, Total: 4,
			Counts: map[string]int{"completed": 3, "cancelled": 1}, Concurrency: 8,
			Leader: &results.TrialSummary{TrialID: "2-s1", Objective: f64(-0.0123), Params: map[string]any{"gamma": 0.99}},
			Metric: sweeps.Metric{Name: "loss", Goal: "minimize"}}, nil, nil},
		{"status-failed.golden", &workflows.SweepStatus{SweepID: "sweep/x/1", Phase: workflows.PhaseFailed, Total: 2,
			Counts: map[string]int{"failed": 2}, Concurrency: 4,
			LastFailure: &results.TrialSummary{TrialID: "1-s1", Outcome: "failed",
				Error: "trial 1-s1: trainer exited with status 2 at step 0; log tail:\nTraceback (most recent call last):\nValueError: bad config"}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, renderStatus(tt.st, tt.live, tt.best))
		})
	}
}

func TestSparkline(t *testing.T) {
	if got := sparkline([]float64{0, 1, 2, 3, 4, 5, 6, 7}); got != "▁▂▃▄▅▆▇█" {
		t.Errorf("sparkline(0…7) = %q", got)
	}
	if got := sparkline([]float64{5, 5}); got != "▁▁" {
		t.Errorf("sparkline of a constant = %q, want the lowest ticks", got)
	}
	if got := sparkline(nil); got != "" {
		t.Errorf("sparkline(nil) = %q", got)
	}
}

// TestProgressLine: the line watch prints when its output is not a terminal splits the running trials
// as the live view does: training (or starting) and waiting for a worker's slot.
func TestProgressLine(t *testing.T) {
	paused := midSweepStatus()
	paused.Paused = true
	// Four running on a worker with two slots, one more on standby: two train, two wait for a slot.
	crowded := midSweepStatus()
	crowded.Running = []string{"9-s1", "10-s2", "8-s3", "11-s1"}
	crowded.Standby = []string{"12-s1"}
	crowdedLive := map[string]liveTrial{"9-s1": training(120000, 500000, 312.456), "10-s2": training(4000, 500000, 21.5),
		"8-s3": {}, "11-s1": {}}
	tests := []struct {
		st   *workflows.SweepStatus
		live map[string]liveTrial
	}{
		{midSweepStatus(), map[string]liveTrial{"9-s1": training(120000, 500000, 312.456), "8-s3": {Training: true}}},
		{paused, nil},
		{&workflows.SweepStatus{SweepID: "sweep/x/1", Phase: workflows.PhasePlanning}, nil},
		{crowded, crowdedLive},
		// Not asked (pause, resume and set-concurrency print the line from the update's answer).
		{crowded, nil},
	}
	var b strings.Builder
	for _, tt := range tests {
		b.WriteString(progressLine(tt.st, tt.live) + "\n")
	}
	golden(t, "progress.golden", b.String())
	if !strings.Contains(renderStatus(crowded, crowdedLive, nil), "running 4 (2 training, 2 waiting for a worker's slot) (+1 standby)") {
		t.Errorf("the live view's split differs from the line's:\n%s", renderStatus(crowded, crowdedLive, nil))
	}
}

func TestBar(t *testing.T) {
	tests := []struct {
		done, total int
		want        string
	}{
		{0, 0, "[          ]"},
		{0, 4, "[..........]"},
		{1, 4, "[##........]"},
		{4, 4, "[##########]"},
		{5, 4, "[##########]"}, // more reports than trials (a trial reported twice) must not panic
	}
	for _, tt := range tests {
		if got := bar(tt.done, tt.total, 10); got != tt.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
}

func sampleResults() results.SweepResults {
	return results.SweepResults{
		SweepID: "sweep/cartpole-lr/ab12cd34", Name: "cartpole-lr", Status: "completed",
		Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}, Params: []string{"lr", "clip", "num_envs"},
		Trials: []results.TrialSummary{
			{TrialID: "0-s1", Config: 0, Seed: 1, Params: map[string]any{"lr": 0.0003, "clip": 0.1, "num_envs": 8},
				Outcome: "completed", Objective: f64(487.123456), Steps: 500000, WallSeconds: 61.25, Segments: 5},
			{TrialID: "0-s2", Config: 0, Seed: 2, Params: map[string]any{"lr": 0.0003, "clip": 0.1, "num_envs": 8},
				Outcome: "diverged", Steps: 120000, StopRule: "non_finite", WallSeconds: 12.5, Segments: 2,
				Error: "trial 0-s2 diverged: stop non_finite at step 120000\nlog tail follows",
				Last:  results.Values{"reward": math.NaN()}},
			{TrialID: "1-s1", Config: 1, Seed: 1, Params: map[string]any{"lr": 0.001, "clip": 0.2, "num_envs": 32},
				Outcome: "failed", Steps: 0, Error: "trainer exited with status 3, \"quoted\""},
			{TrialID: "1-s2", Config: 1, Seed: 2, Params: map[string]any{"lr": 0.001, "clip": 0.2, "num_envs": 32},
				Outcome: "cancelled", Steps: 40000},
		},
	}
}

func TestWriteResultsTable(t *testing.T) {
	res := sampleResults()
	var b bytes.Buffer
	if err := writeResultsTable(&b, &res); err != nil {
		t.Fatal(err)
	}
	golden(t, "results-table.golden", b.String())
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	res := sampleResults()
	if err := results.WriteCSV(&b, &res); err != nil {
		t.Fatal(err)
	}
	golden(t, "results.csv.golden", b.String())
}

// runResults reads results.json from the store when the sweep has ended, the stored parts while it
// runs; it needs no server.
func TestRunResults(t *testing.T) {
	ctx := context.Background()
	res := sampleResults()
	ended := t.TempDir()
	store, err := artifacts.Open(ended)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(res)
	if err := store.Put(ctx, artifacts.ResultsKey(res.SweepID), bytes.NewReader(js)); err != nil {
		t.Fatal(err)
	}
	running := t.TempDir()
	rstore, err := artifacts.Open(running)
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: rstore}
	for part, trials := range [][]results.TrialSummary{res.Trials[2:], res.Trials[:2]} {
		if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: res.SweepID, Part: part, Trials: trials}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		store, output, golden string
	}{
		{ended, "table", "results-table.golden"},
		{ended, "csv", "results.csv.golden"},
		{ended, "json", "results.json.golden"},
		{running, "table", "results-running-table.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := runCLI(t, "--store", tt.store, "results", "-o", tt.output, "cartpole-lr/ab12cd34")
			if code != exitOK {
				t.Fatalf("exit code %d, stderr %q", code, errOut)
			}
			golden(t, tt.golden, out)
		})
	}
	t.Run("none yet", func(t *testing.T) {
		// The sweep has stored its plan; no trial has ended.
		dir := t.TempDir()
		store, err := artifacts.NewLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(context.Background(), artifacts.SpecJSONKey("sweep/cartpole-lr/ab12cd34"), strings.NewReader("{}")); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI(t, "--store", dir, "results", "cartpole-lr/ab12cd34")
		if code != exitError || !strings.Contains(errOut, "sweep sweep/cartpole-lr/ab12cd34: no results in") {
			t.Errorf("exit code %d, stderr %q; want 1 and no results yet", code, errOut)
		}
	})
}
