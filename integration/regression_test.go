//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/workflows"
)

// regressionSpec is a 1-configuration, 4-seed sweep of the trainer at path, whose reward plateau is
// quality 100; noise makes the seeds differ, the seeds make every run of it the same. Its regression
// section sets the tolerance the schedule judges by (no --tolerance overrides it).
func regressionSpec(path string) string {
	return fmt.Sprintf("name: nightly\ntrainer:\n  command: [%q]\n", path) + `
  total_steps: 20000
  segment_steps: 20000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1, 2, 3, 4]
parameters:
  quality: {value: 100}
  noise: {value: 2}
  sleep_ms: {value: 5}
probes: {enabled: false}
concurrency: 4
regression: {tolerance: 0.1, resamples: 1000}
`
}

// writeTrainer installs the nightly trainer at path: the scripted trainer, or with degraded a build
// of it whose reward plateau is 80 whatever the parameters say, as a trainer change that costs return
// would make it. The spec and its parameters stay the same.
func writeTrainer(t *testing.T, path string, degraded bool) {
	t.Helper()
	script := "#!/bin/sh\n"
	if degraded {
		script += `RLSWEEP_PARAMS=$(printf '%s' "$RLSWEEP_PARAMS" | sed 's/"quality":[0-9.e+]*/"quality":80/')` + "\nexport RLSWEEP_PARAMS\n"
	}
	script += fmt.Sprintf("exec %q\n", trainerBin)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // atomic: a trial never runs half a script
		t.Fatal(err)
	}
}

