//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
)

// A sweep ID names one sweep forever. submit --id with the ID of a sweep that is running or has ended
// exits 2, says how to pick another ID, starts nothing and leaves the first sweep's files as they are;
// so does an ID whose files are in the store when the server no longer knows the sweep. A submission
// that slips past the CLI's look at the store (the CLI reads another store) fails at its plan step
// without writing, and list shows the ID once.
func TestSubmitExistingIDRefused(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	const body = `
  total_steps: 4000
method: grid
parameters:
  lr: {values: %s}
  sleep_ms: {value: %d}
probes: {enabled: false}
`
	spec := func(lrs string, sleepMS int) string {
		return e.spec("dup", fmt.Sprintf(body, lrs, sleepMS))
	}
	first := e.submit(spec("[1.0e-3, 3.0e-3]", 1), "--id", "same")
	if out, code := e.cli("watch", first); code != 0 {
		t.Fatalf("watch %s exited %d:\n%s", first, code, out)
	}
	stored := func() map[string]string {
		m := map[string]string{}
		for _, name := range []string{"spec.yaml", "plan.json", "results.json", "results.csv"} {
			b, err := os.ReadFile(e.store.URL(artifacts.SweepDir(first) + "/" + name))
			if err != nil {
				t.Fatal(err)
			}
			m[name] = string(b)
		}
		return m
	}
	before := stored()

	refused := func(what string, out string, code int) {
		t.Helper()
		if code != 2 {
			t.Errorf("%s: submit exited %d, want 2:\n%s", what, code, out)
		}
		for _, want := range []string{`--id: got "same"`, first, "leave out --id for a fresh random ID, or choose another"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: submit output lacks %q:\n%s", what, want, out)
			}
		}
	}
	// Ended: the server knows it.
	out, code := e.cli("submit", spec("[1.0e-2]", 1), "--id", "same")
	refused("ended sweep", out, code)

	// Running: refused by the store's check when the Plan activity has claimed the ID already, else by the
	// server.
	running := e.submit(spec("[1.0e-4]", 200), "--id", "live")
	out, code = e.cli("submit", spec("[1.0e-2]", 1), "--id", "live")
	byServer, byStore := strings.Contains(out, "the Temporal server has a sweep with this ID"), strings.Contains(out, "the artifact store holds")
	if code != 2 || !strings.Contains(out, running) || !byServer && !byStore {
		t.Errorf("running sweep: submit exited %d, want 2 naming %s and the server or the store:\n%s", code, running, out)
	}
	// A CLI whose store holds nothing of it (a later --store wins over the harness's): the server refuses.
	out, code = e.cli("--store", t.TempDir(), "submit", spec("[1.0e-2]", 1), "--id", "live")
	if code != 2 || !strings.Contains(out, running) || !strings.Contains(out, "the Temporal server has a sweep with this ID") {
		t.Errorf("running sweep, another store: submit exited %d, want 2 naming %s and the server:\n%s", code, running, out)
	}
	if out, code := e.cli("cancel", running); code != 0 {
		t.Fatalf("cancel exited %d:\n%s", code, out)
	}

	// Files in the store, the server knowing nothing of them (history deleted, retention past).
	gone := strings.TrimSuffix(first, "/same") + "/gone"
	if err := e.store.Put(t.Context(), artifacts.PlanKey(gone), strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	}
	out, code = e.cli("submit", spec("[1.0e-2]", 1), "--id", "gone")
	if code != 2 || !strings.Contains(out, "the artifact store holds") || !strings.Contains(out, gone) {
		t.Errorf("stored sweep: submit exited %d, want 2 naming %s and the store:\n%s", code, gone, out)
	}

	// The CLI looks at another store than the workers: the plan step refuses, nothing is written.
	other := filepath.Join(e.dir, "other-store")
	out, code = e.cli("--store", other, "submit", spec("[1.0e-2]", 1), "--id", "gone")
	if code != 0 {
		t.Fatalf("submit with the CLI on another store exited %d:\n%s", code, out)
	}
	if out, code := e.cli("watch", gone); code == 0 || !strings.Contains(out, "SweepExists") && !strings.Contains(out, "already holds a sweep") {
		t.Errorf("watch of a sweep whose ID the store holds exited %d, want non-zero and the cause:\n%s", code, out)
	}
	if b, err := os.ReadFile(e.store.URL(artifacts.PlanKey(gone))); err != nil || string(b) != "{}" {
		t.Errorf("plan.json of the stored sweep = %q, %v, want it unchanged", b, err)
	}
	if _, err := os.Stat(e.store.URL(artifacts.SpecYAMLKey(gone))); !os.IsNotExist(err) {
		t.Errorf("spec.yaml written for a refused sweep: %v", err)
	}

	after := stored()
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s of %s changed after refused submissions", name, first)
		}
	}
	if out, code := e.cli("list"); code != 0 || strings.Count(out, first) != 1 {
		t.Errorf("list exited %d, want %s once:\n%s", code, first, out)
	}
}

