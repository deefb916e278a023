package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/trainer/ppo"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// TestBuiltinPasses trains the built-in PPO on every probe (seed 1) and expects each to pass.
func TestBuiltinPasses(t *testing.T) {
	spaces := []string{"discrete", "continuous"}
	if testing.Short() {
		spaces = spaces[:1] // the Gaussian ladder takes ~15 s on one core
	}
	for _, space := range spaces {
		t.Run(space, func(t *testing.T) {
			rep, err := probes.Run(context.Background(), ProbeTrainer(ppo.BugNone), probes.Options{ActionSpace: space, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				t.Logf("%.2fs %s", r.Seconds, r)
			}
			if !rep.Passed {
				t.Errorf("report failed: %s", rep.Diagnosis)
			}
		})
	}
}

// TestInjectedBugsCaught checks the ladder's claim for each injected bug: the predicted probe fails
// and every probe below it passes, so the diagnosis points at the right part of the trainer.
// no-entropy-grad is the exception the docs explain: no probe depends on the entropy bonus, so all
// five pass; the test pins that down so a change in it is noticed.
func TestInjectedBugsCaught(t *testing.T) {
	cases := []struct {
		bug      string
		failing  probes.ID // "" when no probe catches it
		inReason string
	}{
		{"detach-value", "1", "value loss or optimiser"},
		{"stale-batch", "2", "misaligned"},
		{"no-discount", "3", "discounting"},
		{"flip-advantage", "4", "policy-gradient"},
		{"no-entropy-grad", "", ""},
	}
	for _, c := range cases {
		t.Run(c.bug, func(t *testing.T) {
			if c.failing == "" && testing.Short() {
				t.Skip("runs all five probes")
			}
			bug, err := ppo.ParseBug(c.bug)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := probes.All("discrete")
			var results []probes.Result
			for _, p := range all {
				r := probes.RunOne(context.Background(), ProbeTrainer(bug), p, 1)
				results = append(results, r)
				if p.ID == c.failing {
					break
				}
			}
			rep := probes.Diagnose(results)
			if got := rep.Failed; got != c.failing {
				t.Fatalf("failing probe: got %q, want %q (%s)", got, c.failing, rep.Diagnosis)
			}
			if !strings.Contains(rep.Diagnosis, c.inReason) {
				t.Errorf("diagnosis %q does not name %q", rep.Diagnosis, c.inReason)
			}
			t.Logf("%s → %s", c.bug, rep.Diagnosis)
		})
	}
}

// TestGaussianFlipAdvantage checks the Gaussian ladder catches a flipped advantage at 4c.
func TestGaussianFlipAdvantage(t *testing.T) {
	p, _ := probes.Lookup("4c")
	if r := probes.RunOne(context.Background(), ProbeTrainer(ppo.BugFlipAdvantage), p, 1); r.Passed {
		t.Errorf("4c with flip-advantage passed: %s", r)
	}
}
