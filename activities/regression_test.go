package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
)

func TestProbabilityOfImprovement(t *testing.T) {
	// Reference values counted by hand over every (x, y) pair, ties ½.
	cases := []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"all better", []float64{3, 4}, []float64{1, 2}, 1},
		{"all worse", []float64{1, 2}, []float64{3, 4}, 0},
		{"identical", []float64{1, 2}, []float64{1, 2}, 0.5},         // ½ + 0 + 1 + ½ over 4
		{"ties", []float64{2, 3, 5}, []float64{1, 3}, 0.75},          // 1+0 + 1+½ + 1+1 over 6
		{"one baseline", []float64{1, 2, 3, 4}, []float64{2.5}, 0.5}, // 2 of 4
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := activities.ProbabilityOfImprovement(c.xs, c.ys); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("ProbabilityOfImprovement(%v, %v) = %v, want %v", c.xs, c.ys, got, c.want)
			}
		})
	}
	if got := activities.ProbabilityOfImprovement(nil, []float64{1}); !math.IsNaN(got) {
		t.Errorf("ProbabilityOfImprovement(nil, [1]) = %v, want NaN", got)
	}
}

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
	th := activities.Thresholds{Seed: 7}
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
		{"regressed", base, shifted(base, 1, -20), "maximize", activities.VerdictRegressed, 80, -24, -16, 0},
		// +1%: inside the 5% tolerance whatever the interval says.
		{"within tolerance", base, shifted(base, 1, 1), "maximize", activities.VerdictPass, 101, -3, 5, 0},
		// ×1.2: candidate IQMs lie in [117.6, 122.4], so the difference lies in [15.6, 24.4].
		{"improved", base, shifted(base, 1.2, 0), "maximize", activities.VerdictImproved, 120, 15.6, 24.4, 1},
		// A lower loss is better: −20 improves a minimized metric.
		{"minimize", base, shifted(base, 1, -20), "minimize", activities.VerdictImproved, 80, -24, -16, 1},
		// Constant scores: every resample is the same, the interval is the point −10 exactly.
		{"constant", []float64{100, 100, 100}, []float64{90, 90, 90}, "maximize", activities.VerdictRegressed, 90, -10, -10, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := activities.CompareConfig(0, c.base, c.cand, c.goal, th)
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
	got := activities.CompareConfig(0, []float64{50, 150, 100, 100}, []float64{40, 140, 90, 90}, "maximize",
		activities.Thresholds{Seed: 7})
	if got.Verdict != activities.VerdictPass || !(got.DiffCI[0] < 0 && got.DiffCI[1] > 0) {
		t.Errorf("verdict %q with interval %v, want pass with an interval spanning 0", got.Verdict, got.DiffCI)
	}
	again := activities.CompareConfig(0, []float64{50, 150, 100, 100}, []float64{40, 140, 90, 90}, "maximize",
		activities.Thresholds{Seed: 7})
	if again.DiffCI != got.DiffCI {
		t.Errorf("same seed gave intervals %v and %v, want equal", got.DiffCI, again.DiffCI)
	}
}

func results(name string, goal string, scores map[int][]float64, missing map[int]int) activities.SweepResults {
	r := activities.SweepResults{SweepID: "sweep/" + name + "/x", Name: name, Status: "completed",
		Metric: sweeps.Metric{Name: "reward", Goal: goal}}
	for cfg, xs := range scores {
		for i, x := range xs {
			r.Trials = append(r.Trials, activities.TrialSummary{TrialID: sweeps.TrialID(cfg, int64(i)), Config: cfg,
				Seed: int64(i), Params: map[string]any{"cfg": float64(cfg)}, Outcome: "completed", Objective: &x})
		}
	}
	for cfg, n := range missing {
		for i := 0; i < n; i++ {
			r.Trials = append(r.Trials, activities.TrialSummary{Config: cfg, Seed: int64(100 + i),
				Params: map[string]any{"cfg": float64(cfg)}, Outcome: "diverged"})
		}
	}
	return r
}

