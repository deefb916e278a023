package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// paretoSeed is one seed of a configuration of paretoInput: its outcome, objective and the step it
// reached the target at (0: never).
type paretoSeed struct {
	outcome string
	ret     float64
	reached int64
}

// paretoConfigs are paretoInput's six configurations, five seeds each:
//
//	0: the best return of the feasible ones, slow to the target: on the front
//	1: a worse return, fast to the target: on the front
//	2: worse return and slower than 0: dominated (rank 2)
//	3: the best return and the fastest, but a seed diverged: infeasible, never on the front
//	4: a seed pruned: not ranked
//	5: two seeds of five never reach the target (never) and one failed: rank 3
var paretoConfigs = [][]paretoSeed{
	{{"completed", -150, 80000}, {"completed", -155, 82000}, {"completed", -160, 84000}, {"completed", -158, 86000}, {"completed", -152, 88000}},
	{{"completed", -190, 30000}, {"completed", -185, 32000}, {"completed", -188, 35000}, {"completed", -192, 38000}, {"completed", -186, 40000}},
	{{"completed", -170, 95000}, {"completed", -172, 96000}, {"completed", -175, 97000}, {"completed", -171, 98000}, {"completed", -173, 99000}},
	{{"completed", -100, 10000}, {"diverged", 0, 0}, {"completed", -100, 10000}, {"completed", -101, 10000}, {"completed", -99, 10000}},
	{{"pruned", 0, 0}, {"completed", -120, 20000}, {"completed", -121, 20000}, {"completed", -119, 20000}, {"completed", -120, 20000}},
	{{"completed", -300, 0}, {"completed", -310, 0}, {"completed", -290, 60000}, {"completed", -305, 62000}, {"failed", 0, 0}},
}

// paretoInput is a sweep of paretoConfigs (lr 1e-4 × 1.5^i, three digits) with the given metric list, seeds 1–5, and
// extra more configurations whose return trades against their steps to the target (for a fuller plot).
func paretoInput(t *testing.T, metric string, extra int) *Input {
	lrs := make([]string, len(paretoConfigs)+extra)
	for i := range lrs {
		lrs[i] = strconv.FormatFloat(1e-4*math.Pow(1.5, float64(i)), 'g', 3, 64)
	}
	spec := decodeSpec(t, `name: pareto
trainer: {command: [python, t.py], total_steps: 100000}
metric: `+metric+`
seeds: [1, 2, 3, 4, 5]
parameters:
  lr: {values: [`+strings.Join(lrs, ", ")+`]}
`)
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/pareto/abc", Name: "pareto", Status: "completed",
		Metric: spec.Metric, Params: []string{"lr"}}, Spec: spec}
	configs := slices.Clone(paretoConfigs)
	for k := range extra {
		var seeds []paretoSeed
		for s := range 5 {
			// Faster configurations reach lower returns; every fourth has a seed that fails.
			steps := int64(25000 + 5000*k + 700*s)
			seed := paretoSeed{"completed", -240 + 5*float64(k) + 2*float64(s%3) - float64(k*k)/8, steps}
			if k%4 == 3 && s == 4 {
				seed = paretoSeed{"failed", 0, 0}
			}
			seeds = append(seeds, seed)
		}
		configs = append(configs, seeds)
	}
	for c, seeds := range configs {
		lr, _ := strconv.ParseFloat(lrs[c], 64)
		for i, s := range seeds {
			seed := int64(i + 1)
			tr := results.TrialSummary{TrialID: sweeps.TrialID(c, seed), Config: c, Seed: seed, Params: map[string]any{"lr": lr},
				Outcome: s.outcome, Steps: 100000, WallSeconds: 60, TargetStep: s.reached}
			switch s.outcome {
			case results.OutcomeCompleted:
				tr.Objective = ptr(s.ret)
			case results.OutcomeDiverged:
				tr.Steps, tr.StopRule = 40000, "non_finite"
			case results.OutcomePruned:
				tr.Steps, tr.StopRule = 30000, "asha"
			}
			in.Results.Trials = append(in.Results.Trials, tr)
		}
	}
	return in
}