// A schedule triggered twice: the normal trainer passes against the baseline, a degraded one (a lower
// reward plateau, as a trainer change that costs return would give) regresses. Real runs throughout;
// the pinned spec never changes, the trainer it runs does.
func TestRegressionScheduleTriggeredTwice(t *testing.T) {
	e := newEnv(t)
	e.startWorker("w", "--slots", "4")
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer hook.Close()

	trainer := filepath.Join(e.dir, "nightly-trainer")
	writeTrainer(t, trainer, false)
	normal := filepath.Join(e.dir, "nightly.yaml")
	if err := os.WriteFile(normal, []byte(regressionSpec(trainer)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := e.cli("submit", normal, "--watch")
	if code != 0 {
		t.Fatalf("baseline sweep exited %d:\n%s", code, out)
	}
	if out, code := e.cli("baseline", "set", sweepIDFrom(t, out)); code != 0 {
		t.Fatalf("baseline set exited %d:\n%s", code, out)
	}
	checkBadCron(t, e, normal)
	out, code = e.cli("schedule", "create", "nightly", normal, "--cron", "0 3 * * *", "--baseline", "nightly", "--webhook", hook.URL)
	if code != 0 {
		t.Fatalf("schedule create exited %d:\n%s", code, out)
	}
	if want := "thresholds: tolerance 0.1, confidence 0.95, resamples 1000"; !strings.Contains(out, want) {
		t.Errorf("schedule create said %q, want it to contain %q", out, want)
	}
	out, code = e.cli("schedule", "create", "nightly", normal, "--cron", "0 4 * * *", "--baseline", "nightly")
	if code != 2 || !strings.Contains(out, `name: got "nightly", but a schedule of that name exists`) {
		t.Errorf("a second schedule create of the same name exited %d, want 2 and that it exists:\n%s", code, out)
	}
	first := runRegression(t, e, 1)
	if first.Verdict != regression.VerdictPass {
		t.Errorf("normal trainer: verdict %q, want pass", first.Verdict)
	}
	out, code = e.cli("schedule", "describe", "nightly")
	if code != 0 {
		t.Fatalf("schedule describe exited %d:\n%s", code, out)
	}
	t.Logf("schedule describe:\n%s", out)
	for _, want := range []string{"cron:      0 3 * * *\n", "baseline:  nightly\n", " completed, verdict pass\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("schedule describe lacks %q:\n%s", want, out)
		}
	}

	// The trainer changes between two nights.
	writeTrainer(t, trainer, true)
	got := runRegression(t, e, 2)
	// Two runs seconds apart (as a backfill starts them) pin two sweeps: neither overwrites the other.
	if got.SweepID == first.SweepID {
		t.Errorf("both regressions ran sweep %s, want one sweep each", got.SweepID)
	}
	var firstRep regression.Report
	e.readJSON(artifacts.RegressionKey(first.SweepID), &firstRep)
	if firstRep.Verdict != regression.VerdictPass {
		t.Errorf("the first night's regression.json says %q, want pass", firstRep.Verdict)
	}
	if got.Verdict != regression.VerdictRegressed || got.Regressed != 1 {
		t.Errorf("degraded trainer: %+v, want verdict regressed with 1 configuration", got)
	}
	var rep regression.Report
	e.readJSON(artifacts.RegressionKey(got.SweepID), &rep)
	if len(rep.Configs) != 1 || !(rep.Configs[0].DiffCI[1] < 0) || rep.Configs[0].ProbImprovement != 0 {
		t.Errorf("regression.json configs = %+v, want one with an interval below 0 and P(improvement) 0", rep.Configs)
	}
	if th := rep.Thresholds; th.Tolerance != 0.1 || th.Resamples != 1000 || len(rep.Overridden) != 0 {
		t.Errorf("regression.json thresholds %+v, overridden %v; want the spec's tolerance 0.1 and 1000 resamples", th, rep.Overridden)
	}
	checkRegressionReport(t, e, got)
	if n := posts.Load(); n != 2 {
		t.Errorf("webhook received %d posts, want 2", n)
	}
	if out, code := e.cli("schedule", "delete", "nightly"); code != 0 {
		t.Errorf("schedule delete exited %d:\n%s", code, out)
	}
}

// checkRegressionReport checks that the regressed sweep's report.html, drawn once after the
// comparison, shows the regression first: verdict, baseline, thresholds, the configuration's row and
// the plot, in a real browser.
func checkRegressionReport(t *testing.T, e *env, got workflows.RegressionResult) {
	t.Helper()
	key := artifacts.ReportKey(got.SweepID)
	if got.ReportKey != key {
		t.Errorf("regression result report key %q, want %q", got.ReportKey, key)
	}
	html, err := os.ReadFile(e.store.URL(key))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{`data-verdict="regressed"`, ">REGRESSED</span>", `id="regression-baseline">nightly</code>`,
		"tolerance <b>10%</b> relative IQM change", "1000 resamples", `<tr class="regressed">`, "quality=100", `id="plot-regression"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if s, l := strings.Index(page, `id="regression"`), strings.Index(page, `id="leaderboard"`); s < 0 || s > l {
		t.Errorf("report.html: regression section at %d, leaderboard at %d; want the regression first", s, l)
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: run scripts/install-tools.sh chromium (make test-integration does)")
	}
	local := filepath.Join(artifactDir(t), "regression-report.html")
	if err := os.WriteFile(local, html, 0o644); err != nil {
		t.Fatal(err)
	}
	dom, logs := runChromium(t, chromium, local, "--dump-dom")
	if errs := consoleErrors(logs); len(errs) > 0 {
		t.Errorf("console errors rendering report.html:\n%s", strings.Join(errs, "\n"))
	}
	m := regexp.MustCompile(`<figure id="plot-regression"><svg [^>]*>(?s:(.*?))</svg>`).FindStringSubmatch(dom)
	if m == nil || strings.Count(m[1], "<path") < 5 {
		t.Errorf("rendered DOM lacks the regression plot with drawn paths")
	}
	if !strings.Contains(dom, `id="regression-verdict"`) {
		t.Errorf("rendered DOM lacks the regression verdict")
	}
}

// checkBadCron checks that a cron expression the server refuses is a --cron error (exit 2) that names
// the value and what is allowed, and that it leaves no schedule and nothing in the store.
func checkBadCron(t *testing.T, e *env, spec string) {
	t.Helper()
	for _, cron := range []string{"0 3 * *", "61 3 * * *", "nightly"} {
		out, code := e.cli("schedule", "create", "nightly", spec, "--cron", cron, "--baseline", "nightly")
		if code != 2 || !strings.Contains(out, fmt.Sprintf("--cron: got %q", cron)) || !strings.Contains(out, "want a cron expression of 5 fields") {
			t.Errorf("schedule create --cron %q exited %d, want 2 and a --cron error:\n%s", cron, code, out)
		}
		t.Logf("schedule create --cron %q: %s", cron, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := e.client.ScheduleClient().GetHandle(ctx, "nightly").Describe(ctx); err == nil {
		t.Errorf("a schedule exists after the refused creates")
	}
	if keys, err := e.store.List(ctx, "schedules/"); err != nil || len(keys) > 0 {
		t.Errorf("the store holds %v (%v) after the refused creates, want nothing under schedules/", keys, err)
	}
}

// runRegression triggers the schedule, waits for its n-th run to end, and checks the verdict search
// attribute matches the result.
func runRegression(t *testing.T, e *env, n int) workflows.RegressionResult {
	t.Helper()
	out, code := e.cli("schedule", "trigger", "nightly")
	if code != 0 {
		t.Fatalf("schedule trigger exited %d:\n%s", code, out)
	}
	t.Logf("schedule trigger: %s", out)
	m := regexp.MustCompile(`started regression (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("schedule trigger does not name the regression's workflow:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := e.client.ScheduleClient().GetHandle(ctx, "nightly")
	var run *client.ScheduleWorkflowExecution
	waitFor(t, time.Minute, "the schedule to start a run", func() bool {
		d, err := h.Describe(ctx)
		if err != nil || len(d.Info.RecentActions) < n {
			return false
		}
		run = d.Info.RecentActions[n-1].StartWorkflowResult
		return run != nil
	})
	if run.WorkflowID != m[1] {
		t.Errorf("schedule trigger said it started %s, the schedule's run %d is %s", m[1], n, run.WorkflowID)
	}
	var res workflows.RegressionResult
	if err := e.client.GetWorkflow(ctx, run.WorkflowID, run.FirstExecutionRunID).Get(ctx, &res); err != nil {
		t.Fatalf("regression %s: %v", run.WorkflowID, err)
	}
	desc, err := e.client.DescribeWorkflowExecution(ctx, run.WorkflowID, run.FirstExecutionRunID)
	if err != nil {
		t.Fatal(err)
	}
	var verdict string
	p := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()["RlsweepVerdict"]
	if err := converter.GetDefaultDataConverter().FromPayload(p, &verdict); err != nil || verdict != res.Verdict {
		t.Errorf("RlsweepVerdict = %q (%v), want %q", verdict, err, res.Verdict)
	}
	recordHistory(t, e, run.WorkflowID, run.FirstExecutionRunID, "regression-"+res.Verdict+".json")
	return res
}

// recordHistory writes a workflow's history as JSON into $RLSWEEP_RECORD_HISTORIES, when it is set: how
// workflows/testdata/regression-*.json were recorded for the replay test.
func recordHistory(t *testing.T, e *env, workflowID, runID, name string) {
	t.Helper()
	dir := os.Getenv("RLSWEEP_RECORD_HISTORIES")
	if dir == "" {
		return
	}
	writeHistory(t, e, workflowID, runID, filepath.Join(dir, name))
}

// writeHistory writes a workflow run's history as JSON to path.
func writeHistory(t testing.TB, e *env, workflowID, runID, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hist := &historypb.History{}
	it := e.client.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		hist.Events = append(hist.Events, ev)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
