package diagnostics

import (
	"fmt"
	"math"
	"slices"

	"github.com/rlsweep/rlsweep/metrics"
)

// Causes a Finding can name, in the order the doctor's decision tree tries them.
const (
	CauseDiverged      = "diverged"       // a rule stopped the run, or a metric went non-finite
	CauseNoiseRunaway  = "noise_runaway"  // a Gaussian policy's std grew while the objective did not
	CauseValueFunction = "value_function" // explained variance < 0
	CausePolicyDied    = "policy_died"    // entropy or action std collapsed
	CauseGradients     = "gradients"      // gradient norm exploding
	CauseRewardScale   = "reward_scale"   // |advantage| max > 100
	CauseTooFast       = "too_fast"       // clip fraction > 0.3
	CauseNotMoving     = "not_moving"     // clip fraction = 0
	CauseTaskDesign    = "task_design"    // every optimiser signal looks healthy
)

// Thresholds of the doctor's decision tree.
const (
	doctorWindowMin     = 5
	doctorClipTooFast   = 0.3
	doctorEntropyFloor  = 0.01
	doctorGradFactor    = 10 // late grad norm over early grad norm that counts as exploding
	doctorAdvantageMax  = 100
	doctorNotMovingClip = 1e-8
	doctorStdGrowth     = 1.5 // late action std over the first one that counts as running away
)

// Finding is one thing the doctor concluded about a run, with the evidence for it.
type Finding struct {
	Rank     int        `json:"rank"`           // 1 is the most likely explanation
	Cause    string     `json:"cause"`          // one of the Cause constants
	Summary  string     `json:"summary"`        // what is wrong, in one line
	Advice   string     `json:"advice"`         // what to try
	Rule     string     `json:"rule,omitempty"` // the rule whose verdict this finding comes from, if any
	Evidence []Evidence `json:"evidence"`
}

// Evidence is one metric value a finding rests on.
type Evidence struct {
	Metric string        `json:"metric"`
	Value  metrics.Float `json:"value"` // NaN-safe in JSON
	Step   int64         `json:"step"`
}

