package sweeps

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
)

// ParamNames lists the parameter names in the order the spec gives them.
func ParamNames(s *Spec) []string {
	names := make([]string, len(s.Parameters))
	for i, p := range s.Parameters {
		names[i] = p.Name
	}
	return names
}

// Plan validates the spec and expands it into trials: every configuration once per seed, configuration
// by configuration, seeds in spec order. Trial IDs are "<config>-s<seed>". With resources.precision
// each configuration the method makes is one configuration per setting (withPrecision), numbered
// with the setting varying fastest.
//
//   - grid: the cartesian product of every values parameter, in spec order, the first parameter varying
//     slowest; value parameters are constants. Configuration i is the product's i-th; with order
//     shuffled (the default with early_terminate) the configurations start in a permutation drawn from
//     sampler_seed, each keeping its number, so a grid written in ascending order does not arrive at
//     the pruner's rungs best-last (each arrival better than all before it is promoted while alone).
//   - random: `trials` configurations drawn from a PCG generator seeded with sampler_seed; values
//     parameters are drawn uniformly from their list.
//   - sobol: points 1..trials of the Sobol sequence (Joe–Kuo direction numbers; point 0, all zeros, is
//     skipped), one dimension per sampled parameter in spec order, digitally shifted by sampler_seed
//     when it is not 0. See sobol.go.
//
// Ranges map u in [0, 1) as min + u(max−min) (uniform), exp(ln min + u(ln max − ln min)) (log_uniform)
// and min + ⌊u(max−min+1)⌋ (int_uniform). Integers are int64, other numbers float64. The same spec
// always gives the same plan, byte for byte when JSON-encoded.
func Plan(s *Spec) ([]Trial, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return PlanValid(s)
}

// PlanValid is Plan of a spec that Validate, Load or LoadSource accepted, without validating it again:
// for a caller that holds the very spec it validated (rlsweep validate and submit). Any other spec goes
// through Plan.
func PlanValid(s *Spec) ([]Trial, error) {
	if s.Method == MethodPBT {
		return pbtTrials(s), nil
	}
	var configs []map[string]any
	switch s.Method {
	case MethodGrid:
		configs = gridConfigs(s.Parameters)
	case MethodRandom:
		configs = randomConfigs(s.Parameters, s.Trials, s.SamplerSeed)
	case MethodBayes:
		// Only the random start-up configurations are known before the search runs; the estimator
		// makes the others from their results (scheduler/tpe.go).
		configs = StartupConfigs(s, min(s.BayesSettings().StartupTrials, s.Trials))
	case MethodSobol:
		var err error
		if configs, err = sobolConfigs(s.Parameters, s.Trials, s.SamplerSeed); err != nil {
			return nil, err
		}
	}
	configs, precisions := withPrecision(configs, s.Resources.Precision)
	order := make([]int, len(configs))
	for i := range order {
		order[i] = i
	}
	if s.Method == MethodGrid && s.Order == OrderShuffled {
		rand.New(rand.NewPCG(uint64(s.SamplerSeed), orderStream)).Shuffle(len(order), func(i, j int) {
			order[i], order[j] = order[j], order[i]
		})
	}
	trials := make([]Trial, 0, len(configs)*len(s.Seeds))
	for _, i := range order {
		for _, seed := range s.Seeds {
			trials = append(trials, Trial{ID: TrialID(i, seed), Config: i, Seed: seed, Params: maps.Clone(configs[i]),
				Precision: precisions[i]})
		}
	}
	return trials, nil
}

// withPrecision makes each configuration one per precision setting (resources.precision), the setting
// varying fastest: configuration i·len(settings)+k is configuration i under settings[k]. It returns the
// configurations and each one's setting ("" for all when settings is empty).
func withPrecision(configs []map[string]any, settings []string) ([]map[string]any, []string) {
	if len(settings) == 0 {
		return configs, make([]string, len(configs))
	}
	out := make([]map[string]any, 0, len(configs)*len(settings))
	prec := make([]string, 0, cap(out))
	for _, cfg := range configs {
		for _, p := range settings {
			out = append(out, cfg)
			prec = append(prec, p)
		}
	}
	return out, prec
}

// precisionCount is how many settings each configuration runs under: 1 without resources.precision.
func (s *Spec) precisionCount() int { return max(len(s.Resources.Precision), 1) }

// orderStream is the PCG stream of a shuffled grid's order: "order".
const orderStream = 0x6f72646572

// TrialID is the stable name of configuration config run with seed: "<config>-s<seed>".
func TrialID(config int, seed int64) string {
	return fmt.Sprintf("%d-s%d", config, seed)
}