const (
	threeObjectives = "[{name: episode_return, goal: maximize}, {name: env_steps, target: -200}, {name: seed_failure_rate}]"
	twoObjectives   = "[{name: episode_return, goal: maximize}, {name: env_steps, target: -200}]"
)

func TestParetoRows(t *testing.T) {
	in := paretoInput(t, threeObjectives, 0)
	objs := in.Spec.Objectives
	points := results.Objectives(in.Spec, in.Results.Trials)
	rows, left := ParetoRows(objs, points, ParetoTableExtra)
	if left != 0 || len(rows) != 6 {
		t.Fatalf("%d rows, %d left out; want 6, 0", len(rows), left)
	}
	var order []int
	for _, r := range rows {
		order = append(order, r.Config)
	}
	if want := []int{0, 1, 2, 5, 3, 4}; !slices.Equal(order, want) {
		t.Errorf("rows in order %v, want %v (front, rank 2, rank 3, then the infeasible and the pruned)", order, want)
	}
	byConfig := map[int]ParetoRow{}
	for _, r := range rows {
		byConfig[r.Config] = r
	}
	for c, wantRank := range map[int]int{0: 1, 1: 1, 2: 2, 5: 3, 3: 0, 4: 0} {
		if r := byConfig[c]; r.Rank != wantRank || r.OnFront() != (wantRank == 1) {
			t.Errorf("configuration %d: rank %d, on the front %v; want rank %d", c, r.Rank, r.OnFront(), wantRank)
		}
	}
	if r := byConfig[3]; r.OnFront() || r.Why != results.WhyDiverged {
		t.Errorf("infeasible configuration 3: rank %d why %q; want never on the front, why %q", r.Rank, r.Why, results.WhyDiverged)
	}
	if r := byConfig[4]; r.Why != results.WhyPruned {
		t.Errorf("pruned configuration 4: why %q, want %q", r.Why, results.WhyPruned)
	}
	// Configuration 0: return IQM −155 (the middle three of five), steps IQM 84 000, no seed failed.
	r0 := byConfig[0]
	if !strings.HasPrefix(r0.Values[0], "-155 [") || !strings.HasPrefix(r0.Values[1], "84000 [") || r0.Values[2] != "0%" {
		t.Errorf("configuration 0 values %q, want -155 [..], 84000 [..], 0%%", r0.Values)
	}
	if lo, hi := intervalOf(t, r0.Values[0]); !(lo <= -155 && -155 <= hi && lo < hi) {
		t.Errorf("configuration 0 return interval [%v, %v] does not hold -155", lo, hi)
	}
	if r0.Reached != "5 of 5 seeds" {
		t.Errorf("configuration 0 reached %q, want 5 of 5 seeds", r0.Reached)
	}
	// Configuration 5: two of five seeds never reached the target: never, without an interval.
	r5 := byConfig[5]
	if r5.Values[1] != "never" || r5.Reached != "2 of 5 seeds" || r5.Values[2] != "20%" {
		t.Errorf("configuration 5: steps %q, reached %q, failures %q; want never, 2 of 5 seeds, 20%%", r5.Values[1], r5.Reached, r5.Values[2])
	}
	// With one row after the front, the rest are counted as left out.
	rows, left = ParetoRows(objs, points, 1)
	if len(rows) != 3 || left != 3 || rows[2].Config != 2 {
		t.Errorf("capped at the front plus 1: %d rows (last %d), %d left; want 3 (last 2), 3", len(rows), rows[len(rows)-1].Config, left)
	}
}

// intervalOf reads the interval of a value written "v [lo, hi]".
func intervalOf(t *testing.T, s string) (lo, hi float64) {
	t.Helper()
	_, in, ok := strings.Cut(s, "[")
	if _, err := fmt.Sscanf(strings.TrimSuffix(in, "]"), "%g, %g", &lo, &hi); !ok || err != nil {
		t.Fatalf("%q holds no interval: %v", s, err)
	}
	return lo, hi
}

