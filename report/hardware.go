package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// FigureThroughput is the element ID of the plot of throughput against the memory parameter by GPU
// class, drawn when that parameter took two values or more among the trials that ran.
const FigureThroughput = "plot-throughput"

// classColors tell the GPU classes apart in the throughput plot, in the classes' sorted order.
var classColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
}

// memoryParam is the parameter that drives the trials' memory: the spec's (sweeps.Spec.MemoryParam);
// without a spec, num_envs when the sweep has a parameter of that name; "" when none.
func (in *Input) memoryParam() string {
	if in.Spec != nil {
		return in.Spec.MemoryParam()
	}
	if slices.Contains(in.Results.Params, sweeps.DefaultMemoryParam) {
		return sweeps.DefaultMemoryParam
	}
	return ""
}

// ClassThroughput is one GPU class's throughput against the memory parameter.
type ClassThroughput struct {
	Class string // results.TrialSummary.HardwareClass
	// Points are the trials that trained and did not run out of memory: X the memory parameter's value,
	// Y the environment steps they trained per second of wall time.
	Points plotter.XYs
	// Medians is the median of Points at each value of the parameter, by value.
	Medians plotter.XYs
	// OOM are the values of the trials that ran out of memory on this class, smallest first; OOM[0] is
	// the class's out-of-memory bound.
	OOM []float64
}

// Throughput is the sweep's throughput by GPU class (sorted by class), from the trials that ran: a
// trial's environment steps trained (Steps less the StartStep it began at) over its wall time. A
// trial without a value of param, or that trained no step or took no time, is left out; trials that
// never started (TrialSummary.NotStarted, such as those at or above an out-of-memory bound) are left
// out and counted in notStarted.
func Throughput(trials []results.TrialSummary, param string) (classes []ClassThroughput, notStarted int) {
	byClass := map[string]*ClassThroughput{}
	at := func(class string) *ClassThroughput {
		c := byClass[class]
		if c == nil {
			c = &ClassThroughput{Class: class}
			byClass[class] = c
		}
		return c
	}
	for _, t := range trials {
		x, ok := toFloat(t.Params[param])
		switch {
		case !ok:
			continue
		case t.NotStarted():
			notStarted++
		case t.Outcome == results.OutcomeOOM:
			c := at(t.HardwareClass())
			c.OOM = append(c.OOM, x)
		case t.Steps > t.StartStep && t.WallSeconds > 0:
			c := at(t.HardwareClass())
			c.Points = append(c.Points, plotter.XY{X: x, Y: float64(t.Steps-t.StartStep) / t.WallSeconds})
		}
	}
	for _, c := range byClass {
		slices.Sort(c.OOM)
		c.Medians = medians(c.Points)
		classes = append(classes, *c)
	}
	sort.Slice(classes, func(i, j int) bool { return classes[i].Class < classes[j].Class })
	return classes, notStarted
}

