package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// outcomeColor is each outcome's colour in every plot and table.
var outcomeColor = map[string]color.RGBA{
	results.OutcomeCompleted: {0x1f, 0x77, 0xb4, 0xff},
	results.OutcomeDiverged:  {0xd6, 0x27, 0x28, 0xff},
	results.OutcomePruned:    {0xff, 0x7f, 0x0e, 0xff},
	results.OutcomeFailed:    {0x7f, 0x7f, 0x7f, 0xff},
	results.OutcomeOOM:       {0x94, 0x67, 0xbd, 0xff},
	results.OutcomeCancelled: {0xbc, 0xbd, 0x22, 0xff},
}

func colorOf(outcome string) color.RGBA {
	if c, ok := outcomeColor[outcome]; ok {
		return c
	}
	return outcomeColor[results.OutcomeFailed]
}

func fade(c color.RGBA, alpha uint8) color.NRGBA { return color.NRGBA{c.R, c.G, c.B, alpha} }

// svg draws p on a w×h canvas and returns the <svg> element, ready to inline in HTML.
func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("report: draw %q: %w", p.Title.Text, err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:] // drop the XML declaration and comment: inline SVG has none
	}
	return s, nil
}

// learningCurves plots the objective against steps for every trial with a curve, coloured by outcome;
// a non-finite value breaks the line, and a cross marks where a diverged trial was stopped.
func learningCurves(in *Input, trials []Trial) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Learning curves (" + in.Results.Metric.Name + "), coloured by outcome"
	p.X.Label.Text, p.Y.Label.Text = "environment steps", in.Results.Metric.Name
	p.Legend.Top, p.Legend.Left = true, true
	drewAny := false
	for _, o := range results.Outcomes {
		n := 0
		for _, t := range trials {
			if t.Outcome != o || len(t.Curve) == 0 {
				continue
			}
			n++
			drewAny = addCurve(p, t) || drewAny
		}
		if n > 0 {
			l, _ := plotter.NewLine(plotter.XYs{{}}) // a legend swatch only; one point always makes a line
			l.Color, l.Width = colorOf(o), vg.Points(2)
			p.Legend.Add(fmt.Sprintf("%s (%d)", o, n), l)
		}
	}
	if !drewAny {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, float64(max(in.totalSteps(), 1)), 0, 1
	}
	return p
}

