package workflows_test

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/workflows"
)

// The histories in testdata/ were recorded from a real Temporal dev server (temporal CLI v1.5.1) running
// `rlsweep worker` and the scripted trainer (integration/testdata/scripted-trainer):
//
//	sweep-completed.json        4 trials, concurrency 2, two segments each, completed
//	trial-completed.json        one Trial of that sweep: two TrainSegment activities, the parent signalled
//	sweep-cancelled.json        3 trials, concurrency 2, `rlsweep cancel` while two trials ran
//	trial-cancelled.json        one Trial cancelled by that sweep mid-segment
//	sweep-updates.json          3 trials; pause, a rejected second pause, set-concurrency 1 and resume
//	trial-diverged.json         a Trial stopped by non_finite (TrialDiverged, search attributes upserted)
//	trial-retried.json          a Trial whose trainer crashed once (TrainerCrashed, attempt 2 succeeded)
//	sweep-continued-as-new-run1.json, -run2.json
//	                            6 trials on a server started with
//	                            --dynamic-config-value limit.historyCount.suggestContinueAsNew=60:
//	                            the first run continued-as-new, the second finished
//	sweep-carried-check-run*.json
//	                            the runs of integration's TestCarriedOverTrialTerminatedByHand: trials
//	                            carried over a continue-as-new, terminated by hand, found by CheckTrials
//	sweep-report-on-request-run*.json
//	                            the same test after trials reported by signal only when asked
//	                            (report-on-request): the first run asks its running trials at the boundary
//	sweep-carried-soon-run*.json
//	                            the same test after carried-check-soon: the second run looks up its
//	                            carried trials 5 s after it starts (RLSWEEP_RECORD_HISTORIES=DIR)
//	sweep-timed-flush-run*.json the same test after timed-results-flush: a goroutine's timer marks
//	                            pending results due for storing within a minute
//	sweep-cancel-check.json     integration's TestCancelStopsEveryTrainer after cancel-check-closed: 8 of
//	                            16 trials running at `rlsweep cancel`, the cancel requests awaited
//	trial-cancel-steps.json     integration's TestCancelledTrialKeepsItsSteps after cancel-steps: a
//	                            one-segment Trial cancelled while its trainer (ignoring SIGTERM) ran; the
//	                            cancelled TrainSegment awaited, its step reported
//	sweep-all-failed.json       integration's TestEveryTrialFailedSweepFails after all-failed-fails: both
//	                            trials crashed with max_attempts 1, the sweep ends with phase failed
//	regression-pass.json, regression-regressed.json
//	                            the two Regression runs of integration's TestRegressionScheduleTriggeredTwice
//	                            (recorded by running it with RLSWEEP_RECORD_HISTORIES=DIR): LoadSpec, the
//	                            pinned Sweep child, CompareBaseline, the verdict upserted
//	regression-random-id-*.json the same after sweep-id-random-bits (the pinned sweep's short ID from
//	                            the run ID's random last digits; the spec's regression thresholds)
//
// Replaying them with the workflows as registered by the worker fails when a change to Sweep, Trial or
// Regression is not deterministic. A change that is meant to alter the command sequence needs
// workflow.GetVersion (or new recordings, if no sweep that ran the old code can still be running).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 11 {
		t.Fatalf("found %d recorded histories in testdata/, want at least 11", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.Sweep, workflow.RegisterOptions{Name: "Sweep"})
			r.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: "Trial"})
			r.RegisterWorkflowWithOptions(workflows.Regression, workflow.RegisterOptions{Name: workflows.WorkflowTypeRegression})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
				t.Fatalf("replay %s: %v", file, err)
			}
		})
	}
}
