package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Figure is one plot of the report: its element ID (the report's tests look for each) and its SVG.
type Figure struct {
	ID      string
	Caption string
	SVG     template.HTML
}

// page is what the template renders.
type page struct {
	In            *Input
	Title         string
	Counts        []count
	Rows          []Row
	Figures       []Figure
	Sensitivity   []Figure
	Sensitivities []Sensitivity
	// SensitivityNote says what the sensitivity analysis counts beyond the completed trials (pruned
	// trials, pbt schedules); "" when nothing more.
	SensitivityNote string
	Diverged        []Trial
	// BestObjective is the best value of the objective any trial's curve reached (NaN when none), the
	// yardstick for where a stopped trial stood.
	BestObjective float64
	Warnings      []warning
	Savings       Savings
	Budget        int64
	// The regression section, when In.Regression is set.
	RegressionRows   []regression.ConfigComparison
	RegressionCounts []count
	RegressionFigure *Figure
	// RungFigure, with early_terminate, shows each configuration at each decision step.
	RungFigure *Figure
	// Lineage: a pbt sweep's members (Lineage) and their plot; nil for the other methods.
	Lineage       []Member
	LineageFigure *Figure
	// The hardware section: throughput against the memory parameter by GPU class (nil when not drawn),
	// the divergence table by GPU class and precision (nil when the trials ran in one group without a
	// precision setting), and the hardware-sensitive configurations it flags.
	ThroughputFigure *Figure
	HardwareGroups   []results.HardwareGroup
	Sensitive        []results.SensitiveConfig
	// Confirmations are the configurations a sweep with confirm re-ran on other GPU classes.
	Confirmations []results.ClassConfirmation
	// SensitiveConfigs marks the plan indices of the hardware-sensitive configurations, for the
	// leaderboard.
	SensitiveConfigs map[int]bool
	// Pareto is the section of a sweep with several objectives; nil for one objective.
	Pareto *paretoSection
}

// warning is one warning text and the trials that gave it, in plan order.
type warning struct {
	Text   string
	Trials []string
}

// warnings groups the trials' warnings by text, in the order they first appear.
func warnings(trials []results.TrialSummary) []warning {
	var out []warning
	at := map[string]int{}
	for _, t := range trials {
		for _, w := range t.Warnings {
			i, ok := at[w]
			if !ok {
				i = len(out)
				at[w] = i
				out = append(out, warning{Text: w})
			}
			out[i].Trials = append(out[i].Trials, t.TrialID)
		}
	}
	mal := warning{}
	total := 0
	for _, t := range trials {
		if t.Malformed > 0 {
			total += t.Malformed
			mal.Trials = append(mal.Trials, fmt.Sprintf("%s (%d)", t.TrialID, t.Malformed))
		}
	}
	if total > 0 {
		mal.Text = fmt.Sprintf("%d malformed metric line%s dropped (unparsable, too long, or a step going backwards): the curves lack them", total, plural(total))
		out = append(out, mal)
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

type count struct {
	Outcome string
	N       int
	Color   string
}

// bestOfCurves returns the best finite value on any trial's curve, NaN when there is none.
func bestOfCurves(trials []Trial, maximize bool) float64 {
	best := math.NaN()
	for _, t := range trials {
		for _, p := range t.Curve {
			if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
				continue
			}
			if math.IsNaN(best) || maximize && p.Value > best || !maximize && p.Value < best {
				best = p.Value
			}
		}
	}
	return best
}

// FigureIDs lists the element IDs of the plots Render always draws; each sensitivity plot adds
// "plot-sensitivity-<parameter>".
var FigureIDs = []string{"plot-leaderboard", "plot-learning-curves", "plot-parallel-coordinates"}

// The element IDs of the plots Render draws for some sweeps: the learning curves zoomed to the steps the
// stopped trials reached (when that is at most half the budget) and a bayes sweep's optimisation
// history.
const (
	FigureEarlyCurves = "plot-learning-curves-early"
	FigureHistory     = "plot-optimization-history"
)

// Render writes the report of in as one self-contained HTML page.
func Render(w io.Writer, in *Input) error {
	res := in.Results
	pg := page{In: in, Title: "rlsweep report: " + res.SweepID, Rows: Leaderboard(res),
		Savings: ComputeSavings(res.Trials, in.totalSteps()), Budget: in.totalSteps()}
	trials := in.trials()
	for _, o := range results.Outcomes {
		n := 0
		for _, t := range res.Trials {
			if t.Outcome == o {
				n++
			}
		}
		if n > 0 {
			c := colorOf(o)
			pg.Counts = append(pg.Counts, count{o, n, fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)})
		}
	}
	pg.Warnings = warnings(res.Trials)
	pg.Lineage = Lineage(res.Trials)
	trained := trainedParams(in, pg.Lineage)
	samples := sensitivitySamples(trials, trained)
	pg.Sensitivities = Sensitivities(samples, res.Params)
	pg.SensitivityNote = sensitivityNote(samples, pg.Lineage != nil)
	if pg.Lineage != nil {
		h := vg.Length(3+len(pg.Lineage)) * 0.6 * vg.Centimeter
		out, err := svg(lineagePlot(pg.Lineage), 22*vg.Centimeter, min(h, 40*vg.Centimeter))
		if err != nil {
			return err
		}
		pg.LineageFigure = &Figure{ID: "plot-lineage", SVG: template.HTML(out)}
	}
	for _, t := range trials {
		if t.Outcome == results.OutcomeDiverged || t.Outcome == results.OutcomePruned || t.Divergence != nil {
			pg.Diverged = append(pg.Diverged, t)
		}
	}
	pg.BestObjective = bestOfCurves(trials, in.maximize())
	type fig struct {
		id, caption string
		p           *plot.Plot
		w, h        vg.Length
	}
	figs := []fig{
		{FigureIDs[0], "The best configurations (at most 25): mean objective over the completed seeds with its 95% Student-t interval; each dot beside it is one seed.", leaderboardPlot(in, pg.Rows), 22 * vg.Centimeter, 10 * vg.Centimeter},
	}
	if in.Spec != nil && in.Spec.Method == sweeps.MethodBayes {
		points, infeasible := optimizationHistory(in.Spec, trials)
		startup := len(sweeps.StartupConfigs(in.Spec, min(in.Spec.BayesSettings().StartupTrials, in.Spec.Trials)))
		figs = append(figs, fig{FigureHistory, historyCaption(startup, infeasible), historyPlot(in, points, startup), 22 * vg.Centimeter, 10 * vg.Centimeter})
	}
	figs = append(figs, fig{FigureIDs[1], "Every trial's objective against environment steps. Dashed lines ended early; a cross marks where a rule stopped the trial; a gap is a NaN or infinite value.", learningCurves(in, trials), 22 * vg.Centimeter, 12 * vg.Centimeter})
	if reach := earlyReach(in, trials); reach > 0 {
		figs = append(figs, fig{FigureEarlyCurves, fmt.Sprintf("The same curves with the step axis zoomed to the first %s steps, the most any pruned or diverged trial reached (the budget is %s steps, on which their curves fill a corner), and the value axis fitted to that range: how the stopped trials compared with the survivors at the same steps. Dotted grey lines are early_terminate's decision steps; colours, dashes and crosses as above.", groupDigits(reach), groupDigits(max(in.totalSteps(), reach))), earlyCurves(in, trials, reach), 22 * vg.Centimeter, 12 * vg.Centimeter})
	}
	pcCaption := "One line per trial through its parameter values to its objective. Log-scaled axes are labelled with their real ends; dashed lines have no final value and stop at the last parameter."
	if slices.ContainsFunc(trials, func(t Trial) bool { _, ok := prunedValue(t); return ok }) {
		pcCaption = "One line per trial through its parameter values to its objective. Log-scaled axes are labelled with their real ends. A pruned trial's line ends at its last windowed value at the rung it was stopped at, dashed orange: that value is from fewer steps than a completed trial's objective. Other dashed lines have no final value and stop at the last parameter."
	}
	if pg.Lineage != nil {
		pcCaption += " " + pbtParallelNote
	}
	figs = append(figs, fig{FigureIDs[2], pcCaption, parallelCoordinates(in, trials, trained), 22 * vg.Centimeter, 11 * vg.Centimeter})
	for _, f := range figs {
		s, err := svg(f.p, f.w, f.h)
		if err != nil {
			return err
		}
		pg.Figures = append(pg.Figures, Figure{f.id, f.caption, template.HTML(s)})
	}
	for _, s := range pg.Sensitivities {
		out, err := svg(sensitivityPlot(in, s, samples), 11*vg.Centimeter, 8*vg.Centimeter)
		if err != nil {
			return err
		}
		pg.Sensitivity = append(pg.Sensitivity, Figure{ID: "plot-sensitivity-" + s.Param, SVG: template.HTML(out)})
	}
	// The rung plot places decision points on the step axis: not for points counted in logged values.
	if in.Spec != nil && in.Spec.EarlyTerminate != nil && in.Spec.RungUnit() == sweeps.RungSteps {
		if steps := in.Spec.DecisionSteps(); len(steps) > 0 {
			out, err := svg(rungPlot(in, trials, steps), 22*vg.Centimeter, 11*vg.Centimeter)
			if err != nil {
				return err
			}
			pg.RungFigure = &Figure{ID: "plot-rungs", SVG: template.HTML(out),
				Caption: "Each configuration's value (IQM over its seeds' windowed objective) at each decision step of early_terminate and, for those that completed, at the end. A cross marks where a configuration was stopped, a grey bar the cutoff it had to reach there."}
		}
	}
	if err := pg.hardware(in); err != nil {
		return err
	}
	if err := pg.pareto(in); err != nil {
		return err
	}
	if r := in.Regression; r != nil {
		pg.RegressionRows, pg.RegressionCounts = regressionSorted(r), regressionCounts(r)
		fig, err := regressionFigure(in)
		if err != nil {
			return err
		}
		pg.RegressionFigure = fig
	}
	return pageTemplate.Execute(w, pg)
}

var funcs = template.FuncMap{
	"join":  strings.Join,
	"deref": func(x *float64) float64 { return *x },
	"num": func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return fmt.Sprintf("%.4g", x)
	},
	"ci": func(r Row) string {
		switch {
		case !math.IsNaN(r.Lo):
			return fmt.Sprintf("[%.4g, %.4g]", r.Lo, r.Hi)
		case r.Scored > 0:
			return "too few seeds"
		}
		return "—"
	},
	"confirmed": func(r Row) string {
		switch {
		case !r.Confirmed:
			return "—"
		case r.Fresh == nil:
			return "no score on " + FreshSeeds(r.FreshSeeds)
		}
		return fmt.Sprintf("confirmed: %.4g on %s", *r.Fresh, FreshSeeds(r.FreshSeeds))
	},
	"inside": func(b *bool) template.HTML {
		switch {
		case b == nil:
			return "—"
		case *b:
			return "yes"
		}
		return "<b>no</b>"
	},
	"rankingRule": RankingRule,
	"obj": func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.4g", *p)
	},
	"params": func(names []string, params map[string]any) string {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + "=" + formatValue(params[n])
		}
		return strings.Join(parts, " ")
	},
	"outcomes": func(m map[string]int) string {
		var parts []string
		for _, o := range results.Outcomes {
			if m[o] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", m[o], o))
			}
		}
		return strings.Join(parts, ", ")
	},
	"color": func(o string) string {
		c := colorOf(o)
		return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
	},
	"verdictColor": func(v string) string { return hexColor(verdictColorOf(v)) },
	"upper":        strings.ToUpper,
	"rparams":      regressionParams,
	"signedPct": func(x float64) string {
		if !isFinite(x) {
			return "—"
		}
		return fmt.Sprintf("%+.1f%%", 100*x)
	},
	"pctOf": func(x float64) string { return fmt.Sprintf("%g%%", 100*x) },
	"interval": func(lo, hi float64) string {
		if !isFinite(lo) || !isFinite(hi) {
			return "—"
		}
		return fmt.Sprintf("[%.4g, %.4g]", lo, hi)
	},
	"prob": func(x float64) string {
		if !isFinite(x) {
			return "—"
		}
		return fmt.Sprintf("%.2f", x)
	},
	"iqm": func(x float64, scores []float64) string {
		if !isFinite(x) {
			return "—"
		}
		return fmt.Sprintf("%.4g (%d)", x, len(scores))
	},
	"sub":        func(a, b float64) float64 { return a - b },
	"overridden": func(r *regression.Report, name string) bool { return slices.Contains(r.Overridden, name) },
	"steps":      func(n int64) string { return groupDigits(n) },
	"duration":   formatSeconds,
	// gap is how far v stands from best, as a share of |best|: "4.0%".
	"gap": func(v, best float64) string {
		if math.IsNaN(v) || math.IsNaN(best) || best == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", 100*math.Abs(best-v)/math.Abs(best))
	},
	"pct": func(a, b int64) string {
		if b <= 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
	},
	"fix":         func(x float64, prec int) string { return fmtNum(x, prec) },
	"inc":         func(i int) int { return i + 1 },
	"probeCheck":  probeCheck,
	"schedule":    formatSchedule,
	"indent":      func(d int) string { return strings.Repeat("└ ", min(d, 20)) },
	"probeValues": probeValues,
	"goal":        goalWords,
	"paretoExtra": func() int { return ParetoTableExtra },
}

