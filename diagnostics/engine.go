package diagnostics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rlsweep/rlsweep/metrics"
)

// DefaultPatience is Config.Patience's default (docs/diagnostics.md).
const DefaultPatience = 5

// DefaultWarmup is Config.WarmupSteps' default for a trial of totalSteps: 10% of it.
func DefaultWarmup(totalSteps int64) int64 { return totalSteps / 10 }

// sustainedImprovement is how many records policy_collapse wants the windowed objective above its
// improvement bar before a fall below the start counts as a collapse: an early lucky window followed by a
// dip is how many healthy runs begin, not a collapse.
const sustainedImprovement = 2 * progressWindow

// vlRefWindow is how many of the run's first value losses make up the reference of value_loss_blowup: their
// smallest.
const vlRefWindow = 10

// relatedWindow is how many records back a rule that fired still counts as related to a verdict.
const relatedWindow = 10

// Config is a sweep's diagnostics settings (the spec's diagnostics: section) plus what the engine
// needs to know about the trial.
type Config struct {
	// WarmupSteps: records with Step < WarmupSteps are in warm-up, where sustained rules are silent.
	// 0 means the default, DefaultWarmup(TotalSteps); a negative value means no warm-up.
	WarmupSteps int64
	// Patience is how many consecutive records after warm-up a sustained rule's condition must hold to
	// stop the run. 0 means DefaultPatience.
	Patience int
	// Rules overrides default rules by name (see RuleNames).
	Rules map[string]RuleConfig
	// TotalSteps is the trial's step budget, for the default warm-up.
	TotalSteps int64
	// TargetKL is the trainer's KL target, if it has one: kl_spike then fires above 10 × TargetKL.
	TargetKL float64
	// Objective is the metric the rules judge a run's health by (policy_collapse and never_learned judge
	// it; the other sustained rules stop only a run whose objective they see and that is not doing well);
	// "" means Reward.
	Objective string
	// Goal is "maximize" (the default when "") or "minimize", as the spec's metric.goal.
	Goal string
	// Actions is a categorical policy's number of actions, when known (0 when not): never_learned_entropy
	// and entropy_collapse then measure the entropy against its maximum, log(Actions), instead of against
	// the largest of its first values.
	Actions int
}

// RuleConfig overrides one rule. Nil fields keep the rule's default.
type RuleConfig struct {
	Threshold *float64 // see DefaultThreshold for what each rule's threshold means
	Level     string   // "off", "warn", "stop"; "" keeps the default
	Patience  *int     // for sustained rules; ≥ 1
}

// activeRule is a rule with the sweep's settings applied and its running state.
type activeRule struct {
	*rule
	level     Level
	threshold float64
	patience  int
	streak    int // consecutive records after warm-up meeting the condition
}

// Engine judges a trial's metric records one at a time, in step order (docs/diagnostics.md). It is not safe
// for concurrent use. An engine is built for one trial: to continue a trial in a new process, replay
// its earlier records through Observe, since several rules judge against the run's own beginning.
type Engine struct {
	rules     []*activeRule
	warmup    int64
	objective string
	minimize  bool
	targetKL  float64

	klThresholdSet bool
	initialStd     float64 // first finite, positive action_std
	sawStd         bool    // some record showed a Gaussian policy (showsGaussian)
	stdTrend       lagRing // recent action_std values, for never_learned and std_runaway
	stdEarlier     float64 // the action_std stdTrendLag std records before this record's
	stdRising      bool    // this record's action_std is finite and above stdEarlier
	totalSteps     int64
	maxEntropy     float64                // log(Config.Actions), or the largest of the first entropyWindow entropies; NaN before
	categorical    bool                   // Config.Actions is set: the policy is categorical, maxEntropy is log(actions)
	entropyFirst   [entropyWindow]float64 // the first entropyWindow finite entropies
	entropyFirstN  int
	entropyLast    lagRing // the last entropies, for their windowed mean
	partialHeld    int     // consecutive objective records on which half the gain was lost
	lostHeld       int     // consecutive objective records on which the long track lost collapseShare of its gain
	// cur holds this record's objective, action_std and entropy, looked up once for the rules that
	// need them (ok: the record carries a finite value).
	cur struct {
		objective, std, entropy       float64
		objectiveOK, stdOK, entropyOK bool
	}
	records       int   // records observed
	klSpikes      []int // the record numbers of the last kl_spike conditions (at most klSpikeMemory)
	prog          progress
	lastObjective float64 // the objective's last finite value, NaN before one
	// objectiveMaxAbs is the largest magnitude of the objective's finite values so far.
	objectiveMaxAbs float64
	vlRef           []float64
	vlRef0          float64 // value_loss_blowup's reference (see vlRefWindow)
	vlRefDone       bool
	vlMax           float64 // the largest finite value loss so far

	// run keeps the objective's values over the whole run, for the rules that judge it once it is over
	// (Finish).
	run runTrack

	recent   [][]string // rules that fired on each of the last relatedWindow records
	warnings []Verdict
	stopped  *Verdict
}

