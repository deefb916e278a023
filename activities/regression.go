package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Regression verdicts, as regression.json and the RlsweepVerdict search attribute carry them (the
// report package's, which draws them). A configuration may also be VerdictNew or VerdictMissing; the
// sweep's verdict is never either.
const (
	VerdictPass      = report.VerdictPass
	VerdictRegressed = report.VerdictRegressed
	VerdictImproved  = report.VerdictImproved
	// VerdictNew marks a configuration only the candidate sweep has: nothing to compare it with.
	VerdictNew = report.VerdictNew
	// VerdictMissing marks a configuration only the baseline has.
	VerdictMissing = report.VerdictMissing
)

// ErrNoComparableConfigs is the error type of a comparison in which no configuration of the sweep has
// the parameter values of one of the baseline's: not retried, since the plans will not change.
const ErrNoComparableConfigs = "NoComparableConfigs"

// Thresholds decide a regression verdict; sweeps.Regression documents each. As a Regression's input
// they override the spec's regression section field by field, a zero value overriding nothing.
type Thresholds struct {
	// Tolerance is the relative change of a configuration's IQM that counts as a change at all:
	// |cand − base| / |base| > Tolerance (default 0.05).
	Tolerance float64 `json:"tolerance"`
	// Confidence of the bootstrap interval of the IQM difference (default 0.95).
	Confidence float64 `json:"confidence"`
	// Resamples is the number of bootstrap samples (default 2000).
	Resamples int `json:"resamples"`
	// MinProbImprovement: improved needs P(candidate seed beats baseline seed) ≥ it, regressed needs
	// that probability ≤ 1 − it (default 0.75; 0.5 turns the check off).
	MinProbImprovement float64 `json:"min_prob_improvement"`
	// MaxNewFailures is how many more seeds without an objective than the baseline a configuration
	// may have and not be regressed (default 0).
	MaxNewFailures int `json:"max_new_failures"`
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

// ResolveThresholds returns the thresholds a regression judges by, and the names of the fields the
// override set: the spec's regression section (nil: sweeps.DefaultRegression), each nonzero field of
// override (a schedule's --tolerance) taking precedence.
func ResolveThresholds(spec *sweeps.Regression, override Thresholds) (Thresholds, []string) {
	r := sweeps.DefaultRegression()
	if spec != nil {
		r = *spec
	}
	th := Thresholds{Tolerance: r.Tolerance, Confidence: r.Confidence, Resamples: r.Resamples,
		MinProbImprovement: r.MinProbImprovement, MaxNewFailures: r.MaxNewFailures, Seed: override.Seed}
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
// whose goal is "maximize" or "minimize". Regressed: the IQM is worse by more than the tolerance, the
// bootstrap interval of the IQM difference (baseline and candidate resampled as two strata) excludes
// 0, and P(candidate seed beats baseline seed) ≤ 1 − MinProbImprovement; improved: symmetric; otherwise
// pass, with the reason. Both sides need at least one score; config seeds the bootstrap.
func CompareConfig(config int, base, cand []float64, goal string, th Thresholds) ConfigComparison {
	th = th.withDefaults()
	c := ConfigComparison{Config: config, BaselineConfig: config, Baseline: base, Candidate: cand,
		BaselineIQM: diagnostics.IQM(base), CandidateIQM: diagnostics.IQM(cand), Verdict: VerdictPass}
	sign := 1.0
	if goal == "minimize" {
		sign = -1
	}
	diff := func(s [][]float64) float64 { return diagnostics.IQM(s[1]) - diagnostics.IQM(s[0]) }
	rnd := rand.New(rand.NewPCG(th.Seed, uint64(config)))
	c.DiffCI[0], c.DiffCI[1] = diagnostics.StratifiedBootstrapCI([][]float64{base, cand}, diff, th.Resamples, th.Confidence, rnd)
	c.RelChange = sign * (c.CandidateIQM - c.BaselineIQM) / math.Abs(c.BaselineIQM)
	if sign > 0 {
		c.ProbImprovement = ProbabilityOfImprovement(cand, base)
	} else {
		c.ProbImprovement = ProbabilityOfImprovement(base, cand)
	}
	c.Verdict, c.Reason = judge(c, sign, th)
	return c
}

// minVerdictSeeds is how many scored seeds each side needs before a configuration can be judged
// regressed or improved: with one, the bootstrap interval is a point and P(improvement) is 0 or 1, so
// any change beyond the tolerance would pass for significant.
const minVerdictSeeds = 2

// judge applies the three tests of CompareConfig and says which one decided.
func judge(c ConfigComparison, sign float64, th Thresholds) (verdict, reason string) {
	lo, hi := sign*c.DiffCI[0], sign*c.DiffCI[1]
	if lo > hi {
		lo, hi = hi, lo
	}
	change := fmt.Sprintf("IQM %.4g vs baseline %.4g (%+.1f%%)", c.CandidateIQM, c.BaselineIQM, 100*c.RelChange)
	if len(c.Baseline) < minVerdictSeeds || len(c.Candidate) < minVerdictSeeds {
		return VerdictPass, fmt.Sprintf("%s, but only %d baseline and %d candidate seeds scored: a verdict needs at least %d a side (one seed cannot tell a change from seed noise)",
			change, len(c.Baseline), len(c.Candidate), minVerdictSeeds)
	}
	interval := fmt.Sprintf("%g%% interval of the difference [%.4g, %.4g]", 100*th.Confidence, c.DiffCI[0], c.DiffCI[1])
	worse, better := c.RelChange < -th.Tolerance, c.RelChange > th.Tolerance
	switch {
	case !worse && !better:
		return VerdictPass, fmt.Sprintf("%s, within the %.1f%% tolerance", change, 100*th.Tolerance)
	case worse && hi >= 0 || better && lo <= 0:
		return VerdictPass, fmt.Sprintf("%s, but the %s includes 0", change, interval)
	case worse && c.ProbImprovement > 1-th.MinProbImprovement:
		return VerdictPass, fmt.Sprintf("%s, but P(improvement) %.2f > %.2f: the seeds overlap", change,
			c.ProbImprovement, 1-th.MinProbImprovement)
	case better && c.ProbImprovement < th.MinProbImprovement:
		return VerdictPass, fmt.Sprintf("%s, but P(improvement) %.2f < %.2f: the seeds overlap", change,
			c.ProbImprovement, th.MinProbImprovement)
	case worse:
		return VerdictRegressed, fmt.Sprintf("%s beyond the %.1f%% tolerance, %s excludes 0, P(improvement) %.2f",
			change, 100*th.Tolerance, interval, c.ProbImprovement)
	}
	return VerdictImproved, fmt.Sprintf("%s beyond the %.1f%% tolerance, %s excludes 0, P(improvement) %.2f",
		change, 100*th.Tolerance, interval, c.ProbImprovement)
}

// Overall is the verdict of a whole comparison: regressed if any configuration regressed, else
// improved if any improved, else pass. New and missing configurations do not count.
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

// Compared counts the configurations both sides have.
func Compared(configs []ConfigComparison) int {
	n := 0
	for _, c := range configs {
		if c.Verdict != VerdictNew && c.Verdict != VerdictMissing {
			n++
		}
	}
	return n
}

// CompareResults compares every configuration of cand with the baseline's configuration of the same
// parameter values, whatever its plan index: a reordered or extended grid still compares like with
// like. Configurations only cand has are VerdictNew, those only base has VerdictMissing; both are
// listed and never compared. A candidate configuration with more than th.MaxNewFailures more seeds
// lacking an objective (diverged, failed) than the baseline's has regressed, whatever its scores; one
// with no score on either side is reported and passes. The result lists cand's configurations in its
// plan order, then the missing ones in the baseline's.
func CompareResults(base, cand *SweepResults, th Thresholds) []ConfigComparison {
	th = th.withDefaults()
	bs, cs := groupByParams(base), groupByParams(cand)
	var out []ConfigComparison
	for _, g := range cs.order {
		cg := cs.groups[g]
		bg, ok := bs.groups[g]
		if !ok {
			out = append(out, onlyOneSide(cg, VerdictNew, "only in this sweep: no baseline configuration has these parameter values"))
			continue
		}
		out = append(out, compareGroups(bg, cg, cand.Metric.Goal, th))
	}
	for _, g := range bs.order {
		if _, ok := cs.groups[g]; !ok {
			out = append(out, onlyOneSide(bs.groups[g], VerdictMissing, "only in the baseline: this sweep has no configuration with these parameter values"))
		}
	}
	return out
}

func compareGroups(bg, cg *paramGroup, goal string, th Thresholds) ConfigComparison {
	var c ConfigComparison
	if len(bg.scores) > 0 && len(cg.scores) > 0 {
		c = CompareConfig(cg.config, bg.scores, cg.scores, goal, th)
	} else {
		c = ConfigComparison{Config: cg.config, Baseline: bg.scores, Candidate: cg.scores, Verdict: VerdictPass,
			Reason: "no objective to compare on one side", BaselineIQM: math.NaN(), CandidateIQM: math.NaN(),
			RelChange: math.NaN(), ProbImprovement: math.NaN(), DiffCI: [2]float64{math.NaN(), math.NaN()}}
	}
	c.BaselineConfig, c.Params = bg.config, cg.params
	c.BaselineFailures, c.CandidateFailures = bg.failures, cg.failures
	c.NewFailures = max(cg.failures-bg.failures, 0)
	if c.NewFailures > th.MaxNewFailures {
		c.Verdict = VerdictRegressed
		c.Reason = fmt.Sprintf("%d seed(s) without an objective vs %d in the baseline (max_new_failures %d)",
			cg.failures, bg.failures, th.MaxNewFailures)
	}
	return c
}

// onlyOneSide lists a configuration only the candidate (VerdictNew) or only the baseline
// (VerdictMissing) has, without comparing it.
func onlyOneSide(g *paramGroup, verdict, reason string) ConfigComparison {
	nan := math.NaN()
	c := ConfigComparison{Config: -1, BaselineConfig: -1, Params: g.params, BaselineIQM: nan, CandidateIQM: nan,
		RelChange: nan, ProbImprovement: nan, DiffCI: [2]float64{nan, nan}, Verdict: verdict, Reason: reason}
	if verdict == VerdictNew {
		c.Config, c.Candidate, c.CandidateFailures, c.CandidateIQM = g.config, g.scores, g.failures, diagnostics.IQM(g.scores)
	} else {
		c.BaselineConfig, c.Baseline, c.BaselineFailures, c.BaselineIQM = g.config, g.scores, g.failures, diagnostics.IQM(g.scores)
	}
	return c
}

// paramGroup is one configuration of a sweep: the trials that share its parameter values.
type paramGroup struct {
	config   int // the lowest plan index with these values
	params   map[string]any
	scores   []float64
	failures int // seeds without a finite objective
}

type paramGroups struct {
	groups map[string]*paramGroup
	order  []string // keys by plan index
}

// groupByParams groups a sweep's trials by their parameter values. Two plan indexes with the same
// values (a duplicated random draw) are one configuration: the same experiment, more seeds.
func groupByParams(r *SweepResults) paramGroups {
	trials := make([]TrialSummary, len(r.Trials))
	copy(trials, r.Trials)
	sort.SliceStable(trials, func(i, j int) bool { return trials[i].Config < trials[j].Config })
	gs := paramGroups{groups: map[string]*paramGroup{}}
	for _, t := range trials {
		k := ParamsKey(t.Params)
		g, ok := gs.groups[k]
		if !ok {
			g = &paramGroup{config: t.Config, params: t.Params}
			gs.groups[k] = g
			gs.order = append(gs.order, k)
		}
		switch {
		case t.Outcome == OutcomeCancelled || t.Outcome == OutcomePruned:
			// Stopped from outside (a cancel, a pruner) with a partial objective: says nothing of
			// the trainer either way, so neither a score nor a failure.
		case t.Outcome != OutcomeCompleted || t.Objective == nil || math.IsNaN(*t.Objective) || math.IsInf(*t.Objective, 0):
			g.failures++
		default:
			g.scores = append(g.scores, *t.Objective)
		}
	}
	return gs
}

// ParamsKey identifies a configuration by its parameter values: their canonical JSON, keys sorted.
// Values that read back from results.json the same (the integer 32 and the float 32.0) give one key.
func ParamsKey(params map[string]any) string {
	if len(params) == 0 {
		return "{}"
	}
	b, err := json.Marshal(params)
	if err != nil {
		// Only a non-finite float fails to encode, and Plan never makes one; keep such values apart.
		return fmt.Sprintf("%#v", params)
	}
	return string(b)
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
	SweepID  string
	Baseline string // see BaselineKey
	// SpecThresholds is the pinned spec's regression section; nil for the defaults.
	SpecThresholds *sweeps.Regression `json:",omitempty"`
	// Thresholds overrides SpecThresholds field by field where nonzero (ResolveThresholds).
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
	New           int `json:",omitempty"`
	Missing       int `json:",omitempty"`
	WebhookError  string
	// ReportKey is report.html, drawn again with the regression section; "" when it could not be drawn
	// (ReportError says why: the comparison stands without it).
	ReportKey   string `json:",omitempty"`
	ReportError string `json:",omitempty"`
}

// RegressionReport is regression.json.
type RegressionReport struct {
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

// CompareBaseline compares the sweep's results.json with the baseline, posts the comparison to the
// webhook if one is set, writes regression.json beside results.json and draws report.html again with
// the regression section. When no configuration of the sweep has the parameter values of one of the
// baseline's, it writes regression.json (the new and missing configurations, verdict failed) and
// returns a non-retryable ErrNoComparableConfigs.
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
	th, overridden := ResolveThresholds(in.SpecThresholds, in.Thresholds)
	rep := RegressionReport{SweepID: in.SweepID, Baseline: in.Baseline, BaselineKey: bkey, Metric: cand.Metric,
		Thresholds: th, Overridden: overridden, Configs: CompareResults(base, cand, th)}
	rep.Verdict, rep.Compared = Overall(rep.Configs), Compared(rep.Configs)
	var noMatch error
	if rep.Compared == 0 {
		rep.Verdict = VerdictFailed
		msg := fmt.Sprintf("no configuration of %s has the parameter values of one of baseline %q's: %s", in.SweepID,
			in.Baseline, describeParams(base, cand))
		noMatch = temporal.NewNonRetryableApplicationError(msg, ErrNoComparableConfigs, nil)
	}
	if in.WebhookURL != "" {
		rep.Webhook = postWebhook(ctx, in.WebhookURL, &rep)
	}
	out := summarize(&rep)
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode regression: %w", err)
	}
	if err := putBytes(ctx, a.Store, out.RegressionKey, b); err != nil {
		return nil, err
	}
	if err := a.redrawReport(ctx, cand, out); err != nil {
		return nil, err
	}
	if noMatch != nil {
		return nil, noMatch
	}
	return out, nil
}

// VerdictFailed is the verdict of a regression whose sweep or comparison did not complete.
const VerdictFailed = report.VerdictFailed

func summarize(rep *RegressionReport) *CompareBaselineResult {
	out := &CompareBaselineResult{Verdict: rep.Verdict, RegressionKey: artifacts.SweepKey(rep.SweepID, "regression.json")}
	for _, c := range rep.Configs {
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
	if rep.Webhook != nil {
		out.WebhookError = rep.Webhook.Error
	}
	return out
}

// describeParams says how two sweeps' parameters differ, for the error of a comparison with nothing
// to compare.
func describeParams(base, cand *SweepResults) string {
	b, c := strings.Join(base.Params, ", "), strings.Join(cand.Params, ", ")
	if b != c {
		return fmt.Sprintf("the baseline sweeps [%s], this sweep [%s]", b, c)
	}
	return fmt.Sprintf("both sweep [%s], over different values", c)
}

// redrawReport draws report.html again now that regression.json exists beside it. A report that
// cannot be drawn does not fail the comparison: out.ReportError says why. Store errors are returned,
// to be retried.
func (a *Activities) redrawReport(ctx context.Context, res *SweepResults, out *CompareBaselineResult) error {
	spec, err := loadStoredSpec(ctx, a.Store, res.SweepID)
	if err != nil {
		return err
	}
	html, err := RenderReport(ctx, a.Store, res, spec, time.Now())
	if err != nil {
		out.ReportError = err.Error()
		return nil
	}
	key := artifacts.SweepKey(res.SweepID, "report.html")
	if err := putBytes(ctx, a.Store, key, html); err != nil {
		return err
	}
	out.ReportKey = key
	return nil
}

// loadStoredSpec reads the spec.json the Plan activity stored; nil when the sweep has none.
func loadStoredSpec(ctx context.Context, s Store, sweepID string) (*sweeps.Spec, error) {
	var spec sweeps.Spec
	err := getJSON(ctx, s, artifacts.SweepKey(sweepID, "spec.json"), &spec)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &spec, nil
}

func readResults(ctx context.Context, s Store, key string) (*SweepResults, error) {
	var r SweepResults
	if err := getJSON(ctx, s, key, &r); err != nil {
		return nil, err
	}
	return &r, nil
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
	body, err := json.Marshal(rep)
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