// hardware fills the hardware section: the throughput plot and the divergence table by hardware.
func (pg *page) hardware(in *Input) error {
	fig, err := throughputFigure(in)
	if err != nil {
		return err
	}
	pg.ThroughputFigure = fig
	pg.HardwareGroups, pg.Sensitive = hardwareTable(in.Results.Trials)
	pg.Confirmations = results.ClassConfirmations(in.Results.Trials)
	pg.SensitiveConfigs = map[int]bool{}
	for _, c := range pg.Sensitive {
		for _, i := range c.Configs {
			pg.SensitiveConfigs[i] = true
		}
	}
	return nil
}

// historyCaption says what the optimisation history shows.
func historyCaption(startup, infeasible int) string {
	c := fmt.Sprintf("Each configuration's score (IQM over its search seeds; seeds of the re-run are left out) in the order the search proposed it, its configuration index. Configurations 0–%d are the start-up draws (bayes.startup_trials, drawn as method random), grey circles; the later ones TPE's proposals, blue triangles. The black line is the best score so far. A pruned configuration is an orange ring at its seeds' last windowed value at the rung it was stopped at, not counted in the best so far.", max(startup-1, 0))
	if startup == 0 {
		c = "Each configuration's score (IQM over its search seeds) in the order the search proposed it; every configuration is a TPE proposal. The black line is the best score so far; orange rings are pruned configurations at their value at the rung they were stopped at."
	}
	if infeasible > 0 {
		c += fmt.Sprintf(" %d configuration%s with no score (a seed diverged, or none completed or was pruned with a value) %s left out.", infeasible, plural(infeasible), map[bool]string{true: "is", false: "are"}[infeasible == 1])
	}
	return c
}