// NewEngine returns an engine with the default rules overridden by cfg. Every invalid setting is
// reported at once, naming the field, the value and what is allowed.
func NewEngine(cfg Config) (*Engine, error) {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	patience := cfg.Patience
	switch {
	case patience == 0:
		patience = DefaultPatience
	case patience < 0:
		bad("diagnostics.patience: got %d, want an integer ≥ 1", patience)
	}
	e := &Engine{objective: cfg.Objective, targetKL: cfg.TargetKL, initialStd: math.NaN(), lastObjective: math.NaN(),
		totalSteps: cfg.TotalSteps, maxEntropy: math.NaN()}
	e.prog.long.w = longWindow
	if e.objective == "" {
		e.objective = metrics.Reward
	}
	switch cfg.Goal {
	case "", "maximize":
	case "minimize":
		e.minimize = true
		e.prog.minimize = true
	default:
		bad("metric.goal: got %q, want \"maximize\" or \"minimize\"", cfg.Goal)
	}
	switch {
	case cfg.Actions < 0 || cfg.Actions == 1:
		bad("actions: got %d, want the categorical policy's number of actions (≥ 2), or 0 when unknown", cfg.Actions)
	case cfg.Actions > 1:
		e.maxEntropy, e.categorical = math.Log(float64(cfg.Actions)), true
	}
	if cfg.TargetKL < 0 || math.IsNaN(cfg.TargetKL) {
		bad("target_kl: got %g, want a number ≥ 0", cfg.TargetKL)
	}
	e.warmup = cfg.WarmupSteps
	if e.warmup == 0 {
		e.warmup = DefaultWarmup(cfg.TotalSteps)
	}
	names := make([]string, 0, len(cfg.Rules))
	for n := range cfg.Rules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !slices.ContainsFunc(rules, func(r rule) bool { return r.name == n }) {
			bad("diagnostics.rules: got %q, want one of %s", n, metrics.QuotedList(RuleNames()[:len(rules)]))
		}
	}
	for i := range rules {
		ar, problems := configure(&rules[i], cfg.Rules[rules[i].name], patience)
		errs = append(errs, problems...)
		if rules[i].name == RuleKLSpike && cfg.Rules[RuleKLSpike].Threshold != nil {
			e.klThresholdSet = true
		}
		if rules[i].name == RulePolicyCollapse {
			e.prog.frac = ar.threshold
		}
		if ar.level != Continue {
			e.rules = append(e.rules, ar)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return e, nil
}

// configure applies one rule's overrides; level Continue marks the rule off.
func configure(r *rule, rc RuleConfig, patience int) (*activeRule, []string) {
	var errs []string
	field := "diagnostics.rules." + r.name
	ar := &activeRule{rule: r, level: r.level, threshold: r.threshold, patience: patience}
	switch rc.Level {
	case "":
	case LevelOff:
		ar.level = Continue
	case LevelWarn:
		ar.level = Warn
	case LevelStop:
		ar.level = Stop
		if r.kind == atEnd {
			errs = append(errs, fmt.Sprintf("%s.level: got %q, want %q or %q (the rule judges a run that is over: there is nothing left to stop)", field, rc.Level, LevelOff, LevelWarn))
		}
	default:
		errs = append(errs, fmt.Sprintf("%s.level: got %q, want one of %s", field, rc.Level, metrics.QuotedList(RuleLevels)))
	}
	if t := rc.Threshold; t != nil {
		switch {
		case r.noLimit:
			errs = append(errs, fmt.Sprintf("%s.threshold: got %g, want none (the rule has no threshold)", field, *t))
		case math.IsNaN(*t) || math.IsInf(*t, 0):
			errs = append(errs, fmt.Sprintf("%s.threshold: got %g, want a finite number", field, *t))
		case r.kind == atEnd && !(*t > 0 && *t <= 1):
			errs = append(errs, fmt.Sprintf("%s.threshold: got %g, want the share of its best gain a run must have lost by its end, in (0, 1]", field, *t))
		default:
			ar.threshold = *t
		}
	}
	if p := rc.Patience; p != nil {
		if r.kind == atEnd {
			errs = append(errs, fmt.Sprintf("%s.patience: got %d, want none (the rule judges the whole run once, when it is over)", field, *p))
		} else if *p < 1 {
			errs = append(errs, fmt.Sprintf("%s.patience: got %d, want an integer ≥ 1", field, *p))
		} else {
			ar.patience = *p
		}
	}
	return ar, errs
}

// WarmupSteps returns the warm-up in effect: records with a lower step are in warm-up.
func (e *Engine) WarmupSteps() int64 { return e.warmup }

// Observe judges one record and returns the most severe verdict among the rules it fires (Continue
// when none does). Records must come in step order. Rules that stop at once (non_finite,
// std_nonpositive, grad_explosion) ignore warm-up; sustained rules are silent during warm-up, warn on
// each record that meets their condition after it, and stop once it held for patience consecutive
// records carrying their metric (a record without the metric neither extends nor breaks the streak).
// A sustained rule that does not judge the objective itself only warns while the run is doing well
// (its windowed objective holds most of its best gain): a run near its best return is not diverging.
func (e *Engine) Observe(r metrics.Record) Verdict {
	inWarmup := r.Step < e.warmup
	// A Gaussian policy is known from its first record, before entropy_collapse judges that record.
	e.sawStd = e.sawStd || showsGaussian(r)
	// The objective's level counts from this record on: a rule judges the run as it stands now.
	e.cur.objectiveOK = false
	if v, ok := r.Values[e.objective]; ok {
		e.cur.objective, e.cur.objectiveOK = v, !math.IsNaN(v) && !math.IsInf(v, 0)
		length := math.NaN()
		if l, ok := r.Values[metrics.EpisodeLength]; ok && e.objective == metrics.Reward {
			length = l
		}
		e.prog.add(v, length)
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			e.run.add(e.prog.goal(v), r.Step)
			e.lastObjective = v
			e.objectiveMaxAbs = max(e.objectiveMaxAbs, math.Abs(v))
		}
	}
	e.records++
	e.stdRising = false
	v, ok := r.Values[metrics.ActionStd]
	e.cur.std, e.cur.stdOK = v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
	if e.cur.stdOK {
		var had bool
		e.stdEarlier, had = e.stdTrend.push(v)
		e.stdRising = had && v > e.stdEarlier
	}
	v, ok = r.Values[metrics.Entropy]
	e.cur.entropy, e.cur.entropyOK = v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
	if e.cur.entropyOK {
		e.entropyLast.push(v)
		if e.entropyFirstN < entropyWindow {
			e.entropyFirst[e.entropyFirstN] = v
			e.entropyFirstN++
			if e.entropyFirstN == entropyWindow && math.IsNaN(e.maxEntropy) {
				e.maxEntropy = slices.Max(e.entropyFirst[:])
			}
		}
	}
	var fired []Verdict
	for _, ar := range e.rules {
		if ar.kind == atEnd {
			continue
		}
		c := ar.check(e, r, ar.threshold)
		if ar.name == RuleKLSpike && c.fired {
			e.noteKLSpike()
		}
		if !c.ok {
			continue
		}
		if !c.fired {
			ar.streak = 0
			continue
		}
		level := ar.level
		if ar.kind == sustained {
			if inWarmup {
				continue
			}
			ar.streak++
			if ar.streak < ar.patience || !e.mayStop(ar.rule) {
				level = min(level, Warn)
			}
		}
		fired = append(fired, Verdict{Level: level, Rule: ar.name, Metric: c.metric, Value: c.value,
			Threshold: c.limit, Step: r.Step, Advice: ar.advice})
	}
	e.learn(r)
	return e.decide(fired)
}

