package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

func ptr(x float64) *float64 { return &x }

func boolPtr(b bool) *bool { return &b }

func TestMeanCI(t *testing.T) {
	tests := []struct {
		name           string
		xs             []float64
		mean, lo, hi   float64
		tol            float64
		loNaN, meanNaN bool
	}{
		// scipy.stats.t.interval(0.95, 2, loc=2, scale=1/sqrt(3)) = (-0.48413771, 4.48413771)
		{name: "three seeds", xs: []float64{1, 2, 3}, mean: 2, lo: -0.48413771, hi: 4.48413771, tol: 1e-7},
		// scipy.stats.t.interval(0.95, 1, loc=15, scale=5/sqrt(2)... s=7.0710678/sqrt(2)=5) = (-48.5310242, 78.5310242)
		{name: "two seeds", xs: []float64{10, 20}, mean: 15, lo: -48.5310242, hi: 78.5310242, tol: 1e-6},
		{name: "one seed", xs: []float64{7}, mean: 7, loNaN: true},
		{name: "none", meanNaN: true, loNaN: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, lo, hi := meanCI(tt.xs, 0.95)
			if tt.meanNaN != math.IsNaN(mean) || (!tt.meanNaN && mean != tt.mean) {
				t.Errorf("mean = %v, want %v", mean, tt.mean)
			}
			if tt.loNaN {
				if !math.IsNaN(lo) || !math.IsNaN(hi) {
					t.Errorf("CI = [%v, %v], want NaN", lo, hi)
				}
				return
			}
			if math.Abs(lo-tt.lo) > tt.tol || math.Abs(hi-tt.hi) > tt.tol {
				t.Errorf("CI = [%v, %v], want [%v, %v] ± %g", lo, hi, tt.lo, tt.hi, tt.tol)
			}
		})
	}
}