func TestCompareResults(t *testing.T) {
	b := results("b", "maximize", map[int][]float64{0: base, 1: base}, nil)
	c := results("c", "maximize", map[int][]float64{0: base, 1: base[:7]}, map[int]int{1: 1})
	got := activities.CompareResults(&b, &c, activities.Thresholds{})
	if len(got) != 2 || got[0].Verdict != activities.VerdictPass || got[1].Verdict != activities.VerdictRegressed || got[1].NewFailures != 1 {
		t.Fatalf("CompareResults = %+v, want config 0 pass, config 1 regressed with 1 new failure", got)
	}
	if tolerated := activities.CompareResults(&b, &c, activities.Thresholds{MaxNewFailures: 1}); tolerated[1].Verdict != activities.VerdictPass {
		t.Errorf("with max_new_failures 1: config 1 %q (%s), want pass", tolerated[1].Verdict, tolerated[1].Reason)
	}
	if v := activities.Overall(got); v != activities.VerdictRegressed {
		t.Errorf("Overall = %q, want regressed", v)
	}
	if v := activities.Overall(got[:1]); v != activities.VerdictPass {
		t.Errorf("Overall(config 0) = %q, want pass", v)
	}
}

func TestBaselineKey(t *testing.T) {
	for ref, want := range map[string]string{
		"nightly":              "baselines/nightly.json",
		"sweep/cartpole/ab12":  artifacts.SweepKey("sweep/cartpole/ab12", "results.json"),
		"some/where/base.json": "some/where/base.json",
	} {
		if got := activities.BaselineKey(ref); got != want {
			t.Errorf("BaselineKey(%q) = %q, want %q", ref, got, want)
		}
	}
}

type regressionFixture struct {
	store artifacts.Store
	a     *activities.Activities
}

func newRegressionFixture(t *testing.T, cand []float64) *regressionFixture {
	t.Helper()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(key string, r activities.SweepResults) {
		b, _ := json.Marshal(r)
		if err := store.Put(ctx, key, strings.NewReader(string(b))); err != nil {
			t.Fatal(err)
		}
	}
	put(activities.StoredBaselineKey("nightly"), results("b", "maximize", map[int][]float64{0: base}, nil))
	put(artifacts.SweepKey("sweep/c/x", "results.json"), results("c", "maximize", map[int][]float64{0: cand}, nil))
	return &regressionFixture{store: store, a: &activities.Activities{Store: store}}
}

func (f *regressionFixture) stored(t *testing.T) activities.RegressionReport {
	t.Helper()
	rc, err := f.store.Get(context.Background(), artifacts.SweepKey("sweep/c/x", "regression.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var rep activities.RegressionReport
	if err := json.NewDecoder(rc).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCompareBaselineWebhook(t *testing.T) {
	var posted []byte
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook got %s with Content-Type %q, want a JSON POST", r.Method, r.Header.Get("Content-Type"))
		}
		posted, _ = io.ReadAll(r.Body)
	}))
	defer ok.Close()
	f := newRegressionFixture(t, shifted(base, 1, -20))
	res, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x",
		Baseline: "nightly", WebhookURL: ok.URL})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != activities.VerdictRegressed || res.Regressed != 1 || res.WebhookError != "" {
		t.Errorf("CompareBaseline = %+v, want regressed, 1 configuration, no webhook error", res)
	}
	var got activities.RegressionReport
	if err := json.Unmarshal(posted, &got); err != nil {
		t.Fatalf("webhook body %q: %v", posted, err)
	}
	if got.Verdict != activities.VerdictRegressed || got.SweepID != "sweep/c/x" || len(got.Configs) != 1 {
		t.Errorf("webhook got %+v, want the regression report", got)
	}
	if rep := f.stored(t); rep.Webhook == nil || rep.Webhook.Status != 200 || rep.Verdict != activities.VerdictRegressed {
		t.Errorf("regression.json = %+v, want verdict regressed and webhook status 200", rep)
	}
}

