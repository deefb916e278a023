package sweeps

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// MethodBayes is Bayesian search: the tree-structured Parzen estimator (scheduler/tpe.go), W&B's name.
const MethodBayes = "bayes"

// Defaults and bounds of the bayes section.
const (
	// DefaultStartupTrials is the most start-up configurations a bayes section without startup_trials
	// gets (DefaultStartup).
	DefaultStartupTrials = 10
	// MinDefaultStartupTrials is the fewest it gets.
	MinDefaultStartupTrials = 2
	DefaultRerunTop         = 3
	MaxRerunTop             = 100
	// MaxBayesTrials bounds trials (run_cap) for method bayes: a sweep that continues as new computes
	// its suggestions again, each one weighing every result before it.
	MaxBayesTrials = 1000
	// MaxParetoBayesTrials bounds trials for method bayes with several objectives: each suggestion
	// also sorts the configurations known into fronts and selects by hypervolume.
	MaxParetoBayesTrials = 300
)

// Bayes configures method bayes (docs/spec.md#bayes): how many configurations are drawn at random
// before the estimator takes over, and the re-run of the best configurations on fresh seeds once the
// search's budget is spent.
type Bayes struct {
	// StartupTrials: the first configurations are method random's, with the same sampler_seed; 0: left
	// out, DefaultStartup of the spec's trials (BayesSettings fills it in).
	StartupTrials int `json:"startup_trials,omitempty"`
	// RerunTop: how many of the best configurations run again on RerunSeeds once every configuration of
	// the search ended; 0 turns the re-run off.
	RerunTop int `json:"rerun_top"`
	// RerunSeeds are the re-run's seeds, none of them in seeds; empty: as many as seeds, counting up
	// from the largest of seeds (FreshSeeds).
	RerunSeeds []int64 `json:"rerun_seeds,omitempty"`
}

// DefaultBayes is the bayes section a spec without one gets: startup_trials left out (0), so that it
// follows the budget (DefaultStartup).
func DefaultBayes() Bayes {
	return Bayes{RerunTop: DefaultRerunTop}
}

// DefaultStartup is the start-up configurations of a bayes sweep of trials configurations whose
// startup_trials is left out: a third of them (integer division), at least MinDefaultStartupTrials and
// at most DefaultStartupTrials, so that a small budget leaves most of its configurations to TPE.
func DefaultStartup(trials int) int {
	return min(DefaultStartupTrials, max(MinDefaultStartupTrials, trials/3))
}

// StartupDefaulted reports whether the spec's bayes.startup_trials is left out, its value
// DefaultStartup of trials.
func (s *Spec) StartupDefaulted() bool {
	return s.Bayes == nil || s.Bayes.StartupTrials == 0
}

// BayesSettings is the spec's bayes section with its defaults: startup_trials left out is
// BayesStartup (DefaultStartup of trials, set as the spec was read; DefaultStartupTrials for a spec
// recorded without it), and the re-run's seeds are filled in.
func (s *Spec) BayesSettings() Bayes {
	b := DefaultBayes()
	if s.Bayes != nil {
		b = *s.Bayes
	}
	if b.StartupTrials == 0 {
		b.StartupTrials = s.BayesStartup
		if b.StartupTrials == 0 {
			b.StartupTrials = DefaultStartupTrials
		}
	}
	if len(b.RerunSeeds) == 0 {
		b.RerunSeeds = FreshSeeds(s.Seeds, len(s.Seeds))
	}
	return b
}

// FreshSeeds returns n seeds none of which is in used: the integers after the largest of used.
func FreshSeeds(used []int64, n int) []int64 {
	next := int64(0)
	for _, s := range used {
		next = max(next, s+1)
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = next + int64(i)
	}
	return out
}

// bayesSection decodes the bayes mapping.
func (d *decoder) bayesSection(v *yaml.Node, path string, s *Spec) {
	b := DefaultBayes()
	s.Bayes = &b
	d.mapping(v, path, []field{
		{"startup_trials", func(p string, v *yaml.Node) {
			// 0 stands for a section without startup_trials; written out, it is out of range.
			if d.smallInt(&b.StartupTrials)(p, v); b.StartupTrials == 0 && !d.bad[p] {
				d.fail(v, p, v.Value, startupWant())
			}
		}},
		{"rerun_top", d.smallInt(&b.RerunTop)},
		{"rerun_seeds", func(p string, v *yaml.Node) {
			b.RerunSeeds = []int64{}
			d.list(v, p, "a list of integers", func(_ int, p string, e *yaml.Node) {
				if n, ok := d.integer(e, p); ok {
					b.RerunSeeds = append(b.RerunSeeds, n)
				}
			})
		}},
	})
}

// startupWant is what bayes.startup_trials allows, and the default when it is left out.
func startupWant() string {
	return fmt.Sprintf("an integer in [1, %d], or no startup_trials for the default: a third of the configurations, within [%d, %d]",
		MaxTrials, MinDefaultStartupTrials, DefaultStartupTrials)
}