// The front's table lists the front by crowding distance, most isolated first.
func TestParetoRowsFrontByCrowding(t *testing.T) {
	points := []results.ConfigPoint{
		{Config: 0, Rank: 1, Crowding: 0.5}, {Config: 1, Rank: 2, Crowding: math.Inf(1)}, {Config: 2, Rank: 1, Crowding: math.Inf(1)},
		{Config: 3, Rank: 1, Crowding: 1.2}, {Config: 4, Why: results.WhyRunning}, {Config: 5, Rank: 1, Crowding: math.Inf(1)},
	}
	for i := range points {
		points[i].Values, points[i].Low, points[i].High = []float64{1}, results.Floats{math.NaN()}, results.Floats{math.NaN()}
	}
	rows, _ := ParetoRows([]sweeps.Objective{{Name: "r", Goal: sweeps.GoalMaximize}}, points, 20)
	var order []int
	for _, r := range rows {
		order = append(order, r.Config)
	}
	if want := []int{2, 5, 3, 0, 1, 4}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if rows[0].Values[0] != "1" {
		t.Errorf("a value without an interval is written %q, want 1", rows[0].Values[0])
	}
}

func TestThresholdRows(t *testing.T) {
	in := paretoInput(t, threeObjectives, 0)
	points := results.Objectives(in.Spec, in.Results.Trials)
	rows, left := ThresholdRows(in.Spec.Objectives, 1, points, 50)
	var order []int
	for _, r := range rows {
		order = append(order, r.Config)
	}
	// Configuration 4's pruned seed never reached the target, one of five: its IQM stays finite.
	if want := []int{3, 4, 1, 0, 2, 5}; left != 0 || !slices.Equal(order, want) {
		t.Errorf("order %v (%d left), want %v: fewest steps first, never last", order, left, want)
	}
	last := rows[len(rows)-1]
	if last.Steps != "never" || last.Reached != "2 of 5 seeds" {
		t.Errorf("configuration 5: %q, %q; want never, 2 of 5 seeds", last.Steps, last.Reached)
	}
	if rows[0].Why != results.WhyDiverged || rows[1].Reached != "4 of 5 seeds" || !strings.HasPrefix(rows[1].Steps, "20000") {
		t.Errorf("rows %+v", rows[:2])
	}
	rows, left = ThresholdRows(in.Spec.Objectives, 1, points, 2)
	if len(rows) != 2 || left != 4 {
		t.Errorf("capped at 2: %d rows, %d left; want 2, 4", len(rows), left)
	}
}

// The infeasible configuration is drawn as a cross and never among the front's points; the one that
// never reached the target is drawn at the axis's "never" end.
func TestParetoPoints(t *testing.T) {
	in := paretoInput(t, twoObjectives, 0)
	points := results.Objectives(in.Spec, in.Results.Trials)
	g := paretoPoints(points, 0, 1)
	if !slices.Equal(g.FrontConfigs, []int{0, 1}) {
		t.Errorf("front %v, want configurations 0 and 1", g.FrontConfigs)
	}
	if len(g.Infeasible) != 1 || g.Infeasible[0] != (plotter.XY{X: -100, Y: 10000}) {
		t.Errorf("infeasible %v, want configuration 3 at (-100, 10000)", g.Infeasible)
	}
	for _, p := range g.Front {
		if p.X == -100 {
			t.Errorf("the infeasible configuration is among the front's points %v", g.Front)
		}
	}
	if len(g.Dominated) != 2 || g.Undrawn != 1 {
		t.Errorf("%d dominated, %d not drawn; want 2 (configurations 2 and 5), 1 (the pruned 4)", len(g.Dominated), g.Undrawn)
	}
	if len(g.Never) != 1 || g.Never[0].Y != g.NeverY || !(g.NeverY > g.YRange[1]) || g.YRange[1] != 97000 {
		t.Errorf("never %v at %v (finite range %v); want configuration 5 past 97000", g.Never, g.NeverY, g.YRange)
	}
	if !math.IsNaN(g.NeverX) {
		t.Errorf("never on the return axis at %v, want none", g.NeverX)
	}
	// The attainment boundary of a maximised x and minimised y: the corner takes the smaller return and
	// the larger steps of its two neighbours.
	line := frontLine(g.Front, in.Spec.Objectives[0], in.Spec.Objectives[1])
	if len(line) != 3 || line[1].X != g.Front[1].X || line[1].Y != g.Front[0].Y {
		t.Errorf("front line %v from %v", line, g.Front)
	}
}

