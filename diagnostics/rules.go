package diagnostics

import (
	"math"
	"slices"

	"github.com/rlsweep/rlsweep/metrics"
)

// Rule names (docs/diagnostics.md). They are wire format: the spec's diagnostics.rules keys and the rule a
// TrialDiverged outcome carries.
const (
	RuleNonFinite           = "non_finite"
	RuleStdNonPositive      = "std_nonpositive"
	RuleGradExplosion       = "grad_explosion"
	RuleStdCollapse         = "std_collapse"
	RuleStdExplosion        = "std_explosion"
	RuleNeverLearned        = "never_learned"
	RuleEntropyCollapse     = "entropy_collapse"
	RuleValueAnticorrelated = "value_anticorrelated"
	RuleClipExcess          = "clip_excess"
	RuleAdvantageExplosion  = "advantage_explosion"
	RuleKLSpike             = "kl_spike"
	RulePolicyCollapse      = "policy_collapse"
	RuleValueLossBlowup     = "value_loss_blowup"
	RulePartialCollapse     = "partial_collapse"
	RuleNeverLearnedEntropy = "never_learned_entropy"
	RuleStdRunaway          = "std_runaway"
	RuleZeroReturn          = "zero_return"
	RuleCollapsedAtEnd      = "collapsed_at_end"
	// RuleStalled is judged by time, not by records: the TrainSegment activity fires it when no record
	// arrives for stall_timeout. It is named here so its advice and name live with the others; the
	// engine does not evaluate it, and its only level is a kill and a retry.
	RuleStalled = "stalled"
)

// Rule levels as the spec writes them.
const (
	LevelOff  = "off"
	LevelWarn = "warn"
	LevelStop = "stop"
)

// RuleLevels lists the levels a rule may be set to.
var RuleLevels = []string{LevelOff, LevelWarn, LevelStop}

// ruleKind says how a rule's condition turns into a stop.
type ruleKind int

const (
	// atOnce rules stop on the first record that meets the condition, warm-up or not: a NaN does not
	// heal.
	atOnce ruleKind = iota
	// sustained rules warn on each record that meets the condition after warm-up and stop when it
	// holds for patience consecutive records carrying the metric.
	sustained
	// atEnd rules judge the whole run once it is over (Engine.Finish), not record by record: what a run
	// shows only in its last records (a collapse in its final tenth) cannot stop it, but must not end
	// it as a silent success either. Their levels are off and warn.
	atEnd
)

// rule is one default rule: what it judges, how, and what to tell the user.
type rule struct {
	name      string
	kind      ruleKind
	level     Level
	threshold float64 // the default; its meaning is rule-specific, see thresholdDoc
	noLimit   bool    // the rule has no threshold to override (non_finite)
	// judgesObjective marks the rules whose condition is about the objective itself (policy_collapse,
	// never_learned); every other sustained rule only warns while the run is doing well.
	judgesObjective bool
	// needsFall marks a sustained rule that stops only once the objective has fallen (progress.fallen).
	needsFall bool
	// longView marks a sustained rule that does not judge the objective and stops only a run that is not
	// doing well by its long track either (progress.doingWellAny), not merely by its last five records.
	longView bool
	advice   string
	// check judges r: whether the rule's metric is in the record (ok), whether the condition holds,
	// the metric it judged, its value and the absolute limit crossed.
	check func(e *Engine, r metrics.Record, threshold float64) (c check)
}

// check is the outcome of one rule on one record.
type check struct {
	ok     bool // the record carries what the rule needs
	fired  bool
	metric string
	value  float64
	limit  float64
}

// nonFiniteMetrics are the metrics that stop a run at once when NaN or ±Inf (docs/diagnostics.md). Explained
// variance is not among them: it is legitimately NaN when returns are constant.
var nonFiniteMetrics = []string{metrics.Reward, metrics.EpisodeLength, metrics.ValueLoss, metrics.PolicyLoss, metrics.Entropy, metrics.ActionStd, metrics.ActionStdMin, metrics.GradNorm, metrics.ApproxKL}

// episodeMeans are means over the episodes that finished in a logging window: NaN (or an empty mean)
// when none finished, as rsl_rl, ML-Agents and SB3 report it early in a run. Only ±Inf is a broken
// number there.
var episodeMeans = []string{metrics.Reward, metrics.EpisodeLength}

