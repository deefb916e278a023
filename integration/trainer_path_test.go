//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
)

// A trainer path that does not exist, or is not executable, is refused by validate and by submit
// (exit 2, the field, the path as written and as resolved against the spec's directory, the fix), and
// submit starts nothing; a relative path that exists runs, resolved against the spec's directory.
func TestTrainerPathChecked(t *testing.T) {
	e := newEnv(t)
	e.startWorker("w", "--slots", "1")
	write := func(name, body string) string {
		p := filepath.Join(e.dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := "  total_steps: 2000\nmethod: grid\nseeds: [1]\nparameters:\n  sleep_ms: {value: 1}\nprobes: {enabled: false}\n"
	missing := write("missing.yaml", "name: missing\ntrainer:\n  command: [scripts/train.sh]\n"+body)
	write("notexec.sh", "#!/bin/sh\nexit 0\n")
	notExec := write("notexec.yaml", "name: notexec\ntrainer:\n  command: [./notexec.sh]\n"+body)
	for _, c := range []struct{ spec, given, why string }{
		{missing, `"scripts/train.sh"`, "no such file"},
		{notExec, `"./notexec.sh"`, "not executable"},
	} {
		for _, cmd := range []string{"validate", "submit"} {
			out, code := e.cli(cmd, c.spec)
			if code != 2 || !strings.Contains(out, "trainer.command[0]: got "+c.given) || !strings.Contains(out, c.why) ||
				!strings.Contains(out, "resolved to "+e.dir) || !strings.Contains(out, "want an executable file") {
				t.Errorf("%s %s exited %d, want 2 naming trainer.command[0], %s, where it resolved and %q:\n%s", cmd, filepath.Base(c.spec), code, c.given, c.why, out)
			}
		}
	}
	resp, err := e.client.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetExecutions()); n != 0 {
		t.Errorf("%d workflows started by refused submits, want none", n)
	}
	// The same trainer, linked beside the spec and named relatively, runs: the worker gets the path
	// resolved against the spec's directory, not its trial's directory.
	if err := os.Symlink(trainerBin, filepath.Join(e.dir, "trainer")); err != nil {
		t.Fatal(err)
	}
	ok := write("relative.yaml", "name: relative\ntrainer:\n  command: [./trainer]\n"+body)
	out, code := e.cli("submit", "--watch", ok)
	if code != 0 || !strings.Contains(out, "1 completed") {
		t.Errorf("submit --watch of a spec naming its trainer ./trainer exited %d, want 0 and the trial completed:\n%s", code, out)
	}
}
