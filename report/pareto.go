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

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// The element IDs of the plots of a sweep with several objectives (sweeps.Spec.MultiObjective): the
// Pareto plot of two objectives (with three or four, one plot per pair, ParetoPairFigure) and the
// front's hypervolume over the configurations ended.
const (
	FigurePareto      = "plot-pareto"
	FigureHypervolume = "plot-hypervolume"
)

// ParetoPairFigure is the element ID of the Pareto plot of objectives i and j (0-based, in the spec's
// order, i < j) of a sweep with three or four objectives: "plot-pareto-0-2".
func ParetoPairFigure(i, j int) string { return fmt.Sprintf("%s-%d-%d", FigurePareto, i, j) }

// ParetoTableExtra is how many configurations off the front the front's table lists after those on it.
const ParetoTableExtra = 20

// ThresholdTableRows is the most configurations the env-steps-to-threshold table lists.
const ThresholdTableRows = 50

// The Pareto plot's colours: the front, the dominated configurations (faded), the infeasible ones.
var (
	frontColor      = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	dominatedColor  = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}
	infeasibleColor = outcomeColor[results.OutcomeDiverged]
)

// paretoSection is what the report shows of a sweep with several objectives.
type paretoSection struct {
	Objectives []sweeps.Objective
	// Described says what each objective measures (sweeps.Objective.Describe), in the spec's order.
	Described []string
	// Figure is the Pareto plot of two objectives; Pairs the plots of each pair of three or four, with
	// PairsCaption under them. Only one of the two is set.
	Figure       *Figure
	Pairs        []Figure
	PairsCaption string
	// Rows is the front's table (ParetoRows); Left counts the configurations left out of it.
	Rows      []ParetoRow
	Left      int
	Precision bool // a configuration has a precision setting: the table has a column for it
	Target    bool // an objective is env_steps with a target: the table says the seeds that reached it
	// Hypervolume is the front's hypervolume over the configurations ended; nil with fewer than two
	// ranked configurations.
	Hypervolume *Figure
	// Threshold is the env-steps-to-threshold table (ThresholdRows), with ThresholdLeft configurations
	// left out and ThresholdCaption saying what it counts; empty without an env_steps target.
	Threshold        []ThresholdRow
	ThresholdLeft    int
	ThresholdCaption string
}

// ParetoRow is one configuration in the front's table.
type ParetoRow struct {
	Config    int
	Params    map[string]any
	Precision string
	// Values is each objective's value with its interval where it has one ("-173 [-180, -169]"),
	// "never" for a target not reached, "—" for no value.
	Values []string
	// Reached says how many seeds reached the env_steps target ("4 of 5 seeds"); "" without a target.
	Reached string
	Rank    int    // results.ConfigPoint.Rank: 1 on the front, 0 not ranked
	Why     string // why it is not ranked; "" when ranked
}

// OnFront says whether the row's configuration is on the Pareto front.
func (r ParetoRow) OnFront() bool { return r.Rank == 1 }

// ParetoRows is the front's table: the configurations on the front (rank 1) first, the most isolated
// (largest crowding distance) first; then the other ranked ones by rank; then those not ranked (a seed
// diverged, pruned, not ended), by configuration. extra caps the rows after the front; left counts the
// configurations left out.
func ParetoRows(objs []sweeps.Objective, points []results.ConfigPoint, extra int) (rows []ParetoRow, left int) {
	sorted := sortedPoints(points)
	front := 0
	for _, p := range sorted {
		if p.OnFront() {
			front++
		}
	}
	for k, p := range sorted {
		if k >= front+extra {
			left = len(sorted) - k
			break
		}
		r := ParetoRow{Config: p.Config, Params: p.Params, Precision: p.Precision, Rank: p.Rank, Why: p.Why}
		for i, o := range objs {
			r.Values = append(r.Values, withInterval(o, p.Values[i], p.Low[i], p.High[i]))
			if o.Name == sweeps.ObjectiveEnvSteps && o.Target != nil {
				r.Reached = fmt.Sprintf("%d of %d seed%s", p.Reached, p.Seeds, plural(p.Seeds))
			}
		}
		rows = append(rows, r)
	}
	return rows, left
}