func TestLeaderboard(t *testing.T) {
	trials := []results.TrialSummary{
		{TrialID: "0-s1", Config: 0, Outcome: results.OutcomeCompleted, Objective: ptr(10)},
		{TrialID: "0-s2", Config: 0, Outcome: results.OutcomeCompleted, Objective: ptr(20)},
		{TrialID: "1-s1", Config: 1, Outcome: results.OutcomeCompleted, Objective: ptr(50)},
		{TrialID: "1-s2", Config: 1, Outcome: results.OutcomeDiverged, Objective: ptr(99)}, // not scored
		{TrialID: "2-s1", Config: 2, Outcome: results.OutcomeDiverged},
		{TrialID: "2-s2", Config: 2, Outcome: results.OutcomeFailed},
	}
	tests := []struct {
		name     string
		maximize bool
		order    []int
	}{
		{"maximize", true, []int{1, 0, 2}},
		{"minimize", false, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goal := "maximize"
			if !tt.maximize {
				goal = "minimize"
			}
			rows := Leaderboard(&results.SweepResults{Metric: sweeps.Metric{Goal: goal}, Trials: trials})
			var got []int
			for _, r := range rows {
				got = append(got, r.Config)
			}
			if !equalInts(got, tt.order) {
				t.Fatalf("order = %v, want %v", got, tt.order)
			}
		})
	}
	rows := Leaderboard(&results.SweepResults{Trials: trials})
	if r := rows[0]; r.Scored != 1 || r.Trials != 2 || r.Mean != 50 || r.Outcomes[results.OutcomeDiverged] != 1 {
		t.Errorf("config 1: scored %d of %d, mean %v, outcomes %v; want 1 of 2, 50, one diverged", r.Scored, r.Trials, r.Mean, r.Outcomes)
	}
	if r := rows[1]; r.Mean != 15 || r.IQM != 15 {
		t.Errorf("config 0: mean %v, IQM %v, want 15, 15", r.Mean, r.IQM)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRanksAndSensitivity(t *testing.T) {
	if got, want := ranks([]float64{3, 1, 3, 2}), []float64{3.5, 1, 3.5, 2}; !equalFloats(got, want) {
		t.Errorf("ranks = %v, want %v", got, want)
	}
	var trials []results.TrialSummary
	// The objective is 10·lr-index and clip has no effect: lr explains everything, clip nothing.
	for i, lr := range []float64{1e-4, 1e-3, 1e-2} {
		for _, clip := range []float64{0.1, 0.2} {
			trials = append(trials, results.TrialSummary{Outcome: results.OutcomeCompleted, Objective: ptr(float64(10 * i)),
				Params: map[string]any{"lr": lr, "clip": clip, "env": "cartpole", "opt": []string{"a", "b"}[i%2]}})
		}
	}
	trials = append(trials, results.TrialSummary{Outcome: results.OutcomeDiverged, Params: map[string]any{"lr": 1.0, "clip": 0.3}})
	var samples []Sample
	for _, tr := range trials {
		if tr.Scored() {
			samples = append(samples, Sample{TrialID: tr.TrialID, Params: tr.Params, Value: *tr.Objective})
		}
	}
	got := Sensitivities(samples, []string{"lr", "clip", "env", "opt"})
	if len(got) != 3 {
		t.Fatalf("got %d sensitivities, want lr, clip and opt (env is constant): %+v", len(got), got)
	}
	lr, clip, opt := got[0], got[1], got[2]
	if lr.EtaSquared != 1 || math.Abs(lr.Spearman-1) > 1e-12 || lr.Groups != 3 || lr.Scored != 6 {
		t.Errorf("lr: %+v, want η² 1, ρ 1, 3 groups, 6 scored", lr)
	}
	if clip.EtaSquared != 0 || math.Abs(clip.Spearman) > 1e-12 {
		t.Errorf("clip: %+v, want η² 0, ρ 0", clip)
	}
	// opt: a at 0 and 20, b at 10 → group means 10 and 10: η² 0; not numeric: no ρ.
	if opt.EtaSquared != 0 || !math.IsNaN(opt.Spearman) {
		t.Errorf("opt: %+v, want η² 0 and ρ NaN", opt)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestComputeSavings(t *testing.T) {
	trials := []results.TrialSummary{
		{TrialID: "a", Outcome: results.OutcomeCompleted, Steps: 100000, WallSeconds: 100},
		{TrialID: "b", Outcome: results.OutcomeDiverged, StopRule: "non_finite", Steps: 25000, WallSeconds: 50}, // 500 steps/s
		{TrialID: "c", Outcome: results.OutcomePruned, Steps: 50000, WallSeconds: 10, // 5000 steps/s
			Pruning: &results.Pruning{Rule: "asha", Rung: 1, Step: 50000}},
		{TrialID: "d", Outcome: results.OutcomeDiverged, Steps: 0, WallSeconds: 3},   // no rate
		{TrialID: "e", Outcome: results.OutcomeFailed, Steps: 10000, WallSeconds: 3}, // not early stopping
	}
	s := ComputeSavings(trials, 100000)
	if s.StepsSaved != 75000+50000+100000 || s.Budget != 500000 || s.StepsSpent != 185000 || len(s.Trials) != 3 {
		t.Errorf("saved %d of budget %d, spent %d, %d trials; want 225000 of 500000, 185000, 3", s.StepsSaved, s.Budget, s.StepsSpent, len(s.Trials))
	}
	if want := 150.0 + 10; math.Abs(s.SecondsSaved-want) > 1e-9 {
		t.Errorf("seconds saved = %v, want %v (75000/500 + 50000/5000)", s.SecondsSaved, want)
	}
	if s.Pruned != 1 || s.PrunedSteps != 50000 || s.PrunedSeconds != 10 || s.Trials[1].Rule != "asha, rung 1 (step 50000)" {
		t.Errorf("pruned %d, %d steps, %v s, rule %q; want 1, 50000, 10, the pruning's", s.Pruned, s.PrunedSteps, s.PrunedSeconds, s.Trials[1].Rule)
	}
	if !math.IsNaN(s.Trials[2].SecondsSaved) {
		t.Errorf("trial d: seconds saved %v, want NaN (it reached no step)", s.Trials[2].SecondsSaved)
	}
	if got := ComputeSavings(trials, 0); got.StepsSaved != 0 || got.Budget != 0 {
		t.Errorf("unknown budget: saved %d of %d, want nothing", got.StepsSaved, got.Budget)
	}
}

func TestThin(t *testing.T) {
	var pts []Point
	for i := 0; i < 1000; i++ {
		v := float64(i)
		if i == 501 {
			v = math.NaN()
		}
		pts = append(pts, Point{Step: int64(i), Value: v})
	}
	got := Thin(pts, 100)
	if len(got) < 100 || len(got) > 102 {
		t.Errorf("Thin kept %d points, want 100 to 102", len(got))
	}
	if got[0].Step != 0 || got[len(got)-1].Step != 999 {
		t.Errorf("Thin kept steps %d … %d, want the first and the last", got[0].Step, got[len(got)-1].Step)
	}
	nan := false
	for _, p := range got {
		nan = nan || math.IsNaN(p.Value)
	}
	if !nan {
		t.Error("Thin dropped the NaN point")
	}
	if short := pts[:50]; len(Thin(short, 100)) != 50 {
		t.Error("Thin changed a curve shorter than its limit")
	}
}

// TestRenderProbesReadable renders the probes.json of a discrete sweep as the probe stage writes it,
// decoded into the probes package's own type: the continuous ladder it skipped shows as skipped, not as
// a failure, the measured values read as values against their targets, not as JSON, and a crashed
// probe shows its fault and its error, escaped.
func TestRenderProbesReadable(t *testing.T) {
	var results []string
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		results = append(results, `{"probe":"`+id+`","level":`+id[:1]+`,"passed":true,"checks":[{"name":"V(0)","measured":0.9981,"expected":1,"tolerance":0.15,"passed":true}],"steps":10240,"seconds":1.2}`)
	}
	for _, id := range []string{"1c", "2c", "3c", "4c", "5c"} {
		results = append(results, `{"probe":"`+id+`","level":`+id[:1]+`,"passed":false,"skipped":true,"steps":0,"seconds":0}`)
	}
	results = append(results, `{"probe":"3","level":3,"passed":false,"checks":[{"name":"V(0)","measured":1,"expected":0.5,"tolerance":0.15,"passed":false},{"name":"V(1)","measured":null,"expected":1,"tolerance":0.15,"passed":false}],"steps":10240,"seconds":1}`)
	results = append(results, `{"probe":"2","level":2,"passed":false,"steps":0,"seconds":0.53179,"error":"the trainer exited with status 1; log tail: <boom & bust>","fault":"crashed"}`)
	var rep probes.Report
	if err := json.Unmarshal([]byte(`{"passed":true,"results":[`+strings.Join(results, ",")+`],"diagnosis":"all 5 probes pass"}`), &rep); err != nil {
		t.Fatal(err)
	}
	in := sampleInput()
	in.Probes = &rep
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	start := strings.Index(html, `id="probe-table"`)
	if start < 0 {
		t.Fatal("report lacks the probe table")
	}
	table := html[start : start+strings.Index(html[start:], "</table>")]
	rows := strings.Split(table, "<tr>")[2:] // the table's opening and its header
	if len(rows) != len(results) {
		t.Fatalf("got %d probe rows, want %d:\n%s", len(rows), len(results), table)
	}
	for i, row := range rows[:10] {
		skipped := i >= 5
		if skipped && (!strings.Contains(row, "skipped") || strings.Contains(row, "FAIL")) {
			t.Errorf("a skipped probe shows as %q, want skipped and no FAIL", row)
		}
		if !skipped && !strings.Contains(row, "V(0)=0.998 (want 1 ± 0.15); seconds=1.2 steps=10240") {
			t.Errorf("a passing probe's values read %q, want V(0)=0.998 (want 1 ± 0.15); seconds=1.2 steps=10240", row)
		}
	}
	if want := "V(0)=1.000 (want 0.5 ± 0.15) FAIL; V(1)=none (want 1 ± 0.15) FAIL; seconds=1 steps=10240"; !strings.Contains(rows[10], want) || !strings.Contains(rows[10], "FAIL</b>") {
		t.Errorf("a failing probe reads %q, want FAIL and %q", rows[10], want)
	}
	if want := "<td>the trainer exited with status 1; log tail: &lt;boom &amp; bust&gt;</td><td>fault=crashed seconds=0.5318 steps=0 </td>"; !strings.Contains(rows[11], want) {
		t.Errorf("a crashed probe reads %q, want %q", rows[11], want)
	}
	for _, raw := range []string{"&#34;name&#34;", `"name"`, "level="} {
		if strings.Contains(table, raw) {
			t.Errorf("the probe table shows raw fields (%s):\n%s", raw, table)
		}
	}
}

// sampleInput is a small sweep with every kind of trial the report distinguishes.
func sampleInput() *Input {
	spec := &sweeps.Spec{Trainer: sweeps.Trainer{TotalSteps: 10000},
		Parameters: []sweeps.Parameter{{Name: "lr"}, {Name: "clip"}}}
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/demo/abc", Name: "demo", Status: "completed",
		Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}, Params: []string{"lr", "clip"}}, Spec: spec,
		Curves: map[string][]Point{}, Divergences: map[string]*diagnostics.Verdict{},
		Probes: &probes.Report{Results: []probes.Result{{Probe: "1", Level: 1, Passed: true}, {Probe: "4", Level: 4, Error: "<bad & broken>"}}}}
	cfg := 0
	for _, lr := range []float64{1e-4, 1e-3, 1e-2} {
		for _, clip := range []float64{0.1, 0.2} {
			for seed := int64(1); seed <= 2; seed++ {
				t := results.TrialSummary{TrialID: sweeps.TrialID(cfg, seed), Config: cfg, Seed: seed,
					Params: map[string]any{"lr": lr, "clip": clip}, Outcome: results.OutcomeCompleted, Steps: 10000, WallSeconds: 10}
				var curve []Point
				for s := int64(1000); s <= 10000; s += 1000 {
					curve = append(curve, Point{s, float64(s) * lr * 10})
				}
				t.Objective = ptr(curve[len(curve)-1].Value)
				if lr == 1e-2 && seed == 2 {
					t.Outcome, t.StopRule, t.Steps, t.Objective = results.OutcomeDiverged, "non_finite", 5000, nil
					curve = append(curve[:4], Point{5000, math.NaN()})
					in.Divergences[t.TrialID] = &diagnostics.Verdict{Level: diagnostics.Stop, Rule: "non_finite", Metric: "reward",
						Value: math.NaN(), Step: 5000, Advice: "lower the learning rate", Objective: "reward", ObjectiveValue: 400}
				}
				in.Curves[t.TrialID] = curve
				in.Results.Trials = append(in.Results.Trials, t)
			}
			cfg++
		}
	}
	return in
}

