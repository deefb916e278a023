package activities_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
				Seed: int64(i), Outcome: "completed", Objective: &x})
		}
	}
	for cfg, n := range missing {
		for i := 0; i < n; i++ {
			r.Trials = append(r.Trials, activities.TrialSummary{Config: cfg, Seed: int64(100 + i), Outcome: "diverged"})
		}
	}
	return r
}

func TestCompareResults(t *testing.T) {
	b := results("b", "maximize", map[int][]float64{0: base, 1: base}, nil)
	c := results("c", "maximize", map[int][]float64{0: base, 1: base[:7]}, map[int]int{1: 1})
	got := activities.CompareResults(&b, &c, activities.Thresholds{})
	if len(got) != 2 || got[0].Verdict != activities.VerdictPass || got[1].Verdict != activities.VerdictRegressed || got[1].Missing != 1 {
		t.Fatalf("CompareResults = %+v, want config 0 pass, config 1 regressed with 1 missing seed", got)
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
