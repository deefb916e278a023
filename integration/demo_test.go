//go:build integration

package integration

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/devserver"
)

// demoSpec is a two-configuration sweep quick enough for a demo test; quality makes the second
// configuration the better one.
func demoSpec(e *env) string {
	return e.spec("demo", `
  total_steps: 3000
method: grid
seeds: [1]
parameters:
  quality: {values: [50, 90]}
  sleep_ms: {value: 1}
probes: {enabled: false}
concurrency: 2
`)
}

// make demo without a terminal on stdin (as CI or a pipe runs it) ends once the sweep has, after printing
// the best configurations and saying the server is gone and how to serve the state again.
func TestMakeDemoWithoutTerminal(t *testing.T) {
	dir := t.TempDir()
	e := &env{t: t, dir: dir}
	port, uiPort := freePort(t), freePort(t)
	state := filepath.Join(dir, "state")
	cmd := exec.Command("make", "-s", "demo", "TOOLS=true", "BIN="+filepath.Join(dir, "bin", "rlsweep"), "DEMO_SPEC="+demoSpec(e),
		"DEMO_FLAGS=--port "+strconv.Itoa(port)+" --ui-port "+strconv.Itoa(uiPort)+" --state-dir "+state)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "RLSWEEP_HOME="+filepath.Join(dir, "home"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // stdin: /dev/null
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("make demo: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		}
	case <-time.After(4 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		t.Fatalf("make demo without a terminal still runs after 4 minutes\nstdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	}
	out, errOut := stdout.String(), stderr.String()
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	checkTopConfigs(t, out)
	if want := "the server stops now and its Web UI with it. `rlsweep dev --state-dir " + state; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q", want)
	}
	if devserver.Running("127.0.0.1:" + strconv.Itoa(port)) {
		t.Errorf("the dev server still answers after make demo ended")
	}
}

// rlsweep dev FILE keeps the server and its Web UI up once the sweep has ended, until Ctrl-C.
func TestDevServesAfterSweepUntilInterrupt(t *testing.T) {
	dir := t.TempDir()
	e := &env{t: t, dir: dir}
	port, uiPort := freePort(t), freePort(t)
	cmd := exec.Command(rlsweepBin, "dev", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
		"--state-dir", filepath.Join(dir, "state"), demoSpec(e))
	cmd.Env = append(os.Environ(), "RLSWEEP_HOME="+filepath.Join(dir, "home"))
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	ui := "http://localhost:" + strconv.Itoa(uiPort)
	waitFor(t, 3*time.Minute, "dev to say the Web UI stays up", func() bool {
		return strings.Contains(stderr.String(), "dev: Web UI at "+ui+"; Ctrl-C stops the worker and the server")
	})
	checkTopConfigs(t, stdout.String())
	resp, err := http.Get(ui + "/")
	if err != nil {
		t.Fatalf("the Web UI does not answer once the sweep has ended: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s, want 200", ui, resp.Status)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("dev after Ctrl-C: %v, want exit 0\nstderr:\n%s", err, stderr.String())
	}
}

// checkTopConfigs checks the leaderboard dev prints: the better configuration (quality 90) first.
func checkTopConfigs(t *testing.T, out string) {
	t.Helper()
	i := strings.Index(out, "best configurations of sweep/demo/")
	if i < 0 {
		t.Fatalf("output lacks the best configurations:\n%s", out)
	}
	lines := strings.Split(out[i:], "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[1], "RANK") || !strings.Contains(lines[1], "MEAN reward") ||
		!strings.HasPrefix(lines[2], "1 ") || !strings.Contains(lines[2], " 90 ") || !strings.HasPrefix(lines[3], "2 ") {
		t.Errorf("leaderboard does not rank quality 90 first:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(out, "every trial: rlsweep results sweep/demo/") {
		t.Errorf("output lacks the command that prints every trial:\n%s", out)
	}
}
