//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// A sweep that continues-as-new many times while trials run across each boundary: the trials that
// outlive a run report to the next one, and the sweep completes with every trial recorded once.
func TestContinueAsNewWithRunningTrials(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "6")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sweepID := runCANSweep(ctx, t, e, "canew", "can1", 30, 6, 700)
	if got := len(e.results(sweepID).Trials); got != 30 {
		t.Errorf("results.json has %d trials, want 30", got)
	}
	runs := e.sweepRuns(t, sweepID, false)
	// How many runs there are depends on how fast the trials end against the event cap (the first run
	// starts most trials at once); what must hold is that a run continued-as-new with trials running
	// and the next run took them over.
	cans, carried := 0, 0
	for _, r := range runs {
		ex := r.info
		if ex.Status == enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			cans++
		}
		if in := sweepRunInput(ctx, t, e, sweepID, ex.Execution.RunId); in.State != nil {
			carried += len(in.State.Running)
		}
	}
	t.Logf("sweep ran as %d runs, %d trials carried over a continue-as-new", cans+1, carried)
	// A trial that a run started and that ended before the run's ask to report reached it (the signal
	// failed) has its end taken in by that run: the next run would count it as running until its first
	// CheckTrials. (One carried over from an earlier run is not this run's child; CheckTrials finds it.)
	untold := 0
	for _, r := range runs {
		asked, started := map[int64]string{}, map[string]bool{}
		for _, ev := range r.events {
			if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a.GetSignalName() == workflows.SignalReportToSweep {
				asked[ev.EventId] = a.GetWorkflowExecution().GetWorkflowId()
			}
			if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				started[a.GetWorkflowId()] = true
			}
		}
		for _, ev := range r.events {
			id, ok := asked[ev.GetSignalExternalWorkflowExecutionFailedEventAttributes().GetInitiatedEventId()]
			if !ok || !started[id] {
				continue
			}
			untold++
			if !slices.ContainsFunc(r.events, func(c *historypb.HistoryEvent) bool {
				return c.GetChildWorkflowExecutionCompletedEventAttributes().GetWorkflowExecution().GetWorkflowId() == id
			}) {
				t.Errorf("run %s: %s ended before it was asked to report, and the run closed without its end", r.info.Execution.RunId, id)
			}
		}
	}
	t.Logf("%d trials ended before a closing run's ask to report reached them", untold)
	if cans < 1 || carried < 1 {
		t.Errorf("sweep continued-as-new %d times carrying %d running trials, want at least one run to hand running trials to the next", cans, carried)
	}
	// `rlsweep list` shows the sweep once, by its last run, with its first run's start.
	var first time.Time
	for _, r := range runs {
		if st := r.info.StartTime.AsTime(); first.IsZero() || st.Before(first) {
			first = st
		}
	}
	ls := e.listSweeps("--name", "canew")
	if len(ls) != 1 || ls[0].SweepID != sweepID || ls[0].State != "completed" || ls[0].Trials != 30 || ls[0].Ended == nil {
		t.Fatalf("list --name canew: %+v, want %s once, completed, 30 trials, ended", ls, sweepID)
	}
	if d := first.Sub(ls[0].Started); d < 0 || d > 5*time.Second {
		t.Errorf("list: started %s, want shortly before the first run's start %s", ls[0].Started, first)
	}
}

