//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
)

// An 18-trial sweep, a third of whose trials write NaN halfway: the sweep ends with report.html beside
// results.json; `rlsweep report` draws it again from the store; headless Chromium renders it with every
// plot present and no console error; results.csv loads with Go's and Python's CSV readers, one row per
// trial; and the Web UI filters of docs/webui.md list exactly the trials they should.
func TestReportOfEighteenTrialSweep(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: run scripts/install-tools.sh chromium (make test-integration does)")
	}
	e := newEnv(t)
	e.startWorker("a", "--slots", "6")
	since := time.Now().Add(-time.Minute)
	spec := e.spec("report18", `
  total_steps: 20000
seeds: [1, 2, 3]
parameters:
  lr: {values: [3.0e-4, 1.0e-3, 3.0e-3]}
  fault: {values: [0, 1]}
  fault_at: {value: 10000}
  noise: {value: 5}
  sleep_ms: {value: 10}
probes: {enabled: false}
concurrency: 6
`)
	sweepID := e.submit(spec, "--watch")
	res := e.results(sweepID)
	if len(res.Trials) != 18 {
		t.Fatalf("results.json has %d trials, want 18", len(res.Trials))
	}
	diverged := 0
	for _, tr := range res.Trials {
		if tr.Outcome == results.OutcomeDiverged {
			diverged++
			if tr.Steps < 10000 || tr.Steps > 11000 {
				t.Errorf("diverged trial %s reached %d steps in results.json, want where it was stopped (10000–11000)", tr.TrialID, tr.Steps)
			}
		}
	}
	if diverged != 9 {
		t.Errorf("%d trials diverged, want the 9 with fault 1", diverged)
	}
	stored, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
	if err != nil {
		t.Fatalf("the sweep's report.html: %v", err)
	}

	art := artifactDir(t)
	local := filepath.Join(art, "report.html")
	if out, code := e.cli("report", "-o", local, sweepID); code != 0 || !strings.Contains(out, "report: "+local) {
		t.Fatalf("rlsweep report exited %d:\n%s", code, out)
	}
	rebuilt, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	if strip := func(b []byte) string {
		return regexp.MustCompile(` · generated [^<]*`).ReplaceAllString(string(b), "")
	}; strip(stored) != strip(rebuilt) {
		t.Error("rlsweep report drew a different report from the one the sweep stored")
	}

	checkConsoleDetection(t, chromium, art)
	dom, logs := runChromium(t, chromium, local, "--dump-dom")
	if errs := consoleErrors(logs); len(errs) > 0 {
		t.Errorf("console errors rendering report.html:\n%s", strings.Join(errs, "\n"))
	}
	ids := append(append([]string(nil), report.FigureIDs...), "plot-sensitivity-lr") // fault: only 0 among the completed trials
	for _, id := range ids {
		// Each figure must hold a rendered <svg> with drawn paths, not just its element.
		m := regexp.MustCompile(`<figure id="` + id + `"><svg [^>]*>(?s:(.*?))</svg>`).FindStringSubmatch(dom)
		if m == nil || strings.Count(m[1], "<path") < 5 {
			t.Errorf("rendered DOM lacks plot %q with drawn paths", id)
		}
	}
	for _, want := range []string{`id="leaderboard-table"`, `id="divergence-table"`, `id="savings-table"`, "9 diverged", "non_finite"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	shot := filepath.Join(art, "report.png")
	_, logs = runChromium(t, chromium, local, "--screenshot="+shot)
	if errs := consoleErrors(logs); len(errs) > 0 {
		t.Errorf("console errors taking the screenshot:\n%s", strings.Join(errs, "\n"))
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 50000 {
		t.Errorf("screenshot %s: %v (size %v), want a rendered page", shot, err, st)
	}
	t.Logf("report %s, screenshot %s", local, shot)

	checkResultsCSV(t, e, res)
	checkWebUIFilters(t, e, res, since)
}

// artifactDir is where a test keeps what a person may want to look at afterwards: $RLSWEEP_TEST_ARTIFACTS
// when set (kept), else the test's temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("RLSWEEP_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runChromium renders file in headless Chromium with one extra flag (--dump-dom or --screenshot=...)
// and returns stdout and the browser's log.
func runChromium(t *testing.T, bin, file, flag string) (stdout, logs string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abs, _ := filepath.Abs(file)
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--window-size=1400,4000", flag,
		"file://"+abs)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", flag, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// consoleErrors returns the browser log lines that report a console message or an uncaught exception;
// Chromium logs them as ":INFO:CONSOLE(...)" lines with --enable-logging=stderr.
func consoleErrors(logs string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			out = append(out, line)
		}
	}
	return out
}

// checkConsoleDetection proves consoleErrors sees what it looks for: a page that logs an error and
// throws must be caught, or a clean report would prove nothing.
func checkConsoleDetection(t *testing.T, chromium, dir string) {
	t.Helper()
	bad := filepath.Join(dir, "console-error.html")
	page := `<!DOCTYPE html><html><body><p>control</p><script>console.error("rlsweep-control"); throw new Error("boom")</script></body></html>`
	if err := os.WriteFile(bad, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	_, logs := runChromium(t, chromium, bad, "--dump-dom")
	if errs := consoleErrors(logs); len(errs) < 2 {
		t.Fatalf("console-error detection missed a page that logs an error and throws (found %q); browser log:\n%s", errs, logs)
	}
}

// checkResultsCSV loads results.csv with encoding/csv and, when the machine has it, Python's csv
// module: a header, one row per trial, every trial present.
func checkResultsCSV(t *testing.T, e *env, res results.SweepResults) {
	t.Helper()
	path := e.store.URL(artifacts.ResultsCSVKey(res.SweepID))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("results.csv: %v", err)
	}
	header := strings.Join(rows[0], ",")
	if want := "trial_id,config,seed,lr,fault,fault_at,noise,sleep_ms,outcome,objective,stop_rule,steps,wall_seconds,error,pruned_step,pruned_value,pruned_cutoff,hw_worker,hw_cpu,hw_gpu,hw_gpu_memory_mib,hw_driver,hw_cuda,hw_precision,precision_setting,confirm_gpu_class,target_step,pareto_rank"; header != want {
		t.Errorf("results.csv header %q, want %q", header, want)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		seen[r[0]] = true
	}
	for _, tr := range res.Trials {
		if !seen[tr.TrialID] {
			t.Errorf("results.csv lost trial %s", tr.TrialID)
		}
	}
	if len(rows)-1 != len(res.Trials) || len(seen) != len(res.Trials) {
		t.Errorf("results.csv has %d rows (%d distinct trials), want %d", len(rows)-1, len(seen), len(res.Trials))
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: results.csv checked with encoding/csv only")
		return
	}
	script := `import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ids = {r["trial_id"] for r in rows}
assert len(rows) == len(ids), "duplicate rows"
diverged = [r for r in rows if r["outcome"] == "diverged"]
assert all(r["stop_rule"] and int(r["steps"]) > 0 for r in diverged), "diverged row without rule or steps"
print(len(rows), len(diverged))`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python csv: %v\n%s", err, out)
	}
	want := strings.Fields(string(out))
	if len(want) != 2 || want[0] != "18" || want[1] != "9" {
		t.Errorf("python csv read %q, want 18 rows, 9 diverged", strings.TrimSpace(string(out)))
	}
}