// addCurve adds one trial's curve to p and reports whether it drew anything.
func addCurve(p *plot.Plot, t Trial) bool {
	c := colorOf(t.Outcome)
	drew := false
	var run plotter.XYs
	flush := func() {
		switch {
		case len(run) > 1:
			l, _ := plotter.NewLine(run) // finite by construction
			l.Color, l.Width = fade(c, 0xb0), vg.Points(1)
			if t.Outcome != results.OutcomeCompleted {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.Add(l)
			drew = true
		case len(run) == 1:
			s, _ := plotter.NewScatter(run)
			s.Color, s.Radius = c, vg.Points(1.5)
			p.Add(s)
			drew = true
		}
		run = nil
	}
	var last plotter.XYs
	for _, pt := range t.Curve {
		if !isFinite(pt.Value) {
			flush()
			continue
		}
		run = append(run, plotter.XY{X: float64(pt.Step), Y: pt.Value})
		last = plotter.XYs{run[len(run)-1]}
	}
	flush()
	if (t.Outcome == results.OutcomeDiverged || t.Outcome == results.OutcomePruned) && last != nil {
		s, _ := plotter.NewScatter(last)
		s.Color, s.Shape, s.Radius = c, draw.CrossGlyph{}, vg.Points(4)
		p.Add(s)
	}
	return drew
}

// leaderboardPlot shows the best configurations' mean objective with its 95% interval and each seed.
func leaderboardPlot(in *Input, rows []Row) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Objective by configuration: mean, 95% CI over seeds, and each seed"
	p.X.Label.Text, p.Y.Label.Text = "configuration (best first)", in.Results.Metric.Name
	var ticks []plot.Tick
	var means, seeds plotter.XYs
	var errs plotter.YErrors
	for i, r := range rows {
		if r.Scored == 0 || i == 25 {
			break
		}
		x := float64(i + 1)
		ticks = append(ticks, plot.Tick{Value: x, Label: fmt.Sprintf("#%d", r.Config)})
		means = append(means, plotter.XY{X: x, Y: r.Mean})
		lo, hi := 0.0, 0.0
		if !math.IsNaN(r.Lo) {
			lo, hi = r.Mean-r.Lo, r.Hi-r.Mean
		}
		errs = append(errs, struct{ Low, High float64 }{lo, hi})
		for _, y := range r.Objective {
			seeds = append(seeds, plotter.XY{X: x + 0.15, Y: y})
		}
	}
	if len(means) == 0 {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		return p
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0.5, float64(len(means))+0.5
	bars, _ := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{means, errs})
	bars.Color, bars.Width = outcomeColor[results.OutcomeCompleted], vg.Points(1.5)
	dots, _ := plotter.NewScatter(means)
	dots.Color, dots.Shape, dots.Radius = outcomeColor[results.OutcomeCompleted], draw.CircleGlyph{}, vg.Points(3.5)
	each, _ := plotter.NewScatter(seeds)
	each.Color, each.Radius = fade(outcomeColor[results.OutcomeCompleted], 0x80), vg.Points(2)
	p.Add(plotter.NewGrid(), bars, dots, each)
	p.Legend.Add("mean ± 95% CI", dots)
	p.Legend.Add("one seed", each)
	p.Legend.Top = in.maximize()
	return p
}

// axis maps one parameter's values to [0, 1] for the parallel-coordinates plot.
type axis struct {
	name   string
	log    bool
	min    float64
	max    float64
	levels []string // categorical values, in order; nil for a numeric axis
}

// newAxis is the axis of one parameter over the values the plot draws: each trial's, a pbt member's
// the parameters it trained under (trained, as paramsOf gives them).
func newAxis(in *Input, name string, trained map[string]map[string]any) axis {
	var vals []any
	for _, t := range in.Results.Trials {
		vals = append(vals, paramsOf(t, trained)[name])
	}
	return axisOf(in.Spec, name, vals)
}

// axisOf is the axis of one parameter taking the values vals.
func axisOf(spec *sweeps.Spec, name string, vals []any) axis {
	a := axis{name: name}
	num, ok := numbers(vals)
	if !ok {
		seen := map[string]bool{}
		for _, v := range vals {
			if s := formatValue(v); !seen[s] {
				seen[s] = true
				a.levels = append(a.levels, s)
			}
		}
		sort.Strings(a.levels)
		return a
	}
	a.log = logScale(spec, name, num)
	a.min, a.max = math.Inf(1), math.Inf(-1)
	for _, x := range num {
		if a.log {
			x = math.Log10(x)
		}
		a.min, a.max = math.Min(a.min, x), math.Max(a.max, x)
	}
	return a
}

// pos is v's position on the axis, in [0, 1]; 0.5 when the axis has one value.
func (a axis) pos(v any) float64 {
	if a.levels != nil {
		i := sort.SearchStrings(a.levels, formatValue(v))
		if len(a.levels) == 1 {
			return 0.5
		}
		return float64(i) / float64(len(a.levels)-1)
	}
	x, _ := toFloat(v)
	if a.log {
		x = math.Log10(x)
	}
	if a.max == a.min {
		return 0.5
	}
	return (x - a.min) / (a.max - a.min)
}

func (a axis) label(end float64) string {
	if a.levels != nil {
		if end == 0 {
			return a.levels[0]
		}
		return a.levels[len(a.levels)-1]
	}
	x := a.min + end*(a.max-a.min)
	if a.log {
		x = math.Pow(10, x)
	}
	return formatValue(x)
}

