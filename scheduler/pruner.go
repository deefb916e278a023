package scheduler

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Pruner is the decision core of asha, median and hyperband, pure and deterministic: it is told
// which seeds of which configuration started and ended, and each seed's windowed objective at each
// decision step it reaches, and says, per configuration and decision step, whether the configuration
// goes on. The Sweep workflow drives it through the pruning Scheduler; a replay over recorded curves
// drives it directly (Replay).
//
// A configuration is judged as a whole: its value at a step is the IQM over its seeds' windowed
// values there (diagnostics.IQM), decided once every seed of it that is running has arrived at the
// step (a seed that ended, or has not started, is not waited for), and the decision holds for all
// its seeds, a seed arriving later included. Past the first decision step a configuration below the
// cutoff goes on while its value lies within its seeds' noise of the cutoff (withinSeedNoise) and,
// under asha, it ranks among the first 2·keep + 1 of the configurations at the step (keep: how many
// asha keeps there): configurations differ by less than one seed from another for much of training,
// and a stop is final, but the guard spares at most keep + 1 more than asha keeps. At the first
// decision step its value is judged alone. A configuration with a diverged seed is never promoted
// (StopDivergedConfigs): its seeds stop at their next decision step, as diverged.
type Pruner struct {
	cfg PrunerConfig
	st  PrunerState
}

// PrunerConfig is what a pruner decides by.
type PrunerConfig struct {
	// Rule is asha (hyperband maps onto it) or median.
	Rule string
	// Steps are the decision steps, ascending (sweeps.Spec.DecisionSteps).
	Steps []int64
	// Eta (asha): a configuration goes on from a step only in the top 1/Eta of those that reached it.
	Eta int
	// At a step reached by n configurations so far (this one included), asha keeps the top
	// max(1, ⌊n/Eta⌋): the top 1/Eta, and while fewer than Eta have arrived only the best so far.
	// Strict (asha from hyperband's strict) keeps W&B's band threshold instead, the top ⌊n/Eta⌋+1.
	Strict bool
	// MinTrials (median): how many other configurations must have a value at the step.
	MinTrials int
	// Minimize: lower values are better.
	Minimize bool
	// StopDivergedConfigs: a configuration with a diverged seed is stopped.
	StopDivergedConfigs bool
	// Seeds is how many seeds each configuration runs. A configuration judged as its seeds pass a step
	// (Pass) waits for the seeds that have not started yet too: none of its seeds is paused meanwhile,
	// and a decision on the first seed alone would lose the seed guard. 0: only running seeds are
	// waited for.
	Seeds int
	// Objectives (asha only): the sweep's objectives when it has several (sweeps.Spec.Objectives); a
	// configuration is then judged on its vector of them at each step (rungVector). Empty: on the
	// logged objective alone. GPUs scales gpu_seconds (resources.gpus).
	Objectives []sweeps.Objective `json:",omitempty"`
	GPUs       float64            `json:",omitempty"`
}

// multi says whether configurations are judged on several objectives.
func (c PrunerConfig) multi() bool { return len(c.Objectives) > 1 }

// Progress is what a seed's derived objectives read at a decision step, for asha with several
// objectives: the step its windowed objective first reached the env_steps objective's target (0: not
// by then) and its training wall seconds so far (its segments' time).
type Progress struct {
	TargetStep int64   `json:"target_step,omitempty"`
	Seconds    float64 `json:"seconds,omitempty"`
}

// PrunerState is a pruner's whole memory: per configuration that started, its seeds started and
// ended and one value per decision step it reached, so its size is bounded by configurations ×
// decision steps (sweeps.MaxPrunerValues) plus the seeds. Values are stored oriented (larger is
// better) and finite: a missing or non-finite value is the worst there is.
type PrunerState struct {
	Configs map[string]*ConfigRecord `json:"configs,omitempty"`
}