// pbtParallelNote is the parallel coordinates' caption's sentence on how a pbt sweep's members are drawn.
const pbtParallelNote = "A population-based training member's line goes through the parameters it trained under over its whole schedule, weighted by the steps it trained with each (a number's step-weighted mean, geometric on a log-scaled parameter; any other value the one it trained with longest), as the sensitivity analysis counts it, not only the parameters it ended with: the schedules themselves are in the lineage table."

// sensitivityNote says what the sensitivity analysis counts beyond the completed trials.
func sensitivityNote(samples []Sample, pbt bool) string {
	pruned := 0
	for _, s := range samples {
		if s.Pruned {
			pruned++
		}
	}
	var parts []string
	if pruned > 0 {
		parts = append(parts, fmt.Sprintf("pruned trials (%d) count by the last windowed value at the rung where each was stopped (orange rings in the plots): a value from fewer steps than a completed trial's objective, so a parameter that gets trials pruned shows the lower values they had", pruned))
	}
	if pbt {
		parts = append(parts, "each population-based training member counts with the parameters it trained under over its whole schedule, weighted by the steps it trained with each (a number's step-weighted mean, geometric on a log-scaled parameter; any other value the one it trained with longest), not only the parameters it ended with")
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

// groupDigits writes n with thin spaces between groups of three digits.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune('\u202f')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func formatSeconds(s float64) string {
	if math.IsNaN(s) {
		return "—"
	}
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond * 100).String()
}

