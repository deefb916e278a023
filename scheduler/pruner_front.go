package scheduler

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// decideFront decides config at decision step k on its objective vector there (asha with several
// objectives): seeds are its seeds with a value at the step, vals their values (oriented) and value
// their IQM.
func (p *Pruner) decideFront(config int, r *ConfigRecord, k int, seeds []string, vals []float64, value float64) Verdict {
	objs := p.cfg.Objectives
	vec := p.rungVector(r, k, seeds, value)
	var peers [][]float64
	self := strconv.Itoa(config)
	for key, o := range p.st.Configs {
		if key == self || len(o.Vectors) <= k {
			continue
		}
		if m, ok := results.Minimizing(objs, o.Vectors[k]); ok {
			peers = append(peers, m)
		}
	}
	// Map iteration order must not reach the decision: peers are sorted, and ranks, crowding and
	// places depend on the set alone.
	slices.SortFunc(peers, slices.Compare)
	mine, _ := results.Minimizing(objs, vec)
	stop, rank, place, keep := p.judgeFront(mine, peers)
	if stop && k > 0 && place <= 2*keep+1 {
		// The seed guard: with its logged objective better by its seeds' noise, would it go on?
		if margin, ok := seedMargin(vals); ok {
			better := slices.Clone(mine)
			better[p.loggedIndex()] = -(value + margin) // minimizing: the oriented value negated
			if again, _, _, _ := p.judgeFront(better, peers); !again {
				stop, r.Spared = false, append(r.Spared, k)
			}
		}
	}
	r.Values = append(r.Values, value)
	r.Vectors = append(r.Vectors, vec)
	r.Pending, r.PendingProgress = nil, nil
	if stop {
		r.Stopped, r.Cutoff, r.Peers, r.Rank = true, nil, len(peers), rank
	}
	return p.recorded(r, k)
}

// judgeFront says whether a configuration with the objective vector mine (every coordinate minimized)
// stops against its peers' vectors at the same step: it goes on when it is non-dominated among them
// all, or among the first keep (asha's top 1/Eta) by non-dominated rank and then crowding distance,
// a configuration that ties it in both not ahead of it. It returns its rank, its place in that order
// (1 first) and keep.
func (p *Pruner) judgeFront(mine []float64, peers [][]float64) (stop bool, rank, place, keep int) {
	all := append(slices.Clone(peers), mine)
	n, self := len(all), len(all)-1
	keep = n / p.cfg.Eta
	if p.cfg.Strict {
		keep++
	} else {
		keep = max(keep, 1)
	}
	ranks := results.ParetoRanks(all)
	crowd := results.Crowding(all, ranks)
	place = 1
	for i := range self {
		if ranks[i] < ranks[self] || ranks[i] == ranks[self] && crowd[i] > crowd[self] {
			place++
		}
	}
	if ranks[self] == 1 || keep >= n {
		return false, ranks[self], place, keep
	}
	return place > keep, ranks[self], place, keep
}

// loggedIndex is the index of the objective the trainer logs.
func (p *Pruner) loggedIndex() int {
	for i, o := range p.cfg.Objectives {
		if !o.Derived() {
			return i
		}
	}
	return 0
}

// rungVector is a configuration's objective vector at decision step k, in the objectives' units, from
// its seeds' values there (value, their IQM, oriented) and Progress:
//   - the logged objective: value;
//   - env_steps to a target: the IQM over the seeds of the step each first reached the target, never
//     (+Inf) for a seed that has not by the step;
//   - env_steps without a target: the step itself, the same for every configuration there;
//   - wall_seconds: the IQM over the seeds of their training wall seconds so far, and gpu_seconds that
//     times resources.gpus;
//   - seed_failure_rate: its seeds that ended failed so far, over its seeds.
func (p *Pruner) rungVector(r *ConfigRecord, k int, seeds []string, value float64) results.Floats {
	vec := make(results.Floats, len(p.cfg.Objectives))
	progress := func(f func(Progress) float64) []float64 {
		xs := make([]float64, 0, len(seeds))
		for _, s := range seeds {
			xs = append(xs, f(r.PendingProgress[s]))
		}
		return xs
	}
	for i, o := range p.cfg.Objectives {
		switch {
		case !o.Derived():
			vec[i] = p.unorient(value)
		case o.Name == sweeps.ObjectiveEnvSteps && o.Target != nil:
			vec[i] = results.IQMNever(progress(func(g Progress) float64 {
				if g.TargetStep > 0 {
					return float64(g.TargetStep)
				}
				return math.Inf(1)
			}))
		case o.Name == sweeps.ObjectiveEnvSteps:
			vec[i] = float64(p.cfg.Steps[k])
		case o.Name == sweeps.ObjectiveWallSeconds || o.Name == sweeps.ObjectiveGPUSeconds:
			vec[i] = diagnostics.IQM(progress(func(g Progress) float64 { return g.Seconds }))
			if o.Name == sweeps.ObjectiveGPUSeconds {
				vec[i] *= p.cfg.GPUs
			}
		case o.Name == sweeps.ObjectiveSeedFailureRate:
			vec[i] = float64(len(r.Failed)) / float64(max(p.cfg.Seeds, len(r.Started), 1))
		}
	}
	return vec
}

// describeVector writes a configuration's objective vector as the reasons print it: each objective's
// label and value.
func (p *Pruner) describeVector(vec []float64) string {
	var parts []string
	for i, o := range p.cfg.Objectives {
		if i < len(vec) {
			parts = append(parts, o.Label()+" "+results.FormatObjective(o, vec[i]))
		}
	}
	return strings.Join(parts, ", ")
}
