//go:build integration

package integration

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
)

// What the CLI says about a sweep that does not exist and about cancelling one that has ended, with a
// real server to ask.
func TestCLIMissingAndEndedSweeps(t *testing.T) {
	e := newEnv(t)
	e.startWorker("w", "--slots", "2")
	const missing = "sweep/nosuch/abc123"
	for _, cmd := range [][]string{{"results", missing}, {"report", "-o", e.dir + "/r.html", missing}, {"status", missing},
		{"watch", missing}, {"status", missing + "/0-s1"}} {
		out, code := e.cli(cmd...)
		if code != 1 || !strings.Contains(out, missing+" does not exist") || strings.Contains(out, "workflow not found") {
			t.Errorf("%s of a missing sweep exited %d, want 1 and %q in:\n%s", cmd[0], code, missing+" does not exist", out)
		}
	}
	if out, code := e.cli("cancel", missing); code != 1 || !strings.Contains(out, "cancel "+missing+": the sweep does not exist") {
		t.Errorf("cancel of a missing sweep exited %d, want 1 and that it does not exist:\n%s", code, out)
	}

	spec := e.spec("quick", `
  total_steps: 2000
method: grid
seeds: [1]
parameters:
  sleep_ms: {value: 1}
probes: {enabled: false}
`)
	out, code := e.cli("submit", "--watch", spec)
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, out)
	}
	sweepID := sweepIDFrom(t, out)
	out, code = e.cli("cancel", sweepID)
	if code != 1 || !strings.Contains(out, "the sweep already ended at ") || !strings.Contains(out, ", completed: nothing to cancel") ||
		strings.Contains(out, "cancel requested") {
		t.Errorf("cancel of a completed sweep exited %d, want 1 and that it already ended, completed:\n%s", code, out)
	}
	if out, code := e.cli("pause", sweepID); code != 1 || !strings.Contains(out, "pause: sweep "+sweepID+" has ended (completed)") {
		t.Errorf("pause of a completed sweep exited %d, want 1 and that it has ended:\n%s", code, out)
	}
	if out, code := e.cli("pause", missing); code != 1 || !strings.Contains(out, missing+" does not exist") {
		t.Errorf("pause of a missing sweep exited %d, want 1 and that it does not exist:\n%s", code, out)
	}
	// The trials it names are those the visibility store lists, which is written asynchronously and may
	// not list the trial yet: ask again until it does.
	want := "trial 9-s1 of sweep " + sweepID + " does not exist; want one of its 1 trials: 0-s1"
	eventually(30*time.Second, func() bool {
		out, code = e.cli("status", sweepID+"/9-s1")
		return code == 1 && strings.Contains(out, want)
	})
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("status of a trial the sweep does not have exited %d, want 1 and %q in:\n%s", code, want, out)
	}
}

// Ctrl-C during `submit --watch` stops the watching only: the CLI says the sweep goes on, prints the
// commands to follow and to cancel it, and exits 130; the sweep is still running.
func TestSubmitWatchInterrupted(t *testing.T) {
	e := newEnv(t)
	e.startWorker("w", "--slots", "1")
	spec := e.spec("longrun", `
  total_steps: 1000000
method: grid
seeds: [1]
parameters:
  sleep_ms: {value: 200}
probes: {enabled: false}
`)
	cmd := exec.Command(rlsweepBin, "--address", e.addr, "--store", e.store.Root(), "submit", "--watch", spec)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	waitFor(t, time.Minute, "the first progress line", func() bool { return strings.Contains(out.String(), "running") })
	sweepID := sweepIDFrom(t, out.String())
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if code != 130 {
		t.Errorf("submit --watch interrupted exited %d, want 130:\n%s", code, got)
	}
	for _, want := range []string{"sweep " + sweepID + " goes on running on the server",
		"follow it: rlsweep --address " + e.addr + " --store " + e.store.Root() + " watch " + sweepID,
		"cancel it: rlsweep --address " + e.addr + " --store " + e.store.Root() + " cancel " + sweepID} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "context canceled") {
		t.Errorf("output says context canceled:\n%s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	desc, err := e.client.DescribeWorkflowExecution(ctx, sweepID, "")
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.WorkflowExecutionInfo.Status; st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("sweep %s is %s after the watch was interrupted, want running", sweepID, st)
	}
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