// rules holds the default rules in the order docs/diagnostics.md lists them; on one record the most severe
// verdict wins, and among equals the earlier rule.
var rules = []rule{
	{name: RuleNonFinite, kind: atOnce, level: Stop, noLimit: true,
		advice: "a metric became NaN or infinite: lower the learning rate, clip gradients (max_grad_norm 0.5–1), " +
			"check observations and rewards for NaN/Inf and divisions by zero, keep log_std bounded",
		check: checkNonFinite},
	{name: RuleStdNonPositive, kind: atOnce, level: Stop, threshold: 0,
		advice: "action std reached 0 or below: torch.distributions.Normal would crash next — parameterise " +
			"the std as exp(log_std) or softplus with a floor (e.g. clamp log_std ≥ −5), lower the learning rate",
		check: func(e *Engine, r metrics.Record, th float64) check {
			name, v, ok := stdMin(r)
			return check{ok: ok, fired: ok && v <= th, metric: name, value: v, limit: th}
		}},
	{name: RuleGradExplosion, kind: atOnce, level: Stop, threshold: 1e4,
		advice: "gradient norm exploded: clip gradients tighter (max_grad_norm 0.5), lower the learning rate, " +
			"normalise observations and advantages",
		check: above(metrics.GradNorm)},
	{name: RuleStdCollapse, kind: sustained, level: Stop, threshold: 0.01,
		advice: "action std collapsed: the policy stopped exploring — raise ent_coef, floor log_std, " +
			"lower the learning rate, check that rewards still vary",
		check: func(e *Engine, r metrics.Record, th float64) check {
			name, v, ok := stdMin(r)
			return check{ok: ok, fired: ok && v < th, metric: name, value: v, limit: th}
		}},
	{name: RuleStdExplosion, kind: sustained, level: Stop, threshold: 10,
		advice: "action std grew far above its initial value: the policy is noise saturating the action " +
			"bounds — lower ent_coef, bound log_std (max 2), check the action scaling and reward sign",
		check: checkStdExplosion},
	{name: RuleNeverLearned, kind: sustained, level: Stop, threshold: 1.5, judgesObjective: true,
		advice: "the policy never learned and its action noise keeps growing: with no reward gradient to follow, " +
			"the entropy bonus pushes σ up — check the reward's sign and scale and that observations reach the " +
			"policy, lower ent_coef (0 to 0.005 for locomotion), start from a smaller std (init_noise_std 0.5)",
		check: checkNeverLearned},
	{name: RuleEntropyCollapse, kind: sustained, level: Stop, threshold: 0.01,
		advice: "policy entropy collapsed: the categorical policy became deterministic too early — raise " +
			"ent_coef (0.01), lower the learning rate, check the reward is not trivially exploitable",
		check: checkEntropyCollapse},
	{name: RuleValueAnticorrelated, kind: sustained, level: Warn, threshold: -0.5,
		advice: "explained variance < 0: the value function is broken — check reward scale (returns in " +
			"[−3, 3]), a smaller network, GAE λ, value loss coefficient and done/timeout handling",
		check: checkValueAnticorrelated},
	{name: RuleClipExcess, kind: sustained, level: Warn, threshold: 0.5,
		advice: "most samples are clipped: the policy moves too far per update — lower the learning rate, " +
			"fewer epochs or larger minibatches, set target_kl",
		check: above(metrics.ClipFraction)},
	{name: RuleAdvantageExplosion, kind: sustained, level: Warn, threshold: 100,
		advice: "advantages are huge: the reward scale is off — normalise or scale rewards (returns in " +
			"[−3, 3]), normalise advantages, check γ and GAE λ",
		check: above(metrics.AdvantageAbsMax)},
	{name: RuleKLSpike, kind: sustained, level: Warn, threshold: 0.2,
		advice: "KL divergence spiked: one update changed the policy too much — lower the learning rate, " +
			"set target_kl for early stopping, fewer epochs",
		check: checkKLSpike},
	{name: RulePolicyCollapse, kind: sustained, level: Stop, threshold: 0.1, judgesObjective: true,
		advice: "the objective improved, then fell back to where it started, or below, and stayed there: the " +
			"policy collapsed — lower the learning rate, set target_kl, keep the last good checkpoint",
		check: checkPolicyCollapse},
	{name: RuleValueLossBlowup, kind: sustained, level: Stop, threshold: 100, needsFall: true,
		advice: "value loss blew up against its early level: returns grew out of scale — normalise " +
			"rewards or returns, clip the value loss, lower the learning rate",
		check: checkValueLossBlowup},
	{name: RulePartialCollapse, kind: sustained, level: Stop, threshold: 0.5, judgesObjective: true,
		advice: "the objective gave back half of what it gained and has stayed down for a third of the run: " +
			"the policy is unlearning — lower the learning rate, set target_kl, anneal the learning rate, keep " +
			"the best checkpoint",
		check: checkPartialCollapse},
	{name: RuleNeverLearnedEntropy, kind: sustained, level: Stop, threshold: 0.9, judgesObjective: true,
		advice: "the policy never learned: its entropy stays at its maximum and the objective never improved — " +
			"check that the reward reaches the agent and varies (a constant return gives zero advantages), " +
			"that observations reach the policy, raise the learning rate, lower ent_coef",
		check: checkNeverLearnedEntropy},
	{name: RuleStdRunaway, kind: sustained, level: Stop, threshold: 3, longView: true,
		advice: "action std keeps growing, several-fold its initial value, while the objective gives back its " +
			"gain: the entropy bonus outweighs the reward — lower ent_coef, bound log_std, lower the learning rate",
		check: checkStdRunaway},
	{name: RuleZeroReturn, kind: sustained, level: Stop, threshold: 1e-9, judgesObjective: true,
		advice: "the objective has been zero for the whole run: no reward reaches the agent, so every advantage " +
			"is zero and nothing is learned — check the reward function and its scale (a sparse task that never " +
			"succeeds: shape the reward, shorten the task, start closer to the goal)",
		check: checkZeroReturn},
	{name: RuleCollapsedAtEnd, kind: atEnd, level: Warn, threshold: 0.75, judgesObjective: true,
		advice: "the run ended having lost most of what it gained: its final policy is worse than one it had " +
			"earlier — use the best checkpoint, not the last; lower or anneal the learning rate, set target_kl",
		check: func(*Engine, metrics.Record, float64) check { return check{} }},
}

