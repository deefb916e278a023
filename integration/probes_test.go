//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/workflows"
)

// probeStage reads a sweep's history: how many RunProbe activities were scheduled, whether any child
// workflow was started, and the wall time from the first probe scheduled to RecordProbes completed.
func (e *env) probeStage(sweepID string) (probes int, children int, stage time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := e.client.GetWorkflowHistory(ctx, sweepID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var first, last time.Time
	scheduled := map[int64]string{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			e.t.Fatal(err)
		}
		switch ev.EventType {
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			name := ev.GetActivityTaskScheduledEventAttributes().ActivityType.Name
			scheduled[ev.EventId] = name
			if name == "RunProbe" {
				probes++
				if first.IsZero() {
					first = ev.EventTime.AsTime()
				}
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if scheduled[ev.GetActivityTaskCompletedEventAttributes().ScheduledEventId] == "RecordProbes" {
				last = ev.EventTime.AsTime()
			}
		case enums.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			children++
		}
	}
	return probes, children, last.Sub(first)
}

// A sweep whose built-in trainer is broken (inject_bug no-discount) stops in the probe stage: probe 3
// fails while 1–2 pass, the sweep ends probe_failed, and its history holds ten RunProbe activities and
// no StartChildWorkflowExecutionInitiated event: no trial was started.
func TestProbeStageStopsBrokenTrainer(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	p := filepath.Join(e.dir, "broken.yaml")
	spec := `name: broken
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 20000}
seeds: [1, 2]
parameters:
  inject_bug: {value: no-discount}
  lr: {values: [3.0e-4, 1.0e-3]}
`
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := e.cli("submit", p, "--watch")
	if code == 0 {
		t.Fatalf("submit --watch exited 0, want a failure:\n%s", out)
	}
	sweepID := sweepIDFrom(t, out)
	for _, want := range []string{"probe 3 fails while probes 1–2 pass", "V(0) = 1.000, want 0.5"} {
		if !strings.Contains(out, want) {
			t.Errorf("watch output lacks %q:\n%s", want, out)
		}
	}
	probes, children, stage := e.probeStage(sweepID)
	if probes != 10 || children != 0 {
		t.Errorf("history: %d RunProbe, %d StartChildWorkflowExecutionInitiated; want 10 and 0", probes, children)
	}
	var rep activities.ProbeReport
	e.readJSON(artifacts.ProbesKey(sweepID), &rep)
	if rep.Passed || rep.Failed != "3" {
		t.Errorf("probes.json: passed %v, failed %q; want probe 3 failed", rep.Passed, rep.Failed)
	}
	status, _ := e.cli("status", sweepID, "--json")
	if !strings.Contains(status, workflows.PhaseProbeFailed) {
		t.Errorf("status does not show %s:\n%s", workflows.PhaseProbeFailed, status)
	}
	t.Logf("broken sweep stopped by its probe stage in %s: %s", stage.Round(time.Millisecond), rep.Diagnosis)
}

// A healthy built-in sweep passes its probe stage and runs its trials; the stage's wall time (first
// RunProbe scheduled to RecordProbes completed) is what the probes add to a sweep (docs/BENCHMARKS.md).
func TestProbeStageHealthySweep(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	p := filepath.Join(e.dir, "healthy.yaml")
	spec := `name: healthy
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 2048}
seeds: [1]
parameters:
  lr: {values: [3.0e-4, 1.0e-3]}
`
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepID := e.submit(p, "--watch")
	probes, children, stage := e.probeStage(sweepID)
	if probes != 10 || children != 2 {
		t.Errorf("history: %d RunProbe, %d children; want 10 and 2", probes, children)
	}
	var rep activities.ProbeReport
	e.readJSON(artifacts.ProbesKey(sweepID), &rep)
	if !rep.Passed {
		t.Errorf("probes.json: %s", rep.Diagnosis)
	}
	t.Logf("healthy built-in sweep: probe stage took %s (%s)", stage.Round(time.Millisecond), rep.Diagnosis)
	recordHistory(t, e, sweepID, "", "sweep-probes.json")
}

// The numpy example trainer passes the probe protocol through a sweep's probes.command, and its
// deliberately broken copy stops the sweep at probe 3. Needs Debian's python3-numpy for
// /usr/bin/python3 (scripts/install-python-deps.sh, run by `make test-integration`).
func TestProbeStageExternalNumpy(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		t.Fatalf("/usr/bin/python3 cannot import numpy (run scripts/install-python-deps.sh): %v", err)
	}
	script, err := filepath.Abs("../examples/probes")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	for _, c := range []struct {
		file string
		ok   bool
	}{{"numpy_ppo.py", true}, {"numpy_ppo_broken.py", false}} {
		t.Run(c.file, func(t *testing.T) {
			spec := e.spec(strings.TrimSuffix(strings.ReplaceAll(c.file, "_", "-"), ".py"), `
  total_steps: 2000
seeds: [1]
parameters:
  sleep_ms: {value: 1}
probes:
  command: ["/usr/bin/python3", "`+filepath.Join(script, c.file)+`"]
`)
			out, code := e.cli("submit", spec, "--watch")
			sweepID := sweepIDFrom(t, out)
			var rep activities.ProbeReport
			e.readJSON(artifacts.ProbesKey(sweepID), &rep)
			_, children, stage := e.probeStage(sweepID)
			t.Logf("%s: exit %d, probe stage %s: %s", c.file, code, stage.Round(time.Millisecond), rep.Diagnosis)
			if c.ok && (code != 0 || !rep.Passed || children != 1) {
				t.Errorf("exit %d, passed %v, %d children; want 0, true, 1:\n%s", code, rep.Passed, children, out)
			}
			if !c.ok && (code == 0 || rep.Failed != "3" || children != 0) {
				t.Errorf("exit %d, failed %q, %d children; want non-zero, probe 3, 0:\n%s", code, rep.Failed, children, out)
			}
		})
	}
}

// Probes are on by default, so an external trainer that follows the trainer contract but not the probe
// protocol (the scripted trainer: it trains and exits 0, writing no probe result), and one that crashes
// at start, stop the sweep in its probe stage after their first probe run. The message must say so, not
// diagnose a broken value loss, and point to docs/probes.md and `probes: {enabled: false}`.
func TestProbeStageTrainerWithoutProtocol(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "2")
	for _, c := range []struct {
		name, trainer string
		want          []string
	}{
		{"plain", "", []string{"does not speak the probe protocol", "on probe 1, its first probe run"}},
		{"crash", `
probes:
  command: ["sh", "-c", "echo 'ModuleNotFoundError: torch' >&2; exit 1"]`, []string{"the trainer crashed on probe 1", "log tail: ModuleNotFoundError: torch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := e.spec("no-protocol-"+c.name, `
  total_steps: 2000
seeds: [1]
parameters:
  sleep_ms: {value: 1}`+c.trainer+"\n")
			out, code := e.cli("submit", spec, "--watch")
			if code == 0 {
				t.Fatalf("submit --watch exited 0, want the probe stage to stop the sweep:\n%s", out)
			}
			for _, want := range append(c.want, "docs/probes.md", "`probes: {enabled: false}`") {
				if !strings.Contains(out, want) {
					t.Errorf("watch output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "value loss or optimiser broken") {
				t.Errorf("watch output blames the value loss:\n%s", out)
			}
			probes, children, _ := e.probeStage(sweepIDFrom(t, out))
			if probes != 1 || children != 0 {
				t.Errorf("%d RunProbe, %d trials started; want 1 (the stage stops after the first run) and none", probes, children)
			}
		})
	}
}
