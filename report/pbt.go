package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rlsweep/rlsweep/results"
)

// Member is one pbt member as the report's lineage table shows it: where it came from, its exploits,
// and its hyperparameter schedule.
type Member struct {
	TrialID   string
	Parent    string // the member a replacement started from
	Outcome   string
	Objective *float64
	Steps     int64 // the step it reached
	Depth     int   // how many replacements deep it descends from a first member
	// Schedule: the parameters it trained with from each step on.
	Schedule []ScheduleStep
	Exploits []results.Exploit
}

// ScheduleStep is a member's parameters from Step on, and where they came from.
type ScheduleStep struct {
	Step   int64
	Params map[string]any
	From   string // the member exploited there; "" for the member's own start
}

// Lineage returns the members of a pbt sweep, each replacement right after the member it descends
// from, with their hyperparameter schedules; nil when no trial exploited or was a replacement.
func Lineage(trials []results.TrialSummary) []Member {
	has := slices.ContainsFunc(trials, func(t results.TrialSummary) bool { return len(t.Exploits) > 0 || t.Parent != "" })
	if !has {
		return nil
	}
	byID := map[string]Member{}
	children := map[string][]string{}
	var roots []string
	for _, t := range trials {
		m := Member{TrialID: t.TrialID, Parent: t.Parent, Outcome: t.Outcome, Objective: t.Objective, Steps: t.Steps, Exploits: t.Exploits}
		exploits := t.Exploits
		switch {
		case t.Parent != "" && len(exploits) > 0 && exploits[0].From == t.Parent && exploits[0].Old == nil:
			// A replacement: its first record is its start from the parent's checkpoint.
			m.Schedule = append(m.Schedule, ScheduleStep{Step: exploits[0].Step, Params: exploits[0].New, From: t.Parent})
			exploits = exploits[1:]
		case len(exploits) > 0:
			m.Schedule = append(m.Schedule, ScheduleStep{Step: t.StartStep, Params: exploits[0].Old})
		default:
			m.Schedule = append(m.Schedule, ScheduleStep{Step: t.StartStep, Params: t.Params})
		}
		for _, e := range exploits {
			m.Schedule = append(m.Schedule, ScheduleStep{Step: e.Step, Params: e.New, From: e.From})
		}
		byID[t.TrialID] = m
		if t.Parent != "" {
			children[t.Parent] = append(children[t.Parent], t.TrialID)
		} else {
			roots = append(roots, t.TrialID)
		}
	}
	var out []Member
	seen := map[string]bool{}
	var walk func(id string, depth int)
	walk = func(id string, depth int) {
		if seen[id] {
			return
		}
		seen[id] = true
		m := byID[id]
		m.Depth = depth
		out = append(out, m)
		for _, c := range children[id] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for _, t := range trials { // a replacement whose parent is not among the trials
		if !seen[t.TrialID] {
			walk(t.TrialID, 0)
		}
	}
	return out
}

// formatSchedule writes a member's schedule, one line per step: "0: lr=0.001 · 20000 (from 3-s1): lr=0.0012".
func formatSchedule(names []string, s []ScheduleStep) []string {
	out := make([]string, len(s))
	for i, st := range s {
		parts := make([]string, 0, len(names))
		for _, n := range names {
			if v, ok := st.Params[n]; ok {
				parts = append(parts, n+"="+formatValue(v))
			}
		}
		from := ""
		if st.From != "" {
			from = " (from " + st.From + ")"
		}
		out[i] = fmt.Sprintf("step %s%s: %s", groupDigits(st.Step), from, strings.Join(parts, " "))
	}
	return out
}

// lineagePlot draws the lineage: one row per member (in the table's order), a line over the steps it
// trained in its outcome's colour, and at each exploit (or a replacement's start) a dashed grey line
// from the row of the member it took the checkpoint from, ending in a triangle on its own row.
func lineagePlot(lin []Member) *plot.Plot {
	p := plot.New()
	p.Title.Text = "Lineage: each member's training; a dashed line from the member whose checkpoint it took"
	p.X.Label.Text = "environment steps"
	row := make(map[string]float64, len(lin))
	for i, m := range lin {
		row[m.TrialID] = float64(len(lin) - 1 - i)
	}
	grey := color.RGBA{0x70, 0x70, 0x70, 0xff}
	for _, m := range lin {
		y := row[m.TrialID]
		var start int64
		if len(m.Schedule) > 0 {
			start = m.Schedule[0].Step
		}
		l, _ := plotter.NewLine(plotter.XYs{{X: float64(start), Y: y}, {X: float64(max(m.Steps, start)), Y: y}})
		l.Color, l.Width = colorOf(m.Outcome), vg.Points(2)
		p.Add(l)
		for _, st := range m.Schedule {
			from, ok := row[st.From]
			if st.From == "" || !ok {
				continue
			}
			e, _ := plotter.NewLine(plotter.XYs{{X: float64(st.Step), Y: from}, {X: float64(st.Step), Y: y}})
			e.Color, e.Width, e.Dashes = grey, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(2)}
			p.Add(e)
			t, _ := plotter.NewScatter(plotter.XYs{{X: float64(st.Step), Y: y}})
			t.Color, t.Shape, t.Radius = grey, draw.TriangleGlyph{}, vg.Points(3)
			p.Add(t)
		}
	}
	ticks := make([]plot.Tick, len(lin))
	for i, m := range lin {
		ticks[i] = plot.Tick{Value: row[m.TrialID], Label: m.TrialID}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.5, float64(len(lin))-0.5
	p.X.Min = 0
	return p
}

// trainedUnder is the parameters a member trained under over its whole schedule, each weighted by the
// steps it trained with it: a number's step-weighted mean (geometric for a parameter in logParam,
// whose values are all positive), any other value the one it trained with longest. A member with one
// schedule step, or none of whose steps has a length, gets its last schedule step's parameters.
func trainedUnder(m Member, names []string, logParam map[string]bool) map[string]any {
	if len(m.Schedule) == 0 {
		return nil
	}
	last := m.Schedule[len(m.Schedule)-1].Params
	span := func(i int) float64 {
		end := m.Steps
		if i+1 < len(m.Schedule) {
			end = m.Schedule[i+1].Step
		}
		return float64(max(end-m.Schedule[i].Step, 0))
	}
	out := make(map[string]any, len(names))
	for _, n := range names {
		var sum, weight, total float64
		numeric := true
		longest := map[string]float64{}
		values := map[string]any{}
		for i, st := range m.Schedule {
			v, ok := st.Params[n]
			if !ok {
				continue
			}
			w := span(i)
			total += w
			k := formatValue(v)
			longest[k] += w
			values[k] = v
			x, isNum := toFloat(v)
			if !isNum || logParam[n] && x <= 0 {
				numeric = false
				continue
			}
			if logParam[n] {
				x = math.Log(x)
			}
			sum += w * x
			weight += w
		}
		switch {
		case total == 0:
			if v, ok := last[n]; ok {
				out[n] = v
			}
		case len(values) == 1: // one value throughout: itself, exactly
			for _, v := range values {
				out[n] = v
			}
		case numeric:
			x := sum / weight
			if logParam[n] {
				x = math.Exp(x)
			}
			out[n] = x
		default:
			best, bestW := "", -1.0
			for k, w := range longest {
				if w > bestW || w == bestW && k < best {
					best, bestW = k, w
				}
			}
			out[n] = values[best]
		}
	}
	return out
}