// Diagnose explains a finished or stopped run from its records (in step order) and the verdicts the
// engine gave on them. It walks a decision tree over the last quarter of the run (at least its last 5
// records): a Gaussian policy's std grown 1.5-fold with the objective no better than at the start → the
// noise is running away; value loss 100 × its early level → the value function blew up; explained
// variance < 0 (where returns vary) → the value function; entropy or action std collapsed →
// the policy died; gradient norm exploding → clip tighter; |advantage| max > 100 → reward scale; clip
// fraction > 0.3 → the policy moves too fast; clip fraction = 0 → it does not move; nothing wrong →
// reward, environment or task design. A condition counts when it holds on at least half the window's
// records that carry the metric. Stop verdicts come first, then the tree's findings in tree order;
// findings are ranked from 1. There is always at least one finding.
func Diagnose(records []metrics.Record, verdicts ...Verdict) []Finding {
	var out []Finding
	for _, v := range verdicts {
		if v.Level == Stop && !slices.ContainsFunc(out, func(f Finding) bool { return f.Rule == v.Rule }) {
			out = append(out, verdictFinding(v))
		}
	}
	w := window(records)
	for _, c := range doctorChecks {
		if f, ok := c(records, w); ok && !slices.ContainsFunc(out, func(g Finding) bool { return g.Cause == f.Cause }) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = append(out, Finding{Cause: CauseTaskDesign,
			Summary: "no optimiser signal looks wrong: value function, entropy, gradients, advantages and clipping are healthy",
			Advice: "if the objective still did not improve, look at the reward (is it shaped toward the goal, sparse, " +
				"exploitable?), the environment (observations, terminations, time limits) and the task design"})
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// verdictFinding turns a stop verdict into the finding it is.
func verdictFinding(v Verdict) Finding {
	cause := CauseDiverged
	switch v.Rule {
	case RuleValueAnticorrelated, RuleValueLossBlowup:
		cause = CauseValueFunction
	case RuleStdCollapse, RuleEntropyCollapse, RuleStdNonPositive:
		cause = CausePolicyDied
	case RuleNeverLearned, RuleStdExplosion:
		cause = CauseNoiseRunaway
	case RuleGradExplosion:
		cause = CauseGradients
	case RuleAdvantageExplosion:
		cause = CauseRewardScale
	case RuleClipExcess, RuleKLSpike:
		cause = CauseTooFast
	}
	return Finding{Cause: cause, Rule: v.Rule, Advice: v.Advice,
		Summary:  "stopped by " + v.Rule + " on " + v.Metric,
		Evidence: []Evidence{{Metric: v.Metric, Value: metrics.Float(v.Value), Step: v.Step}}}
}

// window returns the records the doctor judges: the last quarter of the run, at least doctorWindowMin.
func window(records []metrics.Record) []metrics.Record {
	n := max(len(records)/4, doctorWindowMin)
	if n >= len(records) {
		return records
	}
	return records[len(records)-n:]
}

// doctorChecks is the decision tree, in order.
var doctorChecks = []func(all, w []metrics.Record) (Finding, bool){
	checkNoiseRunaway, checkValueLossGrowth, checkValueFunction, checkPolicyDied, checkGradients, checkRewardScale, checkTooFast, checkNotMoving,
}

// mostly reports whether cond holds on at least half of w's records carrying metric, and returns the
// most extreme such record by worse (worse(a, b) says a is worse than b).
func mostly(w []metrics.Record, metric string, cond func(float64) bool, worse func(a, b float64) bool) (Evidence, bool) {
	var n, hits int
	var ev Evidence
	for _, r := range w {
		v, ok := r.Values[metric]
		if !ok || math.IsNaN(v) {
			continue
		}
		n++
		if cond(v) {
			if hits == 0 || worse(v, float64(ev.Value)) {
				ev = Evidence{Metric: metric, Value: metrics.Float(v), Step: r.Step}
			}
			hits++
		}
	}
	return ev, n > 0 && 2*hits >= n
}

func lower(a, b float64) bool  { return a < b }
func higher(a, b float64) bool { return a > b }

// checkValueFunction finds explained variance < 0 on most of the window, where it means something: not
// when the window's objective barely varies (a solved task's constant return: nothing to explain).
func checkValueFunction(_, w []metrics.Record) (Finding, bool) {
	if lo, hi, ok := rangeOf(w, metrics.Reward); ok && hi-lo <= 0.01*math.Max(math.Abs(lo), math.Abs(hi)) {
		return Finding{}, false
	}
	ev, ok := mostly(w, metrics.ExplainedVariance, func(v float64) bool { return v < 0 }, lower)
	return Finding{Cause: CauseValueFunction, Summary: "explained variance < 0: the value function predicts returns worse than their mean",
		Advice: Advice(RuleValueAnticorrelated), Evidence: []Evidence{ev}}, ok
}

// checkNoiseRunaway finds a Gaussian policy whose action std grew doctorStdGrowth-fold from the run's
// first records to the window while the objective (reward) ended no higher than the larger of its start
// and half its best: the noise ran away with nothing to learn from.
func checkNoiseRunaway(all, w []metrics.Record) (Finding, bool) {
	early := medianOf(all[:min(len(all), doctorWindowMin)], metrics.ActionStd)
	late := medianOf(w, metrics.ActionStd)
	if early.Step < 0 || late.Step < 0 || !(float64(early.Value) > 0) || float64(late.Value) < doctorStdGrowth*float64(early.Value) {
		return Finding{}, false
	}
	start := medianOf(all[:min(len(all), doctorWindowMin)], metrics.Reward)
	end := medianOf(w, metrics.Reward)
	_, best, ok := rangeOf(all, metrics.Reward)
	if !ok || start.Step < 0 || end.Step < 0 {
		return Finding{}, false
	}
	s, e := float64(start.Value), float64(end.Value)
	if e > s+0.5*(best-s) && e > s {
		return Finding{}, false
	}
	return Finding{Cause: CauseNoiseRunaway,
		Summary:  "the action noise grew while the reward did not: the policy never learned, and its std runs away",
		Advice:   Advice(RuleNeverLearned),
		Evidence: []Evidence{early, late, start, end}}, true
}

// checkValueLossGrowth finds a value loss whose median over the window is more than 100 times the
// smallest of the run's first 10 (as value_loss_blowup measures it): the returns grew out of the value
// function's scale.
func checkValueLossGrowth(all, w []metrics.Record) (Finding, bool) {
	var first []float64
	var firstMax float64
	for _, r := range all {
		if v, ok := r.Values[metrics.ValueLoss]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			first = append(first, v)
			firstMax = math.Max(firstMax, v)
			if len(first) == vlRefWindow {
				break
			}
		}
	}
	factor, _ := DefaultThreshold(RuleValueLossBlowup)
	late := medianOf(w, metrics.ValueLoss)
	if len(first) < vlRefWindow || late.Step < 0 {
		return Finding{}, false
	}
	ref := math.Max(slices.Min(first), 0.01*firstMax)
	if !(ref > 0) || float64(late.Value) <= factor*ref {
		return Finding{}, false
	}
	return Finding{Cause: CauseValueFunction,
		Summary:  fmt.Sprintf("value loss blew up: its late median is %.3g × its early level", float64(late.Value)/ref),
		Advice:   Advice(RuleValueLossBlowup),
		Evidence: []Evidence{{Metric: metrics.ValueLoss, Value: metrics.Float(ref), Step: all[0].Step}, late}}, true
}

// rangeOf returns the smallest and largest finite value of metric over rs.
func rangeOf(rs []metrics.Record, metric string) (lo, hi float64, ok bool) {
	for _, r := range rs {
		v, has := r.Values[metric]
		if !has || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if !ok {
			lo, hi, ok = v, v, true
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi, ok
}

func checkPolicyDied(all, w []metrics.Record) (Finding, bool) {
	if ev, ok := mostly(w, metrics.ActionStdMin, func(v float64) bool { return v < doctorEntropyFloor }, lower); ok {
		return Finding{Cause: CausePolicyDied, Summary: "action std collapsed: the policy stopped exploring",
			Advice: Advice(RuleStdCollapse), Evidence: []Evidence{ev}}, true
	}
	if ev, ok := mostly(w, metrics.ActionStd, func(v float64) bool { return v < doctorEntropyFloor }, lower); ok {
		return Finding{Cause: CausePolicyDied, Summary: "action std collapsed: the policy stopped exploring",
			Advice: Advice(RuleStdCollapse), Evidence: []Evidence{ev}}, true
	}
	if slices.ContainsFunc(all, showsGaussian) {
		return Finding{}, false // a Gaussian policy's entropy may be negative and healthy
	}
	ev, ok := mostly(w, metrics.Entropy, func(v float64) bool { return v < doctorEntropyFloor }, lower)
	return Finding{Cause: CausePolicyDied, Summary: "entropy collapsed: the policy became deterministic and stopped exploring",
		Advice: Advice(RuleEntropyCollapse), Evidence: []Evidence{ev}}, ok
}

// checkGradients fires on a gradient norm above grad_explosion's threshold, or one that grew
// doctorGradFactor-fold from the start of the run to its end.
func checkGradients(all, w []metrics.Record) (Finding, bool) {
	f := Finding{Cause: CauseGradients, Summary: "gradient norm exploding", Advice: Advice(RuleGradExplosion)}
	limit, _ := DefaultThreshold(RuleGradExplosion)
	if ev, ok := mostly(w, metrics.GradNorm, func(v float64) bool { return v > limit || math.IsInf(v, 0) }, higher); ok {
		f.Evidence = []Evidence{ev}
		return f, true
	}
	early := medianOf(all[:min(len(all), max(len(all)/4, doctorWindowMin))], metrics.GradNorm)
	late := medianOf(w, metrics.GradNorm)
	if early.Step >= 0 && late.Step >= 0 && float64(early.Value) > 0 && float64(late.Value) > doctorGradFactor*float64(early.Value) {
		f.Summary = "gradient norm grew more than tenfold over the run"
		f.Evidence = []Evidence{early, late}
		return f, true
	}
	return f, false
}

// medianOf returns the median of metric over rs as evidence at the last step carrying it; Step is −1
// when no record carries it.
func medianOf(rs []metrics.Record, metric string) Evidence {
	var xs []float64
	ev := Evidence{Metric: metric, Step: -1}
	for _, r := range rs {
		if v, ok := r.Values[metric]; ok && !math.IsNaN(v) {
			xs = append(xs, v)
			ev.Step = r.Step
		}
	}
	if len(xs) > 0 {
		ev.Value = metrics.Float(median(xs))
	}
	return ev
}

func checkRewardScale(_, w []metrics.Record) (Finding, bool) {
	ev, ok := mostly(w, metrics.AdvantageAbsMax, func(v float64) bool { return v > doctorAdvantageMax }, higher)
	return Finding{Cause: CauseRewardScale, Summary: "advantages reach |A| > 100: the reward scale is off",
		Advice: Advice(RuleAdvantageExplosion), Evidence: []Evidence{ev}}, ok
}

func checkTooFast(_, w []metrics.Record) (Finding, bool) {
	ev, ok := mostly(w, metrics.ClipFraction, func(v float64) bool { return v > doctorClipTooFast }, higher)
	return Finding{Cause: CauseTooFast, Summary: "clip fraction > 0.3: the policy moves too far per update",
		Advice: Advice(RuleClipExcess), Evidence: []Evidence{ev}}, ok
}

func checkNotMoving(_, w []metrics.Record) (Finding, bool) {
	ev, ok := mostly(w, metrics.ClipFraction, func(v float64) bool { return v <= doctorNotMovingClip }, lower)
	return Finding{Cause: CauseNotMoving, Summary: "clip fraction = 0: the policy is not moving",
		Advice: "updates change nothing: raise the learning rate, check that gradients reach the policy " +
			"(optimizer holds its parameters, no detach), check the advantages are not all zero", Evidence: []Evidence{ev}}, ok
}
