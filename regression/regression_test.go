package regression_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// base has IQM 100: sorted 98 99 100 100 100 100 101 102, ⌊8/4⌋ = 2 dropped from each end. Every
// bootstrap resample's IQM lies within [min, max] of its stratum, which bounds the interval of the
// difference by hand.
var base = []float64{100, 101, 99, 100, 102, 98, 100, 100}

func shifted(xs []float64, scale, add float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x*scale + add
	}
	return out
}

func TestCompareConfig(t *testing.T) {
	th := regression.Thresholds{Seed: 7}
	cases := []struct {
		name       string
		base       []float64
		cand       []float64
		goal       string
		verdict    string
		iqm        float64 // candidate IQM, exact
		ciLo, ciHi float64 // bounds the interval of the difference must lie within
		pi         float64 // probability of improvement, exact
	}{
		// −20: resampled IQMs lie in [78, 82] and [98, 102], so the difference lies in [−24, −16].
		{"regressed", base, shifted(base, 1, -20), "maximize", regression.VerdictRegressed, 80, -24, -16, 0},
		// +1%: inside the 5% tolerance whatever the interval says.
		{"within tolerance", base, shifted(base, 1, 1), "maximize", regression.VerdictPass, 101, -3, 5, 0},
		// ×1.2: candidate IQMs lie in [117.6, 122.4], so the difference lies in [15.6, 24.4].
		{"improved", base, shifted(base, 1.2, 0), "maximize", regression.VerdictImproved, 120, 15.6, 24.4, 1},
		// A lower loss is better: −20 improves a minimized metric.
		{"minimize", base, shifted(base, 1, -20), "minimize", regression.VerdictImproved, 80, -24, -16, 1},
		// Constant scores: every resample is the same, the interval is the point −10 exactly.
		{"constant", []float64{100, 100, 100}, []float64{90, 90, 90}, "maximize", regression.VerdictRegressed, 90, -10, -10, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := regression.CompareConfig(0, c.base, c.cand, c.goal, th)
			if got.Verdict != c.verdict {
				t.Errorf("verdict = %q (%s), want %q", got.Verdict, got.Reason, c.verdict)
			}
			if math.Abs(got.CandidateIQM-c.iqm) > 1e-9 {
				t.Errorf("candidate IQM = %v, want %v", got.CandidateIQM, c.iqm)
			}
			if got.DiffCI[0] < c.ciLo-1e-9 || got.DiffCI[1] > c.ciHi+1e-9 || got.DiffCI[0] > got.DiffCI[1] {
				t.Errorf("interval of the difference = %v, want within [%v, %v]", got.DiffCI, c.ciLo, c.ciHi)
			}
			if c.name != "within tolerance" && math.Abs(got.ProbImprovement-c.pi) > 1e-12 {
				t.Errorf("probability of improvement = %v, want %v", got.ProbImprovement, c.pi)
			}
		})
	}
}

func TestCompareConfigWideIntervalPasses(t *testing.T) {
	// IQM 100 vs 90 (−10%, beyond tolerance), but with scores spread from 40 to 150 over 4 seeds the
	// 95% interval of the difference (seed 7, 2000 resamples) spans 0: not enough evidence to fail.
	got := regression.CompareConfig(0, []float64{50, 150, 100, 100}, []float64{40, 140, 90, 90}, "maximize",
		regression.Thresholds{Seed: 7})
	if got.Verdict != regression.VerdictPass || !(got.DiffCI[0] < 0 && got.DiffCI[1] > 0) {
		t.Errorf("verdict %q with interval %v, want pass with an interval spanning 0", got.Verdict, got.DiffCI)
	}
	again := regression.CompareConfig(0, []float64{50, 150, 100, 100}, []float64{40, 140, 90, 90}, "maximize",
		regression.Thresholds{Seed: 7})
	if again.DiffCI != got.DiffCI {
		t.Errorf("same seed gave intervals %v and %v, want equal", got.DiffCI, again.DiffCI)
	}
}

func sweepOf(name string, goal string, scores map[int][]float64, missing map[int]int) results.SweepResults {
	r := results.SweepResults{SweepID: "sweep/" + name + "/x", Name: name, Status: "completed",
		Metric: sweeps.Metric{Name: "reward", Goal: goal}}
	for cfg, xs := range scores {
		for i, x := range xs {
			r.Trials = append(r.Trials, results.TrialSummary{TrialID: sweeps.TrialID(cfg, int64(i)), Config: cfg,
				Seed: int64(i), Params: map[string]any{"cfg": float64(cfg)}, Outcome: "completed", Objective: &x})
		}
	}
	for cfg, n := range missing {
		for i := 0; i < n; i++ {
			r.Trials = append(r.Trials, results.TrialSummary{Config: cfg, Seed: int64(100 + i),
				Params: map[string]any{"cfg": float64(cfg)}, Outcome: "diverged"})
		}
	}
	return r
}