func TestRender(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, sampleInput()); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	ids := append(append([]string(nil), FigureIDs...), "plot-sensitivity-lr", "plot-sensitivity-clip",
		"leaderboard-table", "divergence-table", "savings-table", "probe-table", "sensitivity-table")
	for _, id := range ids {
		i := strings.Index(html, `id="`+id+`"`)
		if i < 0 {
			t.Errorf("report lacks element %q", id)
			continue
		}
		if strings.HasPrefix(id, "plot-") && !strings.HasPrefix(html[i+len(`id="`+id+`">`):], "<svg") {
			t.Errorf("figure %q does not hold an inline <svg>", id)
		}
	}
	// Self-contained: the only URLs are the SVG namespaces, and no script runs.
	stripped := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "",
		`xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(html)
	for _, bad := range []string{"<?xml", "<script", "http://", "https://", "<bad & broken>"} {
		if strings.Contains(stripped, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	for _, want := range []string{"lower the learning rate", "non_finite", "&lt;bad &amp; broken&gt;", "FAIL",
		"10 completed", "2 diverged", "10\u202f000</b> environment steps", "8.3%", "20s",
		"objective at the stop (best of the sweep 1000)", "400 (60.0% from the best)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var again bytes.Buffer
	if err := Render(&again, sampleInput()); err != nil {
		t.Fatal(err)
	}
	if again.String() != html {
		t.Error("two renders of the same input differ; the report must be deterministic")
	}
}

func TestRenderEmptySweep(t *testing.T) {
	var b bytes.Buffer
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/empty/1", Name: "empty", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}}}
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	for _, id := range FigureIDs {
		if !strings.Contains(b.String(), `id="`+id+`"`) {
			t.Errorf("empty report lacks %q", id)
		}
	}
}

// Trials' warnings are shown near the top, each text once with the trials that gave it; a report
// without warnings has no such section.
func TestRenderWarnings(t *testing.T) {
	in := sampleInput()
	const missing = `metric "rewrd": no record of segment 0 carries it`
	for i := range in.Results.Trials[:3] {
		in.Results.Trials[i].Warnings = []string{missing}
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	i := strings.Index(html, `id="warnings"`)
	if i < 0 || i > strings.Index(html, `id="leaderboard"`) {
		t.Fatalf("report lacks a warnings section before the leaderboard")
	}
	if strings.Count(html, "no record of segment 0 carries it") != 1 || !strings.Contains(html, "3 trials: 0-s1, 0-s2, 1-s1") {
		t.Errorf("warnings section does not show the warning once with its 3 trials:\n%s", html[i:i+400])
	}
	b.Reset()
	if err := Render(&b, sampleInput()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="warnings"`) {
		t.Error("a report without warnings has a warnings section")
	}
}