// stalledAdvice is RuleStalled's advice; the activity reports it with the retryable TrialStalled.
const stalledAdvice = "no metrics record arrived for stall_timeout: the trainer hung (a deadlock, a stuck " +
	"environment, a GPU wait) — it was killed and will be retried; check the log tail"

// RuleNames returns the names of every rule, in the order of docs/diagnostics.md, stalled last.
func RuleNames() []string {
	names := make([]string, 0, len(rules)+1)
	for _, r := range rules {
		names = append(names, r.name)
	}
	return append(names, RuleStalled)
}

// Advice returns the advice line of the named rule, or "" for an unknown name.
func Advice(rule string) string {
	if rule == RuleStalled {
		return stalledAdvice
	}
	for _, r := range rules {
		if r.name == rule {
			return r.advice
		}
	}
	return ""
}

// DefaultThreshold returns the named rule's default threshold and whether it has one. For
// std_explosion, never_learned, std_runaway and value_loss_blowup it is a factor (of the initial std, of
// the early median value loss); for kl_spike it is the KL used when no target is set; for policy_collapse
// it is the fraction of |starting level| the objective must first improve by; for partial_collapse and
// collapsed_at_end the share of the gain lost; for never_learned_entropy the share of the entropy's maximum; for zero_return
// the largest magnitude that counts as zero.
func DefaultThreshold(rule string) (float64, bool) {
	for _, r := range rules {
		if r.name == rule {
			return r.threshold, !r.noLimit
		}
	}
	return 0, false
}

// above fires when metric > threshold. A NaN counts as not reported: it neither extends nor breaks a
// streak (NaN explained variance is legitimate, docs/diagnostics.md; non_finite judges NaN where it is not).
func above(metric string) func(*Engine, metrics.Record, float64) check {
	return func(_ *Engine, r metrics.Record, th float64) check {
		v, ok := r.Values[metric]
		ok = ok && !math.IsNaN(v)
		return check{ok: ok, fired: ok && v > th, metric: metric, value: v, limit: th}
	}
}

// below fires when metric < threshold; a NaN counts as not reported, as in above.
func below(metric string) func(*Engine, metrics.Record, float64) check {
	return func(_ *Engine, r metrics.Record, th float64) check {
		v, ok := r.Values[metric]
		ok = ok && !math.IsNaN(v)
		return check{ok: ok, fired: ok && v < th, metric: metric, value: v, limit: th}
	}
}

