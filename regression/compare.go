package regression

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
)

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
		c.ProbImprovement = diagnostics.ProbabilityOfImprovement(cand, base)
	} else {
		c.ProbImprovement = diagnostics.ProbabilityOfImprovement(base, cand)
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

// Compare compares every configuration of cand with the baseline's configuration of the same
// parameter values, whatever its plan index: a reordered or extended grid still compares like with
// like. Configurations only cand has are VerdictNew, those only base has VerdictMissing; both are
// listed and never compared. A candidate configuration with more than th.MaxNewFailures more seeds
// lacking an objective (diverged, failed) than the baseline's has regressed, whatever its scores; one
// with no score on either side is reported and passes. The result lists cand's configurations in its
// plan order, then the missing ones in the baseline's.
func Compare(base, cand *results.SweepResults, th Thresholds) []ConfigComparison {
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

// groupByParams groups a sweep's trials by their parameter values and precision setting. Two plan
// indexes with the same values (a duplicated random draw) are one configuration: the same experiment,
// more seeds; the same values under two precision settings are two. Confirm re-runs on other GPU
// classes are left out: the regression compares the sweep on its own class.
func groupByParams(r *results.SweepResults) paramGroups {
	trials := make([]results.TrialSummary, len(r.Trials))
	copy(trials, r.Trials)
	sort.SliceStable(trials, func(i, j int) bool { return trials[i].Config < trials[j].Config })
	gs := paramGroups{groups: map[string]*paramGroup{}}
	for _, t := range trials {
		if t.GPUClass != "" {
			continue
		}
		k := results.ParamsKey(t.Params)
		if t.Precision != "" {
			k += " precision=" + t.Precision
		}
		g, ok := gs.groups[k]
		if !ok {
			g = &paramGroup{config: t.Config, params: t.Params}
			gs.groups[k] = g
			gs.order = append(gs.order, k)
		}
		switch {
		case t.Outcome == results.OutcomeCancelled || t.Outcome == results.OutcomePruned:
			// Stopped from outside (a cancel, a pruner) with a partial objective: says nothing of
			// the trainer either way, so neither a score nor a failure.
		case t.Outcome != results.OutcomeCompleted || t.Objective == nil || math.IsNaN(*t.Objective) || math.IsInf(*t.Objective, 0):
			g.failures++
		default:
			g.scores = append(g.scores, *t.Objective)
		}
	}
	return gs
}
