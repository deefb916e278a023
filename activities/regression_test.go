package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// base has IQM 100.
var base = []float64{100, 101, 99, 100, 102, 98, 100, 100}

func shifted(xs []float64, scale, add float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x*scale + add
	}
	return out
}

// sweepOf makes a sweep's results: completed trials with the given scores per configuration, and
// missing[config] diverged ones.
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
	put := func(key string, r results.SweepResults) {
		b, _ := json.Marshal(r)
		if err := store.Put(ctx, key, strings.NewReader(string(b))); err != nil {
			t.Fatal(err)
		}
	}
	put(artifacts.StoredBaselineKey("nightly"), sweepOf("b", "maximize", map[int][]float64{0: base}, nil))
	put(artifacts.ResultsKey("sweep/c/x"), sweepOf("c", "maximize", map[int][]float64{0: cand}, nil))
	return &regressionFixture{store: store, a: &activities.Activities{Store: store}}
}

func (f *regressionFixture) stored(t *testing.T) regression.Report {
	t.Helper()
	rc, err := f.store.Get(context.Background(), artifacts.RegressionKey("sweep/c/x"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var rep regression.Report
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
	if res.Verdict != regression.VerdictRegressed || res.Regressed != 1 || res.WebhookError != "" {
		t.Errorf("CompareBaseline = %+v, want regressed, 1 configuration, no webhook error", res)
	}
	var got regression.Report
	if err := json.Unmarshal(posted, &got); err != nil {
		t.Fatalf("webhook body %q: %v", posted, err)
	}
	if got.Verdict != regression.VerdictRegressed || got.SweepID != "sweep/c/x" || len(got.Configs) != 1 {
		t.Errorf("webhook got %+v, want the regression report", got)
	}
	if rep := f.stored(t); rep.Webhook == nil || rep.Webhook.Status != 200 || rep.Verdict != regression.VerdictRegressed {
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
			if res.Verdict != regression.VerdictPass || res.WebhookError == "" {
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

// The spec's thresholds decide, an override's nonzero fields over them; regression.json records both.
func TestCompareBaselineThresholds(t *testing.T) {
	tests := []struct {
		name     string
		spec     *sweeps.Regression
		override regression.Thresholds
		verdict  string
		tol      float64
	}{
		{"defaults: −20% regressed", nil, regression.Thresholds{}, regression.VerdictRegressed, 0.05},
		{"spec tolerance 0.5: passes", &sweeps.Regression{Tolerance: 0.5, Confidence: 0.95, Resamples: 500, MinProbImprovement: 0.75},
			regression.Thresholds{}, regression.VerdictPass, 0.5},
		{"--tolerance 0.1 over the spec's 0.5", &sweeps.Regression{Tolerance: 0.5, Confidence: 0.95, Resamples: 500, MinProbImprovement: 0.75},
			regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.1}}, regression.VerdictRegressed, 0.1},
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

// CompareBaseline writes regression.json and draws no report; DrawReport then draws report.html once,
// from results.json with the regression section.
func TestDrawReportAfterCompareBaseline(t *testing.T) {
	ctx := context.Background()
	f := newRegressionFixture(t, shifted(base, 1, -20))
	if _, err := f.a.CompareBaseline(ctx, activities.CompareBaselineInput{SweepID: "sweep/c/x", Baseline: "nightly"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Get(ctx, artifacts.ReportKey("sweep/c/x")); !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("report.html after CompareBaseline: %v, want none (DrawReport draws it once)", err)
	}
	res, err := f.a.DrawReport(ctx, activities.DrawReportInput{SweepID: "sweep/c/x"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ReportKey != artifacts.ReportKey("sweep/c/x") || res.ReportError != "" {
		t.Fatalf("DrawReport = %+v, want report.html drawn", res)
	}
	rc, err := f.store.Get(ctx, res.ReportKey)
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

// DrawReport of a sweep that wrote no results.json (it failed before) draws nothing and fails nothing;
// one whose comparison never ran draws the results without a regression section.
func TestDrawReportWithoutComparison(t *testing.T) {
	ctx := context.Background()
	f := newRegressionFixture(t, base)
	res, err := f.a.DrawReport(ctx, activities.DrawReportInput{SweepID: "sweep/none/y"})
	if err != nil || res.ReportKey != "" || res.ReportError != "" {
		t.Fatalf("DrawReport of a sweep without results = %+v, %v; want nothing drawn and no error", res, err)
	}
	res, err = f.a.DrawReport(ctx, activities.DrawReportInput{SweepID: "sweep/c/x"})
	if err != nil || res.ReportKey != artifacts.ReportKey("sweep/c/x") {
		t.Fatalf("DrawReport = %+v, %v; want report.html drawn", res, err)
	}
	rc, err := f.store.Get(ctx, res.ReportKey)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	html, _ := io.ReadAll(rc)
	if strings.Contains(string(html), `id="regression"`) || !strings.Contains(string(html), `id="leaderboard"`) {
		t.Errorf("report.html without a comparison: regression section %v, leaderboard %v; want none and the leaderboard",
			strings.Contains(string(html), `id="regression"`), strings.Contains(string(html), `id="leaderboard"`))
	}
}

// A baseline whose configurations all differ from the sweep's: regression.json lists them as new and
// missing, verdict failed, and the comparison fails without a retry.
func TestCompareBaselineNothingInCommon(t *testing.T) {
	f := newRegressionFixture(t, base)
	other := sweepOf("b", "maximize", map[int][]float64{7: base}, nil) // params cfg=7: not the sweep's cfg=0
	other.Params = []string{"cfg"}
	b, _ := json.Marshal(other)
	if err := f.store.Put(context.Background(), artifacts.StoredBaselineKey("other"), strings.NewReader(string(b))); err != nil {
		t.Fatal(err)
	}
	_, err := f.a.CompareBaseline(context.Background(), activities.CompareBaselineInput{SweepID: "sweep/c/x", Baseline: "other"})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrNoComparableConfigs || !appErr.NonRetryable() {
		t.Fatalf("CompareBaseline = %v, want a non-retryable %s", err, activities.ErrNoComparableConfigs)
	}
	rep := f.stored(t)
	if rep.Verdict != regression.VerdictFailed || rep.Compared != 0 || len(rep.Configs) != 2 ||
		rep.Configs[0].Verdict != regression.VerdictNew || rep.Configs[1].Verdict != regression.VerdictMissing {
		t.Errorf("regression.json = %+v, want verdict failed with one new and one missing configuration", rep)
	}
}
