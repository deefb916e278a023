package sweeps

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MethodPBT is population-based training (docs/spec.md#pbt): a population of members trained in
// segments of ready_steps, the worst exploiting the best at each ready step.
const MethodPBT = "pbt"

// Defaults and bounds of the pbt section.
const (
	DefaultPBTPopulation          = 8
	DefaultPBTQuantile            = 0.25
	DefaultPBTResampleProbability = 0.25
	MaxPBTPopulation              = 1000
	// MaxPBTPoints bounds population × ready steps: the scheduler keeps one point (value, checkpoint
	// key, health, and an exploit's parameters) per member per ready step, carried across a
	// continue-as-new: about 150 bytes each, more for an exploit, so at most about 1 MB.
	MaxPBTPoints = 4_000
)

// DefaultPBTPerturb are the factors a perturbed parameter is multiplied by, one drawn per parameter.
var DefaultPBTPerturb = []float64{0.8, 1.2}

// DefaultPBTMutable are the parameter names pbt mutates when pbt.mutable is not given, those of them
// the spec samples: the continuous optimiser settings. Shape parameters (num_envs, rollout length,
// minibatches, network sizes) stay fixed unless listed.
var DefaultPBTMutable = []string{"lr", "learning_rate", "clip", "clip_range", "clip_param", "ent_coef", "vf_coef",
	"max_grad_norm", "gamma", "gae_lambda", "lambda", "lam"}

// PBT configures population-based training (method pbt).
type PBT struct {
	// Population: how many members train at once; member i is one trial with seed seeds[i mod len(seeds)].
	Population int `json:"population"`
	// ReadySteps: members are ranked and exploit at each multiple of it below total_steps.
	ReadySteps int64 `json:"ready_steps"`
	// Quantile: the bottom quantile of the members ranked at a step exploits one of the top quantile.
	Quantile float64 `json:"quantile"`
	// ResampleProbability: each mutable parameter is drawn again from its distribution with this
	// probability, else multiplied by one of Perturb.
	ResampleProbability float64   `json:"resample_probability"`
	Perturb             []float64 `json:"perturb"`
	// Mutable: the parameters explored; the others keep the member's initial values.
	Mutable []string `json:"mutable"`
	// Schedule, when set, replays a hyperparameter schedule instead of searching: one member per
	// seed, starting with the first entry's parameters, changing to each later entry's at its step
	// (a ready step) and going on from its own checkpoint; nothing is exploited, explored or replaced.
	// `rlsweep results SWEEP --export-schedule FILE` writes such a spec from a pbt sweep's best member.
	Schedule []ScheduleStep `json:"schedule,omitempty"`
}

// ScheduleStep: from Step on, the parameters Params (those it names; the others as before).
type ScheduleStep struct {
	Step   int64          `json:"step"`
	Params map[string]any `json:"params"`
}

// pbt decodes the pbt section.
func (d *decoder) pbt(n *yaml.Node, path string, p *PBT) {
	d.mapping(n, path, []field{
		{"population", d.smallInt(&p.Population)},
		{"ready_steps", d.bigInt(&p.ReadySteps)},
		{"quantile", d.float(&p.Quantile)},
		{"resample_probability", d.float(&p.ResampleProbability)},
		{"perturb", func(lp string, v *yaml.Node) {
			p.Perturb = []float64{}
			d.list(v, lp, "a list of numbers > 0", func(_ int, ep string, e *yaml.Node) {
				if f, ok := d.number(e, ep); ok {
					p.Perturb = append(p.Perturb, f)
				}
			})
		}},
		{"mutable", d.textList(&p.Mutable)},
		{"schedule", func(lp string, v *yaml.Node) {
			p.Schedule = []ScheduleStep{}
			d.list(v, lp, "a list of {step, params}", func(_ int, ep string, e *yaml.Node) {
				st := ScheduleStep{Params: map[string]any{}}
				d.mapping(e, ep, []field{
					{"step", d.bigInt(&st.Step)},
					{"params", func(pp string, pv *yaml.Node) {
						d.each(pv, pp, "a mapping of parameter names to values", func(name, vp string, _, vv *yaml.Node) {
							if x, ok := d.value(vv, vp); ok {
								st.Params[name] = x
							}
						})
					}},
				})
				p.Schedule = append(p.Schedule, st)
			})
		}},
	})
}

// fillPBTDefaults gives a pbt sweep its pbt section's defaults: population 8, quantile 0.25,
// resample_probability 0.25, perturb [0.8, 1.2], ready_steps segment_steps when that is below
// total_steps (else total_steps / 10), mutable the DefaultPBTMutable parameters the spec samples.
func (s *Spec) fillPBTDefaults() {
	if s.Method != MethodPBT {
		return
	}
	if s.PBT == nil {
		s.PBT = NewPBT()
	}
	p := s.PBT
	if p.Population == 0 && len(p.Schedule) > 0 {
		p.Population = max(len(s.Seeds), 1)
	}
	if p.Population == 0 {
		p.Population = DefaultPBTPopulation
	}
	if p.Quantile == 0 {
		p.Quantile = DefaultPBTQuantile
	}
	if p.Perturb == nil {
		p.Perturb = slices.Clone(DefaultPBTPerturb)
	}
	if p.ReadySteps == 0 {
		switch t := s.Trainer; {
		case t.SegmentSteps > 0 && t.SegmentSteps < t.TotalSteps:
			p.ReadySteps = t.SegmentSteps
		default:
			p.ReadySteps = max(t.TotalSteps/10, 1)
		}
	}
	if p.Mutable == nil {
		p.Mutable = []string{}
		for _, prm := range s.Parameters {
			if slices.Contains(DefaultPBTMutable, prm.Name) && mutableParam(prm) {
				p.Mutable = append(p.Mutable, prm.Name)
			}
		}
	}
}

// NewPBT is a pbt section before the spec's keys are read: resample_probability, which may be 0, is
// its default; the other defaults fill what is still 0 (fillPBTDefaults).
func NewPBT() *PBT { return &PBT{ResampleProbability: DefaultPBTResampleProbability} }

// mutableParam says whether pbt can explore a parameter: a range with bounds, or a list of values.
func mutableParam(p Parameter) bool {
	return p.Min != nil && p.Max != nil || len(p.Values) > 1
}

// PBTReadySteps are the ready steps, ascending, each below total_steps; nil without method pbt.
func (s *Spec) PBTReadySteps() []int64 {
	if s.Method != MethodPBT || s.PBT == nil || s.PBT.ReadySteps <= 0 || s.Trainer.TotalSteps <= 0 {
		return nil
	}
	var out []int64
	for r := s.PBT.ReadySteps; r < s.Trainer.TotalSteps; r += s.PBT.ReadySteps {
		out = append(out, r)
		if len(out) > MaxSegments {
			break // reported by validation
		}
	}
	return out
}

// pbtTrials are a pbt sweep's initial members: population configurations drawn as method random
// draws them (sampler_seed), member i with seed seeds[i mod len(seeds)].
//
// With a schedule, the members start with its first entry's parameters over the spec's.
func pbtTrials(s *Spec) []Trial {
	configs := randomConfigs(s.Parameters, s.PBT.Population, s.SamplerSeed)
	if len(s.PBT.Schedule) > 0 {
		for _, cfg := range configs {
			maps.Copy(cfg, normalizeAll(s.PBT.Schedule[0].Params))
		}
	}
	trials := make([]Trial, len(configs))
	for i, cfg := range configs {
		seed := s.Seeds[i%len(s.Seeds)]
		trials[i] = Trial{ID: TrialID(i, seed), Config: i, Seed: seed, Params: cfg}
	}
	return trials
}

// pbt checks the pbt section and what method pbt needs of the rest of the spec.
func (c *checker) pbt() {
	s := c.s
	if s.Method != MethodPBT {
		if s.PBT != nil {
			c.add("pbt", "a pbt section with method "+quote(s.Method), "method pbt, or no pbt section")
		}
		return
	}
	p := s.PBT
	if p == nil {
		return // filled by the defaults
	}
	const pre = "pbt."
	// With a schedule, the population is one member per seed (pbtSchedule checks it), one seed included.
	if len(p.Schedule) == 0 && (p.Population < 2 || p.Population > MaxPBTPopulation) {
		c.add(pre+"population", strconv.Itoa(p.Population), fmt.Sprintf("an integer in [2, %d]", MaxPBTPopulation))
	}
	if !(p.Quantile > 0 && p.Quantile <= 0.5) {
		c.add(pre+"quantile", fmtFloat(p.Quantile), "a number in (0, 0.5]")
	}
	if !(p.ResampleProbability >= 0 && p.ResampleProbability <= 1) {
		c.add(pre+"resample_probability", fmtFloat(p.ResampleProbability), "a number in [0, 1]")
	}
	if len(p.Perturb) == 0 {
		c.add(pre+"perturb", "an empty list", "at least one factor > 0, such as [0.8, 1.2]")
	}
	for i, f := range p.Perturb {
		if !(f > 0) || math.IsInf(f, 0) {
			c.add(fmt.Sprintf("%sperturb[%d]", pre, i), fmtFloat(f), "a finite number > 0")
		}
	}
	seen := map[string]bool{}
	for i, name := range p.Mutable {
		path := fmt.Sprintf("%smutable[%d]", pre, i)
		j := slices.IndexFunc(s.Parameters, func(q Parameter) bool { return q.Name == name })
		switch {
		case seen[name]:
			c.add(path, quote(name), "each parameter once")
		case j < 0:
			c.add(path, quote(name), "one of the spec's parameters")
		case !mutableParam(s.Parameters[j]):
			c.add(path, quote(name), "a parameter with min and max, or a list of values: pbt explores within them")
		}
		seen[name] = true
	}
	if s.Trials != 0 {
		c.add("trials", strconv.Itoa(s.Trials), "no trials for method pbt (pbt.population is the count)")
	}
	c.pbtSchedule()
	if s.EarlyTerminate != nil {
		c.add("early_terminate", "a section with method pbt", "no early_terminate: pbt decides at its ready steps")
	}
	total := s.Trainer.TotalSteps
	if total <= 0 {
		return // reported at trainer.total_steps
	}
	if p.ReadySteps <= 0 || p.ReadySteps >= total {
		c.add(pre+"ready_steps", strconv.FormatInt(p.ReadySteps, 10), fmt.Sprintf("an integer in (0, %d) (total_steps)", total))
		return
	}
	if src := s.Trainer.Metrics.Source; src != "" && src != DefaultSource {
		if s.Format == FormatWandB {
			c.add("method", fmt.Sprintf("pbt with metrics.source %s", src),
				"an rlsweep block with metrics: {source: jsonl}: PBT resumes from checkpoints the trainer announces in JSON lines (a record's \"checkpoint\" key)")
		} else {
			c.add("trainer.metrics.source", quote(src), fmt.Sprintf("%s with method pbt: PBT resumes from checkpoints the trainer announces in JSON lines (a record's \"checkpoint\" key)", DefaultSource))
		}
	}
	if n := (total-1)/p.ReadySteps + 1; n > MaxSegments {
		c.add(pre+"ready_steps", fmt.Sprintf("%d segments", n), fmt.Sprintf("at most %d segments: a larger ready_steps", MaxSegments))
		return
	}
	if n := len(s.SegmentEnds()); n > MaxSegments {
		c.add(pre+"ready_steps", fmt.Sprintf("%d segments", n), fmt.Sprintf("at most %d segments: a larger ready_steps", MaxSegments))
		return
	}
	if n := p.Population * len(s.PBTReadySteps()); n > MaxPBTPoints {
		c.add(pre+"ready_steps", fmt.Sprintf("population %d × %d ready steps", p.Population, len(s.PBTReadySteps())),
			fmt.Sprintf("at most %d points for the scheduler to keep: fewer members or a larger ready_steps", MaxPBTPoints))
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ComplementParam says whether pbt perturbs a parameter through 1 − x: a discount or GAE λ, named
// gamma, lambda or lam, or ending in _gamma, _lambda, .gamma or .lambda (gae_lambda). Multiplying
// 1 − γ by 0.8 or 1.2 moves the horizon 1/(1 − γ) by the same factor, where multiplying γ itself
// would jump past 1.
func ComplementParam(name string) bool {
	switch name {
	case "gamma", "lambda", "lam":
		return true
	}
	for _, suf := range []string{"_gamma", "_lambda", ".gamma", ".lambda"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// Change is one parameter pbt's explore changed: how (perturb with Factor, or resample), from what.
type Change struct {
	Name     string  `json:"name"`
	Old      any     `json:"old"`
	New      any     `json:"new"`
	Resample bool    `json:"resample,omitempty"`
	Factor   float64 `json:"factor,omitempty"`
}

// Explore returns a copy of params with each of pbt.mutable explored, in spec order: drawn again from
// its distribution with probability resample_probability, else multiplied by one of pbt.perturb
// (drawn uniformly): x·f, or 1 − (1 − x)·f for a ComplementParam; an integer parameter is rounded. The
// result is kept within the parameter's min and max. A list of values moves to the next value in the
// list (f > 1) or the previous one (f ≤ 1), staying at either end. rng decides every draw.
func (s *Spec) Explore(params map[string]any, rng *rand.Rand) (map[string]any, []Change) {
	out := maps.Clone(params)
	var changes []Change
	for _, prm := range s.Parameters {
		if !slices.Contains(s.PBT.Mutable, prm.Name) {
			continue
		}
		old := params[prm.Name]
		ch := Change{Name: prm.Name, Old: old}
		if rng.Float64() < s.PBT.ResampleProbability {
			ch.Resample, ch.New = true, pick(prm, rng.Float64())
		} else {
			ch.Factor = s.PBT.Perturb[rng.IntN(len(s.PBT.Perturb))]
			ch.New = perturb(prm, old, ch.Factor)
		}
		out[prm.Name] = ch.New
		changes = append(changes, ch)
	}
	return out, changes
}

// perturb multiplies one value by f within its parameter's bounds.
func perturb(p Parameter, v any, f float64) any {
	if len(p.Values) > 0 {
		i := slices.IndexFunc(p.Values, func(x any) bool { return fmt.Sprint(normalize(x)) == fmt.Sprint(v) })
		if i < 0 {
			return v
		}
		if f > 1 {
			i = min(i+1, len(p.Values)-1)
		} else {
			i = max(i-1, 0)
		}
		return normalize(p.Values[i])
	}
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case int64:
		x = float64(n)
	default:
		return v
	}
	if ComplementParam(p.Name) {
		x = 1 - (1-x)*f
	} else {
		x *= f
	}
	if p.Min != nil {
		x = math.Max(x, *p.Min)
	}
	if p.Max != nil {
		x = math.Min(x, *p.Max)
	}
	if _, isInt := v.(int64); isInt || p.Distribution == DistIntUniform {
		return int64(math.Round(x))
	}
	return x
}

// SampleParams draws a whole configuration as method random draws one, with rng.
func (s *Spec) SampleParams(rng *rand.Rand) map[string]any {
	cfg := make(map[string]any, len(s.Parameters))
	for _, p := range s.Parameters {
		if !sampled(p) {
			cfg[p.Name] = constant(p)
			continue
		}
		cfg[p.Name] = pick(p, rng.Float64())
	}
	return cfg
}

func normalizeAll(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = normalize(v)
	}
	return out
}

// pbtSchedule checks pbt.schedule: the first entry at step 0, then ascending ready steps, each naming
// only the spec's parameters; one member per seed.
func (c *checker) pbtSchedule() {
	s := c.s
	p := s.PBT
	if len(p.Schedule) == 0 {
		if p.Schedule != nil {
			c.add("pbt.schedule", "an empty list", "at least one {step: 0, params: {...}} entry, or no schedule")
		}
		return
	}
	if p.Population != len(s.Seeds) {
		c.add("pbt.population", strconv.Itoa(p.Population), fmt.Sprintf("%d (one member per seed) with a schedule, or no population", len(s.Seeds)))
	}
	for i, st := range p.Schedule {
		path := fmt.Sprintf("pbt.schedule[%d]", i)
		switch {
		case i == 0 && st.Step != 0:
			c.add(path+".step", strconv.FormatInt(st.Step, 10), "0: the first entry is the start")
		case i > 0 && st.Step <= p.Schedule[i-1].Step:
			c.add(path+".step", strconv.FormatInt(st.Step, 10), fmt.Sprintf("a step after %d (the entry before)", p.Schedule[i-1].Step))
		case i > 0 && p.ReadySteps > 0 && (st.Step%p.ReadySteps != 0 || st.Step >= s.Trainer.TotalSteps):
			c.add(path+".step", strconv.FormatInt(st.Step, 10), fmt.Sprintf("a multiple of ready_steps (%d) below total_steps (%d)", p.ReadySteps, s.Trainer.TotalSteps))
		}
		names := slices.Sorted(maps.Keys(st.Params))
		for _, name := range names {
			if !slices.ContainsFunc(s.Parameters, func(q Parameter) bool { return q.Name == name }) {
				c.add(path+".params."+name, quote(name), "one of the spec's parameters")
			}
		}
	}
}