// medians is the median Y at each X of pts, sorted by X.
func medians(pts plotter.XYs) plotter.XYs {
	byX := map[float64][]float64{}
	for _, p := range pts {
		byX[p.X] = append(byX[p.X], p.Y)
	}
	out := make(plotter.XYs, 0, len(byX))
	for x, ys := range byX {
		slices.Sort(ys)
		m := ys[len(ys)/2]
		if len(ys)%2 == 0 {
			m = (ys[len(ys)/2-1] + m) / 2
		}
		out = append(out, plotter.XY{X: x, Y: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

// memoryValues is the distinct values of the memory parameter among classes' trials, sorted.
func memoryValues(classes []ClassThroughput) []float64 {
	var xs []float64
	for _, c := range classes {
		for _, p := range c.Points {
			xs = append(xs, p.X)
		}
		xs = append(xs, c.OOM...)
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}

// drawThroughput says whether the throughput plot has something to show: two values or more of the
// memory parameter among the trials that ran, and a trial with a throughput.
func drawThroughput(classes []ClassThroughput) bool {
	return len(memoryValues(classes)) >= 2 && slices.ContainsFunc(classes, func(c ClassThroughput) bool { return len(c.Points) > 0 })
}

// fmtValue writes a memory-parameter value as the sweep's messages do: 8192, 0.5.
func fmtValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// oomLabel names a class's out-of-memory bound: "OOM at num_envs ≥ 8192 on NVIDIA A100-SXM4-80GB".
func oomLabel(param string, c ClassThroughput) string {
	return fmt.Sprintf("OOM at %s ≥ %s on %s", param, fmtValue(c.OOM[0]), c.Class)
}

// log2Axis says whether the memory parameter is best seen on a log axis: positive values that are all
// powers of two, or that span a factor of 10 or more.
func log2Axis(xs []float64) bool {
	if len(xs) < 2 || xs[0] <= 0 {
		return false
	}
	pow2 := true
	for _, x := range xs {
		frac, _ := math.Frexp(x)
		pow2 = pow2 && frac == 0.5
	}
	return pow2 || xs[len(xs)-1]/xs[0] >= 10
}

// throughputPlot draws each class's trials as dots and their medians as a line, in the class's colour;
// the trials that ran out of memory as crosses on the x axis; and each class's out-of-memory bound as a
// dashed vertical line labelled with it.
func throughputPlot(param string, classes []ClassThroughput) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Throughput against " + param + " by GPU class"
	p.X.Label.Text, p.Y.Label.Text = param, "environment steps per second"
	p.Legend.Top, p.Legend.Left = true, true
	top := 0.0
	for _, c := range classes {
		for _, pt := range c.Points {
			top = max(top, pt.Y)
		}
	}
	top = max(top, 1)
	var bounds []ClassThroughput
	anyOOM := false
	for i, c := range classes {
		col := classColors[i%len(classColors)]
		var thumbs []plot.Thumbnailer
		if len(c.Medians) > 0 {
			l, _ := plotter.NewLine(c.Medians) // finite by construction
			l.Color, l.Width = col, vg.Points(1.5)
			dots, _ := plotter.NewScatter(c.Points)
			dots.Color, dots.Shape, dots.Radius = fade(col, 0x90), draw.CircleGlyph{}, vg.Points(2.5)
			p.Add(l, dots)
			thumbs = append(thumbs, l, dots)
		}
		if len(c.OOM) > 0 {
			xs := make(plotter.XYs, len(c.OOM))
			for j, x := range c.OOM {
				xs[j] = plotter.XY{X: x, Y: 0}
			}
			crosses, _ := plotter.NewScatter(xs)
			crosses.Color, crosses.Shape, crosses.Radius = col, draw.CrossGlyph{}, vg.Points(5)
			p.Add(crosses)
			if len(thumbs) == 0 {
				thumbs = append(thumbs, crosses)
			}
			bounds = append(bounds, c)
			anyOOM = true
		}
		p.Legend.Add(c.Class, thumbs...)
	}
	if anyOOM {
		s, _ := plotter.NewScatter(plotter.XYs{{}})
		s.Color, s.Shape, s.Radius = color.Black, draw.CrossGlyph{}, vg.Points(5)
		p.Legend.Add("ran out of memory", s)
	}
	p.Y.Min, p.Y.Max = 0, top*(1.35+0.08*float64(len(bounds)))
	xs := memoryValues(classes)
	addBounds(p, param, classes, bounds, top, xs)
	setMemoryAxis(p, xs)
	return p
}

// addBounds draws each class's out-of-memory bound: a dashed line in the class's colour from the axis
// to above the highest throughput, and its label, one row each above the data, written away from the
// plot's nearer edge.
func addBounds(p *plot.Plot, param string, classes, bounds []ClassThroughput, top float64, xs []float64) {
	if len(bounds) == 0 {
		return
	}
	var labels plotter.XYLabels
	mid := (xs[0] + xs[len(xs)-1]) / 2
	if log2Axis(xs) {
		mid = math.Sqrt(xs[0] * xs[len(xs)-1])
	}
	var aligns []draw.XAlignment
	for k, c := range bounds {
		i := slices.IndexFunc(classes, func(o ClassThroughput) bool { return o.Class == c.Class })
		col := classColors[i%len(classColors)]
		y := top * (1.08 + 0.08*float64(k))
		l, _ := plotter.NewLine(plotter.XYs{{X: c.OOM[0], Y: 0}, {X: c.OOM[0], Y: y}})
		l.Color, l.Width, l.Dashes = col, vg.Points(1.2), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		labels.XYs = append(labels.XYs, plotter.XY{X: c.OOM[0], Y: y})
		labels.Labels = append(labels.Labels, " "+oomLabel(param, c)+" ")
		align := draw.XLeft
		if c.OOM[0] > mid {
			align = draw.XRight
		}
		aligns = append(aligns, align)
	}
	t, _ := plotter.NewLabels(labels)
	for i := range t.TextStyle {
		t.TextStyle[i].XAlign = aligns[i]
	}
	p.Add(t)
}

// setMemoryAxis gives the x axis a log scale with a tick at each value (at most ten of them) when
// log2Axis says so, and a margin either side.
func setMemoryAxis(p *plot.Plot, xs []float64) {
	lo, hi := xs[0], xs[len(xs)-1]
	if !log2Axis(xs) {
		pad := (hi - lo) * 0.05
		p.X.Min, p.X.Max = lo-pad, hi+pad
		return
	}
	p.X.Scale = plot.LogScale{}
	pad := math.Pow(hi/lo, 0.05)
	p.X.Min, p.X.Max = lo/pad, hi*pad
	stride := (len(xs) + 9) / 10
	var ticks []plot.Tick
	for i, x := range xs {
		label := ""
		if i%stride == 0 || i == len(xs)-1 {
			label = fmtValue(x)
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

// throughputCaption says what the throughput plot shows and how to read it.
func throughputCaption(param string, classes []ClassThroughput, notStarted int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Environment steps per second (a trial's steps trained over its wall time, start-up and checkpoints included) against %s, one colour per GPU class (the GPU model of the trial's hardware record; \"no GPU\" with the CPU model for a trial given none): a dot per trial, the line through the median at each value.", param)
	var bounds []string
	for _, c := range classes {
		if len(c.OOM) > 0 {
			bounds = append(bounds, oomLabel(param, c))
		}
	}
	if len(bounds) > 0 {
		fmt.Fprintf(&b, " Crosses on the axis are trials that ran out of memory; the dashed line marks the smallest %s that did on that class (%s).", param, strings.Join(bounds, "; "))
	}
	if notStarted > 0 {
		fmt.Fprintf(&b, " %d trial%s not started (at or above a value that ran out of memory) %s not drawn.", notStarted, plural(notStarted), map[bool]string{true: "is", false: "are"}[notStarted == 1])
	}
	fmt.Fprintf(&b, " Throughput grows with %s while the GPU has idle capacity and flattens once it is saturated: past the knee more environments buy little speed for their memory, and each update's batch grows with them. Pick %s at the knee of its class's curve, below any OOM line.", param, param)
	return b.String()
}

// throughputFigure is the throughput plot with its caption; nil when the sweep has no memory parameter
// or it took fewer than two values among the trials that ran.
func throughputFigure(in *Input) (*Figure, error) {
	param := in.memoryParam()
	if param == "" {
		return nil, nil
	}
	classes, notStarted := Throughput(in.Results.Trials, param)
	if !drawThroughput(classes) {
		return nil, nil
	}
	out, err := svg(throughputPlot(param, classes), 22*vg.Centimeter, 12*vg.Centimeter)
	if err != nil {
		return nil, err
	}
	return &Figure{ID: FigureThroughput, Caption: throughputCaption(param, classes, notStarted), SVG: template.HTML(out)}, nil
}

// hardwareTable is the divergence-by-hardware table and the configurations it flags; nil groups when
// every trial ran in one group of GPU class and precision and none has a precision setting.
func hardwareTable(trials []results.TrialSummary) ([]results.HardwareGroup, []results.SensitiveConfig) {
	groups := results.DivergenceByHardware(trials)
	withPrecision := slices.ContainsFunc(trials, func(t results.TrialSummary) bool { return t.Precision != "" })
	if len(groups) < 2 && !withPrecision {
		return nil, nil
	}
	return groups, results.HardwareSensitivity(trials)
}
