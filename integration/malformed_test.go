//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

// A trainer that writes two malformed metric lines (one not JSON, one whose step goes backwards): the
// count shows in `status SWEEP/TRIAL`, in `results` (text and JSON) and in the report.
func TestMalformedLinesShown(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a")
	script := `printf '{"step":1000,"reward":1}\nnot json at all\n{"step":2000,"reward":2}\n{"step":1500,"reward":9}\n{"step":3000,"reward":3}\n' >> "$RLSWEEP_METRICS_FILE"`
	p := filepath.Join(e.dir, "malformed.yaml")
	y := fmt.Sprintf(`name: malformed
trainer:
  command: ["/bin/sh", "-c", %q]
  total_steps: 3000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
parameters:
  x: {value: 1}
probes: {enabled: false}
`, script)
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepID := e.submit(p)
	if out, code := e.cli("watch", sweepID); code != 0 {
		t.Fatalf("watch exited %d:\n%s", code, out)
	}
	res := e.results(sweepID)
	if len(res.Trials) != 1 || res.Trials[0].Steps != 3000 {
		t.Fatalf("results: %+v, want one trial at step 3000", res.Trials)
	}
	tr := res.Trials[0]
	if tr.Malformed != 2 {
		t.Errorf("results.json: trial %s malformed = %d, want 2", tr.TrialID, tr.Malformed)
	}
	if out, code := e.cli("results", sweepID); code != 0 || !strings.Contains(out, "malformed metric lines dropped: 2 ("+tr.TrialID+": 2)") {
		t.Errorf("results exited %d, want 0 and the malformed count in:\n%s", code, out)
	}
	out, code := e.cli("status", sweepID+"/"+tr.TrialID)
	if code != 0 || !strings.Contains(out, "malformed") || !strings.Contains(out, " 2\n") {
		t.Errorf("status %s/%s exited %d, want 0 and 'malformed 2' in:\n%s", sweepID, tr.TrialID, code, out)
	}
	html, err := os.ReadFile(e.store.URL(artifacts.ReportKey(sweepID)))
	if err != nil {
		t.Fatalf("report.html: %v", err)
	}
	if !strings.Contains(string(html), "2 malformed metric lines dropped") || !strings.Contains(string(html), tr.TrialID+" (2)") {
		t.Errorf("report.html does not name the 2 malformed lines of %s", tr.TrialID)
	}
}