// mayStop says whether a sustained rule's stop stands given how the objective is doing: rules that judge
// the objective decide for themselves; the others stop only a run whose objective they can see (without
// it a collapsed entropy cannot be told from a solved task's deterministic policy), never one that is
// doing well (by either track, for a rule with longView), and those that need the objective to have fallen (value_loss_blowup) only once it has, and
// not because its episodes lengthened (a legged robot learning to stay up).
func (e *Engine) mayStop(r *rule) bool {
	if r.judgesObjective {
		return true
	}
	if !e.prog.ready() || e.prog.doingWell() || r.longView && e.prog.doingWellAny() {
		return false
	}
	return !r.needsFall || e.prog.fallen() && !e.prog.lengthened()
}

// showsGaussian says whether a record shows a Gaussian (continuous-action) policy: by its std, or, for
// trainers that log entropy alone (CleanRL's and rl_games' continuous PPO), by an entropy below 0, which
// a categorical policy's cannot be (a Gaussian's differential entropy is negative once σ < 0.24, a
// healthy late-training value). Such a policy's entropy is not judged by entropy_collapse.
func showsGaussian(r metrics.Record) bool {
	_, std := r.Values[metrics.ActionStd]
	_, stdMin := r.Values[metrics.ActionStdMin]
	h, ok := r.Values[metrics.Entropy]
	return std || stdMin || ok && h < 0
}