// ConfigRecord is one configuration's part of PrunerState.
type ConfigRecord struct {
	Started  []int64 `json:"started,omitempty"`
	Ended    []int64 `json:"ended,omitempty"`
	Diverged bool    `json:"diverged,omitempty"`
	// Values[k]: the configuration's value at decision step k; decided for every k it holds.
	Values []float64 `json:"values,omitempty"`
	// Stopped: the configuration was stopped at its last value's step, against Cutoff.
	Stopped bool     `json:"stopped,omitempty"`
	Cutoff  *float64 `json:"cutoff,omitempty"`
	Peers   int      `json:"peers,omitempty"`
	// Pending: the seeds' values at the next decision step (len(Values)), until every running seed
	// has one; keyed by the seed in decimal.
	Pending map[string]float64 `json:"pending,omitempty"`
	// Spared: the decision steps at which the configuration's IQM was below the cutoff and it went on
	// because its seeds could not tell it from the cutoff (withinSeedNoise), ranked close enough to it.
	Spared []int `json:"spared,omitempty"`
	// Ahead: values of seeds that passed a decision step beyond the next one (Pass) while the
	// configuration was still undecided at an earlier one, keyed by the step's index and then the seed,
	// both in decimal; taken into Pending once the steps before are decided.
	Ahead map[string]map[string]float64 `json:"ahead,omitempty"`
	// Passing: a seed of it was judged as it passed a step (Pass); only such a configuration is
	// settled when a seed ends (Settle).
	Passing bool `json:"passing,omitempty"`
	// With several objectives: the seeds' Progress beside Pending and Ahead, keyed alike; the
	// configuration's objective vector at each decision step it reached, in the objectives' units
	// (never reaching a target is +Inf); the seeds that ended failed (seed_failure_rate); and, when it
	// was stopped, its non-dominated rank among the configurations at the step.
	PendingProgress map[string]Progress            `json:"pending_progress,omitempty"`
	AheadProgress   map[string]map[string]Progress `json:"ahead_progress,omitempty"`
	Vectors         []results.Floats               `json:"vectors,omitempty"`
	Failed          []int64                        `json:"failed,omitempty"`
	Rank            int                            `json:"rank,omitempty"`
}

// Verdict is a pruner's answer for one configuration at one decision step.
type Verdict struct {
	// Decided: false while the configuration waits for a running seed to reach the step.
	Decided  bool
	Continue bool
	// Diverged: stopped because a seed of the configuration diverged.
	Diverged bool
	Rung     int   // index of the decision step
	Step     int64 // the decision step
	// Value is the configuration's value there (IQM over its seeds), as the metric reads (not
	// oriented); Cutoff the value it had to reach to go on, nil when none applied (too few peers);
	// Peers the other configurations it was compared with.
	Value  float64
	Cutoff *float64
	Peers  int
	Reason string
	// Vector and Rank (several objectives): the configuration's objective vector at the step, and,
	// when it was stopped there, its non-dominated rank among the configurations at the step.
	Vector []float64
	Rank   int
}

// NewPruner returns a pruner resumed from st (the zero PrunerState for a new sweep).
func NewPruner(cfg PrunerConfig, st PrunerState) (*Pruner, error) {
	switch cfg.Rule {
	case "asha":
		if cfg.Eta < 2 {
			return nil, fmt.Errorf("pruner: eta %d, want at least 2", cfg.Eta)
		}
	case "median":
		if cfg.MinTrials < 1 {
			return nil, fmt.Errorf("pruner: min_trials %d, want at least 1", cfg.MinTrials)
		}
		if cfg.multi() {
			return nil, fmt.Errorf("pruner: median with %d objectives, want asha (a median of vectors is not defined)", len(cfg.Objectives))
		}
	default:
		return nil, fmt.Errorf("pruner: rule %q, want asha or median", cfg.Rule)
	}
	if st.Configs == nil {
		st.Configs = map[string]*ConfigRecord{}
	}
	return &Pruner{cfg: cfg, st: st}, nil
}