// checkNonFinite fires on a NaN or ±Inf among nonFiniteMetrics, except a NaN episode mean (episodeMeans):
// no episode finished in that window, which is no divergence.
func checkNonFinite(_ *Engine, r metrics.Record, _ float64) check {
	for _, m := range nonFiniteMetrics {
		v, ok := r.Values[m]
		if !ok || !(math.IsNaN(v) || math.IsInf(v, 0)) || math.IsNaN(v) && slices.Contains(episodeMeans, m) {
			continue
		}
		return check{ok: true, fired: true, metric: m, value: v}
	}
	return check{ok: true}
}

// stdMin returns action_std_min, or action_std for trainers that report only the mean (a mean ≤ 0 or
// below a floor implies a minimum that is too).
func stdMin(r metrics.Record) (string, float64, bool) {
	if v, ok := r.Values[metrics.ActionStdMin]; ok {
		return metrics.ActionStdMin, v, true
	}
	v, ok := r.Values[metrics.ActionStd]
	return metrics.ActionStd, v, ok
}

func checkStdExplosion(e *Engine, r metrics.Record, factor float64) check {
	v, ok := r.Values[metrics.ActionStd]
	if !ok || e.initialStd <= 0 {
		return check{}
	}
	limit := factor * e.initialStd
	return check{ok: true, fired: v > limit, metric: metrics.ActionStd, value: v, limit: limit}
}

// checkEntropyCollapse fires on a categorical policy's entropy below the threshold, or below
// entropyCollapseShare of its reference maximum (Engine.maxEntropy): a policy over thousands of actions
// (a maximum of 7.5) that sits at 0.03 is as deterministic as a two-action one at 0.01.
func checkEntropyCollapse(e *Engine, r metrics.Record, th float64) check {
	v, ok := r.Values[metrics.Entropy]
	if !ok || e.sawStd {
		return check{}
	}
	if e.maxEntropy > 0 {
		th = max(th, entropyCollapseShare*e.maxEntropy)
	}
	return check{ok: true, fired: v < th, metric: metrics.Entropy, value: v, limit: th}
}

// entropyCollapseShare is the share of its maximum below which entropy_collapse counts a categorical
// policy's entropy as collapsed, whatever the threshold.
const entropyCollapseShare = 0.01

func checkKLSpike(e *Engine, r metrics.Record, th float64) check {
	if e.targetKL > 0 && !e.klThresholdSet {
		th = 10 * e.targetKL
	}
	return above(metrics.ApproxKL)(e, r, th)
}

// checkPolicyCollapse fires in two cases, unless the episodes lengthened and the return per step improved
// (progress.lengthened: the return of a legged robot that learns to stay up falls before it rises):
//   - the objective held an improvement on its starting level (its windowed mean above the start by the
//     threshold fraction of |start|, by the start's own spread and by three times its noise, for
//     sustainedImprovement records), and its windowed mean is back below that starting level;
//   - right after repeated KL spikes (two within klSpikeWindow records), its windowed mean sits below the
//     start by max(2 × noise, 20 % of |start|): the policy jumped to something worse than where it started
//     (a Pendulum run whose KL spikes to 2–7 and whose return falls below the random policy's).
//
// It judges only records that carry the objective.
func checkPolicyCollapse(e *Engine, r metrics.Record, _ float64) check {
	v, ok := r.Values[e.objective]
	p := &e.prog
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) || !p.ready() {
		return check{}
	}
	if e.nearUniform() {
		return check{ok: true}
	}
	fell := p.improved(sustainedImprovement) && p.recent() < p.start()-p.noise()
	lost := p.trackLost(&p.long, collapseShare, 3) && !p.doingWellAny()
	if lost {
		e.lostHeld++
	} else {
		e.lostHeld = 0
	}
	// A loss of the gain counts once it has held for a whole long window: its evidence is then a mean
	// of records that all came after the fall, not a dip the window straddles.
	lost = lost && e.lostHeld >= longWindow
	jumped := e.recentKLSpikes() >= 2 && p.recent() < p.start()-max(2*p.noise(), 0.2*math.Abs(p.start()))
	if p.repeated && lost && !fell && !jumped {
		// A repeated value is a stale logging buffer, no new level: the loss of gain neither extends
		// nor breaks the streak on it.
		return check{}
	}
	fired := (fell || lost || jumped) && !p.lengthened()
	return check{ok: true, fired: fired, metric: e.objective, value: p.raw(p.recent()), limit: p.raw(p.start())}
}

