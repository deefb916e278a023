// Package regression compares a sweep's results with a baseline's: the thresholds a verdict judges by,
// each configuration's comparison across seeds, the sweep's verdict and the report stored as
// regression.json (docs/regression.md). It is a pure package: the caller reads both results from the
// store and writes the report.
package regression

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Regression verdicts, as regression.json and the RlsweepVerdict search attribute carry them: the
// sweep's (pass, regressed, improved, failed) and a configuration's (pass, regressed, improved, new,
// missing).
const (
	VerdictPass      = "pass"
	VerdictRegressed = "regressed"
	VerdictImproved  = "improved"
	// VerdictFailed is the verdict of a regression whose sweep or comparison did not complete, or in
	// which no configuration could be compared.
	VerdictFailed = "failed"
	// VerdictNew marks a configuration only the candidate sweep has: nothing to compare it with.
	VerdictNew = "new"
	// VerdictMissing marks a configuration only the baseline has.
	VerdictMissing = "missing"
)

// Thresholds decide a regression verdict; sweeps.Regression documents each. As a Regression's input
// they override the spec's regression section field by field, a zero value overriding nothing.
type Thresholds struct {
	// Regression is the spec's regression section: the tolerance of a configuration's relative IQM
	// change, the bootstrap interval's confidence and resamples, the minimum probability of
	// improvement, and the new failures a configuration may have (docs/regression.md).
	sweeps.Regression
	// Seed seeds the bootstrap, so one comparison always gives one answer.
	Seed uint64 `json:"seed"`
}

func (t Thresholds) withDefaults() Thresholds {
	if t.Tolerance <= 0 {
		t.Tolerance = sweeps.DefaultRegressionTolerance
	}
	if !(t.Confidence > 0 && t.Confidence < 1) {
		t.Confidence = sweeps.DefaultRegressionConfidence
	}
	if t.Resamples < 1 {
		t.Resamples = sweeps.DefaultRegressionResamples
	}
	if !(t.MinProbImprovement >= 0.5 && t.MinProbImprovement <= 1) {
		t.MinProbImprovement = sweeps.DefaultMinProbImprovement
	}
	t.MaxNewFailures = max(t.MaxNewFailures, 0)
	return t
}

// Resolve returns the thresholds a regression judges by, and the names of the fields the
// override set: the spec's regression section (nil: sweeps.DefaultRegression), each nonzero field of
// override (a schedule's --tolerance) taking precedence.
func Resolve(spec *sweeps.Regression, override Thresholds) (Thresholds, []string) {
	r := sweeps.DefaultRegression()
	if spec != nil {
		r = *spec
	}
	th := Thresholds{Regression: r, Seed: override.Seed}
	var set []string
	if override.Tolerance > 0 {
		th.Tolerance, set = override.Tolerance, append(set, "tolerance")
	}
	if override.Confidence > 0 {
		th.Confidence, set = override.Confidence, append(set, "confidence")
	}
	if override.Resamples > 0 {
		th.Resamples, set = override.Resamples, append(set, "resamples")
	}
	if override.MinProbImprovement > 0 {
		th.MinProbImprovement, set = override.MinProbImprovement, append(set, "min_prob_improvement")
	}
	if override.MaxNewFailures > 0 {
		th.MaxNewFailures, set = override.MaxNewFailures, append(set, "max_new_failures")
	}
	return th.withDefaults(), set
}

// ConfigComparison compares one configuration's objective across seeds with the baseline's
// configuration of the same parameter values.
type ConfigComparison struct {
	// Config is the configuration's plan index in the candidate sweep, BaselineConfig in the baseline;
	// -1 on the side that lacks it (verdict new or missing).
	Config         int            `json:"config"`
	BaselineConfig int            `json:"baseline_config"`
	Params         map[string]any `json:"params"`
	Baseline       []float64      `json:"baseline"`
	Candidate      []float64      `json:"candidate"`
	BaselineIQM    float64        `json:"baseline_iqm"`
	CandidateIQM   float64        `json:"candidate_iqm"`
	// DiffCI is the bootstrap interval of IQM(candidate) − IQM(baseline).
	DiffCI [2]float64 `json:"diff_ci"`
	// RelChange is (CandidateIQM − BaselineIQM) / |BaselineIQM|, signed so that positive is better.
	RelChange float64 `json:"rel_change"`
	// ProbImprovement is P(candidate seed beats baseline seed), ties counting ½ (rliable).
	ProbImprovement float64 `json:"prob_improvement"`
	// BaselineFailures and CandidateFailures count seeds without an objective (diverged, failed);
	// NewFailures is the candidate's excess over the baseline's.
	BaselineFailures  int    `json:"baseline_failures"`
	CandidateFailures int    `json:"candidate_failures"`
	NewFailures       int    `json:"new_failures"`
	Verdict           string `json:"verdict"`
	Reason            string `json:"reason,omitempty"`
}