// State returns the pruner's state, for a continue-as-new.
func (p *Pruner) State() PrunerState { return p.st }

// StepIndex returns the index of step among the decision steps; false when it is not one.
func (p *Pruner) StepIndex(step int64) (int, bool) {
	return slices.BinarySearch(p.cfg.Steps, step)
}

func (p *Pruner) rec(config int) *ConfigRecord {
	k := strconv.Itoa(config)
	r := p.st.Configs[k]
	if r == nil {
		r = &ConfigRecord{}
		p.st.Configs[k] = r
	}
	return r
}

// Started records that a seed of config started.
func (p *Pruner) Started(config int, seed int64) {
	r := p.rec(config)
	if !slices.Contains(r.Started, seed) {
		r.Started = append(r.Started, seed)
	}
}

// Ended records that a seed of config ended, diverged or not: no decision waits for it any longer.
func (p *Pruner) Ended(config int, seed int64, diverged bool) {
	r := p.rec(config)
	if !slices.Contains(r.Ended, seed) {
		r.Ended = append(r.Ended, seed)
	}
	r.Diverged = r.Diverged || diverged
}

// Failed records that a seed of config ended counting for seed_failure_rate (results.FailedSeed:
// diverged itself, failed, out of memory, or collapsed by its end); with several objectives the
// configuration's failure share at its next decision steps counts it.
func (p *Pruner) Failed(config int, seed int64) {
	if !p.cfg.multi() {
		return
	}
	r := p.rec(config)
	if !slices.Contains(r.Failed, seed) {
		r.Failed = append(r.Failed, seed)
	}
}

// orient maps a metric value to the pruner's larger-is-better scale, finite.
func (p *Pruner) orient(v float64) float64 {
	if p.cfg.Minimize {
		v = -v
	}
	if math.IsNaN(v) || math.IsInf(v, -1) {
		return -math.MaxFloat64
	}
	if math.IsInf(v, 1) {
		return math.MaxFloat64
	}
	return v
}

func (p *Pruner) unorient(v float64) float64 {
	if p.cfg.Minimize {
		return -v
	}
	return v
}

// Arrive records seed's windowed value (nil: it has none) at decision step k and returns the
// configuration's verdict there, undecided while another running seed of it has not arrived.
// Asking again for the same seed and step is answered the same way.
func (p *Pruner) Arrive(config int, seed int64, k int, value *float64) Verdict {
	return p.ArriveWith(config, seed, k, value, Progress{})
}

// ArriveWith is Arrive with the seed's Progress at the step, which a sweep of several objectives
// judges on.
func (p *Pruner) ArriveWith(config int, seed int64, k int, value *float64, prog Progress) Verdict {
	r := p.rec(config)
	if k < 0 || k >= len(p.cfg.Steps) {
		return Verdict{Decided: true, Continue: true, Rung: k}
	}
	if k < len(r.Values) {
		return p.recorded(r, k)
	}
	if r.Diverged && p.cfg.StopDivergedConfigs {
		return Verdict{Decided: true, Diverged: true, Rung: k, Step: p.cfg.Steps[k],
			Reason: fmt.Sprintf("a seed of configuration %d diverged: the configuration is infeasible, its other seeds stop", config)}
	}
	if r.Stopped || k > len(r.Values) {
		// A step skipped (not asked at): the configuration is not held up for it.
		return Verdict{Decided: true, Continue: !r.Stopped, Rung: k, Step: p.cfg.Steps[k]}
	}
	v := -math.MaxFloat64
	if value != nil {
		v = p.orient(*value)
	}
	p.pend(r, seed, v, prog)
	return p.tryDecide(config, r)
}

