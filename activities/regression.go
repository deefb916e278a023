package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Regression verdicts, as regression.json and the RlsweepVerdict search attribute carry them.
const (
	VerdictPass      = "pass"
	VerdictRegressed = "regressed"
	VerdictImproved  = "improved"
)

// Thresholds decide a regression verdict. Zero values take the defaults.
type Thresholds struct {
	// Tolerance is the relative change of a configuration's IQM that counts as a change at all:
	// |cand − base| / |base| > Tolerance (default 0.05).
	Tolerance float64 `json:"tolerance"`
	// Confidence of the bootstrap interval of the IQM difference (default 0.95).
	Confidence float64 `json:"confidence"`
	// Reps is the number of bootstrap samples (default 2000).
	Reps int `json:"reps"`
	// Seed seeds the bootstrap, so one comparison always gives one answer.
	Seed uint64 `json:"seed"`
}

func (t Thresholds) withDefaults() Thresholds {
	if t.Tolerance <= 0 {
		t.Tolerance = 0.05
	}
	if !(t.Confidence > 0 && t.Confidence < 1) {
		t.Confidence = 0.95
	}
	if t.Reps < 1 {
		t.Reps = 2000
	}
	return t
}

// ConfigComparison compares one configuration's objective across seeds with the baseline's.
type ConfigComparison struct {
	Config       int       `json:"config"`
	Baseline     []float64 `json:"baseline"`
	Candidate    []float64 `json:"candidate"`
	BaselineIQM  float64   `json:"baseline_iqm"`
	CandidateIQM float64   `json:"candidate_iqm"`
	// DiffCI is the bootstrap interval of IQM(candidate) − IQM(baseline).
	DiffCI [2]float64 `json:"diff_ci"`
	// RelChange is (CandidateIQM − BaselineIQM) / |BaselineIQM|, signed so that positive is better.
	RelChange float64 `json:"rel_change"`
	// ProbImprovement is P(candidate seed beats baseline seed), ties counting ½ (rliable).
	ProbImprovement float64 `json:"prob_improvement"`
	// Missing counts candidate seeds without an objective (diverged, failed) beyond the baseline's.
	Missing int    `json:"missing"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// ProbabilityOfImprovement returns P(X > Y) for X drawn from xs and Y from ys: the fraction of the
// len(xs)·len(ys) pairs with x > y, a tie counting ½ (the Mann–Whitney U statistic over the number of
// pairs, as rliable's probability of improvement computes it for one task). NaN for an empty side.
func ProbabilityOfImprovement(xs, ys []float64) float64 {
	if len(xs) == 0 || len(ys) == 0 {
		return math.NaN()
	}
	var wins float64
	for _, x := range xs {
		for _, y := range ys {
			switch {
			case x > y:
				wins++
			case x == y:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(xs)*len(ys))
}

// CompareConfig compares a configuration's candidate scores with its baseline scores, for a metric
// whose goal is "maximize" or "minimize". Regressed: the IQM is worse by more than the tolerance and the
// bootstrap interval of the IQM difference (baseline and candidate resampled as two strata) excludes 0;
// improved: symmetric; otherwise pass. Both sides need at least one score.
func CompareConfig(config int, base, cand []float64, goal string, th Thresholds) ConfigComparison {
	th = th.withDefaults()
	c := ConfigComparison{Config: config, Baseline: base, Candidate: cand,
		BaselineIQM: diagnostics.IQM(base), CandidateIQM: diagnostics.IQM(cand), Verdict: VerdictPass}
	sign := 1.0
	if goal == "minimize" {
		sign = -1
	}
	diff := func(s [][]float64) float64 { return diagnostics.IQM(s[1]) - diagnostics.IQM(s[0]) }
	rnd := rand.New(rand.NewPCG(th.Seed, uint64(config)))
	c.DiffCI[0], c.DiffCI[1] = diagnostics.StratifiedBootstrapCI([][]float64{base, cand}, diff, th.Reps, th.Confidence, rnd)
	c.RelChange = sign * (c.CandidateIQM - c.BaselineIQM) / math.Abs(c.BaselineIQM)
	if sign > 0 {
		c.ProbImprovement = ProbabilityOfImprovement(cand, base)
	} else {
		c.ProbImprovement = ProbabilityOfImprovement(base, cand)
	}
	lo, hi := sign*c.DiffCI[0], sign*c.DiffCI[1]
	if lo > hi {
		lo, hi = hi, lo
	}
	switch {
	case c.RelChange < -th.Tolerance && hi < 0:
		c.Verdict = VerdictRegressed
		c.Reason = fmt.Sprintf("IQM %.4g vs baseline %.4g (%+.1f%%, tolerance %.1f%%), interval of the difference excludes 0",
			c.CandidateIQM, c.BaselineIQM, 100*c.RelChange, 100*th.Tolerance)
	case c.RelChange > th.Tolerance && lo > 0:
		c.Verdict = VerdictImproved
		c.Reason = fmt.Sprintf("IQM %.4g vs baseline %.4g (%+.1f%%)", c.CandidateIQM, c.BaselineIQM, 100*c.RelChange)
	}
	return c
}

// Overall is the verdict of a whole comparison: regressed if any configuration regressed, else
// improved if any improved, else pass.
func Overall(configs []ConfigComparison) string {
	v := VerdictPass
	for _, c := range configs {
		if c.Verdict == VerdictRegressed {
			return VerdictRegressed
		}
		if c.Verdict == VerdictImproved {
			v = VerdictImproved
		}
	}
	return v
}

// CompareResults compares every configuration of cand with the same configuration (plan index) of base.
// A candidate configuration with more seeds lacking an objective (diverged, failed) than the baseline's
// has regressed, whatever its scores; one with no score on either side is reported and passes.
func CompareResults(base, cand *SweepResults, th Thresholds) []ConfigComparison {
	bs, bMissing := objectivesByConfig(base)
	cs, cMissing := objectivesByConfig(cand)
	configs := make([]int, 0, len(cs))
	for k := range cs {
		configs = append(configs, k)
	}
	for k := range cMissing {
		if _, ok := cs[k]; !ok {
			configs = append(configs, k)
		}
	}
	sort.Ints(configs)
	var out []ConfigComparison
	for _, k := range configs {
		var c ConfigComparison
		if len(bs[k]) > 0 && len(cs[k]) > 0 {
			c = CompareConfig(k, bs[k], cs[k], cand.Metric.Goal, th)
		} else {
			c = ConfigComparison{Config: k, Baseline: bs[k], Candidate: cs[k], Verdict: VerdictPass,
				Reason: "no objective to compare on one side", BaselineIQM: math.NaN(), CandidateIQM: math.NaN()}
		}
		if m := cMissing[k] - bMissing[k]; m > 0 {
			c.Missing = m
			c.Verdict = VerdictRegressed
			c.Reason = fmt.Sprintf("%d more seed(s) without an objective than the baseline", m)
		}
		out = append(out, c)
	}
	return out
}

func objectivesByConfig(r *SweepResults) (scores map[int][]float64, missing map[int]int) {
	scores, missing = map[int][]float64{}, map[int]int{}
	for _, t := range r.Trials {
		if t.Objective == nil || math.IsNaN(*t.Objective) || math.IsInf(*t.Objective, 0) {
			missing[t.Config]++
			continue
		}
		scores[t.Config] = append(scores[t.Config], *t.Objective)
	}
	return scores, missing
}

// BaselineKey resolves a baseline reference: a sweep ID ("sweep/<name>/<id>") means that sweep's
// results.json; a bare name means the stored baseline baselines/<name>.json; anything else is a key.
func BaselineKey(ref string) string {
	switch {
	case strings.HasPrefix(ref, "sweep/"):
		return artifacts.SweepKey(ref, "results.json")
	case !strings.Contains(ref, "/"):
		return StoredBaselineKey(ref)
	}
	return ref
}

// StoredBaselineKey is where `rlsweep baseline set` stores the baseline called name.
func StoredBaselineKey(name string) string { return "baselines/" + artifacts.Segment(name) + ".json" }

// CompareBaselineInput asks for a sweep's results to be compared with a baseline.
type CompareBaselineInput struct {
	SweepID    string
	Baseline   string // see BaselineKey
	Thresholds Thresholds
	// WebhookURL receives regression.json as a JSON POST; "" for none. "env:NAME" reads the URL from the
	// worker's environment variable NAME, so a chat webhook's secret never travels in a payload.
	WebhookURL string
}

// CompareBaselineResult is the verdict and where the full comparison went.
type CompareBaselineResult struct {
	Verdict       string
	RegressionKey string
	Regressed     int
	Improved      int
	WebhookError  string
}

// RegressionReport is regression.json.
type RegressionReport struct {
	SweepID     string             `json:"sweep_id"`
	Baseline    string             `json:"baseline"`
	BaselineKey string             `json:"baseline_key"`
	Metric      sweeps.Metric      `json:"metric"`
	Thresholds  Thresholds         `json:"thresholds"`
	Verdict     string             `json:"verdict"`
	Configs     []ConfigComparison `json:"configs"`
	Webhook     *WebhookOutcome    `json:"webhook,omitempty"`
}

// WebhookOutcome records what the webhook answered; a failing webhook never fails the regression.
type WebhookOutcome struct {
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// CompareBaseline compares the sweep's results.json with the baseline, posts the comparison to the
// webhook if one is set, and writes regression.json beside results.json.
func (a *Activities) CompareBaseline(ctx context.Context, in CompareBaselineInput) (*CompareBaselineResult, error) {
	cand, err := readResults(ctx, a.Store, artifacts.SweepKey(in.SweepID, "results.json"))
	if err != nil {
		return nil, err
	}
	bkey := BaselineKey(in.Baseline)
	base, err := readResults(ctx, a.Store, bkey)
	if err != nil {
		return nil, fmt.Errorf("baseline %q: %w", in.Baseline, err)
	}
	th := in.Thresholds.withDefaults()
	rep := RegressionReport{SweepID: in.SweepID, Baseline: in.Baseline, BaselineKey: bkey, Metric: cand.Metric,
		Thresholds: th, Configs: CompareResults(base, cand, th)}
	rep.Verdict = Overall(rep.Configs)
	if in.WebhookURL != "" {
		rep.Webhook = postWebhook(ctx, in.WebhookURL, &rep)
	}
	b, err := json.MarshalIndent(jsonSafe(rep), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode regression: %w", err)
	}
	out := &CompareBaselineResult{Verdict: rep.Verdict, RegressionKey: artifacts.SweepKey(in.SweepID, "regression.json")}
	for _, c := range rep.Configs {
		switch c.Verdict {
		case VerdictRegressed:
			out.Regressed++
		case VerdictImproved:
			out.Improved++
		}
	}
	if rep.Webhook != nil {
		out.WebhookError = rep.Webhook.Error
	}
	return out, putBytes(ctx, a.Store, out.RegressionKey, b)
}

func readResults(ctx context.Context, s Store, key string) (*SweepResults, error) {
	var r SweepResults
	if err := getJSON(ctx, s, key, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// jsonSafe replaces the non-finite numbers encoding/json rejects (an IQM of no scores) by null.
func jsonSafe(rep RegressionReport) RegressionReport {
	cs := make([]ConfigComparison, len(rep.Configs))
	copy(cs, rep.Configs)
	for i := range cs {
		for _, p := range []*float64{&cs[i].BaselineIQM, &cs[i].CandidateIQM, &cs[i].RelChange,
			&cs[i].ProbImprovement, &cs[i].DiffCI[0], &cs[i].DiffCI[1]} {
			if math.IsNaN(*p) || math.IsInf(*p, 0) {
				*p = 0
			}
		}
	}
	rep.Configs = cs
	return rep
}

// postWebhook posts rep as JSON and reports the outcome; it never returns an error, since a chat
// notification that fails must not fail the regression it reports.
func postWebhook(ctx context.Context, url string, rep *RegressionReport) *WebhookOutcome {
	if name, ok := strings.CutPrefix(url, "env:"); ok {
		url = os.Getenv(name)
		if url == "" {
			return &WebhookOutcome{Error: fmt.Sprintf("webhook: environment variable %s is not set on the worker", name)}
		}
	}
	body, err := json.Marshal(jsonSafe(*rep))
	if err != nil {
		return &WebhookOutcome{Error: fmt.Sprintf("webhook: encode: %v", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return &WebhookOutcome{Error: fmt.Sprintf("webhook: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return &WebhookOutcome{Error: fmt.Sprintf("webhook: %v", err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	out := &WebhookOutcome{Status: resp.StatusCode}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		out.Error = fmt.Sprintf("webhook: got HTTP %d, want 2xx", resp.StatusCode)
	}
	return out
}

// LoadSpecInput names a stored spec.
type LoadSpecInput struct {
	Key string
}

// LoadSpecResult is the stored spec, parsed and validated, with its text.
type LoadSpecResult struct {
	Spec     sweeps.Spec
	SpecYAML string
}

// LoadSpec reads a spec stored in the artifact store (a schedule's pinned spec) and validates it. An
// invalid spec is ErrInvalidSpec: it will not become valid by retrying.
func (a *Activities) LoadSpec(ctx context.Context, in LoadSpecInput) (*LoadSpecResult, error) {
	raw, err := getBytes(ctx, a.Store, in.Key)
	if err != nil {
		return nil, err
	}
	spec, err := sweeps.Decode(bytes.NewReader(raw), in.Key)
	if err == nil {
		err = spec.Validate()
	}
	if err == nil {
		_, err = sweeps.Plan(spec)
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	return &LoadSpecResult{Spec: *spec, SpecYAML: string(raw)}, nil
}
