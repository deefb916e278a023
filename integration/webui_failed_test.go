//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/workflows"
)

// The Web UI shows a sweep whose every trial failed as failed, not as a green "Completed": headless
// Chromium renders the dev server's Web UI, its workflow list filtered to sweeps as docs/webui.md says
// (`RlsweepKind = "sweep"`), and the sweep's row says Failed; a screenshot is kept. The workflow's
// memo says why (outcome, summary).
func TestWebUIShowsFailedSweepFailed(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not found: this test renders the Web UI in headless Chromium; scripts/install-tools.sh chromium installs it")
	}
	e, ui := newEnvWithUI(t)
	e.startWorker("a", "--slots", "2")
	sweepID := e.submit(e.spec("doomedui", `
  total_steps: 4000
method: grid
parameters:
  lr: {values: [1.0e-3, 3.0e-3]}
  sleep_ms: {value: 1}
  crash_at: {value: 2000}
probes: {enabled: false}
retries: {max_attempts: 1}
`))
	if out, code := e.cli("watch", sweepID); code != 4 || !strings.Contains(out, "failed: 2 trials (2 failed)") {
		t.Fatalf("watch exited %d, want 4 and the sweep failed:\n%s", code, out)
	}

	desc, err := e.client.DescribeWorkflowExecution(context.Background(), sweepID, "")
	if err != nil {
		t.Fatal(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	memo := map[string]string{}
	for _, k := range []string{workflows.MemoOutcome, workflows.MemoSummary, workflows.MemoTook} {
		var v string
		if p := info.GetMemo().GetFields()[k]; p != nil {
			_ = converter.GetDefaultDataConverter().FromPayload(p, &v)
		}
		memo[k] = v
	}
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED || memo[workflows.MemoOutcome] != workflows.PhaseFailed ||
		!strings.HasPrefix(memo[workflows.MemoSummary], "failed: all 2 trials failed; last failure: trial ") ||
		!strings.Contains(memo[workflows.MemoSummary], "trainer exited with status 3") || !strings.HasSuffix(memo[workflows.MemoTook], "s") {
		t.Errorf("sweep workflow %s with memo %v; want Failed, outcome failed, the summary naming the cause, took in seconds", info.GetStatus(), memo)
	}

	page := ui + "/namespaces/default/workflows?query=" + url.QueryEscape(`RlsweepKind = "sweep"`)
	var dom, row string
	// The list is drawn by the page's scripts from the server's visibility store, which may lag the
	// sweep's end by a moment: the row may be missing, or still say Running. Try again until it says
	// Failed.
	eventually(time.Minute, func() bool {
		dom = renderURL(t, chromium, page, "--dump-dom")
		row = listRow(dom, sweepID)
		return strings.Contains(row, "Failed") && !strings.Contains(row, "Completed")
	})
	if !strings.Contains(dom, sweepID) {
		t.Fatalf("the Web UI's list lacks %s a minute after the sweep ended", sweepID)
	}
	if !strings.Contains(row, "Failed") || strings.Contains(row, "Completed") {
		t.Errorf("the Web UI's row of %s does not say Failed:\n%s", sweepID, row)
	}
	shot := filepath.Join(artifactDir(t), "webui-failed-sweep.png")
	renderURL(t, chromium, page, "--screenshot="+shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 20000 {
		t.Errorf("screenshot %s: %v (size %v), want a rendered page", shot, err, st)
	}
	t.Logf("Web UI row: %s; screenshot %s", row, shot)
}

// newEnvWithUI is newEnv with the dev server's Web UI on: its address is returned.
func newEnvWithUI(t *testing.T) (*env, string) {
	t.Helper()
	bin, err := devserver.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: t.TempDir(), addr: freeAddr(t)}
	if e.store, err = artifacts.NewLocal(filepath.Join(e.dir, "artifacts")); err != nil {
		t.Fatal(err)
	}
	var uiPort int
	e.server = e.startDevServer(func(addr string) testsuite.DevServerOptions {
		uiPort = freePort(t)
		return testsuite.DevServerOptions{
			ExistingPath:     bin,
			DBFilename:       dbFile(e.dir),
			ExtraArgs:        append(sqliteArgs(), devserver.MatchingArgs()...),
			ClientOptions:    &client.Options{HostPort: addr, Logger: quiet{}},
			SearchAttributes: workflows.SearchAttributes(),
			LogLevel:         "error",
			EnableUI:         true,
			UIPort:           strconv.Itoa(uiPort),
		}
	})
	e.client = e.server.Client()
	t.Cleanup(e.close)
	return e, fmt.Sprintf("http://127.0.0.1:%d", uiPort)
}

// renderURL renders a page in headless Chromium, giving its scripts 15 s of virtual time to fetch and
// draw, with one extra flag (--dump-dom or --screenshot=...), and returns stdout.
func renderURL(t *testing.T, bin, page, flag string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=15000", "--window-size=1400,900", flag, page)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s %s: %v\n%s", flag, page, err, errOut.String())
	}
	return out.String()
}

// listRow is the text of the Web UI list's table row that holds id: the <tr> around its first
// occurrence, tags removed.
func listRow(dom, id string) string {
	i := strings.Index(dom, id)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(dom[:i], "<tr")
	end := strings.Index(dom[i:], "</tr>")
	if start < 0 || end < 0 {
		return ""
	}
	row := dom[start : i+end]
	var b strings.Builder
	for inTag := false; len(row) > 0; row = row[1:] {
		switch c := row[0]; {
		case c == '<':
			inTag = true
			b.WriteByte(' ')
		case c == '>':
			inTag = false
		case !inTag:
			b.WriteByte(c)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