// checkNeverLearned fires on a Gaussian policy whose action std, still rising, has grown to factor × its
// initial value while the objective never improved or gave back more than half of what it gained: the
// noise is running away with no reward to anchor it (legged_gym's most common failed run:
// Policy/mean_noise_std climbing steadily from 1.0 to 2.5 with the reward pinned near 0). A std that
// rose early and turns back down as the reward takes off is not judged, nor a return that fell because
// the episodes lengthened (progress.lengthened).
func checkNeverLearned(e *Engine, _ metrics.Record, factor float64) check {
	v := e.cur.std
	if !e.cur.stdOK {
		return check{}
	}
	if !(e.initialStd > 0) || !e.prog.ready() || e.stdTrend.n <= stdTrendLag {
		return check{}
	}
	limit := factor * e.initialStd
	fired := v >= limit && e.stdRising && !e.prog.holdsGain() && !e.prog.creeping() && !e.prog.lengthened()
	return check{ok: true, fired: fired, metric: metrics.ActionStd, value: v, limit: limit}
}

// stdTrendLag is how many std records back never_learned looks to tell a std still rising.
const stdTrendLag = 10

// lagRing remembers the last stdTrendLag values of a metric.
type lagRing struct {
	vals [stdTrendLag]float64
	n    int
}

// push adds v and returns the value stdTrendLag records before it, and whether there was one.
func (l *lagRing) push(v float64) (float64, bool) {
	i := l.n % stdTrendLag
	old, had := l.vals[i], l.n >= stdTrendLag
	l.vals[i] = v
	l.n++
	return old, had
}

// checkValueAnticorrelated fires on explained variance below the threshold, where it means something:
// not when the returns barely vary (a solved task's constant return leaves nothing to explain, and EV is
// noise) nor when the value loss has fallen below a thousandth of its largest value (the value function
// has converged on returns that hardly vary).
func checkValueAnticorrelated(e *Engine, r metrics.Record, th float64) check {
	c := below(metrics.ExplainedVariance)(e, r, th)
	if !c.ok {
		return c
	}
	// Reported, and no evidence: the streak starts over.
	if e.prog.barelyVaries() {
		return check{ok: true}
	}
	if vl, ok := r.Values[metrics.ValueLoss]; ok && e.vlMax > 0 && vl <= 1e-3*e.vlMax {
		return check{ok: true}
	}
	return c
}

func checkValueLossBlowup(e *Engine, r metrics.Record, factor float64) check {
	v, ok := r.Values[metrics.ValueLoss]
	if !ok || !e.vlRefDone || e.vlRef0 <= 0 {
		return check{}
	}
	limit := factor * e.vlRef0
	return check{ok: true, fired: v > limit, metric: metrics.ValueLoss, value: v, limit: limit}
}

// mean returns the mean of the values the ring holds (the last stdTrendLag, fewer early on); NaN when empty.
func (l *lagRing) mean() float64 {
	k := min(l.n, stdTrendLag)
	if k == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range l.vals[:k] {
		s += v
	}
	return s / float64(k)
}

// collapseShare is the share of its best gain whose loss policy_collapse counts as a collapse even when
// the objective stays above its start (a return whose start is the task's floor cannot fall below it).
const collapseShare = 0.9

// entropyWindow is how many of the run's first entropies make up its reference maximum (when the number
// of actions is not known): the largest of them.
const entropyWindow = 5

// checkPartialCollapse fires once the objective's long mean lost at least the threshold share of its
// best long gain (progress.trackLost, by more than one standard error of a long mean) and has stayed down
// for a third of the objective's records so far (at least longWindow of them), unless it is climbing back
// (longTrack.rising), the run is doing well by either track, or the fall is explained by longer
// episodes. It judges only records that carry the objective.
func checkPartialCollapse(e *Engine, _ metrics.Record, share float64) check {
	p := &e.prog
	if !e.cur.objectiveOK || !p.ready() {
		return check{}
	}
	if e.nearUniform() {
		return check{ok: true}
	}
	lost := p.trackLost(&p.long, share, 1) && !p.doingWellAny() && !p.lengthened()
	if lost {
		e.partialHeld++
	} else {
		e.partialHeld = 0
	}
	fired := lost && e.partialHeld >= max(longWindow, p.n/3) && !p.long.rising(p.noise())
	limit := p.floor(&p.long) + (1-share)*p.trackGain(&p.long)
	return check{ok: true, fired: fired, metric: e.objective, value: p.raw(p.long.recent()), limit: p.raw(limit)}
}