// A sweep in which every trial failed ends failed: watch exits non-zero and names the cause, results
// and status show the whole error with the trainer's log tail, and list files it under failed.
func TestEveryTrialFailedSweepFails(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4")
	spec := e.spec("doomed", `
  total_steps: 4000
method: grid
parameters:
  lr: {values: [1.0e-3, 3.0e-3]}
  sleep_ms: {value: 1}
  crash_at: {value: 2000}
probes: {enabled: false}
retries: {max_attempts: 1}
`)
	sweepID := e.submit(spec)
	const cause = "crashing on purpose at step 2000"
	out, code := e.cli("watch", sweepID)
	if code == 0 || !strings.Contains(out, "sweep "+sweepID+" failed: 2 trials (2 failed)") || !strings.Contains(out, cause) {
		t.Errorf("watch exited %d, want non-zero, the sweep failed and the cause %q:\n%s", code, cause, out)
	}
	out, code = e.cli("results", sweepID)
	if code != 0 || !strings.Contains(out, "ERROR") || strings.Count(out, cause) != 2 {
		t.Errorf("results exited %d, want an ERROR column with %q for both trials:\n%s", code, cause, out)
	}
	out, code = e.cli("results", sweepID, "-o", "csv")
	if code != 0 || strings.Count(out, cause) != 2 {
		t.Errorf("results -o csv exited %d, want %q in both rows' error:\n%s", code, cause, out)
	}
	out, code = e.cli("status", sweepID)
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "last failure") || !strings.Contains(out, cause) {
		t.Errorf("status exited %d, want the failed phase and the last failure's cause:\n%s", code, out)
	}
	out, code = e.cli("status", sweepID+"/0-s1")
	if code != 0 || !strings.Contains(out, "error") || !strings.Contains(out, cause) {
		t.Errorf("status of a trial exited %d, want its error with the cause:\n%s", code, out)
	}
	if ls := e.listSweeps("--state", "failed"); len(ls) != 1 || ls[0].SweepID != sweepID {
		t.Errorf("list --state failed = %+v, want %s", ls, sweepID)
	}
	recordHistory(t, e, sweepID, "", "sweep-all-failed.json")
}

// A metric name no record carries is warned of as soon as a trial's first segment ends, naming the
// names the trainer did write, in the running trial's status; once its records pass the diagnostics
// warm-up without it, the trial fails, naming the nearest name, and so does the sweep (watch and status
// show it), while the ended trial's status and the sweep's report keep the warning.
func TestMissingMetricWarned(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := e.spec("typo", `
  total_steps: 40000
  segment_steps: 10000
metric: {name: rewrd}
diagnostics: {warmup_steps: 25000}
method: grid
parameters:
  lr: {values: [1.0e-3]}
  sleep_ms: {value: 200}
probes: {enabled: false}
`)
	sweepID := e.submit(spec)
	const warned = `metric "rewrd": no record of segment 0 carries it`
	var out string
	waitFor(t, time.Minute, "the running trial's status to warn of the missing metric", func() bool {
		var code int
		out, code = e.cli("status", sweepID+"/0-s1")
		return code == 0 && strings.Contains(out, warned)
	})
	if !strings.Contains(out, "status       Running") || !strings.Contains(out, "reward, ") {
		t.Errorf("status of the trial after its first segment, want running, the warning and the names it wrote:\n%s", out)
	}
	const failed = `(the diagnostics warm-up ends at step 25000), so the trial has no objective`
	if out, code := e.cli("watch", sweepID); code == 0 || !strings.Contains(out, failed) || !strings.Contains(out, `did you mean "reward"?`) {
		t.Fatalf("watch exited %d, want the sweep failed past the warm-up with the nearest name:\n%s", code, out)
	}
	if out, _ := e.cli("status", sweepID); !strings.Contains(out, "last failure  0-s1: ") || !strings.Contains(out, `did you mean "reward"?`) {
		t.Errorf("status of the sweep lacks the trial's failure:\n%s", out)
	}
	if out, code := e.cli("status", sweepID+"/0-s1"); code != 0 || strings.Count(out, warned) != 1 || !strings.Contains(out, failed) {
		t.Errorf("status of the ended trial exited %d, want the warning once and the failure:\n%s", code, out)
	}
	html, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `id="warnings"`) || !strings.Contains(string(html), "rewrd") ||
		!strings.Contains(string(html), "1 trial: 0-s1") {
		t.Errorf("report.html lacks the warning of the missing metric for trial 0-s1")
	}
}