// pend holds seed's value (oriented) and progress at the configuration's next decision step.
func (p *Pruner) pend(r *ConfigRecord, seed int64, v float64, prog Progress) {
	key := strconv.FormatInt(seed, 10)
	if r.Pending == nil {
		r.Pending = map[string]float64{}
	}
	r.Pending[key] = v
	if p.cfg.multi() {
		if r.PendingProgress == nil {
			r.PendingProgress = map[string]Progress{}
		}
		r.PendingProgress[key] = prog
	}
}

// Pass records seed's windowed value (nil: it has none) as its metric stream passed decision step k
// without stopping there (prune mode stop: its trainer cannot wait for its siblings), and returns the
// configuration's verdict at k. The value is judged exactly as an Arrive would judge it: the
// configuration is decided at k once every running seed of it has passed k (or ended), on the IQM
// over their values and the seed guard; until then the seed goes on training. A seed that passes a
// step beyond the configuration's next undecided one is remembered there (Ahead) and counted once
// the steps before are decided. Whether the configuration has been stopped by this call, at k or at a
// later step its seeds had all passed already, is Stopped's to say.
func (p *Pruner) Pass(config int, seed int64, k int, value *float64) Verdict {
	return p.PassWith(config, seed, k, value, Progress{})
}

// PassWith is Pass with the seed's Progress at the step, which a sweep of several objectives judges
// on.
func (p *Pruner) PassWith(config int, seed int64, k int, value *float64, prog Progress) Verdict {
	r := p.rec(config)
	if k < 0 || k >= len(p.cfg.Steps) {
		return Verdict{Decided: true, Continue: true, Rung: k}
	}
	if k < len(r.Values) {
		return p.recorded(r, k)
	}
	if r.Diverged && p.cfg.StopDivergedConfigs {
		return p.ArriveWith(config, seed, k, value, prog)
	}
	if r.Stopped {
		return p.recorded(r, len(r.Values)-1)
	}
	r.Passing = true
	v := -math.MaxFloat64
	if value != nil {
		v = p.orient(*value)
	}
	if k > len(r.Values) {
		if r.Ahead == nil {
			r.Ahead = map[string]map[string]float64{}
		}
		key := strconv.Itoa(k)
		if r.Ahead[key] == nil {
			r.Ahead[key] = map[string]float64{}
		}
		r.Ahead[key][strconv.FormatInt(seed, 10)] = v
		if p.cfg.multi() {
			if r.AheadProgress == nil {
				r.AheadProgress = map[string]map[string]Progress{}
			}
			if r.AheadProgress[key] == nil {
				r.AheadProgress[key] = map[string]Progress{}
			}
			r.AheadProgress[key][strconv.FormatInt(seed, 10)] = prog
		}
		return Verdict{Rung: k, Step: p.cfg.Steps[k]}
	}
	p.pend(r, seed, v, prog)
	if !p.allStarted(r) {
		return Verdict{Rung: k, Step: p.cfg.Steps[k]}
	}
	out := p.tryDecide(config, r)
	p.settle(config, r)
	return out
}

// allStarted says whether every seed of the configuration has started (PrunerConfig.Seeds).
func (p *Pruner) allStarted(r *ConfigRecord) bool { return len(r.Started) >= p.cfg.Seeds }

// Settle decides what config's seeds have all passed now that one of its seeds ended (Ended): a
// configuration whose other seeds passed a step in stop mode waited for that seed.
func (p *Pruner) Settle(config int) {
	r := p.rec(config)
	if !r.Passing {
		return // a configuration judged at boundaries only: its held questions are asked again
	}
	if len(r.Pending) > 0 && !r.Stopped && p.allStarted(r) {
		p.tryDecide(config, r)
	}
	p.settle(config, r)
}