// gridConfigs is the cartesian product of the values parameters, the first varying slowest.
func gridConfigs(params []Parameter) []map[string]any {
	n := 1
	for _, p := range params {
		if len(p.Values) > 0 {
			n *= len(p.Values)
		}
	}
	configs := make([]map[string]any, n)
	for i := range configs {
		configs[i] = gridConfig(params, i)
	}
	return configs
}

// gridConfig is configuration i of the grid: the product's i-th, the first parameter varying slowest.
func gridConfig(params []Parameter, i int) map[string]any {
	cfg := make(map[string]any, len(params))
	rest := i
	for j := len(params) - 1; j >= 0; j-- {
		p := params[j]
		if len(p.Values) == 0 {
			cfg[p.Name] = normalize(p.Value)
			continue
		}
		cfg[p.Name] = normalize(p.Values[rest%len(p.Values)])
		rest /= len(p.Values)
	}
	return cfg
}

// FirstListed is the trial of the configuration written first and the first seed: configuration 0 of
// a grid, whatever order its configurations start in (the probes run with its parameters); for the
// other methods, the first trial planned (first, what starts first).
func FirstListed(s *Spec, first Trial) Trial {
	if s.Method != MethodGrid || len(s.Seeds) == 0 || first.Config == 0 && first.Seed == s.Seeds[0] {
		return first
	}
	t := Trial{ID: TrialID(0, s.Seeds[0]), Config: 0, Seed: s.Seeds[0], Params: gridConfig(s.Parameters, 0)}
	if len(s.Resources.Precision) > 0 {
		t.Precision = s.Resources.Precision[0]
	}
	return t
}

// randomStream is the PCG stream of method random and of method bayes's start-up: "rlsweep".
const randomStream = 0x726c7377656570

// randomConfigs draws n configurations, parameter by parameter in spec order.
func randomConfigs(params []Parameter, n int, seed int64) []map[string]any {
	rng := rand.New(rand.NewPCG(uint64(seed), randomStream))
	configs := make([]map[string]any, n)
	for i := range configs {
		cfg := make(map[string]any, len(params))
		for _, p := range params {
			if !sampled(p) {
				cfg[p.Name] = constant(p)
				continue
			}
			cfg[p.Name] = pick(p, rng.Float64())
		}
		configs[i] = cfg
	}
	return configs
}

// sobolConfigs maps Sobol points onto the parameters, one dimension per sampled parameter.
func sobolConfigs(params []Parameter, n int, seed int64) ([]map[string]any, error) {
	dims := 0
	for _, p := range params {
		if sampled(p) {
			dims++
		}
	}
	seq, err := NewSobol(dims)
	if err != nil {
		return nil, err
	}
	if seed != 0 {
		seq.Shift(seed)
	}
	seq.Next() // point 0 is all zeros: every parameter at its minimum
	point := make([]float64, dims)
	configs := make([]map[string]any, n)
	for i := range configs {
		seq.NextInto(point)
		cfg := make(map[string]any, len(params))
		d := 0
		for _, p := range params {
			if !sampled(p) {
				cfg[p.Name] = constant(p)
				continue
			}
			cfg[p.Name] = pick(p, point[d])
			d++
		}
		configs[i] = cfg
	}
	return configs, nil
}

// sampled reports whether a parameter takes a random or Sobol coordinate: a range, or a list of more
// than one value.
func sampled(p Parameter) bool {
	return p.Min != nil || len(p.Values) > 1 || isShape(p.Distribution)
}

func constant(p Parameter) any {
	if len(p.Values) == 1 {
		return normalize(p.Values[0])
	}
	return normalize(p.Value)
}

// pick maps u in [0, 1) onto a parameter.
func pick(p Parameter, u float64) any {
	if len(p.Values) > 0 {
		return normalize(p.Values[valueIndex(p, u)])
	}
	if v, ok := pickDist(p, u); ok {
		return v
	}
	lo, hi := *p.Min, *p.Max
	switch p.Distribution {
	case DistLogUniform:
		return math.Min(hi, math.Max(lo, math.Exp(math.Log(lo)+u*(math.Log(hi)-math.Log(lo)))))
	case DistIntUniform:
		k := math.Floor(lo + u*(hi-lo+1))
		return int64(math.Min(hi, math.Max(lo, k)))
	}
	return lo + u*(hi-lo)
}

// valueIndex is the index of the value of a values parameter that u in [0, 1) selects.
func valueIndex(p Parameter, u float64) int {
	if p.Probabilities != nil {
		return weightedIndex(p.Probabilities, u)
	}
	return min(int(u*float64(len(p.Values))), len(p.Values)-1)
}

// normalize gives parameter values the types Params promises: int64, float64, string or bool.
func normalize(v any) any {
	if x, ok := v.(int); ok {
		return int64(x)
	}
	return v
}
