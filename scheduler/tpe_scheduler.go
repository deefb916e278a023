package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// bayes is method bayes's scheduler: the TPE search (tpe.go) over the spec's parameters, one
// configuration at a time, each run on every seed of the spec (its seeds handed out together), then
// the re-run of the best configurations on fresh seeds.
//
// A configuration's result is known once all its seeds ended: its score as results.ConfigScore
// defines it (IQM over its seeds of the windowed final objective); infeasible when a seed diverged or
// none is scored; pruned (early_terminate) with its value at the last decision step it reached. The
// estimator ranks the configurations it knows: the scored ones by score, then the pruned by their
// last value, then the infeasible, then those still running (the constant liar: counted at the worst
// value, so a suggestion made while they run moves away from them), ties by configuration number.
//
// Suggestion i is made from the results known when it was made, with randomness from a PCG seeded by
// sampler_seed and i alone; the first bayes.startup_trials are method random's configurations. So the
// state carries per configuration only when its result became known and the result, and a sweep that
// continues as new makes its suggestions again from them (BayesState).
//
// With several objectives (tpe_pareto.go), a configuration's result is its objective vector, and the
// estimator ranks the completed configurations by non-dominated rank and hypervolume, as MOTPE does.
type bayes struct {
	spec     *sweeps.Spec
	settings sweeps.Bayes
	seeds    []int64
	space    []Dim
	dimOf    []int // parameter index → dimension, -1 for a constant
	minimize bool
	startup  [][]float64

	points  [][]float64      // per configuration suggested, its point
	configs []map[string]any // and its parameters
	keys    map[string]bool
	vectors map[int][]float64 // with several objectives: per completed configuration, its objective vector
	st      BayesState
	prune   *pruning // nil without early_terminate
}

// BayesState is method bayes's memory across a continue-as-new: its size is bounded by the
// configurations (sweeps.MaxBayesTrials) × seeds, never by their parameters, which are made again.
type BayesState struct {
	// Started: the search's trials handed out, configuration by configuration, seeds in spec order.
	Started int `json:"started"`
	// Configs: per configuration suggested, in order.
	Configs []BayesRecord `json:"configs,omitempty"`
	// Exhausted: a suggestion found no configuration not already taken (a small discrete space).
	Exhausted bool `json:"exhausted,omitempty"`
	// TargetReached: a trial completed at or beyond metric.target; no configuration starts after.
	TargetReached bool `json:"target_reached,omitempty"`
	// Rerun: the configurations chosen to run again, best first, once RerunChosen; RerunStarted of
	// their trials are handed out.
	RerunChosen  bool  `json:"rerun_chosen,omitempty"`
	Rerun        []int `json:"rerun,omitempty"`
	RerunStarted int   `json:"rerun_started,omitempty"`
}

// BayesRecord is one configuration's part of BayesState.
type BayesRecord struct {
	// Known: the result became known when Known configurations had been suggested, so suggestions
	// from Known on weigh it; -1 while a seed runs.
	Known int `json:"known"`
	// Result: "" while a seed runs, then completed, pruned or infeasible.
	Result string `json:"result,omitempty"`
	// Score is oriented (larger is better): the score, or the pruned configuration's last value.
	Score float64 `json:"score,omitempty"`
	// Seeds: the seeds that ended so far, with what they ended with.
	Seeds []BayesSeed `json:"seeds,omitempty"`
}

// BayesSeed is one ended seed of a configuration. A sweep with several objectives keeps, besides its
// outcome and objective, what the configuration's objective vector needs (results.Objectives): its
// steps, the step it reached env_steps's target at, its wall-clock seconds, whether it completed
// collapsed (an End verdict) and whether it was stopped because a sibling seed diverged.
type BayesSeed struct {
	Seed            int64    `json:"seed"`
	Outcome         string   `json:"outcome"`
	Objective       *float64 `json:"objective,omitempty"`
	Steps           int64    `json:"steps,omitempty"`
	TargetStep      int64    `json:"target_step,omitempty"`
	WallSeconds     float64  `json:"wall_seconds,omitempty"`
	Collapsed       bool     `json:"collapsed,omitempty"`
	SiblingDiverged bool     `json:"sibling_diverged,omitempty"`
}

