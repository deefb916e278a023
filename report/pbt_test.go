package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// A pbt sweep's report shows each member's lineage and hyperparameter schedule; a replacement is
// listed under the member it started from.
func TestRenderPBTLineage(t *testing.T) {
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/pbt/abc", Name: "pbt", Status: "completed",
		Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}, Params: []string{"lr"}}}
	in.Results.Trials = []results.TrialSummary{
		{TrialID: "0-s1", Outcome: results.OutcomeCompleted, Objective: ptr(5), Params: map[string]any{"lr": 0.0012},
			Exploits: []results.Exploit{{Member: "0-s1", From: "1-s1", Step: 2000, Old: map[string]any{"lr": 0.01}, New: map[string]any{"lr": 0.0012}}}},
		{TrialID: "1-s1", Outcome: results.OutcomeCompleted, Objective: ptr(7), Params: map[string]any{"lr": 0.001}},
		{TrialID: "2-s1", Outcome: results.OutcomeDiverged, Params: map[string]any{"lr": 0.5}},
		{TrialID: "3-s1", Outcome: results.OutcomeCompleted, Objective: ptr(6), Params: map[string]any{"lr": 0.0008}, Parent: "1-s1", StartStep: 3000,
			Exploits: []results.Exploit{{Member: "3-s1", From: "1-s1", Step: 3000, New: map[string]any{"lr": 0.0008}}}},
	}
	lin := Lineage(in.Results.Trials)
	var order []string
	for _, m := range lin {
		order = append(order, m.TrialID)
	}
	if got := strings.Join(order, " "); got != "0-s1 1-s1 3-s1 2-s1" {
		t.Errorf("lineage order %q, want the replacement 3-s1 right after its parent 1-s1", got)
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`id="lineage-table"`, "step 0: lr=0.01<br>step 2\u202f000 (from 1-s1): lr=0.0012",
		"└ 3-s1", "replaces a diverged member, from 1-s1", `<figure id="plot-lineage">`, "step 3\u202f000 (from 1-s1): lr=0.0008"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if Lineage(sampleInput().Results.Trials) != nil {
		t.Error("a sweep without exploits has a lineage")
	}
}
