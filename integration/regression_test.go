//go:build integration

package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/workflows"
)

// regressionSpec is a 1-configuration, 4-seed sweep whose reward plateau is quality; noise makes the
// seeds differ, the seeds make every run of it the same.
func regressionSpec(quality int) string {
	return `
  total_steps: 20000
  segment_steps: 20000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1, 2, 3, 4]
parameters:
  quality: {value: ` + strconv.Itoa(quality) + `}
  noise: {value: 2}
  sleep_ms: {value: 5}
probes: {enabled: false}
concurrency: 4
`
}

// A schedule triggered twice: the normal trainer passes against the baseline, a degraded one (a lower
// reward plateau, as a trainer change that costs return would give) regresses. Real runs throughout.
func TestRegressionScheduleTriggeredTwice(t *testing.T) {
	e := newEnv(t)
	e.startWorker("w", "--slots", "4")
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer hook.Close()

	normal := e.spec("nightly", regressionSpec(100))
	out, code := e.cli("submit", normal, "--watch")
	if code != 0 {
		t.Fatalf("baseline sweep exited %d:\n%s", code, out)
	}
	if out, code := e.cli("baseline", "set", sweepIDFrom(t, out)); code != 0 {
		t.Fatalf("baseline set exited %d:\n%s", code, out)
	}
	if out, code := e.cli("schedule", "create", "nightly", normal, "--cron", "0 3 * * *", "--baseline", "nightly",
		"--webhook", hook.URL); code != 0 {
		t.Fatalf("schedule create exited %d:\n%s", code, out)
	}
	if got := runRegression(t, e, 1); got.Verdict != activities.VerdictPass {
		t.Errorf("normal trainer: verdict %q, want pass", got.Verdict)
	}

	// The trainer changes between two nights: the pinned spec now gets a lower plateau.
	degraded, err := os.ReadFile(e.spec("nightly", regressionSpec(80)))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Put(context.Background(), "schedules/nightly/spec.yaml", strings.NewReader(string(degraded))); err != nil {
		t.Fatal(err)
	}
	got := runRegression(t, e, 2)
	if got.Verdict != activities.VerdictRegressed || got.Regressed != 1 {
		t.Errorf("degraded trainer: %+v, want verdict regressed with 1 configuration", got)
	}
	var rep activities.RegressionReport
	e.readJSON(artifacts.SweepKey(got.SweepID, "regression.json"), &rep)
	if len(rep.Configs) != 1 || !(rep.Configs[0].DiffCI[1] < 0) || rep.Configs[0].ProbImprovement != 0 {
		t.Errorf("regression.json configs = %+v, want one with an interval below 0 and P(improvement) 0", rep.Configs)
	}
	if n := posts.Load(); n != 2 {
		t.Errorf("webhook received %d posts, want 2", n)
	}
	if out, code := e.cli("schedule", "delete", "nightly"); code != 0 {
		t.Errorf("schedule delete exited %d:\n%s", code, out)
	}
}

// runRegression triggers the schedule, waits for its n-th run to end, and checks the verdict search
// attribute matches the result.
func runRegression(t *testing.T, e *env, n int) workflows.RegressionResult {
	t.Helper()
	if out, code := e.cli("schedule", "trigger", "nightly"); code != 0 {
		t.Fatalf("schedule trigger exited %d:\n%s", code, out)
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
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