// sortedPoints orders points as the front's table lists them (ParetoRows).
func sortedPoints(points []results.ConfigPoint) []results.ConfigPoint {
	out := append([]results.ConfigPoint(nil), points...)
	key := func(p results.ConfigPoint) int {
		if p.Rank == 0 {
			return math.MaxInt
		}
		return p.Rank
	}
	sort.SliceStable(out, func(a, b int) bool {
		pa, pb := out[a], out[b]
		switch {
		case key(pa) != key(pb):
			return key(pa) < key(pb)
		case pa.OnFront() && pa.Crowding != pb.Crowding:
			return pa.Crowding > pb.Crowding
		}
		return pa.Config < pb.Config
	})
	return out
}

// withInterval writes an objective's value and, when it has one, its interval: "-173 [-180, -169]".
func withInterval(o sweeps.Objective, v, lo, hi float64) string {
	s := results.FormatObjective(o, v)
	if math.IsNaN(lo) || math.IsNaN(hi) || !isFinite(v) {
		return s
	}
	return fmt.Sprintf("%s [%s, %s]", s, results.FormatObjective(o, lo), results.FormatObjective(o, hi))
}

// goalWords says which way an objective is better, for axis labels and headers.
func goalWords(o sweeps.Objective) string {
	if o.Goal == sweeps.GoalMaximize {
		return "higher is better"
	}
	return "lower is better"
}

// axisLabel names an objective on a plot's axis: "env_steps_to_target (lower is better)".
func axisLabel(o sweeps.Objective) string { return o.Label() + " (" + goalWords(o) + ")" }

// targetObjective is the index of the env_steps objective with a target, -1 when there is none.
func targetObjective(objs []sweeps.Objective) int {
	for i, o := range objs {
		if o.Name == sweeps.ObjectiveEnvSteps && o.Target != nil {
			return i
		}
	}
	return -1
}

// ThresholdRow is one configuration in the env-steps-to-threshold table.
type ThresholdRow struct {
	Config    int
	Params    map[string]any
	Precision string
	Steps     string // the env-steps to the target with its interval, "never" when too few seeds reached it
	Reached   string // "4 of 5 seeds"
	Why       string // why the configuration is not ranked; "" when it is
}