// settle carries a configuration decided at a step on to the steps its seeds have passed already
// (Ahead), deciding each that every running seed has passed.
func (p *Pruner) settle(config int, r *ConfigRecord) {
	for len(r.Pending) == 0 && !r.Stopped && len(r.Ahead) > 0 {
		key := strconv.Itoa(len(r.Values))
		next, ok := r.Ahead[key]
		if !ok || len(r.Values) >= len(p.cfg.Steps) {
			return
		}
		delete(r.Ahead, key)
		if len(r.Ahead) == 0 {
			r.Ahead = nil
		}
		r.Pending = next
		if r.AheadProgress != nil {
			r.PendingProgress = r.AheadProgress[key]
			delete(r.AheadProgress, key)
			if len(r.AheadProgress) == 0 {
				r.AheadProgress = nil
			}
		}
		if !p.allStarted(r) {
			return
		}
		if v := p.tryDecide(config, r); !v.Decided {
			return
		}
	}
	if r.Stopped {
		r.Ahead, r.AheadProgress = nil, nil
	}
}

// Stopped reports whether config has been stopped, and the verdict that stopped it.
func (p *Pruner) Stopped(config int) (Verdict, bool) {
	r := p.rec(config)
	if !r.Stopped || len(r.Values) == 0 {
		return Verdict{}, false
	}
	return p.recorded(r, len(r.Values)-1), true
}

// recorded is the verdict decided at step k.
func (p *Pruner) recorded(r *ConfigRecord, k int) Verdict {
	v := Verdict{Decided: true, Continue: true, Rung: k, Step: p.cfg.Steps[k], Value: p.unorient(r.Values[k])}
	if k < len(r.Vectors) {
		v.Vector = slices.Clone([]float64(r.Vectors[k]))
	}
	if r.Stopped && k == len(r.Values)-1 {
		v.Continue, v.Peers, v.Rank = false, r.Peers, r.Rank
		if r.Cutoff != nil {
			c := p.unorient(*r.Cutoff)
			v.Cutoff = &c
		}
		v.Reason = p.reason(v)
	}
	return v
}

func (p *Pruner) tryDecide(config int, r *ConfigRecord) Verdict {
	k := len(r.Values)
	for _, s := range r.Started {
		if !slices.Contains(r.Ended, s) {
			if _, ok := r.Pending[strconv.FormatInt(s, 10)]; !ok {
				return Verdict{Rung: k, Step: p.cfg.Steps[k]}
			}
		}
	}
	seeds := make([]string, 0, len(r.Pending))
	for s := range r.Pending {
		seeds = append(seeds, s)
	}
	sort.Strings(seeds)
	vals := make([]float64, len(seeds))
	for i, s := range seeds {
		vals[i] = r.Pending[s]
	}
	value := diagnostics.IQM(vals)
	if math.IsNaN(value) || math.IsInf(value, 0) {
		value = -math.MaxFloat64
	}
	if p.cfg.multi() {
		return p.decideFront(config, r, k, seeds, vals, value)
	}
	var peers []float64
	for key, o := range p.st.Configs {
		if key != strconv.Itoa(config) && len(o.Values) > k {
			peers = append(peers, o.Values[k])
		}
	}
	slices.Sort(peers)
	stop, cutoff, spareRank := p.judge(value, peers)
	if stop && k > 0 && (spareRank == 0 || rank(value, peers) <= spareRank) && withinSeedNoise(vals, value, *cutoff) {
		// Its seeds cannot tell it from the cutoff: its IQM may be below it by their noise alone.
		stop, r.Spared = false, append(r.Spared, k)
	}
	r.Values = append(r.Values, value)
	r.Pending = nil
	if stop {
		r.Stopped, r.Cutoff, r.Peers = true, cutoff, len(peers)
	}
	return p.recorded(r, k)
}

// seedNoiseLevel is the one-sided level of the seed guard's test: a configuration is stopped only when
// its value is below the cutoff by more than its seeds' noise at this level.
const seedNoiseLevel = 0.95

// withinSeedNoise says whether a configuration's value (oriented, the IQM over its seeds' values
// vals) lies within its seeds' noise of the cutoff: value + t·s/√n ≥ cutoff, with s the seeds'
// standard deviation and t Student's one-sided 95% quantile on n−1 degrees of freedom, the
// one-sample t-test that the configuration's mean is below the cutoff failing at 5%. With one seed, or
// a seed without a value (the worst there is), the value is judged alone.
func withinSeedNoise(vals []float64, value, cutoff float64) bool {
	margin, ok := seedMargin(vals)
	return ok && value+margin >= cutoff
}