func TestCompareResults(t *testing.T) {
	b := sweepOf("b", "maximize", map[int][]float64{0: base, 1: base}, nil)
	c := sweepOf("c", "maximize", map[int][]float64{0: base, 1: base[:7]}, map[int]int{1: 1})
	got := regression.Compare(&b, &c, regression.Thresholds{})
	if len(got) != 2 || got[0].Verdict != regression.VerdictPass || got[1].Verdict != regression.VerdictRegressed || got[1].NewFailures != 1 {
		t.Fatalf("Compare = %+v, want config 0 pass, config 1 regressed with 1 new failure", got)
	}
	if tolerated := regression.Compare(&b, &c, regression.Thresholds{Regression: sweeps.Regression{MaxNewFailures: 1}}); tolerated[1].Verdict != regression.VerdictPass {
		t.Errorf("with max_new_failures 1: config 1 %q (%s), want pass", tolerated[1].Verdict, tolerated[1].Reason)
	}
	if v := regression.Overall(got); v != regression.VerdictRegressed {
		t.Errorf("Overall = %q, want regressed", v)
	}
	if v := regression.Overall(got[:1]); v != regression.VerdictPass {
		t.Errorf("Overall(config 0) = %q, want pass", v)
	}
}

// TestCompareConfigProbabilityOfImprovement: a −13.7% IQM with an interval below 0, yet 8 of the 20
// candidate seeds beat every baseline seed. Hand-computed: IQM(cand) = (7·80 + 3·101)/10 = 86.3 (the
// middle 10 of 12×80, 8×101); P(improvement) = 8/20 = 0.4. Resampled, the count of 101s K ~ Bin(20, 0.4)
// reaches 15 (an IQM of 100) with probability < 0.002, so the 95% interval lies below 0.
func TestCompareConfigProbabilityOfImprovement(t *testing.T) {
	var b, c []float64
	for i := range 20 {
		b = append(b, 100)
		c = append(c, map[bool]float64{true: 80, false: 101}[i < 12])
	}
	got := regression.CompareConfig(0, b, c, "maximize", regression.Thresholds{Seed: 7})
	if math.Abs(got.CandidateIQM-86.3) > 1e-9 || math.Abs(got.ProbImprovement-0.4) > 1e-12 || !(got.DiffCI[1] < 0) {
		t.Fatalf("IQM %v, P(improvement) %v, interval %v; want 86.3, 0.4, below 0", got.CandidateIQM, got.ProbImprovement, got.DiffCI)
	}
	if got.Verdict != regression.VerdictPass || !strings.Contains(got.Reason, "P(improvement) 0.40 > 0.25") {
		t.Errorf("verdict %q (%s), want pass because P(improvement) 0.40 > 0.25", got.Verdict, got.Reason)
	}
	off := regression.CompareConfig(0, b, c, "maximize", regression.Thresholds{Regression: sweeps.Regression{MinProbImprovement: 0.5}, Seed: 7})
	if off.Verdict != regression.VerdictRegressed {
		t.Errorf("with min_prob_improvement 0.5: verdict %q (%s), want regressed", off.Verdict, off.Reason)
	}
}

// trialsOf makes completed trials of one configuration, one per score.
func trialsOf(config int, params map[string]any, scores ...float64) []results.TrialSummary {
	var out []results.TrialSummary
	for i, x := range scores {
		out = append(out, results.TrialSummary{TrialID: sweeps.TrialID(config, int64(i+1)), Config: config,
			Seed: int64(i + 1), Params: params, Outcome: "completed", Objective: &x})
	}
	return out
}