// ThresholdRows is each configuration's env-steps to reach the target of objective i (an env_steps
// objective with a target), best first: fewest steps, then most seeds reached, then configuration.
// Configurations with no seed ended are left out; limit caps the rows, left counts those left out.
func ThresholdRows(objs []sweeps.Objective, i int, points []results.ConfigPoint, limit int) (rows []ThresholdRow, left int) {
	var kept []results.ConfigPoint
	for _, p := range points {
		if !math.IsNaN(p.Values[i]) {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(a, b int) bool {
		pa, pb := kept[a], kept[b]
		switch {
		case pa.Values[i] != pb.Values[i]:
			return pa.Values[i] < pb.Values[i]
		case pa.Reached != pb.Reached:
			return pa.Reached > pb.Reached
		}
		return pa.Config < pb.Config
	})
	if len(kept) > limit {
		left, kept = len(kept)-limit, kept[:limit]
	}
	for _, p := range kept {
		rows = append(rows, ThresholdRow{Config: p.Config, Params: p.Params, Precision: p.Precision,
			Steps:   withInterval(objs[i], p.Values[i], p.Low[i], p.High[i]),
			Reached: fmt.Sprintf("%d of %d seed%s", p.Reached, p.Seeds, plural(p.Seeds)), Why: p.Why})
	}
	return rows, left
}

// paretoGroups are the points of one Pareto plot, by how they are drawn: X and Y the two objectives'
// values, a value never reached (+Inf) at the axis's "never" position.
type paretoGroups struct {
	Front, Dominated, Infeasible plotter.XYs
	FrontConfigs                 []int // the configuration of each Front point
	Never                        plotter.XYs
	// NeverX and NeverY are where "never" is drawn on each axis (NaN when no drawn point has it);
	// XRange and YRange the finite values' range.
	NeverX, NeverY float64
	XRange, YRange [2]float64
	// Undrawn counts the configurations not drawn: not ranked and not infeasible (pruned, not ended),
	// or infeasible without a value of both objectives.
	Undrawn int
}

// paretoPoints sorts points into the groups of the Pareto plot of objectives i and j: ranked
// configurations on the front or dominated, and infeasible ones (a seed diverged, results.WhyDiverged)
// where they have a value of both. A configuration not ranked is never among Front.
func paretoPoints(points []results.ConfigPoint, i, j int) paretoGroups {
	g := paretoGroups{NeverX: math.NaN(), NeverY: math.NaN()}
	type drawn struct {
		p    results.ConfigPoint
		x, y float64
	}
	var keep []drawn
	for _, p := range points {
		x, y := p.Values[i], p.Values[j]
		if (p.Rank == 0 && p.Why != results.WhyDiverged) || math.IsNaN(x) || math.IsNaN(y) {
			g.Undrawn++
			continue
		}
		keep = append(keep, drawn{p, x, y})
	}
	xs, ys := make([]float64, len(keep)), make([]float64, len(keep))
	for k, d := range keep {
		xs[k], ys[k] = d.x, d.y
	}
	var neverX, neverY bool
	g.XRange, neverX = finiteRange(xs)
	g.YRange, neverY = finiteRange(ys)
	if neverX {
		g.NeverX = neverAt(g.XRange)
	}
	if neverY {
		g.NeverY = neverAt(g.YRange)
	}
	for _, d := range keep {
		xy := plotter.XY{X: d.x, Y: d.y}
		never := math.IsInf(d.x, 1) || math.IsInf(d.y, 1)
		if math.IsInf(d.x, 1) {
			xy.X = g.NeverX
		}
		if math.IsInf(d.y, 1) {
			xy.Y = g.NeverY
		}
		switch {
		case d.p.Rank == 0:
			g.Infeasible = append(g.Infeasible, xy)
		case d.p.OnFront():
			g.Front = append(g.Front, xy)
			g.FrontConfigs = append(g.FrontConfigs, d.p.Config)
		default:
			g.Dominated = append(g.Dominated, xy)
		}
		if never {
			g.Never = append(g.Never, xy)
		}
	}
	return g
}

// finiteRange is the range of the finite values of xs ([0, 1] when none), and whether one is +Inf.
func finiteRange(xs []float64) (r [2]float64, inf bool) {
	r = [2]float64{math.Inf(1), math.Inf(-1)}
	for _, x := range xs {
		if math.IsInf(x, 1) {
			inf = true
			continue
		}
		r[0], r[1] = min(r[0], x), max(r[1], x)
	}
	if r[0] > r[1] {
		r = [2]float64{0, 1}
	}
	return r, inf
}

// span is the width of a range, something positive when it is one value.
func span(r [2]float64) float64 {
	if w := r[1] - r[0]; w > 0 {
		return w
	}
	return max(math.Abs(r[0])*0.1, 1)
}

// neverAt is where "never" is drawn past a range's top: a fifth of its width beyond.
func neverAt(r [2]float64) float64 { return r[1] + 0.2*span(r) }

// rangeTicks are an axis's usual ticks within its finite values, none in the room above them (for
// the legend), and "never" where +Inf is drawn (none when at is NaN).
type rangeTicks struct{ lo, top, at float64 }

// Ticks implements plot.Ticker.
func (t rangeTicks) Ticks(lo, hi float64) []plot.Tick {
	out := (plot.DefaultTicks{}).Ticks(max(lo, t.lo), min(hi, t.top))
	if !math.IsNaN(t.at) {
		out = append(out, plot.Tick{Value: t.at, Label: "never"})
	}
	return out
}

// setParetoAxis fits an axis to a range with a margin, up to "never" when it is drawn, and leaves
// room above for share of the axis (the legend's rows).
func setParetoAxis(a *plot.Axis, r [2]float64, never, room float64) {
	pad := 0.06 * span(r)
	a.Min, a.Max = r[0]-pad, r[1]+pad
	if !math.IsNaN(never) {
		a.Max = never + pad
	}
	a.Max += (a.Max - a.Min) * room / (1 - room)
	a.Tick.Marker = rangeTicks{lo: r[0] - pad, top: r[1] + pad, at: never}
}

// frontLine is the front's attainment boundary through its points: from each point to the next by
// x, through the corner worse than both in each objective.
func frontLine(front plotter.XYs, xo, yo sweeps.Objective) plotter.XYs {
	pts := append(plotter.XYs(nil), front...)
	sort.SliceStable(pts, func(a, b int) bool {
		if pts[a].X != pts[b].X {
			return pts[a].X < pts[b].X
		}
		return pts[a].Y < pts[b].Y
	})
	worse := func(o sweeps.Objective, a, b float64) float64 {
		if o.Goal == sweeps.GoalMaximize {
			return min(a, b)
		}
		return max(a, b)
	}
	var out plotter.XYs
	for k, p := range pts {
		if k > 0 {
			q := pts[k-1]
			out = append(out, plotter.XY{X: worse(xo, q.X, p.X), Y: worse(yo, q.Y, p.Y)})
		}
		out = append(out, p)
	}
	return out
}

// paretoPlot draws objectives i and j of the ranked configurations: the front (rank 1 over all the
// objectives) as large blue dots labelled with their configuration, joined by its attainment boundary
// when the sweep has these two objectives only; dominated configurations as faded grey dots; infeasible
// ones as red crosses; and a value never reached at the axis's "never" end, ringed.
func paretoPlot(objs []sweeps.Objective, g paretoGroups, i, j int, small bool) *plot.Plot {
	xo, yo := objs[i], objs[j]
	p := plot.New()
	p.Title.Text = "Pareto front: " + yo.Label() + " against " + xo.Label()
	p.X.Label.Text, p.Y.Label.Text = axisLabel(xo), axisLabel(yo)
	p.Legend.Top = true
	r := vg.Points(4)
	if small {
		r = vg.Points(3)
	}
	rows := 0 // the legend's
	if len(objs) == 2 && len(g.Front) > 1 {
		l, _ := plotter.NewLine(frontLine(g.Front, xo, yo))
		l.Color, l.Width = frontColor, vg.Points(1.2)
		p.Add(l)
		p.Legend.Add("front (attainment boundary)", l)
		rows++
	}
	add := func(xy plotter.XYs, c color.Color, shape draw.GlyphDrawer, radius vg.Length, label string) {
		if len(xy) == 0 {
			return
		}
		s, _ := plotter.NewScatter(xy)
		s.Color, s.Shape, s.Radius = c, shape, radius
		p.Add(s)
		p.Legend.Add(label, s)
		rows++
	}
	add(g.Dominated, fade(dominatedColor, 0x70), draw.CircleGlyph{}, r*3/4, "dominated")
	add(g.Front, frontColor, draw.CircleGlyph{}, r, "on the front (rank 1)")
	add(g.Infeasible, infeasibleColor, draw.CrossGlyph{}, r, "a seed diverged: never on the front")
	add(g.Never, color.Black, draw.RingGlyph{}, r*2, "target never reached (at the axis end)")
	if len(g.Front) > 0 && !small {
		labels := plotter.XYLabels{XYs: g.Front}
		for _, c := range g.FrontConfigs {
			labels.Labels = append(labels.Labels, fmt.Sprintf("  %d", c))
		}
		t, _ := plotter.NewLabels(labels)
		p.Add(t)
	}
	setParetoAxis(&p.X, g.XRange, g.NeverX, 0)
	perRow := 0.06
	if small {
		perRow = 0.085
	}
	setParetoAxis(&p.Y, g.YRange, g.NeverY, min(0.45, perRow*float64(rows)+0.03))
	return p
}

// paretoCaption says what a Pareto plot draws and how to read it.
func paretoCaption(objs []sweeps.Objective, gs []paretoGroups) string {
	var b strings.Builder
	if len(objs) == 2 {
		fmt.Fprintf(&b, "Each ranked configuration's %s against its %s (IQM over its seeds; seed_failure_rate the share of seeds that failed), each axis in the objective's own units and saying which way is better. Blue dots labelled with their configuration are the Pareto front (rank 1: no other ranked configuration is as good in both and better in one), joined by the front's attainment boundary, the line through the corners the front dominates; faded grey dots are dominated configurations.",
			objs[1].Label(), objs[0].Label())
	} else {
		fmt.Fprintf(&b, "One plot per pair of the %d objectives, each ranked configuration's values (IQM over its seeds; seed_failure_rate the share of seeds that failed) in the objectives' own units, each axis saying which way is better. Blue dots are the Pareto front over all %d objectives (rank 1: no other ranked configuration is as good in every objective and better in one), faded grey dots the dominated configurations: a front configuration may look dominated in one pair, being better in an objective that pair leaves out.",
			len(objs), len(objs))
	}
	infeasible, never, undrawn := 0, false, 0
	for _, g := range gs {
		infeasible = max(infeasible, len(g.Infeasible))
		never = never || len(g.Never) > 0
		undrawn = max(undrawn, g.Undrawn)
	}
	if infeasible > 0 {
		fmt.Fprintf(&b, " Red crosses are configurations with a seed that diverged: infeasible, never on the front whatever their values (%d drawn).", infeasible)
	}
	if never {
		t := targetObjective(objs)
		fmt.Fprintf(&b, " A configuration whose seeds too often never reached the target of %s (its IQM is never) is drawn ringed at the end of that axis, on the tick labelled never.", objs[t].Label())
	}
	if undrawn > 0 {
		fmt.Fprintf(&b, " %d configuration%s not ranked (pruned, not ended, or with no value of an objective drawn) %s not drawn; the table below says why.", undrawn, plural(undrawn), map[bool]string{true: "is", false: "are"}[undrawn == 1])
	}
	return b.String()
}

// hypervolumePlot draws the front's hypervolume after each ranked configuration, as a percentage of
// the final front's, against the configuration: a step line and a dot at each configuration.
func hypervolumePlot(configs []int, hv []float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Hypervolume of the front over the sweep"
	p.X.Label.Text, p.Y.Label.Text = "configuration (order made)", "share of the final front's hypervolume (%)"
	final := hv[len(hv)-1]
	xy := make(plotter.XYs, len(hv))
	for k := range hv {
		share := 100.0
		if final > 0 {
			share = 100 * hv[k] / final
		}
		xy[k] = plotter.XY{X: float64(configs[k]), Y: share}
	}
	l, _ := plotter.NewLine(xy)
	l.Color, l.Width, l.StepStyle = frontColor, vg.Points(1.5), plotter.PostStep
	s, _ := plotter.NewScatter(xy)
	s.Color, s.Shape, s.Radius = frontColor, draw.CircleGlyph{}, vg.Points(2.5)
	p.Add(plotter.NewGrid(), l, s)
	p.Y.Min, p.Y.Max = 0, 105
	lo, hi := xy[0].X, xy[len(xy)-1].X
	p.X.Min, p.X.Max = lo-0.5, hi+0.5
	return p
}

// hypervolumeCaption says what the hypervolume plot draws and how it is normalised.
func hypervolumeCaption(d, ranked, unranked int) string {
	c := fmt.Sprintf("The hypervolume of the Pareto front of the ranked configurations among those up to each configuration (in configuration order, the order the search made them), as a share of the final front's, over the %d ranked configurations. Normalised: each of the %d objectives is scaled to [0, 1] over the ranked configurations (0 the best value among them, 1 the worst; never counts as 1), and the volume is measured up to the reference point 1.1 in each. A curve still rising at its end says the search was still finding better trade-offs; a long flat tail that further configurations added none.", ranked, d)
	if unranked > 0 {
		c += fmt.Sprintf(" %d configuration%s not ranked (a seed diverged, pruned, not ended) add%s nothing.", unranked, plural(unranked), map[bool]string{true: "s", false: ""}[unranked == 1])
	}
	return c
}

// pareto fills the section of a sweep with several objectives: nothing unless in.Spec has them.
func (pg *page) pareto(in *Input) error {
	if in.Spec == nil || !in.Spec.MultiObjective() {
		return nil
	}
	objs := in.Spec.Objectives
	points := results.Objectives(in.Spec, in.Results.Trials)
	sec := &paretoSection{Objectives: objs}
	for _, o := range objs {
		sec.Described = append(sec.Described, o.Describe(in.Spec.Metric.Name))
	}
	if len(objs) == 2 {
		g := paretoPoints(points, 0, 1)
		out, err := svg(paretoPlot(objs, g, 0, 1, false), 22*vg.Centimeter, 13*vg.Centimeter)
		if err != nil {
			return err
		}
		sec.Figure = &Figure{ID: FigurePareto, Caption: paretoCaption(objs, []paretoGroups{g}), SVG: template.HTML(out)}
	} else {
		var gs []paretoGroups
		for i := range objs {
			for j := i + 1; j < len(objs); j++ {
				g := paretoPoints(points, i, j)
				out, err := svg(paretoPlot(objs, g, i, j, true), 11*vg.Centimeter, 9*vg.Centimeter)
				if err != nil {
					return err
				}
				gs = append(gs, g)
				sec.Pairs = append(sec.Pairs, Figure{ID: ParetoPairFigure(i, j), SVG: template.HTML(out),
					Caption: fmt.Sprintf("%s against %s", objs[j].Label(), objs[i].Label())})
			}
		}
		sec.PairsCaption = paretoCaption(objs, gs)
	}
	sec.Rows, sec.Left = ParetoRows(objs, points, ParetoTableExtra)
	for _, p := range points {
		sec.Precision = sec.Precision || p.Precision != ""
	}
	sec.Target = targetObjective(objs) >= 0
	configs, hv := results.FrontHypervolume(objs, points)
	if len(hv) >= 2 {
		out, err := svg(hypervolumePlot(configs, hv), 22*vg.Centimeter, 9*vg.Centimeter)
		if err != nil {
			return err
		}
		sec.Hypervolume = &Figure{ID: FigureHypervolume, Caption: hypervolumeCaption(len(objs), len(hv), len(points)-len(hv)), SVG: template.HTML(out)}
	}
	if t := targetObjective(objs); t >= 0 {
		sec.Threshold, sec.ThresholdLeft = ThresholdRows(objs, t, points, ThresholdTableRows)
		sec.ThresholdCaption = fmt.Sprintf("Each configuration's environment steps until the windowed %s first reached %s: the IQM over its seeds that ended, a seed that never reached it counting as never (so a configuration is never when more than a quarter of its seeds never did), with the 95%% bootstrap interval of that IQM from %d seeds on; fewest steps first. Configurations that did not reach it on enough seeds are last; one not ranked says why (a configuration with a diverged seed is infeasible however fast it was).",
			in.Spec.Metric.Name, fmtValue(*objs[t].Target), results.MinIntervalSeeds)
	}
	pg.Pareto = sec
	return nil
}