// logScale says whether a parameter is best seen on a log axis: the spec samples it log-uniformly, or
// its values are positive and span a factor of 10 or more (learning rates, entropy coefficients).
func logScale(spec *sweeps.Spec, name string, xs []float64) bool {
	if spec != nil {
		for _, p := range spec.Parameters {
			if p.Name == name && p.Distribution == sweeps.DistLogUniform {
				return true
			}
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo > 0 && hi/lo >= 10
}

// pcLine is one trial's polyline on the parallel-coordinates plot.
type pcLine struct {
	TrialID string
	XY      plotter.XYs // one point per axis; the last on the objective axis when the trial has a value
	Color   color.Color
	Dashed  bool
	Pruned  bool // ends at its last windowed value at a rung
}

// parallelLines lays out each trial's polyline across axes and a last axis for the objective, scaled
// to [objMin, objMax]: a completed trial coloured by its objective (blue worst, red best); a pruned
// trial going on to its last windowed value at the rung it was stopped at, dashed in the pruned
// colour; any other trial without a finite objective dashed in its outcome's colour, stopping at the
// last parameter axis. A pbt member goes through the parameters it trained under (trained), as the
// sensitivity analysis counts it.
func parallelLines(in *Input, trials []Trial, axes []axis, trained map[string]map[string]any) (lines []pcLine, objMin, objMax float64) {
	value := func(t Trial) (float64, bool, bool) {
		if v, ok := prunedValue(t); ok {
			return v, true, true
		}
		if t.Objective != nil && isFinite(*t.Objective) {
			return *t.Objective, true, false
		}
		return 0, false, false
	}
	objMin, objMax = math.Inf(1), math.Inf(-1)
	for _, t := range trials {
		if v, ok, _ := value(t); ok {
			objMin, objMax = math.Min(objMin, v), math.Max(objMax, v)
		}
	}
	cmap := moreland.SmoothBlueRed()
	cmap.SetMin(0)
	cmap.SetMax(1)
	k := float64(len(axes))
	for _, t := range trials {
		ln := pcLine{TrialID: t.TrialID, Color: fade(colorOf(t.Outcome), 0xc0), Dashed: true}
		params := paramsOf(t.TrialSummary, trained)
		for i, a := range axes {
			ln.XY = append(ln.XY, plotter.XY{X: float64(i), Y: a.pos(params[a.name])})
		}
		if v, ok, pruned := value(t); ok {
			y := 0.5
			if objMax > objMin {
				y = (v - objMin) / (objMax - objMin)
			}
			ln.XY = append(ln.XY, plotter.XY{X: k, Y: y})
			ln.Pruned = pruned
			if t.Outcome == results.OutcomeCompleted {
				score := y
				if !in.maximize() {
					score = 1 - y
				}
				ln.Color, _ = cmap.At(score) // score is within [0, 1]
				ln.Dashed = false
			}
		}
		if len(ln.XY) >= 2 {
			lines = append(lines, ln)
		}
	}
	return lines, objMin, objMax
}

// parallelCoordinates draws parallelLines over an axis per swept parameter and the objective's axis,
// with a legend for the dashed lines; pbt members through the parameters they trained under (trained).
func parallelCoordinates(in *Input, trials []Trial, trained map[string]map[string]any) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Parallel coordinates: parameters against " + in.Results.Metric.Name + " (blue worse, red better)"
	var axes []axis // swept parameters only: a constant's axis carries no information
	for _, name := range in.Results.Params {
		if a := newAxis(in, name, trained); len(a.levels) > 1 || (a.levels == nil && a.max > a.min) {
			axes = append(axes, a)
		}
	}
	lines, objMin, objMax := parallelLines(in, trials, axes, trained)
	dash := []vg.Length{vg.Points(4), vg.Points(2)}
	var anyPruned, anyNoValue bool
	for _, ln := range lines {
		l, _ := plotter.NewLine(ln.XY)
		l.Color, l.Width = ln.Color, vg.Points(1)
		if ln.Dashed {
			l.Dashes = dash
		}
		p.Add(l)
		anyPruned = anyPruned || ln.Pruned
		anyNoValue = anyNoValue || ln.Dashed && !ln.Pruned
	}
	addAxes(p, axes, in.Results.Metric.Name, objMin, objMax)
	if anyPruned || anyNoValue {
		p.Y.Max = 1.3 // room for the legend above the axes
		p.Legend.Top, p.Legend.Left = true, true
		if anyPruned {
			l, _ := plotter.NewLine(plotter.XYs{{}})
			l.Color, l.Width, l.Dashes = colorOf(results.OutcomePruned), vg.Points(1.5), dash
			p.Legend.Add("pruned: last windowed value at its rung", l)
		}
		if anyNoValue {
			l, _ := plotter.NewLine(plotter.XYs{{}})
			l.Color, l.Width, l.Dashes = colorOf(results.OutcomeDiverged), vg.Points(1.5), dash
			p.Legend.Add("no final value (diverged, failed, cancelled)", l)
		}
	}
	return p
}

// addAxes draws the vertical axes of a parallel-coordinates plot with their names and end labels.
func addAxes(p *plot.Plot, axes []axis, metric string, objMin, objMax float64) {
	var ticks []plot.Tick
	var ends plotter.XYLabels
	for i, a := range axes {
		x := float64(i)
		ticks = append(ticks, plot.Tick{Value: x, Label: a.name})
		ends.XYs = append(ends.XYs, plotter.XY{X: x, Y: -0.06}, plotter.XY{X: x, Y: 1.02})
		ends.Labels = append(ends.Labels, a.label(0), a.label(1))
	}
	k := float64(len(axes))
	ticks = append(ticks, plot.Tick{Value: k, Label: metric})
	if objMin <= objMax {
		ends.XYs = append(ends.XYs, plotter.XY{X: k, Y: -0.06}, plotter.XY{X: k, Y: 1.02})
		ends.Labels = append(ends.Labels, formatValue(objMin), formatValue(objMax))
	}
	for i := 0; i <= len(axes); i++ {
		l, _ := plotter.NewLine(plotter.XYs{{X: float64(i), Y: 0}, {X: float64(i), Y: 1}})
		l.Color, l.Width = color.Black, vg.Points(1)
		p.Add(l)
	}
	if len(ends.Labels) > 0 {
		labels, _ := plotter.NewLabels(ends)
		for i := range labels.TextStyle {
			labels.TextStyle[i].XAlign = draw.XCenter
		}
		p.Add(labels)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, k+0.3
	p.Y.Min, p.Y.Max = -0.1, 1.08
	p.Y.Tick.Marker = plot.ConstantTicks(nil)
	p.Y.LineStyle.Width = 0
}

// trainedParams is, by trial ID, the parameters each pbt member of lineage trained under over its
// schedule (trainedUnder), a number's mean geometric where the parameter is log-scaled over every
// schedule's values; empty without a lineage. The sensitivity analysis and the parallel coordinates
// both draw a member with them.
func trainedParams(in *Input, lineage []Member) map[string]map[string]any {
	params := map[string]map[string]any{}
	if len(lineage) > 0 {
		all := map[string][]float64{}
		positive := map[string]bool{}
		for _, n := range in.Results.Params {
			positive[n] = true
		}
		for _, m := range lineage {
			for _, st := range m.Schedule {
				for _, n := range in.Results.Params {
					x, ok := toFloat(st.Params[n])
					if !ok {
						continue
					}
					all[n] = append(all[n], x)
					positive[n] = positive[n] && x > 0
				}
			}
		}
		logParam := map[string]bool{}
		for n, xs := range all {
			logParam[n] = positive[n] && logScale(in.Spec, n, xs)
		}
		for _, m := range lineage {
			params[m.TrialID] = trainedUnder(m, in.Results.Params, logParam)
		}
	}
	return params
}

// paramsOf is the parameters a trial is drawn and counted with: a pbt member's it trained under
// (trained, from trainedParams), any other trial's own.
func paramsOf(t results.TrialSummary, trained map[string]map[string]any) map[string]any {
	if q := trained[t.TrialID]; q != nil {
		return q
	}
	return t.Params
}

// sensitivitySamples are the trials the sensitivity analysis counts: every completed trial with a
// finite objective, and every pruned trial by its last windowed value at the rung it was stopped at
// (marked Pruned). A pbt member counts with the parameters it trained under over its schedule
// (trained, from trainedParams), not only those it ended with.
func sensitivitySamples(trials []Trial, trained map[string]map[string]any) []Sample {
	var out []Sample
	for _, t := range trials {
		ps := paramsOf(t.TrialSummary, trained)
		switch v, ok := prunedValue(t); {
		case t.Scored():
			out = append(out, Sample{TrialID: t.TrialID, Params: ps, Value: *t.Objective})
		case ok:
			out = append(out, Sample{TrialID: t.TrialID, Params: ps, Value: v, Pruned: true})
		}
	}
	return out
}

// sensitivityPlot shows the value of every sample against one parameter, completed trials as dots and
// pruned ones as rings in the pruned colour, with the mean of each value (or each quintile) joined by
// a line.
func sensitivityPlot(in *Input, s Sensitivity, samples []Sample) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: η² %s, Spearman ρ %s", s.Param, fmtNum(s.EtaSquared, 2), fmtNum(s.Spearman, 2))
	p.X.Label.Text, p.Y.Label.Text = s.Param, in.Results.Metric.Name
	var vals []any
	for _, sm := range samples {
		vals = append(vals, sm.Params[s.Param])
	}
	a := axisOf(in.Spec, s.Param, vals)
	var done, pruned plotter.XYs
	groups := map[float64][]float64{}
	for _, sm := range samples {
		if !isFinite(sm.Value) {
			continue
		}
		x, ok := toFloat(sm.Params[s.Param])
		if a.levels != nil || !ok {
			x = float64(sort.SearchStrings(a.levels, formatValue(sm.Params[s.Param])))
		}
		if sm.Pruned {
			pruned = append(pruned, plotter.XY{X: x, Y: sm.Value})
		} else {
			done = append(done, plotter.XY{X: x, Y: sm.Value})
		}
		groups[x] = append(groups[x], sm.Value)
	}
	if a.levels != nil {
		var ticks []plot.Tick
		for i, l := range a.levels {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: l})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	} else if a.log {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if len(done)+len(pruned) == 0 {
		return p
	}
	if len(done) > 0 {
		dots, _ := plotter.NewScatter(done)
		dots.Color, dots.Radius = fade(outcomeColor[results.OutcomeCompleted], 0x90), vg.Points(2.5)
		p.Add(dots)
		if len(pruned) > 0 {
			p.Legend.Add("completed", dots)
		}
	}
	if len(pruned) > 0 {
		rings, _ := plotter.NewScatter(pruned)
		rings.Color, rings.Shape, rings.Radius = colorOf(results.OutcomePruned), draw.RingGlyph{}, vg.Points(3)
		p.Add(rings)
		p.Legend.Add("pruned (value at its rung)", rings)
	}
	if len(groups) <= 10 {
		var mean plotter.XYs
		for x, ys := range groups {
			var sum float64
			for _, y := range ys {
				sum += y
			}
			mean = append(mean, plotter.XY{X: x, Y: sum / float64(len(ys))})
		}
		sort.Slice(mean, func(i, j int) bool { return mean[i].X < mean[j].X })
		l, _ := plotter.NewLine(mean)
		l.Color, l.Width = color.Black, vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("mean", l)
	}
	return p
}

func fmtNum(x float64, prec int) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// earlyReach is the zoom of the stopped trials' curves: the most steps a pruned or diverged trial with
// a curve reached, when that is at most half the budget (on the full axis their curves fill a corner);
// 0 when no zoom is needed.
func earlyReach(in *Input, trials []Trial) int64 {
	var reach, full int64
	for _, t := range trials {
		if n := len(t.Curve); n > 0 {
			full = max(full, t.Curve[n-1].Step)
			if t.Outcome == results.OutcomePruned || t.Outcome == results.OutcomeDiverged {
				reach = max(reach, t.Curve[n-1].Step, t.Steps)
			}
		}
	}
	full = max(full, in.totalSteps())
	if reach <= 0 || 2*reach > full {
		return 0
	}
	return reach
}

// earlyCurves draws every trial's curve on an x axis zoomed to the steps the stopped trials reached
// (reach, plus a tenth), the y axis fitted to the values in that range; dotted grey lines mark the
// decision steps of early_terminate there.
func earlyCurves(in *Input, trials []Trial, reach int64) *plot.Plot {
	p := plot.New()
	xmax := float64(reach) * 1.1
	p.Title.Text = fmt.Sprintf("Learning curves up to step %s, where the stopped trials ended", groupDigits(int64(xmax)))
	p.X.Label.Text, p.Y.Label.Text = "environment steps", in.Results.Metric.Name
	p.Legend.Top, p.Legend.Left = true, true
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, o := range results.Outcomes {
		n := 0
		for _, t := range trials {
			if t.Outcome != o || len(t.Curve) == 0 {
				continue
			}
			n++
			addCurve(p, t)
			for _, pt := range t.Curve {
				if float64(pt.Step) <= xmax && isFinite(pt.Value) {
					lo, hi = math.Min(lo, pt.Value), math.Max(hi, pt.Value)
				}
			}
		}
		if n > 0 {
			l, _ := plotter.NewLine(plotter.XYs{{}}) // a legend swatch only
			l.Color, l.Width = colorOf(o), vg.Points(2)
			p.Legend.Add(fmt.Sprintf("%s (%d)", o, n), l)
		}
	}
	if lo > hi {
		lo, hi = 0, 1
	} else if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	pad := (hi - lo) * 0.05
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax, lo-pad, hi+pad
	if in.Spec != nil && in.Spec.EarlyTerminate != nil && in.Spec.RungUnit() == sweeps.RungSteps {
		var drew *plotter.Line
		for _, s := range in.Spec.DecisionSteps() {
			if float64(s) > xmax {
				break
			}
			l, _ := plotter.NewLine(plotter.XYs{{X: float64(s), Y: lo - pad}, {X: float64(s), Y: hi + pad}})
			l.Color, l.Width, l.Dashes = color.RGBA{0x90, 0x90, 0x90, 0xff}, vg.Points(0.8), []vg.Length{vg.Points(1), vg.Points(2)}
			p.Add(l)
			drew = l
		}
		if drew != nil {
			p.Legend.Add("decision step", drew)
		}
	}
	return p
}

// historyPoint is one configuration of a bayes sweep on its optimisation history.
type historyPoint struct {
	Config  int
	Value   float64
	Startup bool // a start-up draw (method random's), not a TPE proposal
	Pruned  bool // Value is its last windowed value at a rung (IQM over its seeds), not a score
}

// optimizationHistory returns each configuration of a bayes sweep in the order the search proposed it
// (its configuration index) with its score, the IQM of its search seeds' objectives (seeds re-run by
// bayes.rerun_top are left out); a pruned configuration by the IQM of its seeds' last windowed values
// at their rungs; and how many configurations had neither (a seed diverged, or none scored).
func optimizationHistory(spec *sweeps.Spec, trials []Trial) (points []historyPoint, infeasible int) {
	startup := len(sweeps.StartupConfigs(spec, min(spec.BayesSettings().StartupTrials, spec.Trials)))
	byConfig := map[int][]Trial{}
	var configs []int
	for _, t := range trials {
		if !slices.Contains(spec.Seeds, t.Seed) || t.GPUClass != "" { // re-runs on fresh seeds or other classes
			continue
		}
		if _, ok := byConfig[t.Config]; !ok {
			configs = append(configs, t.Config)
		}
		byConfig[t.Config] = append(byConfig[t.Config], t)
	}
	sort.Ints(configs)
	for _, c := range configs {
		var sums []results.TrialSummary
		var pruned []float64
		for _, t := range byConfig[c] {
			sums = append(sums, t.TrialSummary)
			if v, ok := prunedValue(t); ok {
				pruned = append(pruned, v)
			}
		}
		hp := historyPoint{Config: c, Startup: c < startup}
		if v, ok := results.ConfigScore(sums); ok {
			hp.Value = v
		} else if len(pruned) > 0 && !slices.ContainsFunc(sums, func(t results.TrialSummary) bool { return t.Outcome == results.OutcomeDiverged }) {
			hp.Value, hp.Pruned = diagnostics.IQM(pruned), true
		} else {
			infeasible++
			continue
		}
		points = append(points, hp)
	}
	return points, infeasible
}

// historyPlot draws the optimisation history: start-up draws as grey circles, TPE proposals as blue
// triangles, pruned configurations as rings at their rung value, the best score so far as a black
// step line, and a dashed line where TPE took over.
func historyPlot(in *Input, points []historyPoint, startup int) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Optimisation history: " + in.Results.Metric.Name + " by configuration, in the order proposed"
	p.X.Label.Text, p.Y.Label.Text = "configuration (order proposed)", in.Results.Metric.Name
	var start, tpe, pruned, best plotter.XYs
	cur := math.NaN()
	for _, hp := range points {
		xy := plotter.XY{X: float64(hp.Config), Y: hp.Value}
		switch {
		case hp.Pruned:
			pruned = append(pruned, xy)
		case hp.Startup:
			start = append(start, xy)
		default:
			tpe = append(tpe, xy)
		}
		if !hp.Pruned && (math.IsNaN(cur) || in.maximize() && hp.Value > cur || !in.maximize() && hp.Value < cur) {
			cur = hp.Value
		}
		if !math.IsNaN(cur) {
			best = append(best, plotter.XY{X: float64(hp.Config), Y: cur})
		}
	}
	p.Legend.Top = !in.maximize()
	if len(best) > 0 {
		l, _ := plotter.NewLine(best)
		l.Color, l.Width, l.StepStyle = color.Black, vg.Points(1.5), plotter.PostStep
		p.Add(l)
		p.Legend.Add("best so far", l)
	}
	add := func(xy plotter.XYs, c color.Color, g draw.GlyphDrawer, label string) {
		if len(xy) == 0 {
			return
		}
		s, _ := plotter.NewScatter(xy)
		s.Color, s.Shape, s.Radius = c, g, vg.Points(3.5)
		p.Add(s)
		p.Legend.Add(label, s)
	}
	add(start, color.RGBA{0x70, 0x70, 0x70, 0xff}, draw.CircleGlyph{}, "start-up draw (random)")
	add(tpe, outcomeColor[results.OutcomeCompleted], draw.TriangleGlyph{}, "TPE proposal")
	add(pruned, colorOf(results.OutcomePruned), draw.RingGlyph{}, "pruned (value at its rung)")
	if len(points) == 0 {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		return p
	}
	if startup > 0 && points[len(points)-1].Config >= startup {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, hp := range points {
			lo, hi = math.Min(lo, hp.Value), math.Max(hi, hp.Value)
		}
		l, _ := plotter.NewLine(plotter.XYs{{X: float64(startup) - 0.5, Y: lo}, {X: float64(startup) - 0.5, Y: hi}})
		l.Color, l.Width, l.Dashes = color.RGBA{0x90, 0x90, 0x90, 0xff}, vg.Points(1), []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
		p.Legend.Add("TPE starts", l)
	}
	last := points[len(points)-1].Config
	p.X.Min, p.X.Max = -0.5, float64(last)+0.5
	if last < 40 { // a tick per configuration: indices are whole numbers
		var ticks []plot.Tick
		for c := 0; c <= last; c++ {
			ticks = append(ticks, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	return p
}
