//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// A 12-trial sweep of the scripted trainer, two segments each, served by two worker processes.
func TestTwelveTrialSweepAcrossTwoWorkers(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "3", "--keep-scratch")
	e.startWorker("b", "--slots", "3", "--keep-scratch")
	spec := e.spec("twelve", `
  total_steps: 20000
  segment_steps: 10000
method: grid
seeds: [1, 2]
parameters:
  lr: {values: [3.0e-4, 1.0e-3, 3.0e-3]}
  clip: {values: [0.1, 0.2]}
  sleep_ms: {value: 20}
  checkpoint_every: {value: 4}
probes: {enabled: false}
concurrency: 6
`)
	out, code := e.cli("submit", spec, "--watch")
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)
	if !strings.Contains(out, "http://localhost:8233/namespaces/default/workflows/") || !strings.Contains(out, "results:") {
		t.Errorf("submit --watch output lacks the Web UI URL or the results path:\n%s", out)
	}
	res := e.results(sweepID)
	if got, want := len(res.Trials), 12; got != want {
		t.Fatalf("results.json has %d trials, want %d", got, want)
	}
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != 20000 || tr.Segments != 2 || tr.Objective == nil {
			t.Errorf("trial %s: outcome %s, steps %d, segments %d, objective %v; want completed, 20000, 2, set",
				tr.TrialID, tr.Outcome, tr.Steps, tr.Segments, tr.Objective)
		}
		if len(tr.Warnings) > 0 { // the trainer stops at each segment's end with a checkpoint
			t.Errorf("trial %s: warnings %q, want none", tr.TrialID, tr.Warnings)
		}
		checkSteps(t, e, sweepID, tr.TrialID, 1000, 20000, 1000)
	}
	recordHistory(t, e, sweepID, "", "sweep-completed.json")
	recordHistory(t, e, workflows.TrialWorkflowID(sweepID, res.Trials[0].TrialID), "", "trial-completed.json")
	// The six trials after the first six waited as standby trials; each was released by the worker
	// whose trainer held its place as that trainer exited (or, had that signal failed, by the sweep),
	// or handed its place on the worker where its first segment was parked (told so: HandedOver).
	byWorker := 0
	for _, tr := range res.Trials {
		standby, releases, handed := releasesOf(t, e, workflows.TrialWorkflowID(sweepID, tr.TrialID))
		if !standby {
			continue
		}
		if len(releases) == 0 && !handed {
			t.Errorf("standby trial %s trained without a release or a hand-over of its parked segment", tr.TrialID)
		}
		if handed || len(releases) > 0 && !releases[0].FromSweep {
			byWorker++
			recordHistory(t, e, workflows.TrialWorkflowID(sweepID, tr.TrialID), "", "trial-standby.json")
		}
	}
	if byWorker == 0 {
		t.Errorf("no standby trial was released by a worker's hand-off")
	}
	for _, w := range []string{"a", "b"} {
		if n := trialDirs(t, e.dir+"/work-"+w); n == 0 {
			t.Errorf("worker %s ran no trial; want the two workers to share the sweep", w)
		}
	}
}

// checkSteps asserts a trial's stored metrics stream holds every step from first to last, once.
func checkSteps(t *testing.T, e *env, sweepID, trialID string, first, last, every int64) {
	t.Helper()
	want := first
	sc := bufio.NewScanner(bytes.NewReader(storedMetrics(t, e.store, sweepID, trialID)))
	for sc.Scan() {
		rec, err := metrics.ParseJSONLine(sc.Bytes())
		if err != nil {
			t.Errorf("trial %s: stored line %q: %v", trialID, sc.Text(), err)
			return
		}
		if rec.Step != want {
			t.Errorf("trial %s: stored step %d, want %d (duplicate or missing step)", trialID, rec.Step, want)
			return
		}
		want += every
	}
	if want != last+every {
		t.Errorf("trial %s: stored steps end at %d, want %d", trialID, want-every, last)
	}
}

func trialDirs(t *testing.T, workDir string) int {
	n := 0
	_ = walkDirs(workDir, func(name string) {
		if strings.HasPrefix(name, "seg") {
			n++
		}
	})
	return n
}

// releasesOf says whether a trial workflow started as a standby trial, the releases it was sent, in
// order, and whether its parked first segment was handed its place (it ended having trained).
func releasesOf(t *testing.T, e *env, workflowID string) (standby bool, releases []workflows.Release, handed bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := e.client.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var parked int64 // the parked segment's scheduled event
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			var in workflows.TrialInput
			if err := json.Unmarshal(a.GetInput().GetPayloads()[0].GetData(), &in); err != nil {
				t.Fatalf("%s: input: %v", workflowID, err)
			}
			standby = in.Standby
		}
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalRelease {
			var r workflows.Release
			if err := json.Unmarshal(a.GetInput().GetPayloads()[0].GetData(), &r); err != nil {
				t.Fatalf("%s: release: %v", workflowID, err)
			}
			releases = append(releases, r)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && strings.HasSuffix(a.GetTaskQueue().GetName(), "/parked") {
			parked = ev.GetEventId()
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && a.GetScheduledEventId() == parked {
			var res activities.SegmentResult
			if err := json.Unmarshal(a.GetResult().GetPayloads()[0].GetData(), &res); err != nil {
				t.Fatalf("%s: parked segment's result: %v", workflowID, err)
			}
			handed = !res.Unhanded
		}
	}
	return standby, releases, handed
}