func TestCompareBaselineFailingWebhook(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer failing.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	t.Setenv("RLSWEEP_TEST_UNSET_WEBHOOK", "")
	for name, url := range map[string]string{"500": failing.URL, "unreachable": closed.URL,
		"unset env": "env:RLSWEEP_TEST_UNSET_WEBHOOK"} {
		t.Run(name, func(t *testing.T) {
			f := newRegressionFixture(t, base)
			res, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x",
				Baseline: "nightly", WebhookURL: url})
			if err != nil {
				t.Fatalf("CompareBaseline with a failing webhook: %v, want no error", err)
			}
			if res.Verdict != activities.VerdictPass || res.WebhookError == "" {
				t.Errorf("CompareBaseline = %+v, want pass with a webhook error", res)
			}
			if rep := f.stored(t); rep.Webhook == nil || rep.Webhook.Error == "" {
				t.Errorf("regression.json webhook = %+v, want the error recorded", rep.Webhook)
			}
		})
	}
}

func TestCompareBaselineMissingBaseline(t *testing.T) {
	f := newRegressionFixture(t, base)
	_, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x", Baseline: "none"})
	if err == nil || !strings.Contains(err.Error(), `baseline "none"`) {
		t.Errorf("CompareBaseline with no such baseline: %v, want an error naming it", err)
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
	got := activities.CompareConfig(0, b, c, "maximize", activities.Thresholds{Seed: 7})
	if math.Abs(got.CandidateIQM-86.3) > 1e-9 || math.Abs(got.ProbImprovement-0.4) > 1e-12 || !(got.DiffCI[1] < 0) {
		t.Fatalf("IQM %v, P(improvement) %v, interval %v; want 86.3, 0.4, below 0", got.CandidateIQM, got.ProbImprovement, got.DiffCI)
	}
	if got.Verdict != activities.VerdictPass || !strings.Contains(got.Reason, "P(improvement) 0.40 > 0.25") {
		t.Errorf("verdict %q (%s), want pass because P(improvement) 0.40 > 0.25", got.Verdict, got.Reason)
	}
	off := activities.CompareConfig(0, b, c, "maximize", activities.Thresholds{Seed: 7, MinProbImprovement: 0.5})
	if off.Verdict != activities.VerdictRegressed {
		t.Errorf("with min_prob_improvement 0.5: verdict %q (%s), want regressed", off.Verdict, off.Reason)
	}
}

// trialsOf makes completed trials of one configuration, one per score.
func trialsOf(config int, params map[string]any, scores ...float64) []activities.TrialSummary {
	var out []activities.TrialSummary
	for i, x := range scores {
		out = append(out, activities.TrialSummary{TrialID: sweeps.TrialID(config, int64(i+1)), Config: config,
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
	var base, cand activities.SweepResults
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
	got := activities.CompareResults(&base, &cand, activities.Thresholds{Seed: 1})
	want := []struct {
		config, baseConfig int
		lr, clip           float64
		verdict            string
	}{
		{0, -1, 1e-2, 0.1, activities.VerdictNew},
		{1, 2, 1e-3, 0.1, activities.VerdictPass},
		{2, 0, 3e-4, 0.1, activities.VerdictPass},
		{-1, 1, 3e-4, 0.2, activities.VerdictMissing},
		{-1, 3, 1e-3, 0.2, activities.VerdictMissing},
	}
	if len(got) != len(want) {
		t.Fatalf("CompareResults gave %d configurations, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Config != w.config || g.BaselineConfig != w.baseConfig || g.Params["lr"] != w.lr || g.Params["clip"] != w.clip || g.Verdict != w.verdict {
			t.Errorf("configs[%d] = config %d, baseline config %d, params %v, verdict %q (%s); want %d, %d, lr=%g clip=%g, %q",
				i, g.Config, g.BaselineConfig, g.Params, g.Verdict, g.Reason, w.config, w.baseConfig, w.lr, w.clip, w.verdict)
		}
		if w.verdict == activities.VerdictPass && (g.RelChange != 0 || g.BaselineIQM != g.CandidateIQM) {
			t.Errorf("configs[%d]: IQM %v vs baseline %v, want the same configuration's equal scores", i, g.CandidateIQM, g.BaselineIQM)
		}
	}
	if activities.Overall(got) != activities.VerdictPass || activities.Compared(got) != 2 {
		t.Errorf("Overall = %q, Compared = %d; want pass over 2 configurations", activities.Overall(got), activities.Compared(got))
	}
}

// Params read back from results.json are float64 whatever the plan made them: the integer 32 and the
// float 32 are one configuration.
func TestParamsKey(t *testing.T) {
	a := activities.ParamsKey(map[string]any{"num_envs": int64(32), "lr": 3e-4, "act": "tanh"})
	b := activities.ParamsKey(map[string]any{"act": "tanh", "lr": 0.0003, "num_envs": 32.0})
	if a != b {
		t.Errorf("ParamsKey = %s and %s, want equal", a, b)
	}
	if c := activities.ParamsKey(map[string]any{"act": "relu", "lr": 0.0003, "num_envs": 32.0}); c == a {
		t.Errorf("ParamsKey of different values = %s for both", c)
	}
}

func TestResolveThresholds(t *testing.T) {
	spec := &sweeps.Regression{Tolerance: 0.1, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.6, MaxNewFailures: 1}
	tests := []struct {
		name     string
		spec     *sweeps.Regression
		override activities.Thresholds
		want     activities.Thresholds
		set      string
	}{
		{"no section: the defaults", nil, activities.Thresholds{},
			activities.Thresholds{Tolerance: 0.05, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75}, ""},
		{"the spec's", spec, activities.Thresholds{},
			activities.Thresholds{Tolerance: 0.1, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.6, MaxNewFailures: 1}, ""},
		{"--tolerance over the spec", spec, activities.Thresholds{Tolerance: 0.2},
			activities.Thresholds{Tolerance: 0.2, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.6, MaxNewFailures: 1}, "tolerance"},
		{"--tolerance over the defaults", nil, activities.Thresholds{Tolerance: 0.2},
			activities.Thresholds{Tolerance: 0.2, Confidence: 0.95, Resamples: 2000, MinProbImprovement: 0.75}, "tolerance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, set := activities.ResolveThresholds(tt.spec, tt.override)
			if got != tt.want || strings.Join(set, ",") != tt.set {
				t.Errorf("ResolveThresholds = %+v, overridden %v; want %+v, %q", got, set, tt.want, tt.set)
			}
		})
	}
}

// New and missing configurations' statistics are null in regression.json and NaN again when read.
func TestConfigComparisonJSON(t *testing.T) {
	c := activities.ConfigComparison{Config: 3, BaselineConfig: -1, Verdict: activities.VerdictNew,
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
	var back activities.ConfigComparison
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.BaselineIQM) || back.CandidateIQM != 5 || !math.IsNaN(back.DiffCI[0]) || back.DiffCI[1] != 2 ||
		back.Config != 3 || back.Verdict != activities.VerdictNew {
		t.Errorf("read back %+v, want NaN for the nulls and the rest unchanged", back)
	}
}

// The spec's thresholds decide, an override's nonzero fields over them; regression.json records both.
func TestCompareBaselineThresholds(t *testing.T) {
	tests := []struct {
		name     string
		spec     *sweeps.Regression
		override activities.Thresholds
		verdict  string
		tol      float64
	}{
		{"defaults: −20% regressed", nil, activities.Thresholds{}, activities.VerdictRegressed, 0.05},
		{"spec tolerance 0.5: passes", &sweeps.Regression{Tolerance: 0.5, Confidence: 0.95, Resamples: 500, MinProbImprovement: 0.75},
			activities.Thresholds{}, activities.VerdictPass, 0.5},
		{"--tolerance 0.1 over the spec's 0.5", &sweeps.Regression{Tolerance: 0.5, Confidence: 0.95, Resamples: 500, MinProbImprovement: 0.75},
			activities.Thresholds{Tolerance: 0.1}, activities.VerdictRegressed, 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newRegressionFixture(t, shifted(base, 1, -20))
			res, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x",
				Baseline: "nightly", SpecThresholds: tt.spec, Thresholds: tt.override})
			if err != nil {
				t.Fatal(err)
			}
			rep := f.stored(t)
			if res.Verdict != tt.verdict || rep.Verdict != tt.verdict || rep.Thresholds.Tolerance != tt.tol {
				t.Errorf("verdict %q, regression.json verdict %q with tolerance %v; want %q, %v", res.Verdict, rep.Verdict,
					rep.Thresholds.Tolerance, tt.verdict, tt.tol)
			}
			if got, want := len(rep.Overridden) > 0, tt.override.Tolerance > 0; got != want {
				t.Errorf("overridden = %v, want tolerance listed: %v", rep.Overridden, want)
			}
		})
	}
}

