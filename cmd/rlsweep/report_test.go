package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
)

func TestReportOptionsFromArgv(t *testing.T) {
	tests := []struct {
		args []string
		want ReportOptions
	}{
		{[]string{"report", "cartpole/ab12"}, ReportOptions{Sweep: "cartpole/ab12"}},
		{[]string{"report", "--open", "-o", "r.html", "sweep/cartpole/ab12"}, ReportOptions{Sweep: "sweep/cartpole/ab12", Output: "r.html", Open: true}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := testFactory()
			var got ReportOptions
			cmd := newReportCmd(f, func(o *ReportOptions) error { got = *o; return nil })
			if err := parseWith(t, f, cmd, tt.args...); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// runReport draws the report from the store alone, for an ended sweep and for one still running (its
// parts, named by the stored spec.json); it needs no server.
func TestRunReport(t *testing.T) {
	ctx := context.Background()
	res := sampleResults()
	dir := t.TempDir()
	store, err := artifacts.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: res.SweepID, Trials: res.Trials}); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"name": "cartpole-lr", "metric": map[string]string{"name": "reward", "goal": "maximize"},
		"trainer": map[string]any{"total_steps": 500000}, "parameters": []map[string]any{{"name": "lr"}, {"name": "clip"}, {"name": "num_envs"}}})
	if err := store.Put(ctx, artifacts.SweepKey(res.SweepID, "spec.json"), bytes.NewReader(spec)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "running.html")
	code, stdout, errOut := runCLI(t, "--store", store.URL(""), "report", "-o", out, "cartpole-lr/ab12cd34")
	if code != exitOK {
		t.Fatalf("exit code %d, stderr %q", code, errOut)
	}
	if !strings.Contains(stdout, "report: "+out) {
		t.Errorf("stdout %q does not name %s", stdout, out)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1>cartpole-lr</h1>", "sweep/cartpole-lr/ab12cd34", `id="plot-parallel-coordinates"`,
		"1 completed", "1 diverged", "380\u202f000</b> environment steps"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	t.Run("no results", func(t *testing.T) {
		code, _, errOut := runCLI(t, "--store", t.TempDir(), "report", "cartpole-lr/ab12cd34")
		if code != exitError || !strings.Contains(errOut, "no results in") {
			t.Errorf("exit code %d, stderr %q; want 1 and no results yet", code, errOut)
		}
	})
}