// seedMargin is the seed guard's margin t·s/√n over the seeds' values vals (withinSeedNoise); false
// with one seed, or a seed without a value.
func seedMargin(vals []float64) (float64, bool) {
	if len(vals) == 0 || slices.Min(vals) == -math.MaxFloat64 {
		return 0, false
	}
	return diagnostics.MeanMargin(vals, seedNoiseLevel)
}

// rank is the place of value (oriented) among its peers' values at the same step and itself: 1 for
// the best, ties with it sharing its place.
func rank(value float64, peers []float64) int {
	r := 1
	for _, o := range peers {
		if o > value {
			r++
		}
	}
	return r
}

// judge says whether value (oriented) is stopped against its peers' values (oriented, ascending)
// at the same step, the cutoff it had to reach, and the worst place among the n configurations at
// the step (itself included) from which the seed guard may spare it, 0 for any place. Asha keeps the
// top keep and the guard spares at most the next keep + 1, placing 2·keep + 1 at most; the median
// rule's guard is not bounded by place (twice the configurations above the median is all of them).
func (p *Pruner) judge(value float64, peers []float64) (bool, *float64, int) {
	switch p.cfg.Rule {
	case "median":
		if len(peers) < p.cfg.MinTrials {
			return false, nil, 0
		}
		m := median(peers)
		return value < m, &m, 0
	default: // asha
		all := slices.Concat(peers, []float64{value})
		slices.SortFunc(all, func(a, b float64) int { return -cmp.Compare(a, b) }) // best first
		n := len(all)
		keep := n / p.cfg.Eta
		if p.cfg.Strict {
			keep++
		} else {
			keep = max(keep, 1) // fewer than eta so far: the best so far goes on, the rest stop
		}
		if keep >= n {
			return false, nil, 0
		}
		cut := all[keep-1] // the worst value kept
		return value < cut, &cut, 2*keep + 1
	}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func (p *Pruner) reason(v Verdict) string {
	if p.cfg.multi() {
		return fmt.Sprintf("asha rung %d (step %d): %s is off the front of the %d configurations at the step, at non-dominated rank %d, and not in the top 1/%d by rank and crowding",
			v.Rung, v.Step, p.describeVector(v.Vector), v.Peers+1, v.Rank, p.cfg.Eta)
	}
	if v.Cutoff == nil {
		return fmt.Sprintf("%s at step %d: value %.6g", p.cfg.Rule, v.Step, v.Value)
	}
	switch p.cfg.Rule {
	case "median":
		return fmt.Sprintf("median at step %d: value %.6g worse than the median %.6g of %d other configurations", v.Step, v.Value, *v.Cutoff, v.Peers)
	}
	return fmt.Sprintf("asha rung %d (step %d): value %.6g worse than the cutoff %.6g of the top 1/%d of %d configurations", v.Rung, v.Step, v.Value, *v.Cutoff, p.cfg.Eta, v.Peers+1)
}

// RungValues lists each configuration's values at the decision steps it reached, as the pruner
// compared them, in configuration order: what the report draws, carried rather than recomputed.
func (st *PrunerState) RungValues() []results.ConfigRungs {
	if st == nil {
		return nil
	}
	var out []results.ConfigRungs
	for k, r := range st.Configs {
		c, err := strconv.Atoi(k)
		if err != nil || r == nil || len(r.Values) == 0 {
			continue
		}
		out = append(out, results.ConfigRungs{Config: c, Values: slices.Clone(results.Floats(r.Values))})
	}
	slices.SortFunc(out, func(a, b results.ConfigRungs) int { return a.Config - b.Config })
	return out
}