// CompareBaseline draws report.html again, now with the regression section.
func TestCompareBaselineRedrawsReport(t *testing.T) {
	f := newRegressionFixture(t, shifted(base, 1, -20))
	res, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x", Baseline: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ReportKey != artifacts.SweepKey("sweep/c/x", "report.html") || res.ReportError != "" {
		t.Fatalf("CompareBaseline = %+v, want report.html drawn", res)
	}
	rc, err := f.store.Get(context.Background(), res.ReportKey)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	html, _ := io.ReadAll(rc)
	for _, want := range []string{`id="regression"`, `data-verdict="regressed"`, `id="regression-baseline">nightly</code>`,
		`id="plot-regression"`, "cfg=0"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// A baseline whose configurations all differ from the sweep's: regression.json lists them as new and
// missing, verdict failed, and the comparison fails without a retry.
func TestCompareBaselineNothingInCommon(t *testing.T) {
	f := newRegressionFixture(t, base)
	other := results("b", "maximize", map[int][]float64{7: base}, nil) // params cfg=7: not the sweep's cfg=0
	other.Params = []string{"cfg"}
	b, _ := json.Marshal(other)
	if err := f.store.Put(context.Background(), activities.StoredBaselineKey("other"), strings.NewReader(string(b))); err != nil {
		t.Fatal(err)
	}
	_, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x", Baseline: "other"})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrNoComparableConfigs || !appErr.NonRetryable() {
		t.Fatalf("CompareBaseline = %v, want a non-retryable %s", err, activities.ErrNoComparableConfigs)
	}
	rep := f.stored(t)
	if rep.Verdict != activities.VerdictFailed || rep.Compared != 0 || len(rep.Configs) != 2 ||
		rep.Configs[0].Verdict != activities.VerdictNew || rep.Configs[1].Verdict != activities.VerdictMissing {
		t.Errorf("regression.json = %+v, want verdict failed with one new and one missing configuration", rep)
	}
}