// Results of a configuration in BayesRecord.
const (
	BayesCompleted  = "completed"
	BayesPruned     = "pruned"
	BayesInfeasible = "infeasible"
)

func newBayes(spec *sweeps.Spec, state State) (*bayes, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b := &bayes{spec: spec, settings: spec.BayesSettings(), seeds: spec.Seeds, minimize: spec.Metric.Goal == sweeps.GoalMinimize,
		keys: map[string]bool{}, vectors: map[int][]float64{}}
	for _, p := range spec.Parameters {
		if !sweeps.Sampled(p) {
			b.dimOf = append(b.dimOf, -1)
			continue
		}
		b.dimOf = append(b.dimOf, len(b.space))
		d := Dim{Parent: -1}
		if len(p.Values) > 0 && !ordered(p) {
			d.Choices = len(p.Values)
		}
		b.space = append(b.space, d)
	}
	b.startup = sweeps.StartupQuantiles(spec, min(b.settings.StartupTrials, spec.Trials))
	if state.Bayes != nil {
		b.st = *state.Bayes
		b.st.Configs = slices.Clone(b.st.Configs)
	}
	if b.st.Started < 0 || b.st.Started > len(b.st.Configs)*len(b.seeds) || len(b.st.Configs) > spec.Trials {
		return nil, fmt.Errorf("scheduler state: bayes started %d of %d configurations, want at most %d", b.st.Started, len(b.st.Configs), spec.Trials)
	}
	if spec.MultiObjective() {
		for c, r := range b.st.Configs {
			if r.Result == BayesCompleted {
				b.vectors[c] = b.point(c).Values
			}
		}
	}
	// Make the suggestions again, from the results known when each was made.
	for i := range b.st.Configs {
		x, ok := b.suggest(i)
		if !ok {
			return nil, fmt.Errorf("scheduler state: bayes configuration %d cannot be suggested again", i)
		}
		b.add(x)
	}
	if spec.EarlyTerminate != nil {
		var st PrunerState
		if state.Pruner != nil {
			st = *state.Pruner
		}
		pr, err := NewPruner(PrunerConfigOf(spec), st)
		if err != nil {
			return nil, err
		}
		b.prune = &pruning{rule: spec.EarlyTerminate.Type, ends: spec.SegmentEnds(), pruner: pr}
	}
	return b, nil
}

// ordered says whether a values parameter is searched as an ordered dimension (its quantile, so that
// neighbouring values inform each other): numbers in strictly increasing or decreasing order, without
// probabilities. Any other list is categorical.
func ordered(p sweeps.Parameter) bool {
	if p.Probabilities != nil || p.JSON || len(p.Values) < 3 {
		return false
	}
	xs := make([]float64, len(p.Values))
	for i, v := range p.Values {
		switch x := v.(type) {
		case int64:
			xs[i] = float64(x)
		case int:
			xs[i] = float64(x)
		case float64:
			xs[i] = x
		default:
			return false
		}
	}
	up, down := true, true
	for i := 1; i < len(xs); i++ {
		up = up && xs[i] > xs[i-1]
		down = down && xs[i] < xs[i-1]
	}
	return up || down
}

// configOf maps a point onto the spec's parameters.
func (b *bayes) configOf(x []float64) map[string]any {
	cfg := make(map[string]any, len(b.spec.Parameters))
	for i, p := range b.spec.Parameters {
		d := b.dimOf[i]
		switch {
		case d < 0:
			cfg[p.Name] = sweeps.Constant(p)
		case math.IsNaN(x[d]):
			// an inactive conditional dimension: the parameter is left out
		case b.space[d].Choices > 0:
			v := p.Values[min(int(x[d]), len(p.Values)-1)]
			if n, ok := v.(int); ok {
				v = int64(n)
			}
			cfg[p.Name] = v
		default:
			cfg[p.Name] = sweeps.Pick(p, math.Min(x[d], math.Nextafter(1, 0)))
		}
	}
	return cfg
}