// A baseline from a differently planned sweep: the candidate's grid lists clip before lr (so every plan
// index moved), adds lr 1e-2 and drops clip 0.2 from the baseline's. Matched by plan index, every
// configuration would be compared with another's scores and most would regress; matched by values,
// every common configuration passes, and the others are listed as new and missing.
func TestCompareResultsMatchesByParams(t *testing.T) {
	p := func(lr, clip float64) map[string]any { return map[string]any{"lr": lr, "clip": clip} }
	score := func(lr, clip float64) []float64 { // each configuration its own level; seeds ±1
		l := 1000*lr + 100*clip
		return []float64{l - 1, l, l + 1, l}
	}
	var base, cand results.SweepResults
	base.Metric = sweeps.Metric{Name: "reward", Goal: "maximize"}
	cand.Metric = base.Metric
	n := 0
	for _, lr := range []float64{3e-4, 1e-3} { // baseline: lr outer, clip inner
		for _, clip := range []float64{0.1, 0.2} {
			base.Trials = append(base.Trials, trialsOf(n, p(lr, clip), score(lr, clip)...)...)
			n++
		}
	}
	n = 0
	for _, clip := range []float64{0.1} { // candidate: clip outer, lr inner, one lr more
		for _, lr := range []float64{1e-2, 1e-3, 3e-4} {
			cand.Trials = append(cand.Trials, trialsOf(n, p(lr, clip), score(lr, clip)...)...)
			n++
		}
	}
	got := regression.Compare(&base, &cand, regression.Thresholds{Seed: 1})
	want := []struct {
		config, baseConfig int
		lr, clip           float64
		verdict            string
	}{
		{0, -1, 1e-2, 0.1, regression.VerdictNew},
		{1, 2, 1e-3, 0.1, regression.VerdictPass},
		{2, 0, 3e-4, 0.1, regression.VerdictPass},
		{-1, 1, 3e-4, 0.2, regression.VerdictMissing},
		{-1, 3, 1e-3, 0.2, regression.VerdictMissing},
	}
	if len(got) != len(want) {
		t.Fatalf("Compare gave %d configurations, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Config != w.config || g.BaselineConfig != w.baseConfig || g.Params["lr"] != w.lr || g.Params["clip"] != w.clip || g.Verdict != w.verdict {
			t.Errorf("configs[%d] = config %d, baseline config %d, params %v, verdict %q (%s); want %d, %d, lr=%g clip=%g, %q",
				i, g.Config, g.BaselineConfig, g.Params, g.Verdict, g.Reason, w.config, w.baseConfig, w.lr, w.clip, w.verdict)
		}
		if w.verdict == regression.VerdictPass && (g.RelChange != 0 || g.BaselineIQM != g.CandidateIQM) {
			t.Errorf("configs[%d]: IQM %v vs baseline %v, want the same configuration's equal scores", i, g.CandidateIQM, g.BaselineIQM)
		}
	}
	if regression.Overall(got) != regression.VerdictPass || regression.Compared(got) != 2 {
		t.Errorf("Overall = %q, Compared = %d; want pass over 2 configurations", regression.Overall(got), regression.Compared(got))
	}
}

func TestResolveThresholds(t *testing.T) {
	spec := &sweeps.Regression{Tolerance: 0.1, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.6, MaxNewFailures: 1}
	tests := []struct {
		name     string
		spec     *sweeps.Regression
		override regression.Thresholds
		want     regression.Thresholds
		set      string
	}{
		{"no section: the defaults", nil, regression.Thresholds{},
			regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.05, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75}}, ""},
		{"the spec's", spec, regression.Thresholds{},
			regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.1, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.6, MaxNewFailures: 1}}, ""},
		{"--tolerance over the spec", spec, regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.2}},
			regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.2, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.6, MaxNewFailures: 1}}, "tolerance"},
		{"--tolerance over the defaults", nil, regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.2}},
			regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.2, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75}}, "tolerance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, set := regression.Resolve(tt.spec, tt.override)
			if got != tt.want || strings.Join(set, ",") != tt.set {
				t.Errorf("Resolve = %+v, overridden %v; want %+v, %q", got, set, tt.want, tt.set)
			}
		})
	}
}

// New and missing configurations' statistics are null in regression.json and NaN again when read.
func TestConfigComparisonJSON(t *testing.T) {
	c := regression.ConfigComparison{Config: 3, BaselineConfig: -1, Verdict: regression.VerdictNew,
		BaselineIQM: math.NaN(), CandidateIQM: 5, RelChange: math.Inf(1), ProbImprovement: math.NaN(),
		DiffCI: [2]float64{math.NaN(), 2}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"baseline_iqm":null`, `"candidate_iqm":5`, `"rel_change":null`, `"diff_ci":[null,2]`, `"baseline_config":-1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s, want it to contain %s", b, want)
		}
	}
	var back regression.ConfigComparison
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.BaselineIQM) || back.CandidateIQM != 5 || !math.IsNaN(back.DiffCI[0]) || back.DiffCI[1] != 2 ||
		back.Config != 3 || back.Verdict != regression.VerdictNew {
		t.Errorf("read back %+v, want NaN for the nulls and the rest unchanged", back)
	}
}