var pageTemplate = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f6f6f6; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 0.05em 0.6em; border-radius: 1em; color: #fff; margin-right: 0.4em; }
.muted { color: #777; } figure { margin: 1em 0; } figcaption { color: #555; font-size: 0.9em; max-width: 60em; }
.grid { display: flex; flex-wrap: wrap; gap: 1em; } svg { max-width: 100%; height: auto; }
code { background: #f3f3f3; padding: 0 0.3em; }
#regression { border: 2px solid; border-radius: 6px; padding: 0.2em 1em 0.8em; margin: 1em 0 2em; }
#regression h2 { margin-top: 0.6em; border: none; }
.verdict { display: inline-block; padding: 0.1em 0.8em; border-radius: 0.3em; color: #fff; font-size: 1.3em; font-weight: bold; letter-spacing: 0.05em; }
tr.regressed td { background: #fdecea; }
tr.front td { background: #eef5fb; }
</style>
</head>
<body>
<h1>{{.In.Results.Name}}</h1>
<p class="muted">sweep <code>{{.In.Results.SweepID}}</code> · {{.In.Results.Status}} · {{len .In.Results.Trials}} trials · objective <b>{{.In.Results.Metric.Name}}</b> ({{.In.Results.Metric.Goal}}){{if .In.Generated}} · generated {{.In.Generated}}{{end}}</p>
<p id="outcome-counts">{{range .Counts}}<span class="badge" style="background:{{.Color}}">{{.N}} {{.Outcome}}</span>{{end}}</p>
{{if .Warnings}}<section id="warnings">
<h2>Warnings</h2>
<ul>{{range .Warnings}}<li><b>{{.Text}}</b><br><span class="muted">{{len .Trials}} trial{{if ne (len .Trials) 1}}s{{end}}: {{join .Trials ", "}}</span></li>
{{end}}</ul>
</section>
{{end}}{{with .In.Regression}}
<section id="regression" style="border-color:{{verdictColor .Verdict}}">
<h2>Nightly regression: <span id="regression-verdict" class="verdict" data-verdict="{{.Verdict}}" style="background:{{verdictColor .Verdict}}">{{upper .Verdict}}</span></h2>
<p>Against baseline <code id="regression-baseline">{{.Baseline}}</code>{{if ne .BaselineKey .Baseline}} <span class="muted">({{.BaselineKey}})</span>{{end}}: {{.Compared}} configuration{{if ne .Compared 1}}s{{end}} compared. {{range $.RegressionCounts}}<span class="badge" style="background:{{.Color}}">{{.N}} {{.Outcome}}</span>{{end}}</p>
{{if eq .Verdict "failed"}}<p><b>No configuration of this sweep has the parameter values of one of the baseline's</b>: nothing was compared. The sweep's parameters differ from the baseline's; set a new baseline (<code>rlsweep baseline set</code>) if the change is intended.</p>{{end}}
<p id="regression-thresholds" class="muted">Thresholds: tolerance <b>{{pctOf .Thresholds.Tolerance}}</b>{{if overridden . "tolerance"}} (the schedule's --tolerance){{end}} relative IQM change · <b>{{pctOf .Thresholds.Confidence}}</b> stratified bootstrap interval of the IQM difference, {{.Thresholds.Resamples}} resamples, must exclude 0 · P(improvement) ≥ <b>{{.Thresholds.MinProbImprovement}}</b> to improve, ≤ <b>{{printf "%.4g" (sub 1 .Thresholds.MinProbImprovement)}}</b> to regress · at most <b>{{.Thresholds.MaxNewFailures}}</b> more seeds without an objective than the baseline.</p>
<table id="regression-table">
<tr><th>config</th><th>baseline config</th><th>parameters</th><th>baseline IQM (seeds)</th><th>IQM (seeds)</th><th>change</th><th>interval of the difference</th><th>P(improvement)</th><th>seeds without objective</th><th>verdict</th><th>reason</th></tr>
{{range $.RegressionRows}}<tr class="{{.Verdict}}"><td class="n">{{if ge .Config 0}}{{.Config}}{{else}}—{{end}}</td><td class="n">{{if ge .BaselineConfig 0}}{{.BaselineConfig}}{{else}}—{{end}}</td><td>{{rparams $.In.Results.Params .Params}}</td><td class="n">{{iqm .BaselineIQM .Baseline}}</td><td class="n">{{iqm .CandidateIQM .Candidate}}</td><td class="n">{{signedPct .RelChange}}</td><td class="n">{{interval (index .DiffCI 0) (index .DiffCI 1)}}</td><td class="n">{{prob .ProbImprovement}}</td><td class="n">{{if ge .Config 0}}{{.CandidateFailures}}{{else}}—{{end}} (baseline {{if ge .BaselineConfig 0}}{{.BaselineFailures}}{{else}}—{{end}})</td><td><b style="color:{{verdictColor .Verdict}}">{{.Verdict}}</b></td><td>{{.Reason}}</td></tr>
{{end}}</table>
{{with $.RegressionFigure}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}
{{with .Webhook}}{{if .Error}}<p class="muted">The webhook was not notified: {{.Error}}</p>{{end}}{{end}}
<p class="muted">IQM: interquartile mean over seeds; interval: stratified bootstrap of IQM(this sweep) − IQM(baseline); P(improvement): the chance a seed of this sweep beats a seed of the baseline, ties ½ (rliable). Configurations are matched by parameter values: <i>new</i> ones are only in this sweep, <i>missing</i> ones only in the baseline, and neither is compared.</p>
</section>
{{end}}

<h2 id="leaderboard">Leaderboard</h2>
<table id="leaderboard-table">
<tr><th>#</th><th>config</th><th>parameters</th><th>mean {{.In.Results.Metric.Name}}</th><th>95% CI</th><th>IQM</th><th>seeds scored</th><th>outcomes</th>{{if .In.Results.Confirmations}}<th>fresh seeds</th>{{end}}</tr>
{{range $i, $r := .Rows}}<tr><td class="n">{{inc $i}}</td><td class="n">{{$r.Config}}</td><td>{{params $.In.Results.Params $r.Params}}{{if $r.Precision}} · precision {{$r.Precision}}{{end}}</td><td class="n">{{if $r.Scored}}{{num $r.Mean}}{{else}}—{{end}}</td><td class="n">{{ci $r}}</td><td class="n">{{if $r.Scored}}{{num $r.IQM}}{{else}}—{{end}}</td><td class="n">{{$r.Scored}}/{{$r.Trials}}</td><td>{{outcomes $r.Outcomes}}{{if index $.SensitiveConfigs $r.Config}} · <a href="#hardware-sensitive"><b>hardware-sensitive</b></a>{{end}}</td>{{if $.In.Results.Confirmations}}<td>{{confirmed $r}}</td>{{end}}</tr>
{{end}}</table>
<p class="muted">Only completed trials are scored; a configuration's diverged seeds show under outcomes. The table is {{rankingRule .In.Results}}{{with .In.Results.Metric.Bounds}}, clipped to metric.bounds [{{num (index . 0)}}, {{num (index . 1)}}]{{end}}.</p>
{{with .In.Results.Confirmations}}
<h2 id="rerun">Re-run of the best configurations</h2>
<table id="rerun-table">
<tr><th>config</th><th>parameters</th><th>search score (IQM)</th><th>95% prediction interval</th><th>re-run score (IQM)</th><th>seeds search / re-run</th><th>inside</th></tr>
{{range .}}<tr><td class="n">{{.Config}}</td><td>{{params $.In.Results.Params .Params}}</td><td class="n">{{if .SearchScore}}{{num (deref .SearchScore)}}{{else}}infeasible{{end}}</td><td class="n">{{if .SearchLow}}[{{num (deref .SearchLow)}}, {{num (deref .SearchHigh)}}]{{else}}—{{end}}</td><td class="n">{{if .RerunScore}}{{num (deref .RerunScore)}}{{else}}—{{end}}</td><td class="n">{{.SearchSeeds}} / {{.RerunSeeds}}</td><td>{{inside .Inside}}</td></tr>
{{end}}</table>
<p class="muted">The search's best configurations, run again on seeds the search did not use (bayes.rerun_top). The interval is where the re-run's mean should land if the search-time score reproduces: the 95% Student-t prediction interval from the search's n seeds for the mean of the re-run's m seeds, mean ± t(0.975, n−1)·s·√(1/n + 1/m) (wider than the leaderboard's interval of the mean, which is not where new seeds land), given from 3 search seeds on and clipped to metric.bounds. A re-run score outside it says the search-time score did not reproduce.</p>
{{end}}

{{with .Pareto}}<section id="pareto">
<h2>Several objectives: the Pareto front</h2>
<ol id="pareto-objectives">{{range .Described}}<li>{{.}}</li>
{{end}}</ol>
{{with .Figure}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .Pairs}}<div class="grid">{{range .Pairs}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}</div>
<p id="pareto-caption" class="muted">{{.PairsCaption}}</p>
{{end}}<table id="pareto-table">
<tr><th>config</th><th>parameters</th>{{if .Precision}}<th>precision</th>{{end}}{{range .Objectives}}<th>{{.Label}} <span class="muted">({{goal .}})</span></th>{{end}}{{if .Target}}<th>seeds reached the target</th>{{end}}<th>rank</th><th>not ranked because</th></tr>
{{range .Rows}}<tr{{if .OnFront}} class="front"{{end}}><td class="n">{{.Config}}</td><td>{{params $.In.Results.Params .Params}}</td>{{if $.Pareto.Precision}}<td>{{or .Precision "—"}}</td>{{end}}{{range .Values}}<td class="n">{{.}}</td>{{end}}{{if $.Pareto.Target}}<td class="n">{{.Reached}}</td>{{end}}<td class="n" style="white-space:nowrap">{{if .OnFront}}<b>1 (front)</b>{{else if .Rank}}{{.Rank}}{{else}}—{{end}}</td><td>{{.Why}}</td></tr>
{{end}}</table>
<p class="muted">The configurations on the Pareto front (rank 1) first, the most isolated first (largest crowding distance: the front's ends, then those with the widest gaps to their neighbours), then the others by non-dominated rank (rank 2 is the front once rank 1 is removed, and so on), then those not ranked. Each value is the IQM over the configuration's seeds with the 95% bootstrap interval of that IQM in brackets where the objective has a spread over seeds and enough seeds; never: too many seeds never reached the target. A configuration with a seed that diverged is infeasible and never on the front; a pruned one was not trained to its budget.{{if .Left}} <b>{{.Left}} more configuration{{if ne .Left 1}}s{{end}}</b> not listed: the table shows the front and the next {{paretoExtra}}.{{end}}</p>
{{with .Hypervolume}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .Threshold}}<h3 id="threshold">Environment steps to the threshold</h3>
<table id="threshold-table">
<tr><th>config</th><th>parameters</th>{{if .Precision}}<th>precision</th>{{end}}<th>env steps to the target [95% interval]</th><th>seeds reached</th><th>not ranked because</th></tr>
{{range .Threshold}}<tr><td class="n">{{.Config}}</td><td>{{params $.In.Results.Params .Params}}</td>{{if $.Pareto.Precision}}<td>{{or .Precision "—"}}</td>{{end}}<td class="n">{{.Steps}}</td><td class="n">{{.Reached}}</td><td>{{.Why}}</td></tr>
{{end}}</table>
<p class="muted">{{.ThresholdCaption}}{{if .ThresholdLeft}} {{.ThresholdLeft}} more configuration{{if ne .ThresholdLeft 1}}s{{end}} not listed.{{end}}</p>
{{end}}</section>
{{end}}
{{range .Figures}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
{{if .Lineage}}<h2 id="lineage">Population-based training: lineage and schedules</h2>
<table id="lineage-table">
<tr><th>member</th><th>outcome</th><th>{{.In.Results.Metric.Name}}</th><th>exploits</th><th>hyperparameter schedule</th></tr>
{{range .Lineage}}<tr><td>{{indent .Depth}}{{.TrialID}}{{if .Parent}} <span class="muted">(replaces a diverged member, from {{.Parent}})</span>{{end}}</td><td style="color:{{color .Outcome}}">{{.Outcome}}</td><td class="n">{{obj .Objective}}</td><td class="n">{{len .Exploits}}</td><td>{{range schedule $.In.Results.Params .Schedule}}{{.}}<br>{{end}}</td></tr>
{{end}}</table>
<p class="muted">Each exploit copied the named member's checkpoint at that step and went on with its parameters explored; a member replacing a diverged one is listed under the member it started from.</p>
{{with .LineageFigure}}<figure id="{{.ID}}">{{.SVG}}</figure>{{end}}
{{end}}
<h2 id="sensitivity">Per-parameter sensitivity</h2>
{{if .Sensitivities}}<table id="sensitivity-table">
<tr><th>parameter</th><th>η² (variance explained)</th><th>Spearman ρ</th><th>groups</th><th>trials counted</th><th>of them pruned</th></tr>
{{range .Sensitivities}}<tr><td>{{.Param}}</td><td class="n">{{fix .EtaSquared 3}}</td><td class="n">{{fix .Spearman 3}}</td><td class="n">{{.Groups}}</td><td class="n">{{.Scored}}</td><td class="n">{{.Pruned}}</td></tr>
{{end}}</table>
{{if .SensitivityNote}}<p id="sensitivity-note" class="muted">{{.SensitivityNote}}</p>{{end}}
<div class="grid">{{range .Sensitivity}}<figure id="{{.ID}}">{{.SVG}}</figure>{{end}}</div>
{{else}}<p>No parameter took two values among the completed and pruned trials.</p>{{end}}

<h2 id="divergences">Diverged and stopped trials</h2>
{{if .Diverged}}<table id="divergence-table">
<tr><th>trial</th><th>parameters</th><th>outcome</th><th>rule</th><th>step</th><th>metric = value (threshold)</th><th>objective at the stop (best of the sweep {{num .BestObjective}})</th><th>advice</th></tr>
{{range .Diverged}}<tr><td>{{.TrialID}}</td><td>{{params $.In.Results.Params .Params}}</td><td style="color:{{color .Outcome}}">{{.Outcome}}</td>{{with .Divergence}}<td>{{.Rule}}{{range .Related}} · {{.}}{{end}}</td><td class="n">{{steps .Step}}</td><td>{{.Metric}} = {{num .Value}} ({{num .Threshold}})</td><td class="n">{{if .Objective}}{{num .ObjectiveValue}} ({{gap .ObjectiveValue $.BestObjective}} from the best){{else}}—{{end}}</td><td>{{.Advice}}</td>{{else}}<td>{{.StopRule}}</td><td class="n">{{steps .Steps}}</td><td>—</td><td>—</td><td class="muted">{{if .Error}}{{.ErrorLine}}{{else}}no divergence.json stored{{end}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>No trial was stopped early.</p>{{end}}

{{if or .ThroughputFigure .HardwareGroups .Confirmations}}<h2 id="hardware">Hardware: throughput and divergence</h2>
{{with .ThroughputFigure}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .HardwareGroups}}<table id="hardware-table">
<tr><th>GPU</th><th>precision</th><th>trials</th><th>diverged</th><th>completed</th><th>pruned</th><th>oom</th><th>failed</th><th>cancelled</th></tr>
{{range .HardwareGroups}}<tr><td>{{.GPU}}</td><td>{{or .Precision "—"}}</td><td class="n">{{.Trials}}</td><td class="n">{{index .Outcomes "diverged"}}</td><td class="n">{{index .Outcomes "completed"}}</td><td class="n">{{index .Outcomes "pruned"}}</td><td class="n">{{index .Outcomes "oom"}}</td><td class="n">{{index .Outcomes "failed"}}</td><td class="n">{{index .Outcomes "cancelled"}}</td></tr>
{{end}}</table>
<p class="muted">The trials that ran, by the GPU model of their hardware record and their precision setting (resources.precision; — for none); trials never started are left out. <i>diverged</i> counts the seeds stopped because another seed of their configuration diverged too. A configuration (its parameters, whatever its precision) is <b>hardware-sensitive</b> when a trial of it diverged in one group and all its trials completed or were pruned in another.</p>
<section id="hardware-sensitive">{{if .Sensitive}}<h3>Hardware-sensitive configurations</h3>
<ul>{{range .Sensitive}}<li><b>hardware-sensitive</b>: config {{range $i, $c := .Configs}}{{if $i}}, {{end}}{{$c}}{{end}} ({{params $.In.Results.Params .Params}}) {{.Line}}</li>
{{end}}</ul>{{else}}<p>No configuration diverged in one group of GPU and precision and trained in another.</p>{{end}}</section>
{{end}}{{if .Confirmations}}<h3 id="confirm">Confirmed on other GPU classes</h3>
<table id="confirm-table">
<tr><th>config</th><th>parameters</th><th>GPU class</th><th>GPU</th><th>trials</th><th>completed</th><th>diverged</th><th>mean {{.In.Results.Metric.Name}}</th></tr>
{{range .Confirmations}}{{$c := .}}{{range .Runs}}<tr><td class="n">{{$c.Config}}</td><td>{{params $.In.Results.Params $c.Params}}</td><td>{{or .GPUClass "the sweep's"}}</td><td>{{or .GPU "—"}}</td><td class="n">{{.Trials}}</td><td class="n">{{index .Outcomes "completed"}}</td><td class="n">{{index .Outcomes "diverged"}}</td><td class="n">{{if .Scored}}{{num .Mean}}{{else}}—{{end}}</td></tr>
{{end}}{{end}}</table>
<p class="muted">The best configurations of the search (confirm.top, by the leaderboard's ranking, which leaves these re-runs out) run again with the same seeds on each class of confirm.gpu_classes once the search is over.</p>
{{end}}{{end}}
<h2 id="savings">Compute saved by early stopping</h2>
{{with .Savings}}{{if $.Budget}}<p>Early stopping saved <b>{{steps .StepsSaved}}</b> environment steps ({{pct .StepsSaved .Budget}} of the sweep's budget of {{steps .Budget}}) and about <b>{{duration .SecondsSaved}}</b> of trial time, extrapolated from each stopped trial's own steps per second. The sweep spent {{steps .StepsSpent}} steps.</p>
{{if .Pruned}}<p id="pruning-saved">Pruning (early_terminate) stopped {{.Pruned}} trial(s) and saved <b>{{steps .PrunedSteps}}</b> environment steps ({{pct .PrunedSteps .Budget}} of the budget) and about <b>{{duration .PrunedSeconds}}</b> of trial time, against every trial at its full budget.</p>
{{end}}{{if .Trials}}<table id="savings-table">
<tr><th>trial</th><th>outcome</th><th>rule</th><th>steps reached</th><th>steps saved</th><th>time saved</th></tr>
{{range .Trials}}<tr><td>{{.TrialID}}</td><td>{{.Outcome}}</td><td>{{.Rule}}</td><td class="n">{{steps .StepsReached}}</td><td class="n">{{steps .StepsSaved}}</td><td class="n">{{duration .SecondsSaved}}</td></tr>
{{end}}</table>{{end}}{{else}}<p>The step budget is unknown (no spec), so the saving cannot be computed.</p>{{end}}{{end}}
{{with .RungFigure}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}

<h2 id="probes">Probe checks</h2>
{{if and .In.Probes .In.Probes.Results}}<table id="probe-table">
<tr><th>probe</th><th>result</th><th>detail</th><th>values</th></tr>
{{range .In.Probes.Results}}<tr><td>{{.Probe}}</td><td>{{if .Skipped}}<span class="muted">skipped</span>{{else if .Passed}}<span style="color:#2ca02c">pass</span>{{else}}<b style="color:#d62728">FAIL</b>{{end}}</td><td>{{.Error}}</td><td>{{range .Checks}}{{probeCheck .}}; {{end}}{{probeValues .}}</td></tr>
{{end}}</table>{{else}}<p class="muted">No probe results stored for this sweep.</p>{{end}}
{{if .In.CurvesOmitted}}<p class="muted">{{.In.CurvesOmitted}} trials' learning curves were not loaded: the report draws at most a few hundred.</p>{{end}}
</body>
</html>
`))
