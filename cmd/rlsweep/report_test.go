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
	"github.com/rlsweep/rlsweep/results"
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

// storeWithResults opens a local store under dir holding res's recorded results.
func storeWithResults(t *testing.T, dir string, res results.SweepResults) artifacts.Store {
	t.Helper()
	store, err := artifacts.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	if err := a.RecordResults(context.Background(), activities.RecordResultsInput{SweepID: res.SweepID, Trials: res.Trials}); err != nil {
		t.Fatal(err)
	}
	return store
}

// runReport draws the report from the store alone, for an ended sweep and for one still running (its
// parts, named by the stored spec.json); it needs no server.
func TestRunReport(t *testing.T) {
	ctx := context.Background()
	res := sampleResults()
	dir := t.TempDir()
	store := storeWithResults(t, dir, res)
	spec, _ := json.Marshal(map[string]any{"name": "cartpole-lr", "metric": map[string]string{"name": "reward", "goal": "maximize"},
		"trainer": map[string]any{"total_steps": 500000}, "parameters": []map[string]any{{"name": "lr"}, {"name": "clip"}, {"name": "num_envs"}}})
	if err := store.Put(ctx, artifacts.SpecJSONKey(res.SweepID), bytes.NewReader(spec)); err != nil {
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
	t.Run("no such sweep", func(t *testing.T) {
		// Nothing stored, and no Temporal server at --address to say otherwise.
		code, _, errOut := runCLI(t, "--address", "127.0.0.1:1", "--store", t.TempDir(), "report", "cartpole-lr/ab12cd34")
		if code != exitError || !strings.Contains(errOut, "sweep/cartpole-lr/ab12cd34 does not exist") {
			t.Errorf("exit code %d, stderr %q; want 1 and that the sweep does not exist", code, errOut)
		}
	})
	t.Run("no results yet", func(t *testing.T) {
		// The plan is stored, no trial has ended.
		s2, err := artifacts.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.Put(ctx, artifacts.SpecJSONKey(res.SweepID), bytes.NewReader(spec)); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI(t, "--address", "127.0.0.1:1", "--store", s2.URL(""), "results", "cartpole-lr/ab12cd34")
		if code != exitError || !strings.Contains(errOut, "no results in") {
			t.Errorf("exit code %d, stderr %q; want 1 and no results yet", code, errOut)
		}
	})
}

// report --open on a machine whose xdg-open finds no browser says so and prints the URL to open.
func TestReportOpenWithoutBrowser(t *testing.T) {
	dir := t.TempDir()
	store := storeWithResults(t, dir, sampleResults())
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// What xdg-open does on a machine with no browser and no desktop.
	script := "#!/bin/sh\necho 'xdg-open: no method available for opening '\"'$1'\" >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.html")
	for name, path := range map[string]string{"fails": bin, "missing": t.TempDir()} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PATH", path)
			code, stdout, errOut := runCLI(t, "--store", store.URL(""), "report", "--open", "-o", out, "cartpole-lr/ab12cd34")
			if code != exitOK {
				t.Fatalf("exit code %d, stderr %q; want 0 (the report was written)", code, errOut)
			}
			if !strings.Contains(stdout, "report: "+out) {
				t.Errorf("stdout %q does not name %s", stdout, out)
			}
			if !strings.Contains(errOut, "could not open a browser") || !strings.Contains(errOut, "open file://"+out) {
				t.Errorf("stderr %q; want it to say no browser opened and to give file://%s", errOut, out)
			}
		})
	}
}
