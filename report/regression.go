package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rlsweep/rlsweep/regression"
)

// verdictOrder ranks configurations in the regression table: what needs a reader's attention first.
var verdictOrder = map[string]int{regression.VerdictRegressed: 0, regression.VerdictImproved: 1, regression.VerdictPass: 2, regression.VerdictNew: 3, regression.VerdictMissing: 4}

// verdictColor is each verdict's colour in the regression section.
var verdictColor = map[string]color.RGBA{
	regression.VerdictRegressed: {0xd6, 0x27, 0x28, 0xff},
	regression.VerdictImproved:  {0x1f, 0x77, 0xb4, 0xff},
	regression.VerdictPass:      {0x2c, 0xa0, 0x2c, 0xff},
	regression.VerdictFailed:    {0x7f, 0x7f, 0x7f, 0xff},
	regression.VerdictNew:       {0x7f, 0x7f, 0x7f, 0xff},
	regression.VerdictMissing:   {0xbc, 0xbd, 0x22, 0xff},
}

func verdictColorOf(v string) color.RGBA {
	if c, ok := verdictColor[v]; ok {
		return c
	}
	return verdictColor[regression.VerdictFailed]
}

// regressionPlotMax bounds the configurations the regression plot draws, the most changed first.
const regressionPlotMax = 40

// counts tallies the configurations by verdict, in table order.
func regressionCounts(r *regression.Report) []count {
	n := map[string]int{}
	for _, c := range r.Configs {
		n[c.Verdict]++
	}
	var out []count
	for _, v := range []string{regression.VerdictRegressed, regression.VerdictImproved, regression.VerdictPass, regression.VerdictNew, regression.VerdictMissing} {
		if n[v] > 0 {
			out = append(out, count{Outcome: v, N: n[v], Color: hexColor(verdictColorOf(v))})
		}
	}
	return out
}

// sorted returns the configurations regressed first, then improved, passed, new and missing; the plan
// order within each.
func regressionSorted(r *regression.Report) []regression.ConfigComparison {
	out := append([]regression.ConfigComparison(nil), r.Configs...)
	sort.SliceStable(out, func(i, j int) bool { return verdictOrder[out[i].Verdict] < verdictOrder[out[j].Verdict] })
	return out
}

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// regressionParams formats a configuration's parameters in the sweep's order, then any the sweep does
// not have (a missing configuration of a baseline that swept more), sorted.
func regressionParams(names []string, params map[string]any) string {
	var parts []string
	seen := map[string]bool{}
	for _, n := range names {
		if v, ok := params[n]; ok {
			parts = append(parts, n+"="+formatValue(v))
			seen[n] = true
		}
	}
	var rest []string
	for n := range params {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		parts = append(parts, n+"="+formatValue(params[n]))
	}
	return strings.Join(parts, " ")
}

// regressionPlot draws each compared configuration's relative IQM change with the interval of the
// difference, both in percent of the baseline's IQM and signed so that right is better, over the
// tolerance band; the most changed configurations first, at most regressionPlotMax.
func regressionPlot(in *Input) *plot.Plot {
	r := in.Regression
	p := plot.New()
	p.Title.Text = fmt.Sprintf("IQM change against the baseline, with the %g%% bootstrap interval", 100*r.Thresholds.Confidence)
	p.X.Label.Text = "change of the IQM of " + in.Results.Metric.Name + ", % of the baseline's (right is better)"
	var rows []regression.ConfigComparison
	for _, c := range r.Configs {
		if isFinite(c.RelChange) && isFinite(c.BaselineIQM) && c.BaselineIQM != 0 {
			rows = append(rows, c)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return math.Abs(rows[i].RelChange) > math.Abs(rows[j].RelChange) })
	if len(rows) > regressionPlotMax {
		rows = rows[:regressionPlotMax]
	}
	tol := 100 * r.Thresholds.Tolerance
	band := plotter.XYs{{X: -tol, Y: 0.5}, {X: tol, Y: 0.5}, {X: tol, Y: float64(len(rows)) + 0.5}, {X: -tol, Y: float64(len(rows)) + 0.5}}
	if poly, err := plotter.NewPolygon(band); err == nil {
		poly.Color, poly.LineStyle.Width = color.NRGBA{0, 0, 0, 0x14}, 0
		p.Add(poly)
		p.Legend.Add(fmt.Sprintf("tolerance ±%g%%", tol), poly)
	}
	zero, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0.5}, {X: 0, Y: float64(len(rows)) + 0.5}})
	zero.Color, zero.Dashes = color.Gray{0x60}, []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(zero)
	var ticks []plot.Tick
	for i, c := range rows {
		y := float64(len(rows) - i) // the most changed at the top
		ticks = append(ticks, plot.Tick{Value: y, Label: fmt.Sprintf("#%d", c.Config)})
		addChange(p, c, y, signOf(in))
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = 0.5, float64(len(rows))+0.5
	p.Legend.Top = true
	return p
}

// signOf is +1 when a larger objective is better, −1 otherwise.
func signOf(in *Input) float64 {
	if in.maximize() {
		return 1
	}
	return -1
}

// addChange draws one configuration's change and interval, coloured by its verdict.
func addChange(p *plot.Plot, c regression.ConfigComparison, y, sign float64) {
	col := verdictColorOf(c.Verdict)
	x := 100 * c.RelChange
	if isFinite(c.DiffCI[0]) && isFinite(c.DiffCI[1]) {
		lo, hi := 100*sign*c.DiffCI[0]/math.Abs(c.BaselineIQM), 100*sign*c.DiffCI[1]/math.Abs(c.BaselineIQM)
		if lo > hi {
			lo, hi = hi, lo
		}
		bars, err := plotter.NewXErrorBars(struct {
			plotter.XYs
			plotter.XErrors
		}{plotter.XYs{{X: x, Y: y}}, plotter.XErrors{{Low: x - lo, High: hi - x}}})
		if err == nil {
			bars.Color, bars.Width = col, vg.Points(1.5)
			p.Add(bars)
		}
	}
	dot, _ := plotter.NewScatter(plotter.XYs{{X: x, Y: y}})
	dot.Color, dot.Shape, dot.Radius = col, draw.CircleGlyph{}, vg.Points(3.5)
	p.Add(dot)
}

// regressionFigure draws the regression plot, taller for more configurations.
func regressionFigure(in *Input) (*Figure, error) {
	n := 0
	for _, c := range in.Regression.Configs {
		if isFinite(c.RelChange) {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	h := 4*vg.Centimeter + vg.Length(min(n, regressionPlotMax))*0.6*vg.Centimeter
	s, err := svg(regressionPlot(in), 22*vg.Centimeter, h)
	if err != nil {
		return nil, err
	}
	return &Figure{ID: "plot-regression", SVG: template.HTML(s),
		Caption: "Each compared configuration's IQM change (dot) and the bootstrap interval of the difference (bar), in percent of the baseline's IQM and signed so that right is better. The shaded band is the tolerance: a configuration regressed or improved only outside it, with its interval clear of 0 and its seeds beating (or losing to) the baseline's often enough."}, nil
}
