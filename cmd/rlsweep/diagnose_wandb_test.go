package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/metrics/metricstest"
)

// diagnoseJSON runs `rlsweep diagnose -o json` and returns its exit code and document.
func diagnoseJSON(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	code := run(context.Background(), append([]string{"diagnose", "-o", "json"}, args...), &Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("diagnose %v: exit %d, %v; stderr %s\n%s", args, code, err, errOut, out)
	}
	return code, doc
}

// wandbAsJSONL writes the rows of a W&B run file, as the W&B reader reads them with stepKey and no
// mapping, to a file of JSON lines.
func wandbAsJSONL(t *testing.T, path, stepKey string) string {
	t.Helper()
	r := metrics.NewWandbTail(path, stepKey)
	recs, err := metrics.ReadAll(r)
	r.Close()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %d records, %v", path, len(recs), err)
	}
	var b []byte
	for _, rec := range recs {
		b = append(metrics.AppendRecordJSON(b, rec), '\n')
	}
	p := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// diagnose reads a W&B run file (by its magic, or as a run directory) and judges it as it judges the
// same rows written as JSON lines: the same records, stop, warnings and findings, on real runs of the
// corpus beside the repository and on a run whose value loss turns NaN.
func TestRunDiagnoseWandb(t *testing.T) {
	// A run whose value loss turns NaN at its sixth row, on global_step, with a table beside each row
	// and exit code 1.
	var file bytes.Buffer
	w, _ := metricstest.NewWandbWriter(&file)
	w.Record(metricstest.Run("nan"))
	for i, vl := range []float64{0.5, 0.4, 0.35, 0.3, 0.3, math.NaN(), 0.2, 0.2} {
		w.Record(metricstest.History(metricstest.Float("_step", float64(i)), metricstest.Float("global_step", float64(2048*(i+1))),
			metricstest.Float("reward", float64(i+1)), metricstest.Float("value_loss", vl),
			metricstest.Item{Key: "samples", ValueJSON: `{"_type": "table-file"}`}))
	}
	w.Record(metricstest.Exit(1))
	nan := filepath.Join(t.TempDir(), "run-nan.wandb")
	renamed := filepath.Join(t.TempDir(), "run-file") // told by its magic, not its name
	for _, p := range []string{nan, renamed} {
		if err := os.WriteFile(p, file.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type wbCase struct {
		name, path, preset, stepKey string
		stop                        bool
	}
	runs := []wbCase{
		{"nan value loss", nan, "", "global_step", true},
		{"nan value loss, _step", renamed, "", "", true},
	}
	corpus, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus", "wandb-runs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(corpus); err != nil {
		t.Logf("the W&B run corpus (shared/corpus/wandb-runs beside the repository) is absent, only the test's own run is compared: %v", err)
	} else {
		runs = append(runs,
			wbCase{"double_dqn", filepath.Join(corpus, "double_dqn/run-20241126_231724-37bc455c/run-37bc455c.wandb"), "cleanrl", "global_step", false},
			wbCase{"double_dqn _step", filepath.Join(corpus, "double_dqn/run-20241126_231724-37bc455c"), "cleanrl", "", false},
			wbCase{"conceptppo", filepath.Join(corpus, "conceptppo/run-20230723_093735-mxaehod4"), "", "", false},
			wbCase{"cs182 crashed", filepath.Join(corpus, "cs182rlproject/run-20210504_200711-2b40dyji/run-2b40dyji.wandb"), "", "", false},
			wbCase{"wheely rsl_rl", filepath.Join(corpus, "wheely-rsl_rl/run-20240415_181724-jqhus3vl/run-jqhus3vl.wandb"), "rsl_rl", "", false})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			var args []string
			if r.preset != "" {
				args = append(args, "--preset", r.preset)
			}
			wargs := args
			if r.stepKey != "" {
				wargs = append(append([]string(nil), args...), "--step-key", r.stepKey)
			}
			jsonl := wandbAsJSONL(t, r.path, r.stepKey)
			if fi, err := os.Stat(r.path); err == nil && fi.IsDir() {
				jsonl = wandbAsJSONL(t, mustRunFile(t, r.path), r.stepKey)
			}
			wcode, w := diagnoseJSON(t, append(wargs, r.path)...)
			jcode, j := diagnoseJSON(t, append(args, jsonl)...)
			if w["source"] != metrics.SourceWandb || !strings.HasPrefix(w["source_read"].(string), "wandb (") {
				t.Errorf("source %v (%v), want wandb and the file read", w["source"], w["source_read"])
			}
			if (wcode == exitDiverged) != r.stop || wcode != jcode {
				t.Errorf("exit %d from the W&B run, %d from its JSON lines; want equal, a stop: %v", wcode, jcode, r.stop)
			}
			for _, k := range []string{"records", "warmup_steps", "stop", "warnings", "findings", "preset"} {
				if !reflect.DeepEqual(w[k], j[k]) {
					t.Errorf("%s: W&B run %v, its JSON lines %v", k, w[k], j[k])
				}
			}
		})
	}
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	if code := run(context.Background(), []string{"diagnose", "--step-key", "global_step", copyFixture(t, "sb3_progress.csv", "progress.csv")},
		&Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut}); code == 0 || !strings.Contains(errOut.String(), "--step-key") {
		t.Errorf("--step-key on a CSV: exit %d, stderr %s", code, errOut)
	}
}

func mustRunFile(t *testing.T, dir string) string {
	t.Helper()
	p, err := metrics.WandbRunFile(dir)
	if err != nil || p == "" {
		t.Fatalf("%s: no run file (%v)", dir, err)
	}
	return p
}
