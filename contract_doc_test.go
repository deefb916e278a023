package rlsweep_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/workflows"
)

// TestSweepIDFormDocumented checks that the form of RLSWEEP_SWEEP_ID that docs/trainer-contract.md
// gives is the value a trainer gets: a sweep's ID as rlsweep submit makes it, passed through the
// trainer's environment.
func TestSweepIDFormDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/trainer-contract.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `" + trainer.EnvSweepID + "` \\| [^`|]*`([^`]+)`").FindSubmatch(doc)
	if row == nil {
		t.Fatalf("docs/trainer-contract.md: no row for %s with its form in backquotes", trainer.EnvSweepID)
	}
	documented := strings.NewReplacer("<name>", "cartpole", "<short-id>", "k3x9").Replace(string(row[1]))
	env := runner.Contract{SweepID: workflows.SweepWorkflowID("cartpole", "k3x9")}.Env(nil, nil)
	got := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, trainer.EnvSweepID+"="); ok {
			got = v
		}
	}
	if got != documented {
		t.Errorf("%s of sweep cartpole/k3x9 is %q; docs/trainer-contract.md documents %q (%s)", trainer.EnvSweepID, got, documented, row[1])
	}
	if ref, _, err := workflows.ParseSweepRef(got); err != nil || ref != got {
		t.Errorf("ParseSweepRef(%q) = %q, %v: a trainer's %s is not a sweep ID the commands take", got, ref, err, trainer.EnvSweepID)
	}
}
