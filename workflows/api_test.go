package workflows_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
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

// Every wire name — task queues, workflow types, queries, updates, signals, search attributes — is in
// docs/architecture.md, so the page a client author reads stays in step with the code.
func TestWireNamesDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	names := []string{workflows.ControlQueue, workflows.DefaultTrialQueue, workflows.WorkflowTypeSweep, workflows.WorkflowTypeTrial,
		workflows.WorkflowTypeRegression,
		workflows.QueryStatus, workflows.UpdatePause, workflows.UpdateResume, workflows.UpdateConcurrency,
		workflows.SignalTrialDone, workflows.SignalReportToSweep, workflows.SignalSegmentEnd, workflows.SignalSegmentDecision,
		workflows.SignalStopTrial, workflows.SignalRungPassed, workflows.SignalRelease, workflows.SignalHold}
	for k := range workflows.SearchAttributes().GetUntypedValues() {
		names = append(names, k.GetName())
	}
	// The constants of api.go named like wire names must all be in the list above.
	f, err := parser.ParseFile(token.NewFileSet(), "api.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				if strings.HasPrefix(n.Name, "Query") || strings.HasPrefix(n.Name, "Update") || strings.HasPrefix(n.Name, "Signal") ||
					strings.HasPrefix(n.Name, "WorkflowType") || strings.HasSuffix(n.Name, "Queue") {
					listed++
				}
			}
		}
	}
	if listed != 17 {
		t.Errorf("api.go has %d wire-name constants, this test lists 17: add the new one to the list", listed)
	}
	for _, n := range names {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/architecture.md does not name %q", n)
		}
	}
}