// A stopped trial without a divergence verdict shows its error's first line in the divergence table.
func TestRenderStoppedTrialErrorFirstLine(t *testing.T) {
	in := sampleInput()
	tr := &in.Results.Trials[0]
	tr.Outcome, tr.Objective = results.OutcomePruned, nil
	tr.Error = "stopped by the sweep's scheduler after segment 0\nsecond line"
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if !strings.Contains(html, "stopped by the sweep&#39;s scheduler after segment 0") || strings.Contains(html, "second line") {
		t.Errorf("divergence table does not show the error's first line alone")
	}
	if in.Results.Trials[0].Error != "stopped by the sweep's scheduler after segment 0\nsecond line" {
		t.Errorf("Render changed its input")
	}
}

// A sweep with pruned trials says what pruning saved, apart from the diagnostics' saving, and names
// each pruned trial's rung and cutoff.
func TestRenderPruningSaved(t *testing.T) {
	in := sampleInput()
	for i := range in.Results.Trials {
		if tr := &in.Results.Trials[i]; tr.Config == 0 {
			tr.Outcome, tr.Steps, tr.WallSeconds = results.OutcomePruned, 1000, 1
			tr.Pruning = &results.Pruning{Rule: "asha", Rung: 0, Step: 1000, Value: ptr(1), Cutoff: ptr(2.5), Peers: 3}
		}
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`id="pruning-saved"`, "stopped 2 trial(s) and saved <b>18\u202f000</b> environment steps (15.0% of the budget)",
		"asha, rung 0 (step 1000): value 1, cutoff 2.5, 3 other configurations", "2 pruned"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// With early_terminate the report draws each configuration at each decision step: the pruned one
// with the value the pruner compared at its rung, the completed one from its curve up to the end.
func TestRenderRungPlot(t *testing.T) {
	in := sampleInput()
	spec, err := sweeps.Decode(strings.NewReader(`name: s
trainer: {command: [python, t.py], total_steps: 9000}
metric: {name: reward, goal: maximize}
parameters: {lr: {values: [0.1, 0.2]}}
early_terminate: {type: asha, min_steps: 1000, eta: 3}
`), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	in.Spec = spec
	for i := range in.Results.Trials {
		tr := &in.Results.Trials[i]
		if tr.Config == 0 {
			tr.Outcome, tr.Steps = results.OutcomePruned, 1000
			tr.Pruning = &results.Pruning{Rule: "asha", Rung: 0, Step: 1000, Value: ptr(1), Cutoff: ptr(2.5), Peers: 1}
		}
	}
	rows := RungValues(in.trials(), spec.DecisionSteps(), 9000, nil)
	if len(rows) == 0 || rows[0][0].Config != 0 || len(rows[0]) != 1 || rows[0][0].Value != 1 {
		t.Errorf("rung values %+v: want configuration 0 once, at rung 0 with the pruner's value 1", rows)
	}
	// The values the pruner compared, carried in results.json, are drawn as they are, not recomputed
	// from the curves; a configuration they do not cover falls back to its curves.
	carried := []results.ConfigRungs{{Config: 0, Values: results.Floats{1.25}}, {Config: 1, Values: results.Floats{7.5}}}
	rows = RungValues(in.trials(), spec.DecisionSteps(), 9000, carried)
	if len(rows) < 2 || rows[0][0].Value != 1.25 || len(rows[0]) != 1 || rows[1][0].Config != 1 || rows[1][0].Value != 7.5 {
		t.Errorf("rung values %+v: want configuration 0 at 1.25 (carried) once, configuration 1 at 7.5 (carried) at rung 0", rows)
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<figure id="plot-rungs">`) {
		t.Errorf("report lacks the rung plot")
	}
	in.Spec.EarlyTerminate = nil
	b.Reset()
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `plot-rungs`) {
		t.Errorf("a sweep without early_terminate has a rung plot")
	}
}

// A bayes sweep's report shows its re-run: each confirmed configuration's search score with its
// interval and its re-run score, and whether it is inside.
func TestRenderRerun(t *testing.T) {
	in := sampleInput()
	in.Results.Confirmations = []results.Confirmation{
		{Config: 3, Params: map[string]any{"lr": 1e-3, "clip": 0.2}, SearchScore: ptr(97.5), SearchLow: ptr(90), SearchHigh: ptr(105),
			SearchSeeds: 2, RerunScore: ptr(99), RerunSeeds: 2, Inside: boolPtr(true)},
		{Config: 2, Params: map[string]any{"lr": 3e-4, "clip": 0.2}, SearchScore: ptr(95), SearchLow: ptr(93), SearchHigh: ptr(97),
			SearchSeeds: 3, RerunScore: ptr(80), RerunSeeds: 2, Inside: boolPtr(false)},
		{Config: 1, Params: map[string]any{"lr": 1e-4, "clip": 0.2}, SearchScore: ptr(96), SearchSeeds: 2, RerunSeeds: 2},
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	start := strings.Index(html, `id="rerun-table"`)
	if start < 0 {
		t.Fatal("report lacks the re-run table")
	}
	table := html[start : start+strings.Index(html[start:], "</table>")]
	rows := strings.Split(table, "<tr>")[2:]
	if len(rows) != 3 || !strings.Contains(rows[0], "97.5") || !strings.Contains(rows[0], "[90, 105]") || !strings.Contains(rows[0], "99") ||
		!strings.Contains(rows[0], "yes") || !strings.Contains(rows[1], "<b>no</b>") ||
		!strings.Contains(rows[2], "—") || strings.Contains(rows[2], "<b>no</b>") || strings.Contains(rows[2], "yes") {
		t.Errorf("re-run rows = %q, want configuration 3 (97.5 in [90, 105], re-run 99, inside), configuration 2 (outside) and configuration 1 (no interval, not re-scored, no verdict)", rows)
	}
	in.Results.Confirmations = nil
	b.Reset()
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "rerun-table") {
		t.Error("a sweep without a re-run shows the re-run table")
	}
}

// A bayes sweep's leaderboard ranks the configurations confirmed on fresh seeds first, by their score
// there: configuration 0 topped the search on two seeds and fell on fresh ones (the winner's curse),
// configuration 1 held; configuration 2, never re-run, has the highest mean over its two seeds but
// ranks after both, and neither two-seed configuration gets an interval.
func TestLeaderboardRanksConfirmedFirst(t *testing.T) {
	tr := func(c int, seed int64, v float64) results.TrialSummary {
		return results.TrialSummary{Config: c, Seed: seed, Outcome: results.OutcomeCompleted, Objective: ptr(v)}
	}
	res := &results.SweepResults{Metric: sweeps.Metric{Goal: "maximize", Bounds: &[2]float64{0, 500}},
		Trials: []results.TrialSummary{tr(0, 1, 480), tr(0, 2, 470), tr(0, 7, 200), tr(0, 8, 220), tr(0, 9, 210),
			tr(1, 1, 400), tr(1, 2, 410), tr(1, 7, 395), tr(1, 8, 405), tr(1, 9, 400),
			tr(2, 1, 450), tr(2, 2, 460), tr(3, 1, 100)},
		Confirmations: []results.Confirmation{{Config: 0, RerunScore: ptr(210), RerunSeeds: 3}, {Config: 1, RerunScore: ptr(400), RerunSeeds: 3}}}
	rows := Leaderboard(res)
	var order []int
	for _, r := range rows {
		order = append(order, r.Config)
	}
	if !equalInts(order, []int{1, 0, 2, 3}) {
		t.Fatalf("order = %v, want [1 0 2 3]: confirmed by their fresh-seed score, then the others by mean", order)
	}
	if !rows[0].Confirmed || *rows[0].Fresh != 400 || rows[2].Confirmed {
		t.Errorf("rows = %+v, want configurations 1 and 0 confirmed, 2 not", rows)
	}
	if !math.IsNaN(rows[2].Lo) || math.IsNaN(rows[0].Lo) || rows[1].Hi > 500 {
		t.Errorf("intervals: config 2 [%v, %v] (two seeds: none), config 1 [%v, %v], config 0 [%v, %v] (within [0, 500])",
			rows[2].Lo, rows[2].Hi, rows[0].Lo, rows[0].Hi, rows[1].Lo, rows[1].Hi)
	}
}
