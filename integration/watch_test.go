//go:build integration

package integration

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `rlsweep watch` while the dev server is SIGKILLed for 15 s and restarted: the watch says the server
// is unreachable, keeps trying, follows the sweep again once the server is back and ends with its real
// final state. A second watch interrupted (SIGINT) during the outage exits 130 at once.
func TestWatchReconnects(t *testing.T) {
	e, srv := newKillableEnv(t)
	e.startWorker("a", "--slots", "2")
	spec := e.spec("watchrestart", `
  total_steps: 60000
  grace_period: 1s
  segment_steps: 20000
method: grid
seeds: [1, 2]
parameters:
  sleep_ms: {value: 500}
  checkpoint_every: {value: 5}
probes: {enabled: false}
concurrency: 2
retries: {max_attempts: 6}
`)
	sweepID := e.submit(spec, "--heartbeat-timeout", "5s")
	startWatch := func() (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(rlsweepBin, "--address", e.addr, "--store", e.store.Root(), "watch", sweepID)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out, &errOut
	}
	watch, out, errOut := startWatch()
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	interrupted, _, intErr := startWatch()
	time.Sleep(3 * time.Second)
	srv.Kill()
	t.Logf("dev server killed at %s", time.Now().Format(time.TimeOnly))
	time.Sleep(8 * time.Second)
	_ = interrupted.Process.Signal(syscall.SIGINT)
	sent := time.Now()
	intDone := make(chan error, 1)
	go func() { intDone <- interrupted.Wait() }()
	select {
	case <-intDone:
		if code := interrupted.ProcessState.ExitCode(); code != 130 {
			t.Errorf("watch interrupted during the outage exited %d, want 130; stderr:\n%s", code, intErr)
		}
		if d := time.Since(sent); d > 3*time.Second {
			t.Errorf("watch interrupted during the outage took %s to exit, want < 3s", d)
		}
	case <-time.After(15 * time.Second):
		_ = interrupted.Process.Kill()
		t.Errorf("watch interrupted during the outage still running 15s after SIGINT; stderr:\n%s", intErr)
	}
	time.Sleep(7 * time.Second)
	select {
	case <-done:
		t.Fatalf("watch exited %d during the outage:\nstdout:\n%s\nstderr:\n%s", watch.ProcessState.ExitCode(), out, errOut)
	default:
	}
	startKillableServer(t, e)
	t.Logf("dev server restarted at %s", time.Now().Format(time.TimeOnly))
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		_ = watch.Process.Kill()
		t.Fatalf("watch still running 4 minutes after the restart:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if code := watch.ProcessState.ExitCode(); code != 0 {
		t.Errorf("watch exited %d, want 0 (the sweep completed):\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out.String(), "completed: 2 trials (2 completed)") {
		t.Errorf("watch does not end with the sweep's final state:\n%s", out)
	}
	if !strings.Contains(errOut.String(), "server unreachable") || !strings.Contains(errOut.String(), "server reachable again") {
		t.Errorf("watch's stderr does not tell of the outage and the reconnection:\n%s", errOut)
	}
	t.Logf("watch's stderr:\n%s", errOut)
	res := e.results(sweepID)
	if len(res.Trials) != 2 {
		t.Errorf("results.json has %d trials, want 2", len(res.Trials))
	}
}
