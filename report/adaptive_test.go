package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

func decodeSpec(t *testing.T, y string) *sweeps.Spec {
	t.Helper()
	spec, err := sweeps.Decode(strings.NewReader(y), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec
}

// ashaInput is sampleInput under asha (decision steps 1000, 3000, 9000 of a 10 000-step budget) with
// configurations 0 and 1 (lr 1e-4) pruned at the first rung: their curves rise from 0.1 to 2 over the
// first 1000 steps.
func ashaInput(t *testing.T) *Input {
	in := sampleInput()
	in.Spec = decodeSpec(t, `name: s
trainer: {command: [python, t.py], total_steps: 10000}
metric: {name: reward, goal: maximize}
parameters: {lr: {values: [0.0001, 0.001, 0.01]}, clip: {values: [0.1, 0.2]}}
early_terminate: {type: asha, min_steps: 1000, eta: 3}
`)
	for i := range in.Results.Trials {
		tr := &in.Results.Trials[i]
		if tr.Config > 1 {
			continue
		}
		// A pruned trial keeps the objective of its last segment end, here one ending at step 500.
		tr.Outcome, tr.Steps, tr.Objective = results.OutcomePruned, 1000, ptr(0.9)
		tr.Pruning = &results.Pruning{Rule: "asha", Rung: 0, Step: 1000, Value: ptr(1.5), Cutoff: ptr(5), Peers: 5}
		var curve []Point
		for s := int64(100); s <= 1000; s += 100 {
			curve = append(curve, Point{s, float64(s) / 500}) // 0.2 … 2
		}
		in.Curves[tr.TrialID] = curve
	}
	return in
}

// A pruned trial's value is its curve's windowed objective at the step it was stopped at, not the
// worst value and not nothing; without a curve, the value the pruner compared.
func TestPrunedValue(t *testing.T) {
	in := ashaInput(t)
	trials := in.trials()
	v, ok := prunedValue(trials[0])
	want, _ := windowAt(in.Curves[trials[0].TrialID], 1000)
	if !ok || v != want || v < 1.5 || v > 2 {
		t.Errorf("prunedValue = %v, %v; want the windowed value %v at step 1000", v, ok, want)
	}
	noCurve := trials[0]
	noCurve.Curve = nil
	if v, ok := prunedValue(noCurve); !ok || v != 1.5 {
		t.Errorf("prunedValue without a curve = %v, %v; want the pruner's 1.5", v, ok)
	}
	noCurve.Pruning = nil
	if v, ok := prunedValue(noCurve); !ok || v != 0.9 {
		t.Errorf("prunedValue without a curve or the pruner's value = %v, %v; want its summary's 0.9", v, ok)
	}
	if _, ok := prunedValue(trials[len(trials)-1]); ok {
		t.Errorf("a completed trial has a pruned value")
	}
}

// Sensitivity counts the pruned trials by their rung value: lr's lowest value, all pruned, is a group
// of its own rather than missing.
func TestSensitivityCountsPruned(t *testing.T) {
	in := ashaInput(t)
	trials := in.trials()
	samples := sensitivitySamples(trials, nil)
	got := Sensitivities(samples, in.Results.Params)
	var lr *Sensitivity
	for i := range got {
		if got[i].Param == "lr" {
			lr = &got[i]
		}
	}
	// 12 trials: 4 pruned, 2 diverged (no value), 6 completed.
	if lr == nil || lr.Scored != 10 || lr.Pruned != 4 || lr.Groups != 3 {
		t.Fatalf("lr sensitivity %+v: want 10 trials counted, 4 of them pruned, 3 groups", lr)
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`id="sensitivity-note"`, "Pruned trials (4) count by the last windowed value at the rung",
		"<th>of them pruned</th>", "pruned (value at its rung)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// Parallel coordinates take a pruned trial to its rung value on the objective axis, dashed in the
// pruned colour, and say so in the legend; a diverged trial still stops at the last parameter.
func TestParallelCoordinatesPruned(t *testing.T) {
	in := ashaInput(t)
	trials := in.trials()
	var axes []axis
	for _, n := range in.Results.Params {
		axes = append(axes, newAxis(in, n, nil))
	}
	lines, lo, hi := parallelLines(in, trials, axes, nil)
	byID := map[string]pcLine{}
	for _, l := range lines {
		byID[l.TrialID] = l
	}
	pv, _ := prunedValue(trials[0])
	if lo != pv {
		t.Errorf("objective axis starts at %v, want the pruned trials' rung value %v", lo, pv)
	}
	p := byID[trials[0].TrialID]
	if !p.Pruned || !p.Dashed || len(p.XY) != len(axes)+1 || p.XY[len(axes)].Y != (pv-lo)/(hi-lo) {
		t.Errorf("pruned trial's line %+v: want dashed, pruned, ending on the objective axis at its rung value", p)
	}
	if c := p.Color; c != fade(colorOf(results.OutcomePruned), 0xc0) {
		t.Errorf("pruned line colour %v, want the pruned colour", c)
	}
	var diverged pcLine
	for _, tr := range trials {
		if tr.Outcome == results.OutcomeDiverged {
			diverged = byID[tr.TrialID]
		}
	}
	if diverged.Pruned || len(diverged.XY) != len(axes) {
		t.Errorf("diverged trial's line %+v: want it to stop at the last parameter axis", diverged)
	}
	s, err := svg(parallelCoordinates(in, trials, nil), 600, 400)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "pruned: last windowed value at its rung") {
		t.Errorf("parallel coordinates lack the pruned legend")
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "A pruned trial&#39;s line ends at its last windowed value at the rung it was stopped at, dashed orange") {
		t.Errorf("the parallel coordinates' caption does not say how pruned trials are drawn")
	}
	b.Reset()
	if err := Render(&b, sampleInputCompleted()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "dashed orange") {
		t.Errorf("a sweep with no pruned trial has the pruned caption")
	}
}

// Stopped trials that reached at most half the budget get a second learning-curve figure zoomed to
// the steps they reached, its value axis fitted to that range.
func TestEarlyCurves(t *testing.T) {
	in := ashaInput(t)
	trials := in.trials()
	// The diverged trials stop at 5000, half the budget: they set the reach.
	if got := earlyReach(in, trials); got != 5000 {
		t.Errorf("earlyReach = %d, want 5000", got)
	}
	for i := range in.Results.Trials { // without the diverged trials, the pruned ones at 1000
		if tr := &in.Results.Trials[i]; tr.Outcome == results.OutcomeDiverged {
			tr.Outcome, tr.Steps = results.OutcomeCompleted, 10000
			in.Curves[tr.TrialID] = in.Curves[in.Results.Trials[i-1].TrialID]
		}
	}
	trials = in.trials()
	reach := earlyReach(in, trials)
	if reach != 1000 {
		t.Fatalf("earlyReach = %d, want 1000", reach)
	}
	p := earlyCurves(in, trials, reach)
	if p.X.Min != 0 || p.X.Max != 1100 {
		t.Errorf("zoomed x axis [%v, %v], want [0, 1100]", p.X.Min, p.X.Max)
	}
	// Within 1100 steps the values run from 0.2 (pruned, step 100) to 110 (lr 1e-2 at step 1000 is 100,
	// at 1100 none): the y axis fits those, not the 1000 a full curve reaches.
	if p.Y.Max > 200 || p.Y.Min > 0.2 {
		t.Errorf("zoomed y axis [%v, %v], want it fitted to the values up to step 1100", p.Y.Min, p.Y.Max)
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<figure id="`+FigureEarlyCurves+`"><svg`) || !strings.Contains(b.String(), "zoomed to the first 1\u202f000 steps") {
		t.Errorf("report lacks the zoomed learning curves")
	}
	// No trial stopped early: no zoom.
	b.Reset()
	if err := Render(&b, sampleInputCompleted()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), FigureEarlyCurves) {
		t.Errorf("a sweep with no stopped trial has the zoomed curves")
	}
}

// sampleInputCompleted is sampleInput with every trial completed.
func sampleInputCompleted() *Input {
	in := sampleInput()
	for i := range in.Results.Trials {
		tr := &in.Results.Trials[i]
		if tr.Outcome != results.OutcomeCompleted {
			tr.Outcome, tr.Steps, tr.Objective = results.OutcomeCompleted, 10000, ptr(1)
			in.Curves[tr.TrialID] = in.Curves[in.Results.Trials[i-1].TrialID]
		}
	}
	return in
}

// bayesInput is a bayes sweep of 8 configurations × 2 seeds, 3 of them start-up draws, configuration
// 4 pruned, configuration 6 diverged on a seed, and configuration 5 re-run on seed 100 (left out of
// the history).
func bayesInput(t *testing.T) *Input {
	spec := decodeSpec(t, `name: b
trainer: {command: [python, t.py], total_steps: 10000}
metric: {name: reward, goal: maximize}
method: bayes
trials: 8
seeds: [1, 2]
parameters: {lr: {min: 0.0001, max: 0.01, distribution: log_uniform}, clip: {min: 0.1, max: 0.3}}
bayes: {startup_trials: 3, rerun_top: 1, rerun_seeds: [100]}
early_terminate: {type: asha, min_steps: 1000, eta: 3}
`)
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/b/1", Name: "b", Status: "completed",
		Metric: spec.Metric, Params: []string{"lr", "clip"}}, Spec: spec, Curves: map[string][]Point{}}
	scores := []float64{10, 30, 20, 25, 0, 60, 0, 50}
	add := func(c int, seed int64, obj float64) {
		tr := results.TrialSummary{TrialID: sweeps.TrialID(c, seed), Config: c, Seed: seed, Outcome: results.OutcomeCompleted,
			Params: map[string]any{"lr": 1e-4 * math.Pow(1.8, float64(c)), "clip": 0.1 + 0.02*float64(c)}, Steps: 10000, Objective: ptr(obj)}
		var curve []Point
		for s := int64(500); s <= 10000; s += 500 {
			curve = append(curve, Point{s, obj * float64(s) / 10000})
		}
		switch {
		case c == 4:
			tr.Outcome, tr.Steps, tr.Objective = results.OutcomePruned, 1000, nil
			tr.Pruning = &results.Pruning{Rule: "asha", Rung: 0, Step: 1000, Value: ptr(1), Cutoff: ptr(2), Peers: 3}
			curve = []Point{{500, 0.5}, {1000, 1}}
		case c == 6 && seed == 2:
			tr.Outcome, tr.Steps, tr.Objective = results.OutcomeDiverged, 3000, nil
			curve = curve[:6]
		}
		in.Curves[tr.TrialID] = curve
		in.Results.Trials = append(in.Results.Trials, tr)
	}
	for c, s := range scores {
		add(c, 1, s)
		add(c, 2, s+2)
	}
	add(5, 100, 40)
	in.Results.Confirmations = results.Confirmations(in.Results.Trials, spec.Seeds, true, nil)
	return in
}

// A bayes sweep's report has an optimisation history: each configuration's search score in the
// order proposed, start-up draws told apart from TPE proposals, pruned ones at their rung value.
func TestOptimizationHistory(t *testing.T) {
	in := bayesInput(t)
	points, infeasible := optimizationHistory(in.Spec, in.trials())
	if infeasible != 1 {
		t.Errorf("infeasible = %d, want 1 (configuration 6 diverged on a seed)", infeasible)
	}
	if len(points) != 7 {
		t.Fatalf("%d points, want 7: %+v", len(points), points)
	}
	for _, p := range points {
		if p.Startup != (p.Config < 3) {
			t.Errorf("configuration %d: startup %v, want %v", p.Config, p.Startup, p.Config < 3)
		}
		switch p.Config {
		case 4:
			if !p.Pruned || p.Value != 1 {
				t.Errorf("configuration 4: %+v, want pruned at its rung value 1", p)
			}
		case 5:
			if p.Value != 61 { // IQM of 60 and 62; the re-run seed's 40 is not a search score
				t.Errorf("configuration 5: %v, want 61 from its search seeds only", p.Value)
			}
		}
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<figure id="` + FigureHistory + `"><svg`, "Configurations 0–2 are the start-up draws",
		"start-up draw (random)", "TPE proposal", "best so far", "1 configuration with no score"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	in.Spec.Method = sweeps.MethodRandom
	b.Reset()
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), FigureHistory) {
		t.Errorf("a random sweep has an optimisation history")
	}
}

// pbtInput is a pbt sweep of three members: m0 trained lr 1e-3 for 1000 steps then 1e-2 for 3000 (an
// exploit of m1), m1 lr 1e-4 throughout, m2 lr 1e-3 then 1e-4 from step 3000 on.
func pbtInput(t *testing.T) *Input {
	spec := decodeSpec(t, `name: p
trainer: {command: [python, t.py], total_steps: 4000}
metric: {name: reward, goal: maximize}
method: pbt
seeds: [1]
parameters: {lr: {min: 0.00001, max: 0.1, distribution: log_uniform}, opt: {values: [adam, sgd]}}
pbt: {population: 3, ready_steps: 1000}
`)
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/p/1", Name: "p", Status: "completed",
		Metric: spec.Metric, Params: []string{"lr", "opt"}}, Spec: spec, Curves: map[string][]Point{}}
	member := func(id string, obj float64, final map[string]any, ex ...results.Exploit) {
		in.Results.Trials = append(in.Results.Trials, results.TrialSummary{TrialID: id, Config: len(in.Results.Trials), Outcome: results.OutcomeCompleted,
			Objective: ptr(obj), Steps: 4000, Seed: 1, Params: final, Exploits: ex})
		var curve []Point
		for s := int64(250); s <= 4000; s += 250 {
			curve = append(curve, Point{s, obj * float64(s) / 4000})
		}
		in.Curves[id] = curve
	}
	p := func(lr float64, opt string) map[string]any { return map[string]any{"lr": lr, "opt": opt} }
	member("m0", 90, p(1e-2, "sgd"), results.Exploit{Member: "m0", From: "m1", Step: 1000, Old: p(1e-3, "adam"), New: p(1e-2, "sgd")})
	member("m1", 20, p(1e-4, "adam"))
	member("m2", 50, p(1e-4, "adam"), results.Exploit{Member: "m2", From: "m0", Step: 3000, Old: p(1e-3, "sgd"), New: p(1e-4, "adam")})
	return in
}