// suggest makes suggestion i (the configuration numbered i) from what was known when it was made.
func (b *bayes) suggest(i int) ([]float64, bool) {
	dup := func(x []float64) bool { return b.keys[sweeps.ConfigKey(b.configOf(x))] }
	if i < len(b.startup) {
		u := b.startup[i]
		x := make([]float64, len(b.space))
		d := 0
		for _, p := range b.spec.Parameters {
			if !sweeps.Sampled(p) {
				continue
			}
			x[d] = u[d]
			if b.space[d].Choices > 0 {
				x[d] = float64(sweeps.ValueIndex(p, u[d]))
			}
			d++
		}
		if !dup(x) {
			return x, true
		}
	}
	rng := rand.New(rand.NewPCG(uint64(b.spec.SamplerSeed), 0x747065<<32|uint64(i))) // "tpe"
	ranked, nGood := b.split(i)
	return SuggestGood(b.space, ranked, nGood, rng, dup)
}

// split is what suggestion i's estimator is given: the configurations before i best first (ranked),
// the first nGood of them its good group: TPEGood of them, and with several objectives no more than
// are completed or pruned (an infeasible or running configuration is never good).
func (b *bayes) split(i int) (ranked [][]float64, nGood int) {
	ranked, feasible := b.rankedFeasible(i)
	nGood = TPEGood(len(ranked))
	if b.spec.MultiObjective() {
		nGood = min(nGood, feasible)
	}
	return ranked, nGood
}

// ranked returns the points of the configurations before i, best first as suggestion i sees them. With
// several objectives the completed configurations known then are in the order paretoOrder gives them
// for the good group of TPEGood(i).
func (b *bayes) ranked(i int) [][]float64 {
	out, _ := b.rankedFeasible(i)
	return out
}

// rankedFeasible is ranked, with how many of its first points are completed or pruned configurations.
func (b *bayes) rankedFeasible(i int) ([][]float64, int) {
	type entry struct {
		tier  int
		score float64
		c     int
	}
	es := make([]entry, 0, i)
	for c := range i {
		r := b.st.Configs[c]
		e := entry{tier: 3, c: c}
		if r.Known >= 0 && r.Known <= i {
			switch r.Result {
			case BayesCompleted:
				e.tier, e.score = 0, r.Score
			case BayesPruned:
				e.tier, e.score = 1, r.Score
			default:
				e.tier = 2
			}
		}
		es = append(es, e)
	}
	if b.spec.MultiObjective() {
		var done []int
		for _, e := range es {
			if e.tier == 0 {
				done = append(done, e.c)
			}
		}
		pos := map[int]int{}
		for k, c := range b.paretoOrder(done, TPEGood(i)) {
			pos[c] = k
		}
		for k := range es {
			if es[k].tier == 0 {
				es[k].score = -float64(pos[es[k].c])
			}
		}
	}
	sort.SliceStable(es, func(a, c int) bool {
		if es[a].tier != es[c].tier {
			return es[a].tier < es[c].tier
		}
		if es[a].score != es[c].score {
			return es[a].score > es[c].score
		}
		return es[a].c < es[c].c
	})
	out := make([][]float64, len(es))
	feasible := 0
	for k, e := range es {
		out[k] = b.points[e.c]
		if e.tier <= 1 {
			feasible++
		}
	}
	return out, feasible
}

func (b *bayes) add(x []float64) {
	cfg := b.configOf(x)
	b.points = append(b.points, x)
	b.configs = append(b.configs, cfg)
	b.keys[sweeps.ConfigKey(cfg)] = true
}

// searching says whether the search may still start a trial.
func (b *bayes) searching() bool {
	if b.st.TargetReached {
		return false
	}
	c := b.st.Started / len(b.seeds)
	if c < len(b.st.Configs) {
		return true // a configuration whose seeds are not all handed out
	}
	return c < b.spec.Trials && !b.st.Exhausted
}

