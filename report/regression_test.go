package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/sweeps"
)

// sampleRegression compares sampleInput's sweep with a baseline: configuration 4 regressed, 0 passed,
// 1 is new, and a configuration with clip 0.3 is missing from the sweep.
func sampleRegression() *regression.Report {
	nan := math.NaN()
	return &regression.Report{Verdict: regression.VerdictRegressed, Baseline: "nightly", BaselineKey: "baselines/nightly.json",
		Thresholds: regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.1, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75}},
		Overridden: []string{"tolerance"}, Compared: 2,
		Configs: []regression.ConfigComparison{
			{Config: 0, BaselineConfig: 0, Params: map[string]any{"lr": 1e-4, "clip": 0.1}, BaselineIQM: 10, CandidateIQM: 10.2,
				Baseline: []float64{9.8, 10.2}, Candidate: []float64{10, 10.4}, RelChange: 0.02, DiffCI: [2]float64{-0.5, 0.9}, ProbImprovement: 0.5,
				Verdict: regression.VerdictPass, Reason: "IQM 10.2 vs baseline 10 (+2.0%), within the 10.0% tolerance"},
			{Config: 1, BaselineConfig: -1, Params: map[string]any{"lr": 1e-4, "clip": 0.2}, BaselineIQM: nan, CandidateIQM: 10,
				Candidate: []float64{9.9, 10.1}, RelChange: nan, DiffCI: [2]float64{nan, nan}, ProbImprovement: nan, Verdict: regression.VerdictNew,
				Reason: "only in this sweep"},
			{Config: 4, BaselineConfig: 3, Params: map[string]any{"lr": 1e-2, "clip": 0.1}, BaselineIQM: 130, CandidateIQM: 100,
				Baseline: []float64{129, 131}, Candidate: []float64{100}, RelChange: -0.2308, DiffCI: [2]float64{-36, -24}, ProbImprovement: 0,
				CandidateFailures: 1, Verdict: regression.VerdictRegressed, Reason: "IQM 100 vs baseline 130 (-23.1%)"},
			{Config: -1, BaselineConfig: 5, Params: map[string]any{"lr": 1e-2, "clip": 0.3, "gamma": 0.99}, BaselineIQM: 90,
				CandidateIQM: nan, Baseline: []float64{89, 91}, RelChange: nan, DiffCI: [2]float64{nan, nan}, ProbImprovement: nan,
				Verdict: regression.VerdictMissing, Reason: "only in the baseline"},
		}}
}

func TestRenderRegression(t *testing.T) {
	in := sampleInput()
	in.Regression = sampleRegression()
	var b bytes.Buffer
	if err := Render(&b, in); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	sec, leaderboard := strings.Index(html, `id="regression"`), strings.Index(html, `id="leaderboard"`)
	if sec < 0 || sec > leaderboard {
		t.Fatalf("regression section at %d, leaderboard at %d: want the regression section first", sec, leaderboard)
	}
	for _, want := range []string{
		`data-verdict="regressed"`, ">REGRESSED</span>", `id="regression-baseline">nightly</code>`, "baselines/nightly.json",
		"2 configurations compared", "1 regressed", "1 new", "1 missing",
		"tolerance <b>10%</b> (the schedule's --tolerance)", "<b>95%</b> stratified bootstrap", "2000 resamples",
		"≤ <b>0.25</b> to regress", "at most <b>0</b> more seeds",
		// configuration 4: params, IQMs with seeds scored, change, interval, P, failures, verdict, reason
		"lr=0.01 clip=0.1", "130 (2)", "100 (1)", "-23.1%", "[-36, -24]", "<td class=\"n\">0.00</td>",
		"1 (baseline 0)", "IQM 100 vs baseline 130 (-23.1%)",
		// the missing configuration's extra parameter, after the sweep's
		"lr=0.01 clip=0.3 gamma=0.99",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	table := html[strings.Index(html, `id="regression-table"`):]
	table = table[:strings.Index(table, "</table>")]
	if r, p := strings.Index(table, `class="regressed"`), strings.Index(table, `class="pass"`); r < 0 || p < 0 || r > p {
		t.Errorf("regression table: regressed row at %d, pass row at %d; want regressed first", r, p)
	}
	if strings.Count(table, "<tr class=") != 4 {
		t.Errorf("regression table has %d rows, want 4", strings.Count(table, "<tr class="))
	}
	i := strings.Index(html, `id="plot-regression"`)
	if i < 0 || !strings.HasPrefix(html[i+len(`id="plot-regression">`):], "<svg") {
		t.Fatalf("report lacks the regression plot as inline SVG")
	}
	plotSVG := html[i : i+strings.Index(html[i:], "</svg>")]
	for _, tick := range []string{">#4<", ">#0<"} {
		if !strings.Contains(plotSVG, tick) {
			t.Errorf("regression plot lacks the tick %q", tick)
		}
	}
	if strings.Contains(plotSVG, ">#1<") {
		t.Errorf("regression plot draws the new configuration #1, which has nothing to compare")
	}
}

func TestRenderRegressionVerdicts(t *testing.T) {
	for _, v := range []string{regression.VerdictPass, regression.VerdictImproved, regression.VerdictFailed} {
		t.Run(v, func(t *testing.T) {
			in := sampleInput()
			in.Regression = sampleRegression()
			in.Regression.Verdict = v
			var b bytes.Buffer
			if err := Render(&b, in); err != nil {
				t.Fatal(err)
			}
			html := b.String()
			if want := `data-verdict="` + v + `" style="background:` + hexColor(verdictColorOf(v)); !strings.Contains(html, want) {
				t.Errorf("report lacks %q", want)
			}
			if got := strings.Contains(html, "nothing was compared"); got != (v == regression.VerdictFailed) {
				t.Errorf("report says nothing was compared: %v, want %v", got, v == regression.VerdictFailed)
			}
		})
	}
}

func TestRenderWithoutRegression(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, sampleInput()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="regression"`) {
		t.Error("a sweep that ran as no regression has a regression section")
	}
}
