package workflows_test

import (
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/workflows"
)

// The histories in testdata/ were recorded from the current code on a real Temporal dev server (temporal
// CLI v1.5.1) by the integration tests, run with RLSWEEP_RECORD_HISTORIES=DIR (integration's
// recordHistory writes each into DIR):
//
//	sweep-completed.json        TestTwelveTrialSweepAcrossTwoWorkers: 12 trials of two segments each,
//	trial-completed.json        concurrency 6, two workers; one of its Trials (two TrainSegment activities)
//	trial-standby.json          and one of its standby Trials, its parked first segment handed its place on
//	                            a worker (the last such, or else one released by a worker's signal)
//	sweep-probes.json           TestProbeStageHealthySweep: the probe stage (ten RunProbe, RecordProbes),
//	                            then two trials of the built-in PPO
//	sweep-diverged.json         TestDiagnosticsStopDivergentTrials: 12 trials, 9 stopped by stop rules;
//	trial-diverged.json         one Trial stopped by non_finite (TrialDiverged, search attributes upserted)
//	sweep-cancelled.json        TestCancelStopsEveryTrainer: 8 of 16 trials running at `rlsweep cancel`,
//	                            the cancel requests awaited
//	trial-cancelled.json        TestCancelledTrialKeepsItsSteps: a one-segment Trial cancelled while its
//	                            trainer (ignoring SIGTERM) ran; the cancelled TrainSegment awaited
//	sweep-continued-as-new-run1.json, -run2.json
//	                            TestCarriedOverTrialTerminatedByHand: the first run asks its running trials
//	                            to report and continues-as-new; the second looks its carried trials up
//	                            (CheckTrials), some of them terminated by hand
//	sweep-all-failed.json       TestEveryTrialFailedSweepFails: both trials crashed with max_attempts 1,
//	                            the sweep ends with phase failed
//	sweep-asha.json             TestASHASweepPrunes: 12 trials under early_terminate asha, concurrency 2:
//	trial-pruned.json           every trial asks at its rungs, seeds wait for their siblings, 10 end pruned;
//	                            one pruned Trial (one segment, segment-end, segment-decision stop)
//	sweep-bayes.json            TestBayesSweepSearchesAndReruns: method bayes, 12 configurations on two
//	                            seeds with concurrency 4 (suggestions made from results as they arrive),
//	                            then the best two run again on a fresh seed
//	sweep-pbt.json              TestPBTSweepExploits: 4 pbt members of the built-in PPO, ready every 2048
//	trial-exploited.json        steps: they wait for one another at each ready step; one Trial that
//	                            exploited (AdoptCheckpoint before the segment after each exploit)
//	sweep-1000-run1.json.gz     BenchmarkOrchestration (integration), trials=1000/conc=16/trial_ms=1000, run
//	                            with RLSWEEP_BENCH_HISTORY=DIR: the sweep's first run, which continued-as-new
//	                            (longSweepRun), gzipped
//	regression-pass.json, regression-regressed.json
//	                            TestRegressionScheduleTriggeredTwice: LoadSpec, the pinned Sweep child,
//	                            CompareBaseline, the verdict upserted, DrawReport
//
// Replaying them with the workflows as registered by the worker fails when a change to Sweep, Trial or
// Regression alters the commands they emit. Before the first tagged release such a change records the
// histories again; after it, it follows the versioning policy of docs/architecture.md.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	long, err := filepath.Glob("testdata/*.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, long...)
	for _, want := range []string{longSweepRun, "sweep-probes.json", "trial-completed.json", "trial-diverged.json", "trial-cancelled.json",
		"sweep-cancelled.json", "sweep-continued-as-new-run1.json", "sweep-continued-as-new-run2.json", "regression-regressed.json",
		"sweep-asha.json", "trial-pruned.json", "sweep-bayes.json", "sweep-pbt.json", "trial-exploited.json"} {
		if !slices.Contains(files, filepath.Join("testdata", want)) {
			t.Errorf("testdata/%s is missing: the replay test needs a history of each kind", want)
		}
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if err := newReplayer().ReplayWorkflowHistory(nil, readHistory(t, file)); err != nil {
				t.Fatalf("replay %s: %v", file, err)
			}
		})
	}
}

// longSweepRun is the first run of a 1,000-trial sweep at concurrency 16 (BenchmarkOrchestration's
// trials=1000/conc=16/trial_ms=1000, recorded with RLSWEEP_BENCH_HISTORY): 4,269 events, 64 trials
// asked to report as it closed, one of which had ended (awaitEnded waits for its end).
const longSweepRun = "sweep-1000-run1.json.gz"

// BenchmarkReplayLongSweepRun is what a worker that has not cached a run of the sweep spends replaying
// its history before it can go on (the task after a refused close, a worker restart, a run moved to
// another worker): one op replays longSweepRun's whole history. See docs/BENCHMARKS.md.
func BenchmarkReplayLongSweepRun(b *testing.B) {
	h := readHistory(b, filepath.Join("testdata", longSweepRun))
	r := newReplayer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.ReplayWorkflowHistory(nil, h); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(h.Events)), "events")
}

// newReplayer is a replayer with the workflows registered as the worker registers them.
func newReplayer() worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Sweep, workflow.RegisterOptions{Name: "Sweep"})
	r.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: "Trial"})
	r.RegisterWorkflowWithOptions(workflows.Regression, workflow.RegisterOptions{Name: workflows.WorkflowTypeRegression})
	return r
}
