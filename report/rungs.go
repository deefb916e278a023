package report

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
)

// RungValue is one configuration's value at one decision step of early_terminate: the IQM over its
// seeds that reached the step of their windowed objective there.
type RungValue struct {
	Config int
	Step   int64 // the decision step; the budget for the final column
	Value  float64
	Seeds  int
}

// RungValues are the values the rung plot draws, per configuration in plan order, at each decision
// step the configuration reached and, for those that completed, at the budget. At a decision step the
// value is the one the pruner compared: from compared (results.json's rung_values, carried from the
// pruner's state) where it holds one, else a pruned trial's (its summary's pruning). Only without
// either (a results.json without rung_values) is it computed from the stored
// curves as a worker computes it (the mean over the last 10% of the steps so far, at least the last
// record, at the first record at or past the step), close to, not equal to, what the pruner saw on
// thinned curves. The budget column is always from the curves.
func RungValues(trials []Trial, steps []int64, budget int64, compared []results.ConfigRungs) [][]RungValue {
	carried := map[int]results.Floats{}
	for _, c := range compared {
		carried[c.Config] = c.Values
	}
	byConfig := map[int][]Trial{}
	var configs []int
	for _, t := range trials {
		if t.GPUClass != "" {
			continue // a confirm re-run on another GPU class: never compared at a rung
		}
		if _, ok := byConfig[t.Config]; !ok {
			configs = append(configs, t.Config)
		}
		byConfig[t.Config] = append(byConfig[t.Config], t)
	}
	sort.Ints(configs)
	cols := append(append([]int64{}, steps...), budget)
	var out [][]RungValue
	for _, c := range configs {
		var row []RungValue
		for k, step := range cols {
			final := k == len(steps)
			if v, ok := carried[c]; ok && !final && k < len(v) {
				if isFinite(v[k]) {
					row = append(row, RungValue{Config: c, Step: step, Value: v[k], Seeds: reached(byConfig[c], step)})
					continue
				}
				break
			}
			var vals []float64
			for _, t := range byConfig[c] {
				if p := t.Pruning; p != nil && !final && p.Rung == k && p.Value != nil {
					vals = []float64{*p.Value} // the configuration's IQM as the pruner compared it
					break
				}
				if t.Steps < step || final && t.Outcome != results.OutcomeCompleted {
					continue
				}
				if v, ok := windowAt(t.Curve, step); ok {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				break
			}
			row = append(row, RungValue{Config: c, Step: step, Value: diagnostics.IQM(vals), Seeds: len(vals)})
		}
		if len(row) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// reached counts the trials that reached step (or were stopped at it).
func reached(trials []Trial, step int64) int {
	n := 0
	for _, t := range trials {
		if t.Steps >= step || t.Pruning != nil && t.Pruning.Step == step {
			n++
		}
	}
	return n
}

// windowAt is a curve's windowed value at step: the segment that stops at step ends at the first
// point at or past it, and its value is the worker's diagnostics.ObjectiveWindow over the finite points
// up to there.
func windowAt(curve []Point, step int64) (float64, bool) {
	end := sort.Search(len(curve), func(i int) bool { return curve[i].Step >= step })
	if end == len(curve) {
		end--
	}
	var w diagnostics.ObjectiveWindow
	for _, p := range curve[:end+1] {
		if isFinite(p.Value) {
			w.Add(p.Step, p.Value)
		}
	}
	return w.Mean()
}

// rungPlot draws each configuration's value at each decision step (one column per rung, the last the
// budget), a line per configuration coloured by how it ended, a cross where it was stopped and a bar
// at the cutoff it missed.
func rungPlot(in *Input, trials []Trial, steps []int64) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Configurations at each decision step (" + in.Results.Metric.Name + ", IQM over seeds)"
	p.X.Label.Text, p.Y.Label.Text = "decision step", in.Results.Metric.Name
	budget := in.totalSteps()
	outcome := map[int]string{}
	cutoff := map[int]*results.Pruning{}
	for _, t := range trials {
		o := outcome[t.Config]
		switch {
		case t.Outcome == results.OutcomeCompleted:
			outcome[t.Config] = t.Outcome
		case o == "" || o == results.OutcomePruned && t.Outcome == results.OutcomeDiverged:
			outcome[t.Config] = t.Outcome
		}
		if t.Pruning != nil && t.Pruning.Rung >= 0 {
			cutoff[t.Config] = t.Pruning
		}
	}
	rows := RungValues(trials, steps, budget, in.Results.RungValues)
	for _, row := range rows {
		c := colorOf(outcome[row[0].Config])
		xy := make(plotter.XYs, len(row))
		for i, v := range row {
			xy[i] = plotter.XY{X: float64(i), Y: v.Value}
		}
		if len(xy) > 1 {
			l, _ := plotter.NewLine(xy)
			l.Color, l.Width = fade(c, 0xc0), vg.Points(1)
			p.Add(l)
		}
		s, _ := plotter.NewScatter(xy)
		s.Color, s.Radius = c, vg.Points(2)
		p.Add(s)
		if pr := cutoff[row[0].Config]; pr != nil && outcome[row[0].Config] == results.OutcomePruned && pr.Rung < len(row) {
			last, _ := plotter.NewScatter(plotter.XYs{xy[pr.Rung]})
			last.Color, last.Shape, last.Radius = c, draw.CrossGlyph{}, vg.Points(5)
			p.Add(last)
			if pr.Cutoff != nil && isFinite(*pr.Cutoff) {
				bar, _ := plotter.NewLine(plotter.XYs{{X: float64(pr.Rung) - 0.15, Y: *pr.Cutoff}, {X: float64(pr.Rung) + 0.15, Y: *pr.Cutoff}})
				bar.Color, bar.Width = fade(colorOf(results.OutcomeFailed), 0x90), vg.Points(1.5)
				p.Add(bar)
			}
		}
	}
	var ticks []plot.Tick
	for i, s := range append(append([]int64{}, steps...), budget) {
		label := groupDigits(s)
		if i == len(steps) {
			label += " (end)"
		}
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, float64(len(steps))+0.3
	if len(rows) == 0 {
		p.Y.Min, p.Y.Max = 0, 1
	}
	p.Legend.Top, p.Legend.Left = true, true
	for _, o := range results.Outcomes {
		n := 0
		for _, got := range outcome {
			if got == o {
				n++
			}
		}
		if n > 0 {
			l, _ := plotter.NewLine(plotter.XYs{{}}) // a legend swatch only
			l.Color, l.Width = colorOf(o), vg.Points(2)
			p.Legend.Add(fmt.Sprintf("%s (%d configurations)", o, n), l)
		}
	}
	return p
}

// prunedValue is a pruned trial's last windowed value at a rung: its curve's windowed objective (as a
// worker computes it) at the decision step it was stopped at; without a stored curve, the value the
// pruner compared there (its configuration's IQM over the seeds); without either, the objective its
// summary kept from its last segment. false for a trial that was not pruned or has none of them.
func prunedValue(t Trial) (float64, bool) {
	if t.Outcome != results.OutcomePruned {
		return 0, false
	}
	step := t.Steps
	if t.Pruning != nil && t.Pruning.Step > 0 {
		step = t.Pruning.Step
	}
	if len(t.Curve) > 0 {
		if v, ok := windowAt(t.Curve, step); ok && isFinite(v) {
			return v, true
		}
	}
	if t.Pruning != nil && t.Pruning.Value != nil && isFinite(*t.Pruning.Value) {
		return *t.Pruning.Value, true
	}
	if t.Objective != nil && isFinite(*t.Objective) {
		return *t.Objective, true
	}
	return 0, false
}