// bayes checks the bayes section, and that only method bayes has one.
func (c *checker) bayes() {
	s := c.s
	if s.Bayes == nil {
		return
	}
	if s.Method != MethodBayes {
		c.add("bayes", "a bayes section with method "+s.Method, "no bayes section, or method bayes")
		return
	}
	b := *s.Bayes
	if b.StartupTrials < 0 || b.StartupTrials > MaxTrials {
		c.add("bayes.startup_trials", strconv.Itoa(b.StartupTrials), startupWant())
	}
	if b.RerunTop < 0 || b.RerunTop > MaxRerunTop {
		c.add("bayes.rerun_top", strconv.Itoa(b.RerunTop), fmt.Sprintf("an integer in [0, %d], 0 turning the re-run off", MaxRerunTop))
	}
	if b.RerunSeeds != nil && len(b.RerunSeeds) == 0 {
		c.add("bayes.rerun_seeds", "an empty list", "at least one seed, such as [101, 102, 103], or no rerun_seeds")
	}
	first := map[int64]int{}
	for i, seed := range b.RerunSeeds {
		p := fmt.Sprintf("bayes.rerun_seeds[%d]", i)
		switch j, dup := first[seed]; {
		case seed < 0 || seed > MaxSeed:
			c.add(p, strconv.FormatInt(seed, 10), fmt.Sprintf("an integer in [0, %d] (numpy and torch seeds)", int64(MaxSeed)))
		case dup:
			c.add(p, strconv.FormatInt(seed, 10), fmt.Sprintf("each seed once (bayes.rerun_seeds[%d] is the same)", j))
		case slices.Contains(s.Seeds, seed):
			c.add(p, strconv.FormatInt(seed, 10), "a seed not in seeds (the re-run confirms on seeds the search did not use)")
		}
		first[seed] = i
	}
}

// rerunTrials is how many trials the re-run of a bayes sweep adds: top k × its seeds.
func (s *Spec) rerunTrials() int {
	if s.Method != MethodBayes {
		return 0
	}
	b := s.BayesSettings()
	return b.RerunTop * len(b.RerunSeeds)
}

// Sampled reports whether a parameter is searched: a range, a distribution, or a list of more than
// one value. Every other parameter is a constant (Constant).
func Sampled(p Parameter) bool { return sampled(p) }

// Constant is the value of a parameter that is not sampled.
func Constant(p Parameter) any { return constant(p) }

// Pick maps u in [0, 1) onto a sampled parameter as random and sobol do: u is the quantile of the
// parameter's distribution (log scale for the log distributions, rounded for integers and q_
// distributions), or selects a value of a list (by its probabilities when it has them).
func Pick(p Parameter, u float64) any { return pick(p, u) }

// ValueIndex is the index of the value of a values parameter that u in [0, 1) selects (Pick's choice).
func ValueIndex(p Parameter, u float64) int { return valueIndex(p, u) }

// MaxStartupDraws bounds the draws of the start-up configurations, per configuration asked for: a
// discrete space smaller than startup_trials gives fewer.
const MaxStartupDraws = 100

// StartupQuantiles are method bayes's random start-up configurations as quantiles: one u in [0, 1)
// per sampled parameter (Sampled), in spec order, drawn as method random draws them with the same
// sampler_seed, a configuration equal to an earlier one drawn again (at most MaxStartupDraws·n draws in
// all). With no duplicate, they are method random's first n.
func StartupQuantiles(s *Spec, n int) [][]float64 {
	rng := rand.New(rand.NewPCG(uint64(s.SamplerSeed), randomStream))
	seen := map[string]bool{}
	var out [][]float64
	for draws := 0; len(out) < n && draws < MaxStartupDraws*n; draws++ {
		u := make([]float64, 0, len(s.Parameters))
		cfg := make(map[string]any, len(s.Parameters))
		for _, p := range s.Parameters {
			if !sampled(p) {
				cfg[p.Name] = constant(p)
				continue
			}
			x := rng.Float64()
			u = append(u, x)
			cfg[p.Name] = pick(p, x)
		}
		if k := ConfigKey(cfg); !seen[k] {
			seen[k] = true
			out = append(out, u)
		}
	}
	return out
}

// StartupConfigs are the configurations of StartupQuantiles, each holding every parameter.
func StartupConfigs(s *Spec, n int) []map[string]any {
	var out []map[string]any
	for _, u := range StartupQuantiles(s, n) {
		cfg := make(map[string]any, len(s.Parameters))
		d := 0
		for _, p := range s.Parameters {
			if !sampled(p) {
				cfg[p.Name] = constant(p)
				continue
			}
			cfg[p.Name] = pick(p, u[d])
			d++
		}
		out = append(out, cfg)
	}
	return out
}

// ConfigKey identifies a configuration by its values: their JSON, keys sorted.
func ConfigKey(cfg map[string]any) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Sprint(cfg) // a non-finite float; Pick never makes one
	}
	return string(b)
}

// Budget is how many trials the sweep runs at most: configurations × seeds, and for method bayes the
// re-run's trials too.
func (s *Spec) Budget() int {
	n, _ := s.trialCount()
	return n
}