// comparisonJSON is ConfigComparison as JSON: the statistics a configuration lacks (NaN: no score on
// a side, or a new or missing configuration) are null, which encoding/json can write.
type comparisonJSON struct {
	plainComparison
	BaselineIQM     *float64    `json:"baseline_iqm"`
	CandidateIQM    *float64    `json:"candidate_iqm"`
	DiffCI          [2]*float64 `json:"diff_ci"`
	RelChange       *float64    `json:"rel_change"`
	ProbImprovement *float64    `json:"prob_improvement"`
}

type plainComparison ConfigComparison

func finiteOrNil(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes the statistics that are NaN or infinite as null.
func (c ConfigComparison) MarshalJSON() ([]byte, error) {
	return json.Marshal(comparisonJSON{plainComparison: plainComparison(c), BaselineIQM: finiteOrNil(c.BaselineIQM),
		CandidateIQM: finiteOrNil(c.CandidateIQM), DiffCI: [2]*float64{finiteOrNil(c.DiffCI[0]), finiteOrNil(c.DiffCI[1])},
		RelChange: finiteOrNil(c.RelChange), ProbImprovement: finiteOrNil(c.ProbImprovement)})
}

// UnmarshalJSON reads null statistics back as NaN.
func (c *ConfigComparison) UnmarshalJSON(b []byte) error {
	var w comparisonJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ConfigComparison(w.plainComparison)
	c.BaselineIQM, c.CandidateIQM, c.RelChange = orNaN(w.BaselineIQM), orNaN(w.CandidateIQM), orNaN(w.RelChange)
	c.ProbImprovement, c.DiffCI = orNaN(w.ProbImprovement), [2]float64{orNaN(w.DiffCI[0]), orNaN(w.DiffCI[1])}
	return nil
}

// New compares cand with base (Compare) and returns the report with the sweep's verdict. When no
// configuration of cand has the parameter values of one of base's, the report (the new and missing
// configurations, verdict failed) comes with an error that says how the two sweeps' parameters differ.
func New(sweepID, baseline, baselineKey string, base, cand *results.SweepResults, th Thresholds, overridden []string) (*Report, error) {
	rep := &Report{SweepID: sweepID, Baseline: baseline, BaselineKey: baselineKey, Metric: cand.Metric,
		Thresholds: th.withDefaults(), Overridden: overridden, Configs: Compare(base, cand, th)}
	rep.Verdict, rep.Compared = Overall(rep.Configs), Compared(rep.Configs)
	if rep.Compared == 0 {
		rep.Verdict = VerdictFailed
		return rep, fmt.Errorf("no configuration of %s has the parameter values of one of baseline %q's: %s", sweepID,
			baseline, describeParams(base, cand))
	}
	return rep, nil
}

// Report is regression.json: a sweep compared with a baseline.
type Report struct {
	SweepID     string        `json:"sweep_id"`
	Baseline    string        `json:"baseline"`
	BaselineKey string        `json:"baseline_key"`
	Metric      sweeps.Metric `json:"metric"`
	Thresholds  Thresholds    `json:"thresholds"`
	// Overridden names the thresholds the schedule set over the spec's (its --tolerance).
	Overridden []string `json:"overridden,omitempty"`
	Verdict    string   `json:"verdict"`
	// Compared counts the configurations both sweeps have; Configs also lists the new and missing ones.
	Compared int                `json:"compared"`
	Configs  []ConfigComparison `json:"configs"`
	Webhook  *WebhookOutcome    `json:"webhook,omitempty"`
}

// WebhookOutcome records what the webhook answered; a failing webhook never fails the regression.
type WebhookOutcome struct {
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Counts tallies a report's configurations by verdict.
type Counts struct {
	Regressed, Improved, New, Missing int
}

// Counts tallies the report's configurations by verdict.
func (r *Report) Counts() Counts {
	var out Counts
	for _, c := range r.Configs {
		switch c.Verdict {
		case VerdictRegressed:
			out.Regressed++
		case VerdictImproved:
			out.Improved++
		case VerdictNew:
			out.New++
		case VerdictMissing:
			out.Missing++
		}
	}
	return out
}

// describeParams says how two sweeps' parameters differ, for the error of a comparison with nothing
// to compare.
func describeParams(base, cand *results.SweepResults) string {
	b, c := strings.Join(base.Params, ", "), strings.Join(cand.Params, ", ")
	if b != c {
		return fmt.Sprintf("the baseline sweeps [%s], this sweep [%s]", b, c)
	}
	return fmt.Sprintf("both sweep [%s], over different values", c)
}