func (b *bayes) Peek() (sweeps.Trial, bool) {
	if b.searching() {
		c, s := b.st.Started/len(b.seeds), b.st.Started%len(b.seeds)
		if c == len(b.st.Configs) {
			x, ok := b.suggest(c)
			if !ok {
				b.st.Exhausted = true
				return b.Peek()
			}
			b.add(x)
			b.st.Configs = append(b.st.Configs, BayesRecord{Known: -1})
		}
		return b.trial(c, b.seeds[s]), true
	}
	if !b.chooseRerun() || b.st.RerunStarted >= len(b.st.Rerun)*len(b.settings.RerunSeeds) {
		return sweeps.Trial{}, false
	}
	n := len(b.settings.RerunSeeds)
	return b.trial(b.st.Rerun[b.st.RerunStarted/n], b.settings.RerunSeeds[b.st.RerunStarted%n]), true
}

func (b *bayes) trial(c int, seed int64) sweeps.Trial {
	return sweeps.Trial{ID: sweeps.TrialID(c, seed), Config: c, Seed: seed, Params: cloneParams(b.configs[c])}
}

func cloneParams(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (b *bayes) Next() (sweeps.Trial, bool) {
	t, ok := b.Peek()
	if !ok {
		return t, false
	}
	if b.searching() {
		b.st.Started++
		if b.prune != nil {
			b.prune.pruner.Started(t.Config, t.Seed)
		}
	} else {
		b.st.RerunStarted++
	}
	return t, true
}

// chooseRerun picks the configurations to run again once every configuration of the search ended;
// false while the search goes on or a result is missing, or with the re-run off.
func (b *bayes) chooseRerun() bool {
	if b.st.RerunChosen {
		return true
	}
	if b.settings.RerunTop == 0 || b.st.TargetReached || b.searching() {
		return false
	}
	for _, r := range b.st.Configs {
		if r.Known < 0 {
			return false
		}
	}
	b.st.RerunChosen = true
	for _, c := range b.Best() {
		if len(b.st.Rerun) == b.settings.RerunTop {
			break
		}
		b.st.Rerun = append(b.st.Rerun, c)
	}
	return true
}

// Best returns the scored configurations, best first: by score, or with several objectives in the
// order paretoOrder gives them for a group of bayes.rerun_top.
func (b *bayes) Best() []int {
	var out []int
	for c, r := range b.st.Configs {
		if r.Result == BayesCompleted {
			out = append(out, c)
		}
	}
	if b.spec.MultiObjective() {
		return b.paretoOrder(out, b.settings.RerunTop)
	}
	sort.SliceStable(out, func(i, j int) bool { return b.st.Configs[out[i]].Score > b.st.Configs[out[j]].Score })
	return out
}

func (b *bayes) isRerun(seed int64) bool { return !slices.Contains(b.seeds, seed) }

func (b *bayes) Finished(sum results.TrialSummary) {
	c, seed, ok := trialOf(sum)
	if t := b.spec.Metric.Target; t != nil && sum.Scored() {
		if v := *sum.Objective; b.minimize && v <= *t || !b.minimize && v >= *t {
			b.st.TargetReached = true
		}
	}
	if !ok || c >= len(b.st.Configs) || b.isRerun(seed) {
		return
	}
	if b.prune != nil {
		sum.Config, sum.Seed = c, seed
		b.prune.Finished(sum)
	}
	r := &b.st.Configs[c]
	if r.Known >= 0 || slices.ContainsFunc(r.Seeds, func(s BayesSeed) bool { return s.Seed == seed }) {
		return
	}
	r.Seeds = append(r.Seeds, b.seedRecord(seed, sum))
	if len(r.Seeds) < len(b.seeds) {
		return
	}
	r.Known = len(b.st.Configs)
	if b.spec.MultiObjective() {
		b.finishPareto(c)
		return
	}
	trials := make([]results.TrialSummary, len(r.Seeds))
	pruned := false
	for i, s := range r.Seeds {
		trials[i] = results.TrialSummary{Outcome: s.Outcome, Objective: s.Objective}
		pruned = pruned || s.Outcome == results.OutcomePruned
	}
	score, feasible := results.ConfigScore(trials)
	switch {
	case !feasible && !pruned || slices.ContainsFunc(r.Seeds, func(s BayesSeed) bool { return s.Outcome == results.OutcomeDiverged }):
		r.Result = BayesInfeasible
	case pruned:
		r.Result, r.Score = BayesPruned, b.prunedScore(c)
	default:
		r.Result, r.Score = BayesCompleted, score
		if b.minimize {
			r.Score = -score
		}
	}
}

// prunedScore is a pruned configuration's last value at a decision step, as the pruner keeps it
// (oriented); the worst finite value when it has none.
func (b *bayes) prunedScore(c int) float64 {
	score := math.Inf(-1)
	if b.prune != nil {
		if rec := b.prune.pruner.st.Configs[strconv.Itoa(c)]; rec != nil && len(rec.Values) > 0 {
			score = rec.Values[len(rec.Values)-1]
		}
	}
	if math.IsInf(score, -1) {
		score = -math.MaxFloat64
	}
	return score
}

// trialOf is a summary's configuration and seed, from its trial ID when the summary has no more (a
// trial that never started).
func trialOf(sum results.TrialSummary) (int, int64, bool) {
	cs, ss, ok := strings.Cut(sum.TrialID, "-s")
	if !ok {
		return 0, 0, false
	}
	c, err1 := strconv.Atoi(cs)
	s, err2 := strconv.ParseInt(ss, 10, 64)
	if err1 != nil || err2 != nil || c < 0 {
		return 0, 0, false
	}
	return c, s, true
}

func (b *bayes) AtBoundary(bd Boundary) Decision {
	if b.prune == nil || b.isRerun(bd.Seed) {
		return Decision{Segment: bd.Segment, Action: Continue}
	}
	return b.prune.AtBoundary(bd)
}

func (b *bayes) AsksAtBoundaries() bool { return b.prune != nil }

// Passed hands a trial's pass of a decision point (early_terminate in stop mode) to the pruner, as
// AtBoundary hands it a boundary; a re-run on a fresh seed is never pruned.
func (b *bayes) Passed(p Pass) {
	if b.prune == nil || b.isRerun(p.Seed) {
		return
	}
	b.prune.Passed(p)
}

func (b *bayes) Interrupt() []Interruption {
	if b.prune == nil {
		return nil
	}
	return b.prune.Interrupt()
}

// Pruning is the pruner's progress; nil without early_terminate.
func (b *bayes) Pruning() *PruningStatus {
	if b.prune == nil {
		return nil
	}
	return b.prune.Pruning()
}

func (b *bayes) Done() bool {
	if b.searching() {
		return false
	}
	if b.settings.RerunTop == 0 || b.st.TargetReached {
		return true
	}
	return b.chooseRerun() && b.st.RerunStarted >= len(b.st.Rerun)*len(b.settings.RerunSeeds)
}

// Total is the sweep's budget (Spec.Budget) until the search ends early (a small discrete space, the
// metric's target) or the re-run's configurations are chosen; then the trials it will have run.
func (b *bayes) Total() int {
	configs := b.spec.Trials
	if b.st.Exhausted || b.st.TargetReached {
		configs = len(b.st.Configs)
	}
	rerun := b.settings.RerunTop
	switch {
	case b.st.RerunChosen:
		rerun = len(b.st.Rerun)
	case b.st.TargetReached:
		rerun = 0
	}
	return configs*len(b.seeds) + rerun*len(b.settings.RerunSeeds)
}

func (b *bayes) State() State {
	st := b.st
	st.Configs = slices.Clone(st.Configs)
	out := State{Bayes: &st}
	if b.prune != nil {
		ps := b.prune.pruner.State()
		out.Pruner = &ps
	}
	return out
}