func renderPareto(t *testing.T, in *Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// figureOf is the figure with the given ID, failing the test when it has no inline <svg>.
func figureOf(t *testing.T, html, id string) string {
	t.Helper()
	i := strings.Index(html, `<figure id="`+id+`">`)
	if i < 0 || !strings.HasPrefix(html[i+len(`<figure id="`+id+`">`):], "<svg") {
		t.Fatalf("report lacks figure %q with an inline <svg>", id)
	}
	return html[i : i+strings.Index(html[i:], "</figure>")]
}

func TestRenderParetoTwoObjectives(t *testing.T) {
	html := renderPareto(t, paretoInput(t, twoObjectives, 0))
	fig := figureOf(t, html, FigurePareto)
	plot, caption, _ := strings.Cut(fig, "</svg>")
	for _, want := range []string{">episode_return (higher is better)</text>", ">env_steps_to_target (lower is better)</text>",
		">never</text>", ">a seed diverged: never on the front</text>", ">on the front (rank 1)</text>", ">dominated</text>",
		">front (attainment boundary)</text>", ">target never reached (at the axis end)</text>"} {
		if !strings.Contains(plot, want) {
			t.Errorf("Pareto plot lacks %q", want)
		}
	}
	for _, want := range []string{"never on the front whatever their values (1 drawn)", "drawn ringed at the end of that axis, on the tick labelled never",
		"1 configuration not ranked (pruned", "attainment boundary"} {
		if !strings.Contains(caption, want) {
			t.Errorf("Pareto caption lacks %q", want)
		}
	}
	if strings.Contains(html, `id="`+ParetoPairFigure(0, 1)+`"`) {
		t.Error("pairwise plots drawn for two objectives")
	}
	figureOf(t, html, FigureHypervolume)
	for _, want := range []string{`id="pareto-table"`, `id="threshold-table"`, `<tr class="front"><td class="n">0</td>`,
		`<b>1 (front)</b>`, "<td>" + results.WhyDiverged + "</td>", "5 of 5 seeds"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, `<tr class="front"><td class="n">3</td>`) {
		t.Error("the infeasible configuration 3 is marked on the front")
	}
}

func TestRenderParetoPairs(t *testing.T) {
	html := renderPareto(t, paretoInput(t, threeObjectives, 8))
	for _, id := range []string{ParetoPairFigure(0, 1), ParetoPairFigure(0, 2), ParetoPairFigure(1, 2), FigureHypervolume} {
		figureOf(t, html, id)
	}
	if strings.Contains(html, `<figure id="`+FigurePareto+`">`) {
		t.Error("one Pareto plot drawn for three objectives")
	}
	for _, want := range []string{`id="pareto-caption"`, "One plot per pair of the 3 objectives", "reference point 1.1",
		"each of the 3 objectives is scaled to [0, 1] over the ranked configurations", ">seed_failure_rate (lower is better)</text>",
		"<th>seed_failure_rate <span class=\"muted\">(lower is better)</span></th>",
		"minimize env_steps_to_target: environment steps until the windowed episode_return first reaches -200"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestRenderParetoCapsTheTable(t *testing.T) {
	in := paretoInput(t, threeObjectives, 30)
	points := results.Objectives(in.Spec, in.Results.Trials)
	front := 0
	for _, p := range points {
		if p.OnFront() {
			front++
		}
	}
	left := len(points) - front - ParetoTableExtra
	if left <= 0 {
		t.Fatalf("%d configurations, %d on the front: the test wants more than the table lists", len(points), front)
	}
	html := renderPareto(t, in)
	table := html[strings.Index(html, `<table id="pareto-table">`):]
	table = table[:strings.Index(table, "</table>")]
	if n := strings.Count(table, "<tr") - 1; n != front+ParetoTableExtra {
		t.Errorf("%d rows, want %d (the front and the next %d)", n, front+ParetoTableExtra, ParetoTableExtra)
	}
	if want := fmt.Sprintf("<b>%d more configurations</b> not listed", left); !strings.Contains(html, want) {
		t.Errorf("report lacks %q", want)
	}
}

// One objective, or no spec: no Pareto section.
func TestRenderParetoOmitted(t *testing.T) {
	for name, in := range map[string]*Input{"one objective": sampleInput(), "no spec": func() *Input { in := sampleInput(); in.Spec = nil; return in }(),
		"a list of one": paretoInput(t, "[{name: episode_return}]", 0)} {
		html := renderPareto(t, in)
		for _, id := range []string{"pareto", "pareto-table", "threshold-table", FigurePareto, FigureHypervolume} {
			if strings.Contains(html, `id="`+id+`"`) {
				t.Errorf("%s: report holds %q", name, id)
			}
		}
	}
}

// Without an env_steps target there is no threshold table, and no seeds-reached column.
func TestRenderParetoWithoutTarget(t *testing.T) {
	html := renderPareto(t, paretoInput(t, "[{name: episode_return}, {name: wall_seconds}]", 0))
	figureOf(t, html, FigurePareto)
	if strings.Contains(html, `id="threshold-table"`) || strings.Contains(html, "seeds reached the target") {
		t.Error("threshold table or seeds-reached column without an env_steps target")
	}
	if !strings.Contains(html, `id="pareto-table"`) {
		t.Error("no front's table")
	}
}

// A sweep with a precision setting gets a precision column in both tables.
func TestRenderParetoPrecision(t *testing.T) {
	in := paretoInput(t, twoObjectives, 0)
	for i := range in.Results.Trials {
		in.Results.Trials[i].Precision = "tf32"
	}
	html := renderPareto(t, in)
	for _, id := range []string{"pareto-table", "threshold-table"} {
		table := html[strings.Index(html, `<table id="`+id+`">`):]
		table = table[:strings.Index(table, "</table>")]
		if !strings.Contains(table, "<th>precision</th>") || strings.Count(table, "<td>tf32</td>") != 6 {
			t.Errorf("%s lacks the precision column with each configuration's setting", id)
		}
	}
	if html := renderPareto(t, paretoInput(t, twoObjectives, 0)); strings.Contains(html, "<th>precision</th>") {
		t.Error("a precision column without a precision setting")
	}
}

// While no trial has ended nothing is ranked: the section holds an empty plot and the table's reasons,
// no hypervolume and no threshold table.
func TestRenderParetoNothingEnded(t *testing.T) {
	in := paretoInput(t, twoObjectives, 0)
	for i := range in.Results.Trials {
		tr := &in.Results.Trials[i]
		tr.Outcome, tr.Objective, tr.TargetStep = "", nil, 0
	}
	html := renderPareto(t, in)
	figureOf(t, html, FigurePareto)
	if strings.Contains(html, `id="`+FigureHypervolume+`"`) || strings.Contains(html, `id="threshold-table"`) {
		t.Error("hypervolume or threshold table drawn with no configuration ended")
	}
	if n := strings.Count(html, "<td>"+results.WhyRunning+"</td>"); n != 6 {
		t.Errorf("%d rows say %q, want 6", n, results.WhyRunning)
	}
	if !strings.Contains(html, "6 configurations not ranked") {
		t.Error("the caption does not count the configurations not drawn")
	}
}
