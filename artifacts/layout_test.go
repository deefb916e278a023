package artifacts_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

// Every key function of the layout is listed in docs/artifacts.md, under the name that describes it,
// and makes keys of that shape: adding a key without documenting it fails here.
func TestLayoutDocumented(t *testing.T) {
	const sweep, trial = "sweep/cartpole/1e114cb9", "3-s2"
	keys := []struct {
		fn, key, doc string
	}{
		{"SweepDir", artifacts.SweepDir(sweep), "sweeps/<name>/<short-id>"},
		{"SpecYAMLKey", artifacts.SpecYAMLKey(sweep), "spec.yaml"},
		{"SpecJSONKey", artifacts.SpecJSONKey(sweep), "spec.json"},
		{"PlanKey", artifacts.PlanKey(sweep), "plan.json"},
		{"OwnerKey", artifacts.OwnerKey(sweep), "owner.json"},
		{"ProbesKey", artifacts.ProbesKey(sweep), "probes.json"},
		{"ResultsPartsPrefix", artifacts.ResultsPartsPrefix(sweep), "results/part-"},
		{"ResultsPartKey", artifacts.ResultsPartKey(sweep, 7), "results/part-NNNNNN.json"},
		{"ResultsKey", artifacts.ResultsKey(sweep), "results.json"},
		{"DecisionsPartsPrefix", artifacts.DecisionsPartsPrefix(sweep), "decisions/part-"},
		{"DecisionsPartKey", artifacts.DecisionsPartKey(sweep, 7), "decisions/part-NNNNNN.json"},
		{"DecisionsKey", artifacts.DecisionsKey(sweep), "decisions.json"},
		{"ResultsCSVKey", artifacts.ResultsCSVKey(sweep), "results.csv"},
		{"RegressionKey", artifacts.RegressionKey(sweep), "regression.json"},
		{"ReportKey", artifacts.ReportKey(sweep), "report.html"},
		{"TrialsDir", artifacts.TrialsDir(sweep), "sweeps/<name>/<short-id>/trials"},
		{"TrialDir", artifacts.TrialDir(sweep, trial), "trials/<trial-id>"},
		{"CheckpointKey", artifacts.CheckpointKey(sweep, trial, "ckpt-000100.pt"), "checkpoints/<name the trainer announced>"},
		{"CheckpointManifestKey", artifacts.CheckpointManifestKey(artifacts.CheckpointKey(sweep, trial, "step-100")), "checkpoints/<name>/rlsweep-checkpoint.json"},
		{"CheckpointTreeKey", artifacts.CheckpointTreeKey(artifacts.CheckpointKey(sweep, trial, "step-100"), "step-100-1a2b3c4d", "model.safetensors"), "checkpoints/<name>/<tree>/<path in the directory>"},
		{"ExploitKey", artifacts.ExploitKey(sweep, trial, 4000), "exploits/N.json"},
		{"ExploitCheckpointKey", artifacts.ExploitCheckpointKey(sweep, trial, 4000, "ckpt-000100.pt"), "exploits/N/<name of the source's checkpoint>"},
		{"ResumePointKey", artifacts.ResumePointKey(sweep, trial), "resume.json"},
		{"DivergenceKey", artifacts.DivergenceKey(sweep, trial), "divergence.json"},
		{"MetricsDir", artifacts.MetricsDir(sweep, trial), "trials/<trial-id>/metrics"},
		{"MetricsPartKey", artifacts.MetricsPartKey(sweep, trial, 1, 2, 17), "metrics/<segment>-<attempt>-<seq>.jsonl"},
		{"LogsDir", artifacts.LogsDir(sweep, trial), "trials/<trial-id>/logs"},
		{"LogDir", artifacts.LogDir(sweep, trial, 1, 2), "logs/segment-N-attempt-M"},
		{"LogPartKey", artifacts.LogPartKey(sweep, trial, 1, 2, 17), "logs/segment-N-attempt-M/<seq>.log"},
		{"StoredBaselineKey", artifacts.StoredBaselineKey("nightly"), "baselines/<name>.json"},
		{"BaselineKey", artifacts.BaselineKey("nightly"), "baselines/<name>.json"},
		{"BaselinesDir", artifacts.BaselinesDir(), "baselines"},
		{"ScheduleSpecKey", artifacts.ScheduleSpecKey("nightly"), "schedules/<name>/spec.yaml"},
	}
	f, err := parser.ParseFile(token.NewFileSet(), "layout.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, k := range keys {
		listed[k.fn] = true
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && ast.IsExported(fd.Name.Name) && !listed[fd.Name.Name] {
			t.Errorf("layout.go: %s is not in this test's table (and so maybe not in docs/artifacts.md)", fd.Name.Name)
		}
	}
	b, err := os.ReadFile("../docs/artifacts.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Layout")
	block := doc[start:]
	block = block[strings.Index(block, "```")+3:]
	block = block[:strings.Index(block, "```")]
	placeholder := regexp.MustCompile(`<[^>]+>|NNNNNN|\bN\b|\bM\b`)
	for _, k := range keys {
		if !strings.Contains(block, k.doc) {
			t.Errorf("docs/artifacts.md's layout does not list %s (%s)", k.doc, k.fn)
		}
		pattern := placeholder.ReplaceAllStringFunc(regexp.QuoteMeta(k.doc), func(p string) string {
			if p == "NNNNNN" {
				return `\d{6}`
			}
			if p == "N" || p == "M" {
				return `\d+`
			}
			return `[^/]+`
		})
		if !regexp.MustCompile(pattern + `$`).MatchString(k.key) {
			t.Errorf("%s = %q, which does not end as the documented %q", k.fn, k.key, k.doc)
		}
	}
}
