package scheduler

import (
	"math"
	"sort"

	"github.com/rlsweep/rlsweep/results"
)

// Method bayes with several objectives (sweeps.Spec.MultiObjective), as MOTPE (Ozaki et al. 2020,
// Optuna's MOTPESampler) runs TPE on them: a configuration's result is its objective vector, computed
// from its ended seeds by results.Objectives (the IQM over seeds of each objective, the failure share,
// a configuration with a diverged seed infeasible), and the estimator's good group is filled front by
// front: the configurations of non-dominated rank 1, then rank 2, and so on; within the rank the good
// group's boundary falls in, by greedy hypervolume subset selection, the configuration that adds the
// most hypervolume to those already chosen first. The hypervolume is that of the vectors scaled by
// results.Normalizer over the configurations known when the suggestion is made, with the reference
// point 1.1 in every objective; ties go to the larger crowding distance, then the lower configuration
// number.

// seedRecord is what a configuration's state keeps of one ended seed: its outcome and objective, and
// with several objectives what its objective vector needs.
func (b *bayes) seedRecord(seed int64, sum results.TrialSummary) BayesSeed {
	s := BayesSeed{Seed: seed, Outcome: sum.Outcome, Objective: sum.Objective}
	if b.spec.MultiObjective() {
		s.Steps, s.TargetStep, s.WallSeconds = sum.Steps, sum.TargetStep, sum.WallSeconds
		s.Collapsed = sum.End != nil
		s.SiblingDiverged = sum.Pruning != nil && sum.Pruning.SiblingDiverged
	}
	return s
}

// point is configuration c's objective vector and standing, from its ended seeds alone (rank 1 when it
// can be ranked).
func (b *bayes) point(c int) results.ConfigPoint {
	r := b.st.Configs[c]
	trials := make([]results.TrialSummary, len(r.Seeds))
	for i, s := range r.Seeds {
		t := results.TrialSummary{Config: c, Seed: s.Seed, Outcome: s.Outcome, Objective: s.Objective,
			Steps: s.Steps, TargetStep: s.TargetStep, WallSeconds: s.WallSeconds}
		if s.Collapsed {
			t.End = &results.Verdict{Rule: "collapsed_at_end"}
		}
		if s.SiblingDiverged {
			t.Pruning = &results.Pruning{SiblingDiverged: true}
		}
		trials[i] = t
	}
	return results.Objectives(b.spec, trials)[0]
}

// finishPareto sets the result of configuration c, all of whose seeds ended, in a sweep with several
// objectives: completed with its objective vector when results.Objectives ranks it (Score: the logged
// objective's score, oriented), pruned when a seed was pruned, else infeasible.
func (b *bayes) finishPareto(c int) {
	r := &b.st.Configs[c]
	p := b.point(c)
	switch {
	case p.Rank > 0:
		r.Result, r.Score = BayesCompleted, b.loggedScore(c)
		b.vectors[c] = p.Values
	case p.Why == results.WhyPruned:
		r.Result, r.Score = BayesPruned, b.prunedScore(c)
	default:
		r.Result = BayesInfeasible
	}
}

// loggedScore is configuration c's score of the logged objective (results.ConfigScore), oriented.
func (b *bayes) loggedScore(c int) float64 {
	seeds := b.st.Configs[c].Seeds
	trials := make([]results.TrialSummary, len(seeds))
	for i, s := range seeds {
		trials[i] = results.TrialSummary{Outcome: s.Outcome, Objective: s.Objective}
	}
	score, _ := results.ConfigScore(trials)
	if b.minimize {
		return -score
	}
	return score
}

// paretoOrder orders completed configurations cs (each with its vector in b.vectors) best first for a
// good group of nGood: by non-dominated rank; within the rank in which the nGood-th configuration
// falls, when that rank does not fit whole, first the configurations greedy hypervolume subset
// selection picks, in the order it picks them; then by crowding distance, larger first; then by
// configuration number.
func (b *bayes) paretoOrder(cs []int, nGood int) []int {
	objs := b.spec.Objectives
	n := len(cs)
	pts := make([]results.ConfigPoint, n)
	vecs := make([][]float64, n)
	for k, c := range cs {
		pts[k] = results.ConfigPoint{Config: c, Values: b.vectors[c]}
		vecs[k], _ = results.Minimizing(objs, b.vectors[c])
	}
	ranks := results.ParetoRanks(vecs)
	norm := results.Normalizer(objs, pts)
	scaled := make([][]float64, n)
	for k, c := range cs {
		scaled[k] = norm(b.vectors[c])
	}
	crowd := results.Crowding(scaled, ranks)

	// The rank the good group's boundary falls in, and how many of its configurations the group takes.
	count := map[int]int{}
	for _, r := range ranks {
		count[r]++
	}
	boundary, take := 0, 0
	for r, ahead := 1, 0; ahead < nGood && count[r] > 0; r++ {
		if ahead+count[r] > nGood {
			boundary, take = r, nGood-ahead
		}
		ahead += count[r]
	}
	picked := make([]int, n) // the greedy selection's order, from 1; 0 when not picked
	if take > 0 {
		var members []int
		for k, r := range ranks {
			if r == boundary {
				members = append(members, k)
			}
		}
		ref := make([]float64, len(objs))
		for i := range ref {
			ref[i] = 1.1
		}
		var chosen [][]float64
		hv := 0.0
		for step := 1; step <= take; step++ {
			best, bestGain := -1, math.Inf(-1)
			for _, k := range members {
				if picked[k] > 0 {
					continue
				}
				gain := results.Hypervolume(append(chosen[:len(chosen):len(chosen)], scaled[k]), ref) - hv
				if best < 0 || gain > bestGain || gain == bestGain && before(crowd, cs, k, best) {
					best, bestGain = k, gain
				}
			}
			picked[best] = step
			chosen = append(chosen, scaled[best])
			hv += bestGain
		}
	}
	idx := make([]int, n)
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, c int) bool {
		ka, kc := idx[a], idx[c]
		if ranks[ka] != ranks[kc] {
			return ranks[ka] < ranks[kc]
		}
		pa, pc := picked[ka], picked[kc]
		if (pa > 0) != (pc > 0) {
			return pa > 0
		}
		if pa != pc {
			return pa < pc
		}
		return before(crowd, cs, ka, kc)
	})
	out := make([]int, n)
	for k, i := range idx {
		out[k] = cs[i]
	}
	return out
}

// before breaks a tie between the configurations at positions a and c of cs: the larger crowding
// distance first, then the lower configuration number.
func before(crowd []float64, cs []int, a, c int) bool {
	if crowd[a] != crowd[c] {
		return crowd[a] > crowd[c]
	}
	return cs[a] < cs[c]
}