// Trials stopped from outside — cancelled, pruned — keep a partial objective in results.json; it is
// neither a seed's score nor a failure. A cancelled baseline scored them: its IQM fell from 100 to 68
// and any candidate "passed" 46% above it.
func TestCompareResultsIgnoresStoppedTrials(t *testing.T) {
	p := map[string]any{"lr": 3e-4}
	stopped := func(outcome string, obj float64) results.TrialSummary {
		return results.TrialSummary{TrialID: sweeps.TrialID(0, 9), Params: p, Outcome: outcome, Objective: &obj}
	}
	var base, cand results.SweepResults
	base.Metric = sweeps.Metric{Name: "reward", Goal: "maximize"}
	cand.Metric = base.Metric
	base.Trials = append(trialsOf(0, p, 100, 101, 99), stopped(results.OutcomeCancelled, 5), stopped(results.OutcomePruned, 6))
	// A diverged trial that kept an objective (results written before trials cleared it) is a failure.
	cand.Trials = append(trialsOf(0, p, 100, 101, 99), stopped(results.OutcomeDiverged, 100))
	got := regression.Compare(&base, &cand, regression.Thresholds{Seed: 1})
	if len(got) != 1 {
		t.Fatalf("Compare = %+v, want one configuration", got)
	}
	g := got[0]
	if len(g.Baseline) != 3 || g.BaselineIQM != 100 || g.BaselineFailures != 0 || g.CandidateFailures != 1 {
		t.Errorf("baseline scores %v (IQM %v, %d failures), candidate failures %d; want 3 scores, IQM 100, 0 failures, and 1",
			g.Baseline, g.BaselineIQM, g.BaselineFailures, g.CandidateFailures)
	}
}

// One seed a side: the bootstrap interval is a point and P(improvement) is 0 or 1, so any change past
// the tolerance would look significant. Such a configuration passes, and the reason says why.
func TestCompareConfigOneSeedPasses(t *testing.T) {
	for _, tc := range []struct{ base, cand []float64 }{
		{[]float64{100}, []float64{94}},
		{[]float64{100, 101, 99}, []float64{50}},
		{[]float64{100}, []float64{150, 151}},
	} {
		c := regression.CompareConfig(0, tc.base, tc.cand, "maximize", regression.Thresholds{Seed: 1})
		if c.Verdict != regression.VerdictPass || !strings.Contains(c.Reason, "a verdict needs at least 2 a side") {
			t.Errorf("%v vs %v: %q (%s), want pass for too few seeds", tc.cand, tc.base, c.Verdict, c.Reason)
		}
	}
	if c := regression.CompareConfig(0, []float64{100, 101}, []float64{80, 81}, "maximize", regression.Thresholds{Seed: 1}); c.Verdict != regression.VerdictRegressed {
		t.Errorf("two seeds a side, -20%%: %q (%s), want regressed", c.Verdict, c.Reason)
	}
}

// A sweep with no configuration of the baseline's: the report lists both sides' configurations,
// verdict failed, and New says how the parameters differ.
func TestNewNothingInCommon(t *testing.T) {
	b := sweepOf("b", "maximize", map[int][]float64{7: base}, nil)
	c := sweepOf("c", "maximize", map[int][]float64{0: base, 1: base}, nil)
	b.Params, c.Params = []string{"cfg"}, []string{"cfg"}
	rep, err := regression.New("sweep/c/x", "nightly", "baselines/nightly.json", &b, &c, regression.Thresholds{}, nil)
	if err == nil || !strings.Contains(err.Error(), "both sweep [cfg], over different values") {
		t.Errorf("New: %v, want an error saying the values differ", err)
	}
	if rep.Verdict != regression.VerdictFailed || rep.Compared != 0 || rep.Counts() != (regression.Counts{New: 2, Missing: 1}) {
		t.Errorf("report verdict %q, compared %d, counts %+v; want failed, 0, 2 new and 1 missing", rep.Verdict, rep.Compared, rep.Counts())
	}
	if rep.Thresholds.Resamples != sweeps.DefaultRegressionResamples {
		t.Errorf("report thresholds %+v, want the defaults filled in", rep.Thresholds)
	}
	rep, err = regression.New("sweep/c/x", "nightly", "k", &c, &c, regression.Thresholds{}, nil)
	if err != nil || rep.Verdict != regression.VerdictPass || rep.Compared != 2 {
		t.Errorf("New of a sweep against itself = %q over %d, %v; want pass over 2", rep.Verdict, rep.Compared, err)
	}
}