// A pbt member counts in the sensitivity analysis with the parameters it trained under over its
// schedule, weighted by steps, not only the ones it ended with.
func TestPBTSensitivityTrainedUnder(t *testing.T) {
	in := pbtInput(t)
	lin := Lineage(in.Results.Trials)
	samples := sensitivitySamples(in.trials(), trainedParams(in, lin))
	got := map[string]map[string]any{}
	for _, s := range samples {
		got[s.TrialID] = s.Params
	}
	// m0: 1000 steps at 1e-3, 3000 at 1e-2: geometric mean 10^-2.25; sgd for 3000 of 4000 steps.
	if lr, _ := toFloat(got["m0"]["lr"]); math.Abs(math.Log10(lr)+2.25) > 1e-9 || got["m0"]["opt"] != "sgd" {
		t.Errorf("m0 trained under %v, want lr 10^-2.25 and opt sgd", got["m0"])
	}
	// m2: 3000 steps at 1e-3 and sgd, 1000 at 1e-4 and adam: 10^-3.25 and sgd, not its final 1e-4, adam.
	if lr, _ := toFloat(got["m2"]["lr"]); math.Abs(math.Log10(lr)+3.25) > 1e-9 || got["m2"]["opt"] != "sgd" {
		t.Errorf("m2 trained under %v, want lr 10^-3.25 and opt sgd", got["m2"])
	}
	if lr, _ := toFloat(got["m1"]["lr"]); lr != 1e-4 || got["m1"]["opt"] != "adam" {
		t.Errorf("m1 trained under %v, want its only parameters", got["m1"])
	}
	// Over the final parameters opt would split {sgd: 90} against {adam: 20, 50}; trained under, sgd
	// holds 90 and 50 and adam 20.
	sens := Sensitivities(samples, in.Results.Params)
	for _, s := range sens {
		if s.Param == "opt" && math.Abs(s.EtaSquared-etaSquared([]string{"sgd", "adam", "sgd"}, []float64{90, 20, 50})) > 1e-12 {
			t.Errorf("opt η² %v, want it over the parameters trained under", s.EtaSquared)
		}
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "counts with the parameters it trained under over its whole schedule") {
		t.Errorf("report does not say pbt sensitivity is over the parameters trained under")
	}
}