// learn updates what rules judge against: the initial std and the reference value loss. (The
// objective's progress is updated before the rules judge a record, in Observe.)
func (e *Engine) learn(r metrics.Record) {
	if v, ok := r.Values[metrics.ActionStd]; ok {
		if math.IsNaN(e.initialStd) && v > 0 && !math.IsInf(v, 0) {
			e.initialStd = v
		}
	}
	if v, ok := r.Values[metrics.ValueLoss]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
		e.vlMax = max(e.vlMax, v)
		// The reference is the smallest of the run's first value losses, warm-up included: a value loss
		// that blows up from the first iterations (23 → 943 by the tenth, 9.4e4 by the 96th) must not
		// become its own reference.
		// value_loss_blowup stops only once the objective has fallen, so value losses that grow with
		// healthy returns only warn.
		if !e.vlRefDone {
			e.vlRef = append(e.vlRef, v)
			if len(e.vlRef) == vlRefWindow {
				// A value function that has already converged on near-constant returns has a median near
				// zero, and any later wobble would be "100 ×" it: the reference is at least 1 % of the
				// largest value loss seen until then.
				e.vlRef0 = max(slices.Min(e.vlRef), 0.01*e.vlMax)
				e.vlRefDone = true
			}
		}
	}
}

// decide picks the verdict to return, remembers warnings and the first stop, and names related rules.
func (e *Engine) decide(fired []Verdict) Verdict {
	var names []string
	for _, v := range fired {
		names = append(names, v.Rule)
	}
	best := Verdict{Level: Continue}
	for i := range fired {
		fired[i].Objective, fired[i].ObjectiveValue = e.objective, e.objectiveNow()
	}
	for _, v := range fired {
		if v.Level > best.Level {
			best = v
		}
		if v.Level == Warn {
			e.warn(v)
		}
	}
	if best.Level != Continue {
		best.Related = e.related(best.Rule, names)
	}
	if len(e.recent) == relatedWindow {
		e.recent = e.recent[1:]
	}
	e.recent = append(e.recent, names)
	if best.Level == Stop && e.stopped == nil {
		s := best
		e.stopped = &s
	}
	return best
}

func (e *Engine) warn(v Verdict) {
	for _, w := range e.warnings {
		if w.Rule == v.Rule {
			return
		}
	}
	e.warnings = append(e.warnings, v)
}

// related lists the other rules that fired on this record or within the last relatedWindow records,
// most recent first.
func (e *Engine) related(rule string, now []string) []string {
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if n != rule && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	add(now)
	for i := len(e.recent) - 1; i >= 0; i-- {
		add(e.recent[i])
	}
	return out
}

// klSpikeMemory is how many kl_spike records the engine remembers, and klSpikeWindow how many records
// back they count as recent for policy_collapse.
const (
	klSpikeMemory = 4
	klSpikeWindow = 20
)

func (e *Engine) noteKLSpike() {
	if len(e.klSpikes) == klSpikeMemory {
		e.klSpikes = e.klSpikes[1:]
	}
	e.klSpikes = append(e.klSpikes, e.records)
}

// recentKLSpikes counts kl_spike conditions within the last klSpikeWindow records (this one included).
func (e *Engine) recentKLSpikes() int {
	n := 0
	for _, at := range e.klSpikes {
		if e.records-at < klSpikeWindow {
			n++
		}
	}
	return n
}

// objectiveNow is the objective where the run stands: its windowed mean once there is one, else its
// last value (NaN before any).
func (e *Engine) objectiveNow() float64 {
	if e.prog.ready() {
		return e.prog.raw(e.prog.recent())
	}
	return e.lastObjective
}

// Warnings returns the first warning of each rule that has warned, in the order they first did.
func (e *Engine) Warnings() []Verdict { return slices.Clone(e.warnings) }

// Stopped returns the first stop verdict, if any rule has stopped the run.
func (e *Engine) Stopped() (Verdict, bool) {
	if e.stopped == nil {
		return Verdict{}, false
	}
	return *e.stopped, true
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
