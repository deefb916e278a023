package scheduler

import (
	"fmt"
	"slices"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// pruning is the planned scheduler with early_terminate: trials start in plan order, and at each
// segment end that is a decision step the Pruner says whether the trial's configuration goes on.
type pruning struct {
	planned
	rule   string // as the spec names it: asha, median, hyperband
	ends   []int64
	pruner *Pruner
	// interrupt: the trials Finished found to stop now (Interrupt), not carried across a
	// continue-as-new: a trial not reached in time stops at its next decision step.
	interrupt []Interruption
}

// PrunerConfigOf is the Pruner configuration of a spec with early_terminate (hyperband is asha on
// its rungs).
func PrunerConfigOf(spec *sweeps.Spec) PrunerConfig {
	e := spec.EarlyTerminate
	rule := e.Type
	if rule == sweeps.PrunerHyperband {
		rule = sweeps.PrunerASHA
	}
	cfg := PrunerConfig{Rule: rule, Steps: spec.DecisionSteps(), Eta: e.Eta, Strict: e.Strict, MinTrials: e.MinTrials,
		Minimize: spec.Metric.Goal == "minimize", StopDivergedConfigs: e.StopDivergedConfigs, Seeds: len(spec.Seeds)}
	if spec.MultiObjective() {
		cfg.Objectives, cfg.GPUs = spec.Objectives, spec.Resources.GPUs
	}
	return cfg
}

func newPruning(spec *sweeps.Spec, p *planned, state State) (Scheduler, error) {
	var st PrunerState
	if state.Pruner != nil {
		st = *state.Pruner
	}
	pr, err := NewPruner(PrunerConfigOf(spec), st)
	if err != nil {
		return nil, err
	}
	return &pruning{planned: *p, rule: spec.EarlyTerminate.Type, ends: spec.SegmentEnds(), pruner: pr}, nil
}

func (s *pruning) Next() (sweeps.Trial, bool) {
	t, ok := s.planned.Next()
	if ok {
		s.pruner.Started(t.Config, t.Seed)
	}
	return t, ok
}

func (s *pruning) Finished(sum results.TrialSummary) {
	s.planned.Finished(sum)
	// The summary's trial is in the plan: its configuration and seed are the plan's.
	diverged := sum.Outcome == results.OutcomeDiverged && sum.Pruning == nil
	s.pruner.Ended(sum.Config, sum.Seed, diverged)
	if results.FailedSeed(sum) {
		s.pruner.Failed(sum.Config, sum.Seed)
	}
	if !diverged || !s.pruner.cfg.StopDivergedConfigs {
		// Seeds of its configuration that passed a decision step in stop mode no longer wait for it.
		s.settle(sum.Config)
		return
	}
	// Its configuration is infeasible: its other running seeds stop now, not at their next rung.
	r := s.pruner.rec(sum.Config)
	for _, seed := range r.Started {
		if slices.Contains(r.Ended, seed) {
			continue
		}
		s.interrupt = append(s.interrupt, Interruption{TrialID: sweeps.TrialID(sum.Config, seed), Decision: Decision{
			Segment: -1, Action: Stop, Outcome: results.OutcomeDiverged,
			Reason:  fmt.Sprintf("seed %d of configuration %d diverged: the configuration is infeasible, its other seeds stop", sum.Seed, sum.Config),
			Pruning: &results.Pruning{Rule: s.rule, Rung: -1, SiblingDiverged: true}}})
	}
}

// Passed takes in a trial whose metric stream passed a decision point inside a segment (Passer). When
// that decides its configuration stopped, every running seed of it is stopped (Interrupt), the one that
// passed included: in stop mode none of them waits at the point.
func (s *pruning) Passed(p Pass) {
	k, ok := s.pruner.StepIndex(p.Point)
	if !ok {
		return
	}
	_, before := s.pruner.Stopped(p.Config)
	v := s.pruner.PassWith(p.Config, p.Seed, k, p.Windowed, Progress{TargetStep: p.TargetStep, Seconds: p.Seconds})
	if _, now := s.pruner.Stopped(p.Config); now && !before {
		s.stopIfDecided(p.Config)
		return
	}
	if v.Decided && !v.Continue {
		// A seed that started after its configuration was stopped (or made infeasible) gets the
		// decision where it was made, as a pause-mode seed would at that boundary.
		s.interrupt = append(s.interrupt, Interruption{TrialID: sweeps.TrialID(p.Config, p.Seed), Decision: s.stopDecision(p.Config, v)})
	}
}

// stopDecision is the Stop a verdict that stopped config makes for each of its seeds: pruned, or
// diverged when a sibling seed diverged.
func (s *pruning) stopDecision(config int, v Verdict) Decision {
	if v.Diverged {
		return Decision{Segment: -1, Action: Stop, Outcome: results.OutcomeDiverged, Reason: v.Reason,
			Pruning: &results.Pruning{Rule: s.rule, Rung: v.Rung, Step: v.Step, SiblingDiverged: true}}
	}
	val := v.Value
	return Decision{Segment: -1, Action: Stop, Outcome: results.OutcomePruned, Reason: v.Reason,
		Pruning: &results.Pruning{Rule: s.rule, Rung: v.Rung, Step: v.Step, Value: &val, Cutoff: v.Cutoff, Peers: v.Peers}}
}

// settle decides config's pending decision step once a seed of it ended, and stops its running seeds
// when that stopped it.
func (s *pruning) settle(config int) {
	_, before := s.pruner.Stopped(config)
	s.pruner.Settle(config)
	if !before {
		s.stopIfDecided(config)
	}
}

// stopIfDecided stops config's running seeds when the pruner has stopped it.
func (s *pruning) stopIfDecided(config int) {
	v, stopped := s.pruner.Stopped(config)
	if !stopped {
		return
	}
	r := s.pruner.rec(config)
	for _, seed := range r.Started {
		if slices.Contains(r.Ended, seed) {
			continue
		}
		s.interrupt = append(s.interrupt, Interruption{TrialID: sweeps.TrialID(config, seed), Decision: s.stopDecision(config, v)})
	}
}

func (s *pruning) Pruning() *PruningStatus {
	st := &PruningStatus{Rule: s.rule, Rungs: make([]RungStatus, len(s.pruner.cfg.Steps))}
	for k, step := range s.pruner.cfg.Steps {
		st.Rungs[k].Step = step
	}
	for _, r := range s.pruner.st.Configs {
		for k := range r.Values {
			st.Rungs[k].Reached++
		}
		if r.Stopped && len(r.Values) > 0 {
			st.Rungs[len(r.Values)-1].Stopped++
		}
	}
	return st
}

func (s *pruning) Interrupt() []Interruption {
	out := s.interrupt
	s.interrupt = nil
	return out
}

func (s *pruning) AsksAtBoundaries() bool { return true }

func (s *pruning) AtBoundary(b Boundary) Decision {
	goOn := Decision{Segment: b.Segment, Action: Continue}
	if b.Segment < 0 || b.Segment >= len(s.ends) {
		return goOn
	}
	k, ok := s.pruner.StepIndex(s.ends[b.Segment])
	if !ok {
		return goOn
	}
	value := b.Windowed
	if value == nil {
		value = b.Objective
	}
	v := s.pruner.ArriveWith(b.Config, b.Seed, k, value, Progress{TargetStep: b.TargetStep, Seconds: b.Seconds})
	switch {
	case !v.Decided:
		return Decision{Segment: b.Segment, Action: Wait}
	case v.Continue:
		return goOn
	}
	pr := &results.Pruning{Rule: s.rule, Rung: v.Rung, Step: v.Step, Cutoff: v.Cutoff, Peers: v.Peers, SiblingDiverged: v.Diverged}
	d := Decision{Segment: b.Segment, Action: Stop, Reason: v.Reason, Outcome: results.OutcomePruned, Pruning: pr}
	if v.Diverged {
		d.Outcome = results.OutcomeDiverged
	} else {
		val := v.Value
		pr.Value = &val
	}
	return d
}

func (s *pruning) State() State {
	st := s.pruner.State()
	out := s.planned.State()
	out.Pruner = &st
	return out
}

// SeedKey names one seed of one configuration, in a Replay.
type SeedKey struct {
	Config int
	Seed   int64
}

// Arrival is one seed's windowed objective at one decision step, for Replay; Diverged: the seed
// diverged there (its value is not used, and it arrives nowhere after).
type Arrival struct {
	Config   int
	Seed     int64
	Step     int64
	Value    float64
	Diverged bool
}

// ReplayResult is what a Replay decided.
type ReplayResult struct {
	// Stopped: each seed the pruner stopped, with the verdict that stopped it (its Step is where the
	// seed's training ended; Diverged when a sibling seed diverged). A seed not in it trained its
	// whole budget, or up to its own divergence.
	Stopped map[SeedKey]Verdict
	// Values: each configuration's value (IQM over its seeds) at each decision step it reached.
	Values map[int][]float64
}

// Replay runs a pruner over recorded arrivals, in the order given, as the Sweep workflow would: every
// seed of a configuration is running from its configuration's first arrival on (seeds lists them);
// a seed that arrives at a step while its configuration waits at an earlier one is held until that
// is decided (in a sweep it would be waiting there); arrivals of a stopped seed are dropped. Steps
// not among cfg.Steps are ignored.
func Replay(cfg PrunerConfig, seeds []int64, arrivals []Arrival) (ReplayResult, error) {
	p, err := NewPruner(cfg, PrunerState{})
	if err != nil {
		return ReplayResult{}, err
	}
	res := ReplayResult{Stopped: map[SeedKey]Verdict{}, Values: map[int][]float64{}}
	started := map[int]bool{}
	ended := map[SeedKey]bool{}
	// waiting: per seed, its arrivals not yet taken, oldest first (the first may be undecided).
	waiting := map[SeedKey][]Arrival{}
	var order []SeedKey // seeds in order of first arrival, for a deterministic sweep of waiting
	take := func(key SeedKey) {
		for len(waiting[key]) > 0 && !ended[key] {
			a := waiting[key][0]
			k, _ := p.StepIndex(a.Step)
			if a.Diverged {
				ended[key] = true
				p.Ended(a.Config, a.Seed, true)
				waiting[key] = nil
				return
			}
			val := a.Value
			v := p.Arrive(a.Config, a.Seed, k, &val)
			if !v.Decided {
				return
			}
			waiting[key] = waiting[key][1:]
			if !v.Continue {
				ended[key] = true
				res.Stopped[key] = v
				p.Ended(a.Config, a.Seed, false)
				waiting[key] = nil
			}
		}
	}
	for _, a := range arrivals {
		key := SeedKey{a.Config, a.Seed}
		if _, ok := p.StepIndex(a.Step); !ok && !a.Diverged {
			continue
		}
		if !started[a.Config] {
			started[a.Config] = true
			for _, s := range seeds {
				p.Started(a.Config, s)
			}
		}
		if ended[key] {
			continue
		}
		if !slices.Contains(order, key) {
			order = append(order, key)
		}
		waiting[key] = append(waiting[key], a)
		take(key)
		// An arrival or an end may have decided a step others of its configuration wait at.
		for _, other := range order {
			if other.Config == a.Config && other != key {
				take(other)
			}
		}
	}
	for c, r := range p.State().Configs {
		var cfgIdx int
		fmt.Sscan(c, &cfgIdx)
		for _, v := range r.Values {
			res.Values[cfgIdx] = append(res.Values[cfgIdx], p.unorient(v))
		}
	}
	return res, nil
}
