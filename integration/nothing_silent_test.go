//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// silentSpec writes a sweep spec whose trainer is the shell script testdata/silent/<script> (with args);
// body is the rest of the YAML after the trainer's command.
func (e *env) silentSpec(name, script string, args []string, body string) string {
	e.t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "silent", script))
	if err != nil {
		e.t.Fatal(err)
	}
	argv := fmt.Sprintf("[%q, %q", "/bin/sh", path)
	for _, a := range args {
		argv += fmt.Sprintf(", %q", a)
	}
	y := fmt.Sprintf("name: %s\ntrainer:\n  command: %s]\n", name, argv) + body
	p := filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// wantAll fails the test for each of want that out lacks.
func wantAll(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// onlyTrialFailed checks results.json: one trial, failed, with no objective, the error holding want,
// after one attempt (the failure is not retried).
func (e *env) onlyTrialFailed(t *testing.T, sweepID string, want ...string) {
	t.Helper()
	res := e.results(sweepID)
	if res.Status == workflows.PhaseCompleted || len(res.Trials) != 1 {
		t.Fatalf("results.json: status %s, %d trials; want not completed, one trial", res.Status, len(res.Trials))
	}
	tr := res.Trials[0]
	if tr.Outcome != results.OutcomeFailed || tr.Objective != nil {
		t.Errorf("trial %s: outcome %s, objective %v; want failed, none", tr.TrialID, tr.Outcome, tr.Objective)
	}
	wantAll(t, "the trial's error", tr.Error, want...)
	if n := e.segmentAttempts(sweepID, tr.TrialID); n != 1 {
		t.Errorf("trial %s: %d TrainSegment attempts, want 1 (never retried)", tr.TrialID, n)
	}
}

// segmentAttempts is the highest attempt a TrainSegment activity of the trial started.
func (e *env) segmentAttempts(sweepID, trialID string) int32 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := e.client.GetWorkflowHistory(ctx, workflows.TrialWorkflowID(sweepID, trialID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var most int32
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			e.t.Fatal(err)
		}
		if ev.EventType == enums.EVENT_TYPE_ACTIVITY_TASK_STARTED {
			most = max(most, ev.GetActivityTaskStartedEventAttributes().Attempt)
		}
	}
	return most
}

// A trainer that exits 0 having written no metrics record (it logs with wandb.log) fails its trial, and
// the sweep, with a message naming the source, the file it read, the W&B lines in its output and the
// fix — never a completed trial with nothing measured.
func TestTrialWithoutMetricsFails(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "1")
	spec := e.silentSpec("no-metrics", "no-metrics.sh", nil, `  total_steps: 2000
seeds: [1]
parameters:
  lr: {value: 0.001}
probes: {enabled: false}
retries: {max_attempts: 3}
`)
	start := time.Now()
	out, code := e.cli("submit", spec, "--watch")
	t.Logf("submit --watch exited %d after %s:\n%s", code, time.Since(start).Round(time.Millisecond), out)
	if code == 0 {
		t.Fatalf("submit --watch exited 0, want the sweep to fail:\n%s", out)
	}
	msg := []string{"the trainer exited 0 without writing a single metrics record, so the trial has no objective",
		"metrics source jsonl read RLSWEEP_METRICS_FILE (", `its output has "wandb:" lines`,
		"`metrics: {source: wandb}`", "JSON lines go to $RLSWEEP_METRICS_FILE"}
	wantAll(t, "watch output", out, append([]string{"sweep " + sweepIDFrom(t, out) + " failed", "last failure  0-s1: "}, msg...)...)
	e.onlyTrialFailed(t, sweepIDFrom(t, out), msg...)
}

// A trainer whose records never carry the objective (CleanRL's charts/episodic_return, the metric
// episodic_return) fails once its records pass the diagnostics warm-up, while it still runs: the keys it
// wrote and the nearest one are in the trial's error, and watch and status show it at the sweep level.
func TestTrialObjectiveNeverReported(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "1")
	spec := e.silentSpec("no-objective", "cleanrl-keys.sh", nil, `  total_steps: 1000000
  grace_period: 2s
metric: {name: episodic_return, goal: maximize}
diagnostics: {warmup_steps: 5000}
seeds: [1]
parameters:
  lr: {value: 0.001}
probes: {enabled: false}
`)
	start := time.Now()
	out, code := e.cli("submit", spec, "--watch")
	took := time.Since(start)
	t.Logf("submit --watch exited %d after %s:\n%s", code, took.Round(time.Millisecond), out)
	if code == 0 {
		t.Fatalf("submit --watch exited 0, want the sweep to fail:\n%s", out)
	}
	sweepID := sweepIDFrom(t, out)
	msg := []string{`metric "episodic_return": no record of the trial carried the objective's metric by step`,
		"(the diagnostics warm-up ends at step 5000)", "its records carry charts/episodic_return, losses/value_loss",
		`did you mean "charts/episodic_return"?`, "fix: set metric.name"}
	wantAll(t, "watch output", out, append([]string{"sweep " + sweepID + " failed", "last failure  0-s1: "}, msg...)...)
	status, code := e.cli("status", sweepID)
	if code != 0 {
		t.Errorf("status exited %d", code)
	}
	wantAll(t, "status", status, workflows.PhaseFailed, "last failure  0-s1: ", `did you mean "charts/episodic_return"?`)
	e.onlyTrialFailed(t, sweepID, msg...)
	if took > time.Minute {
		t.Errorf("the sweep took %s: the trial was not failed at the warm-up", took)
	}
}

// An external trainer that does not speak the probe protocol is recognised after one run: the probe
// stage stops at once, the sweep ends probe_failed naming RLSWEEP_PROBE_RESULT and the fix, and the
// trainer ran once (it counts its runs in a file) — not ten times.
func TestProbeStageStopsAfterOneRun(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "1")
	runs := filepath.Join(e.dir, "runs.txt")
	spec := e.silentSpec("no-protocol", "no-probe-protocol.sh", []string{runs}, `  total_steps: 2000
seeds: [1]
parameters:
  lr: {value: 0.001}
`)
	start := time.Now()
	out, code := e.cli("submit", spec, "--watch")
	t.Logf("submit --watch exited %d after %s:\n%s", code, time.Since(start).Round(time.Millisecond), out)
	if code == 0 {
		t.Fatalf("submit --watch exited 0, want the probe stage to stop the sweep:\n%s", out)
	}
	sweepID := sweepIDFrom(t, out)
	wantAll(t, "watch output", out, "probe stage failed, no trial started",
		"the trainer does not speak the probe protocol: it exited 0 on probe 1, its first probe run, without writing a result to RLSWEEP_PROBE_RESULT",
		"the stage stopped there and ran no other probe", "docs/probes.md", "`probes: {enabled: false}`")
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 1 || lines[0] != "run probe=1" {
		t.Errorf("the trainer ran %d times (%q), want once, on probe 1", len(lines), lines)
	}
	probes, children, stage := e.probeStage(sweepID)
	if probes != 1 || children != 0 {
		t.Errorf("history: %d RunProbe, %d trials started; want 1 and 0", probes, children)
	}
	status, _ := e.cli("status", sweepID)
	wantAll(t, "status", status, workflows.PhaseProbeFailed)
	t.Logf("probe stage: %s", stage.Round(time.Millisecond))
}