// Trials stopped from outside — cancelled, pruned — keep a partial objective in results.json; it is
// neither a seed's score nor a failure. A cancelled baseline scored them: its IQM fell from 100 to 68
// and any candidate "passed" 46% above it.
func TestCompareResultsIgnoresStoppedTrials(t *testing.T) {
	p := map[string]any{"lr": 3e-4}
	stopped := func(outcome string, obj float64) activities.TrialSummary {
		return activities.TrialSummary{TrialID: sweeps.TrialID(0, 9), Params: p, Outcome: outcome, Objective: &obj}
	}
	var base, cand activities.SweepResults
	base.Metric = sweeps.Metric{Name: "reward", Goal: "maximize"}
	cand.Metric = base.Metric
	base.Trials = append(trialsOf(0, p, 100, 101, 99), stopped(activities.OutcomeCancelled, 5), stopped(activities.OutcomePruned, 6))
	// A diverged trial that kept an objective (results written before trials cleared it) is a failure.
	cand.Trials = append(trialsOf(0, p, 100, 101, 99), stopped(activities.OutcomeDiverged, 100))
	got := activities.CompareResults(&base, &cand, activities.Thresholds{Seed: 1})
	if len(got) != 1 {
		t.Fatalf("CompareResults = %+v, want one configuration", got)
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
		c := activities.CompareConfig(0, tc.base, tc.cand, "maximize", activities.Thresholds{Seed: 1})
		if c.Verdict != activities.VerdictPass || !strings.Contains(c.Reason, "a verdict needs at least 2 a side") {
			t.Errorf("%v vs %v: %q (%s), want pass for too few seeds", tc.cand, tc.base, c.Verdict, c.Reason)
		}
	}
	if c := activities.CompareConfig(0, []float64{100, 101}, []float64{80, 81}, "maximize", activities.Thresholds{Seed: 1}); c.Verdict != activities.VerdictRegressed {
		t.Errorf("two seeds a side, -20%%: %q (%s), want regressed", c.Verdict, c.Reason)
	}
}
