package workflows_test

import (
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/workflows"
)

func TestParseSweepRef(t *testing.T) {
	tests := []struct {
		ref            string
		sweep, trial   string
		wantErrContain string
	}{
		{"cartpole/ab12", "sweep/cartpole/ab12", "", ""},
		{"sweep/cartpole/ab12", "sweep/cartpole/ab12", "", ""},
		{" cartpole/ab12 ", "sweep/cartpole/ab12", "", ""},
		{"cartpole/ab12/3-s1", "sweep/cartpole/ab12", "3-s1", ""},
		{"sweep/cartpole/ab12/trial/3-s1", "sweep/cartpole/ab12", "3-s1", ""},
		{"cartpole/ab12/trial/3-s1", "sweep/cartpole/ab12", "3-s1", ""},
		{"cartpole", "", "", `got "cartpole"`},
		{"sweep/cartpole", "", "", `got "sweep/cartpole"`}, // the message shows what the user typed
		{"cartpole//", "", "", `got "cartpole//"`},
		{"a/b/c/d", "", "", `got "a/b/c/d"`},
		{"", "", "", `got ""`},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			sweep, trial, err := workflows.ParseSweepRef(tt.ref)
			if tt.wantErrContain != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContain) {
					t.Fatalf("ParseSweepRef(%q) error = %v, want one containing %s", tt.ref, err, tt.wantErrContain)
				}
				return
			}
			if err != nil || sweep != tt.sweep || trial != tt.trial {
				t.Errorf("ParseSweepRef(%q) = %q, %q, %v; want %q, %q", tt.ref, sweep, trial, err, tt.sweep, tt.trial)
			}
		})
	}
	if got := workflows.TrialWorkflowID(workflows.SweepWorkflowID("cartpole", "ab12"), "3-s1"); got != "sweep/cartpole/ab12/trial/3-s1" {
		t.Errorf("TrialWorkflowID = %q, want sweep/cartpole/ab12/trial/3-s1", got)
	}
}