// TestContinueAsNewOnAWorkerThatCachesNoRun: a worker with --workflow-cache 0 replays each run's whole
// history at every workflow task, so every task that would close a run is one that replayed it. The
// run waits for a task of its own (a 1 ms timer, or a trial's end before it fires) at most three times,
// then closes: the sweep completes
// across its runs, every closing run records four side effects (one per attempt) and three timers
// between them, and each of its tasks replays the earlier ones' side effects and timers without a
// nondeterminism failure (the last closing task, replaying too, may be refused when a trial ends
// meanwhile, and is tried again).
func TestContinueAsNewOnAWorkerThatCachesNoRun(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "4", "--workflow-cache", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sweepID := runCANSweep(ctx, t, e, "nocache", "nocache1", 16, 4, 500)
	cans := 0
	for _, r := range e.sweepRuns(t, sweepID, false) {
		if r.info.Status != enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			continue
		}
		cans++
		markers, timers, failed := 0, 0, 0
		for _, ev := range r.events {
			switch {
			case ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "SideEffect":
				markers++
			case markers > 0 && ev.EventType == enums.EVENT_TYPE_TIMER_STARTED:
				timers++
			case ev.EventType == enums.EVENT_TYPE_WORKFLOW_TASK_FAILED:
				// The task that closes after the third wait replays too, and a trial that ends meanwhile
				// gets it refused (UnhandledCommand): it is tried again. Any other failure is a fault.
				if a := ev.GetWorkflowTaskFailedEventAttributes(); a.GetCause() != enums.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND {
					t.Errorf("run %s: workflow task failed (%s): %v", r.info.Execution.RunId, a.GetCause(), a.GetFailure().GetMessage())
				}
				failed++
			}
		}
		t.Logf("run %s: %d closing tasks refused because a trial ended meanwhile", r.info.Execution.RunId, failed)
		if markers != 4 || timers != 3 {
			t.Errorf("run %s closed after %d side effects and %d timers between them, want 4 and 3 (three waits for a task that did not replay)",
				r.info.Execution.RunId, markers, timers)
		}
	}
	if cans < 1 {
		t.Errorf("sweep never continued-as-new, want at least one run closed")
	}
}

// runCANSweep runs a sweep of the scripted trainer named name, as ID <name>/<id>, over seeds 1..seeds
// at concurrency conc, each trial sleeping sleepMS, whose runs continue-as-new at 60 events, and checks
// that every trial completed. It returns the sweep's ID.
func runCANSweep(ctx context.Context, t *testing.T, e *env, name, id string, seeds, conc, sleepMS int) string {
	t.Helper()
	list := make([]string, seeds)
	for i := range list {
		list[i] = fmt.Sprint(i + 1)
	}
	path := e.spec(name, fmt.Sprintf(`
  total_steps: 3000
seeds: [%s]
parameters:
  sleep_ms: {value: %d}
  checkpoint_every: {value: 0}
probes: {enabled: false}
concurrency: %d
`, strings.Join(list, ","), sleepMS, conc))
	sweepID, run := startSweepWith(ctx, t, e, path, id, workflows.SweepInput{ContinueAsNewAfter: 60})
	var res workflows.SweepResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if res.Counts["completed"] != seeds {
		t.Errorf("sweep counts %v, want %d completed", res.Counts, seeds)
	}
	return sweepID
}