// nearUniform says whether a categorical policy (Config.Actions set) still has a windowed entropy of at
// least nearUniformShare of its maximum, log(actions): a policy that has committed to nothing yet. What
// such a policy's objective gained and gave back is the luck of near-random episodes, not learning lost,
// and neither policy_collapse nor partial_collapse judges it. (A recorded Acrobot-v1 run rose from −500
// to −389 on its first lucky episodes at 98% of log 3, fell back to −498 at 88%, and went on to learn to
// −95.) A Gaussian policy is not judged near uniform: its mean can learn while its entropy stays where
// it started, and its entropy rising is itself a sign of collapse.
func (e *Engine) nearUniform() bool {
	return e.categorical && e.cur.entropyOK && e.entropyLast.n >= stdTrendLag &&
		e.entropyLast.mean() >= nearUniformShare*e.maxEntropy
}

// nearUniformShare is the share of its maximum at or above which a policy's entropy counts as near
// uniform (nearUniform).
const nearUniformShare = 0.85

// checkNeverLearnedEntropy fires on a policy whose entropy stays near its maximum — its windowed mean
// at least the threshold share of log(Config.Actions), or of the largest of its first entropies when the
// number of actions is not known (a fresh policy starts near uniform) — while the objective never
// improved (progress.everImproved), once the run is three fifths through its total steps (when known): a
// sparse-reward task can sit flat for a while before its first success (an SB3 run flat for 60 % of
// its steps, an rl_games AllegroHand run flat at −13 for 60 % of its 47 epochs, both of which then
// climb; at half the run the second was stopped). A Gaussian policy whose entropy is negative is not judged (a share of a negative maximum
// means nothing); one with a positive entropy is, like a categorical one.
func checkNeverLearnedEntropy(e *Engine, r metrics.Record, share float64) check {
	p := &e.prog
	if !e.cur.entropyOK || !(e.maxEntropy > 0) || !p.ready() || e.entropyLast.n < stdTrendLag {
		return check{}
	}
	if e.totalSteps > 0 && r.Step < 3*e.totalSteps/5 {
		return check{}
	}
	limit := share * e.maxEntropy
	now := e.entropyLast.mean()
	fired := now >= limit && !p.everImproved()
	return check{ok: true, fired: fired, metric: metrics.Entropy, value: now, limit: limit}
}

// checkStdRunaway fires on a Gaussian policy whose action std, still rising (above its value
// stdTrendLag std records before), has grown to the threshold factor of its initial value, unless the
// episodes lengthened. It does not judge the objective itself: like the other such rules it stops only
// a run that is not doing well (Engine.mayStop), here by neither track (rule.longView): one that improved
// early and has given back more than a quarter of its gain. never_learned judges a std that grows with
// less than half of the gain held, from 1.5-fold; std_explosion any std at 10-fold.
func checkStdRunaway(e *Engine, _ metrics.Record, factor float64) check {
	v := e.cur.std
	if !e.cur.stdOK || !(e.initialStd > 0) || e.stdTrend.n <= stdTrendLag {
		return check{}
	}
	limit := factor * e.initialStd
	fired := v >= limit && e.stdRising && !e.prog.lengthened()
	return check{ok: true, fired: fired, metric: metrics.ActionStd, value: v, limit: limit}
}

// checkZeroReturn fires on a maximised objective whose every finite value so far, over at least
// progressWindow records, has a magnitude of at most the threshold (1e-9: numerically zero; an rl_games
// run whose mean return sat at 3e-12 to 2.5e-11 for 149 epochs), once the run is half through its total
// steps (when known): a sparse task may take a while to its first success. A minimised objective at zero
// is at its best and is not judged.
func checkZeroReturn(e *Engine, r metrics.Record, th float64) check {
	if !e.cur.objectiveOK || e.minimize || !e.prog.ready() {
		return check{}
	}
	if e.totalSteps > 0 && r.Step < e.totalSteps/2 {
		return check{}
	}
	return check{ok: true, fired: e.objectiveMaxAbs <= th, metric: e.objective, value: e.cur.objective, limit: th}
}