// A pbt member's parallel-coordinates line goes through the parameters it trained under, the same the
// sensitivity analysis counts it with, not the ones it ended with; the axes span those values and the
// caption says so.
func TestPBTParallelCoordinatesTrainedUnder(t *testing.T) {
	in := pbtInput(t)
	trained := trainedParams(in, Lineage(in.Results.Trials))
	var axes []axis
	for _, n := range in.Results.Params {
		axes = append(axes, newAxis(in, n, trained))
	}
	// lr (log_uniform, a log axis) over what was trained under: m0 10^-2.25, m1 1e-4, m2 10^-3.25.
	if a := axes[0]; !a.log || math.Abs(a.min+4) > 1e-9 || math.Abs(a.max+2.25) > 1e-9 {
		t.Fatalf("lr axis %+v: want log10 from -4 to -2.25, the values trained under", a)
	}
	lines, _, _ := parallelLines(in, in.trials(), axes, trained)
	byID := map[string]pcLine{}
	for _, l := range lines {
		byID[l.TrialID] = l
	}
	samples := map[string]Sample{}
	for _, s := range sensitivitySamples(in.trials(), trained) {
		samples[s.TrialID] = s
	}
	for _, tc := range []struct {
		id     string
		lr, op float64 // positions on the lr and opt axes (adam 0, sgd 1)
	}{
		{"m0", 1, 1},
		{"m1", 0, 0},
		// m2 ended with lr 1e-4 and adam (lr 0, opt 0) but trained 3000 of its 4000 steps with 1e-3 and
		// sgd: 10^-3.25 is (−3.25+4)/1.75 of the lr axis, and opt sgd.
		{"m2", 0.75 / 1.75, 1},
	} {
		l := byID[tc.id]
		if len(l.XY) != 3 || math.Abs(l.XY[0].Y-tc.lr) > 1e-9 || l.XY[1].Y != tc.op {
			t.Errorf("%s's line %v: want lr at %.4g and opt at %v, the parameters it trained under", tc.id, l.XY, tc.lr, tc.op)
		}
		for i, a := range axes {
			if got := a.pos(samples[tc.id].Params[a.name]); math.Abs(got-l.XY[i].Y) > 1e-12 {
				t.Errorf("%s on %s: line at %v, sensitivity sample at %v; want the same parameters", tc.id, a.name, l.XY[i].Y, got)
			}
		}
	}
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "A population-based training member&#39;s line goes through the parameters it trained under over its whole schedule") {
		t.Errorf("the parallel coordinates' caption does not say pbt members are drawn with the parameters they trained under")
	}
	b.Reset()
	if err := Render(&b, ashaInput(t)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "population-based training member&#39;s line") {
		t.Errorf("a sweep without pbt has the pbt caption")
	}
}