// sweepRunInput is the SweepInput one run of the sweep started with.
func sweepRunInput(ctx context.Context, t *testing.T, e *env, sweepID, runID string) workflows.SweepInput {
	t.Helper()
	it := e.client.GetWorkflowHistory(ctx, sweepID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ev, err := it.Next()
	if err != nil {
		t.Fatalf("history of run %s: %v", runID, err)
	}
	var in workflows.SweepInput
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		t.Fatalf("run %s: first event is %s, want WorkflowExecutionStarted", runID, ev.EventType)
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(attrs.Input, &in); err != nil {
		t.Fatalf("run %s: input: %v", runID, err)
	}
	return in
}

// listSweeps runs `rlsweep list --json` with args, retrying while the visibility store catches up
// (it is written asynchronously) until the listing is not empty.
func (e *env) listSweeps(args ...string) []listedSweep {
	e.t.Helper()
	var ls []listedSweep
	waitFor(e.t, 30*time.Second, "rlsweep list to show a sweep", func() bool {
		out, code := e.cli(append([]string{"list", "--json"}, args...)...)
		if code != 0 {
			e.t.Fatalf("list exited %d:\n%s", code, out)
		}
		ls = nil
		if err := json.Unmarshal([]byte(out), &ls); err != nil {
			e.t.Fatalf("list --json: %v in:\n%s", err, out)
		}
		return len(ls) > 0 && ls[0].State != "running"
	})
	return ls
}

// listedSweep is one entry of `rlsweep list --json`.
type listedSweep struct {
	SweepID string     `json:"sweep_id"`
	Name    string     `json:"name"`
	State   string     `json:"state"`
	Trials  int        `json:"trials"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended"`
}

// Trials carried over a continue-as-new that are terminated by hand never report; the new run finds
// them closed (CheckTrials, every TrialCheckInterval) and records them as failed, and the sweep ends.
func TestCarriedOverTrialTerminatedByHand(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "6")
	path := e.spec("carried", `
  total_steps: 3000
seeds: [1, 2, 3]
parameters:
  sleep_ms: {value: 100}
  checkpoint_every: {value: 0}
  hang_at: {values: [1000000000, 2000]}
probes: {enabled: false}
concurrency: 6
`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sweepID, run := startSweepWith(ctx, t, e, path, "carried1",
		workflows.SweepInput{ContinueAsNewAfter: 30, TrialCheckInterval: 2 * time.Second})
	// The three trials of configuration 0 finish; those of configuration 1 hang at step 2000.
	var st workflows.SweepStatus
	waitFor(t, 90*time.Second, "the sweep to continue-as-new with the hanging trials running", func() bool {
		v, err := e.client.QueryWorkflow(ctx, sweepID, "", workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil {
			return false
		}
		return st.Runs >= 2 && st.Counts["completed"] == 3 && len(st.Running) == 3
	})
	for _, id := range st.Running {
		if err := e.client.TerminateWorkflow(ctx, workflows.TrialWorkflowID(sweepID, id), "", "terminated by hand in a test"); err != nil {
			t.Fatalf("terminate %s: %v", id, err)
		}
	}
	var res workflows.SweepResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if res.Status != workflows.PhaseCompleted || res.Counts["completed"] != 3 || res.Counts["failed"] != 3 {
		t.Errorf("sweep ended %s with %v, want completed with 3 completed and 3 failed", res.Status, res.Counts)
	}
	for _, tr := range e.results(sweepID).Trials {
		if tr.Config == 1 && (tr.Outcome != "failed" || !strings.Contains(tr.Error, "terminated")) {
			t.Errorf("trial %s: %s %q, want failed, ended without reporting: terminated", tr.TrialID, tr.Outcome, tr.Error)
		}
	}
	if os.Getenv("RLSWEEP_RECORD_HISTORIES") != "" {
		runs := e.sweepRuns(t, sweepID, false)
		sort.Slice(runs, func(i, j int) bool { return runs[i].info.StartTime.AsTime().Before(runs[j].info.StartTime.AsTime()) })
		for i, r := range runs {
			recordHistory(t, e, sweepID, r.info.Execution.RunId, fmt.Sprintf("sweep-continued-as-new-run%d.json", i+1))
		}
	}
}

// startSweepWith starts the sweep of the spec at path as ID <name>/<id>, directly with the client rather
// than `rlsweep submit`, so that a test can set the knobs of in (ContinueAsNewAfter,
// TrialCheckInterval) that the CLI does not expose.
func startSweepWith(ctx context.Context, t *testing.T, e *env, path, id string, in workflows.SweepInput) (string, client.WorkflowRun) {
	t.Helper()
	spec, err := sweeps.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := sweeps.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	in.SweepID, in.Spec, in.SpecYAML = workflows.SweepWorkflowID(spec.Name, id), *spec, string(raw)
	// Attributes and memo as `rlsweep submit` sets them, so `rlsweep list` finds the sweep.
	run, err := e.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: in.SweepID, TaskQueue: workflows.ControlQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.AttrSweepID.ValueSet(in.SweepID),
			workflows.AttrSweepName.ValueSet(spec.Name), workflows.AttrKind.ValueSet("sweep")),
		Memo: map[string]any{workflows.MemoTrials: len(trials), workflows.MemoSubmitted: time.Now().UTC()},
	}, workflows.Sweep, in)
	if err != nil {
		t.Fatal(err)
	}
	return in.SweepID, run
}
