package scheduler

import (
	"container/heap"
	"sort"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
)

// Method bayes with several objectives (sweeps.Spec.MultiObjective), as MOTPE (Ozaki et al. 2020,
// Optuna's MOTPESampler) runs TPE on them: a configuration's result is its objective vector, computed
// from its ended seeds by results.ObjectiveVectors (the IQM over seeds of each objective, the failure
// share, a configuration with a diverged seed infeasible; results.Objectives without the bootstrap
// intervals, which bayes does not read), and the estimator's good group is filled front by
// front: the configurations of non-dominated rank 1, then rank 2, and so on; within the rank the good
// group's boundary falls in, by greedy hypervolume subset selection, the configuration that adds the
// most hypervolume to those already chosen first. The hypervolume is that of the vectors scaled by
// results.Normalizer over the configurations known when the suggestion is made, with the reference
// point 1.1 in every objective; ties go to the larger crowding distance, then the lower configuration
// number. Pruned, infeasible and running configurations keep their tiers below the completed ones.
// Unlike MOTPE, the good group's kernels keep equal weights (MOTPE weighs each by its hypervolume
// contribution).
//
// The state keeps each ended seed's summary as far as the vector needs it (BayesSeed), not the vector:
// a sweep that continues as new computes the vectors again from them.

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
			t.End = &results.Verdict{Rule: diagnostics.RuleCollapsedAtEnd}
		}
		if s.SiblingDiverged {
			t.Pruning = &results.Pruning{SiblingDiverged: true}
		}
		trials[i] = t
	}
	return results.ObjectiveVectors(b.spec, trials)[0]
}

// finishPareto sets the result of configuration c, all of whose seeds ended, in a sweep with several
// objectives: completed with its objective vector when results.ObjectiveVectors ranks it (Score: the logged
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
// configuration number. Ranks are peeled only until the good group is full: the configurations past
// it follow in configuration order (the estimator weighs the bad group as a set, in no order).
func (b *bayes) paretoOrder(cs []int, nGood int) []int {
	objs := b.spec.Objectives
	n := len(cs)
	pts := make([]results.ConfigPoint, n)
	vecs := make([][]float64, n)
	for k, c := range cs {
		pts[k] = results.ConfigPoint{Config: c, Values: b.vectors[c]}
		vecs[k], _ = results.Minimizing(objs, b.vectors[c])
	}
	ranks, boundary, take := frontsUpTo(vecs, nGood)
	norm := results.Normalizer(objs, pts)
	var inGood []int // positions in cs of the ranked configurations
	for k, r := range ranks {
		if r > 0 {
			inGood = append(inGood, k)
		}
	}
	scaled := make([][]float64, len(inGood))
	subRanks := make([]int, len(inGood))
	for j, k := range inGood {
		scaled[j], subRanks[j] = norm(b.vectors[cs[k]]), ranks[k]
	}
	crowd := make([]float64, n)
	for j, c := range results.Crowding(scaled, subRanks) {
		crowd[inGood[j]] = c
	}
	picked := make([]int, n) // the greedy selection's order, from 1; 0 when not picked
	if take > 0 {
		var members []int
		var sub [][]float64
		for j, k := range inGood {
			if ranks[k] == boundary {
				members, sub = append(members, k), append(sub, scaled[j])
			}
		}
		ref := make([]float64, len(objs))
		for i := range ref {
			ref[i] = 1.1
		}
		for step, j := range greedySubset(sub, ref, take, func(a, c int) bool { return before(crowd, cs, members[a], members[c]) }) {
			picked[members[j]] = step + 1
		}
	}
	idx := make([]int, n)
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, c int) bool {
		ka, kc := idx[a], idx[c]
		if ranks[ka] != ranks[kc] {
			return ranks[ka] > 0 && (ranks[kc] == 0 || ranks[ka] < ranks[kc])
		}
		if ranks[ka] == 0 {
			return cs[ka] < cs[kc]
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

// frontsUpTo is the non-dominated sorting of vecs (all minimized), as results.ParetoRanks gives it,
// peeled front by front only until need of them are ranked: rank 0 for the rest. boundary is the rank
// the need-th point falls in when that rank does not fit whole, take how many of it fit; 0 and 0 when
// the ranked fronts fit exactly or every point fits.
func frontsUpTo(vecs [][]float64, need int) (ranks []int, boundary, take int) {
	ranks = make([]int, len(vecs))
	// In lexicographic order, a point that dominates another comes before it, so one pass against the
	// front found so far finds the front: a point dominated by a dominated point is dominated by the
	// front member that dominates that one.
	rest := make([]int, len(vecs))
	for k := range rest {
		rest[k] = k
	}
	sort.SliceStable(rest, func(a, c int) bool {
		va, vc := vecs[rest[a]], vecs[rest[c]]
		for i := range va {
			if va[i] != vc[i] {
				return va[i] < vc[i]
			}
		}
		return false
	})
	ranked := 0
	for r := 1; ranked < need && len(rest) > 0; r++ {
		var front, next []int
		for _, k := range rest {
			dominated := false
			for _, f := range front {
				if results.Dominates(vecs[f], vecs[k]) {
					dominated = true
					break
				}
			}
			if dominated {
				next = append(next, k)
			} else {
				front = append(front, k)
			}
		}
		for _, k := range front {
			ranks[k] = r
		}
		if ranked+len(front) > need {
			boundary, take = r, need-ranked
		}
		ranked += len(front)
		rest = next
	}
	return ranks, boundary, take
}

// greedySubset picks take of points one at a time, each the one that adds the most hypervolume (up to
// ref) to those picked before it, ties to the first by less; it returns their indices in the order
// picked. What a point adds can only shrink as others are picked, so the greedy search is lazy (Minoux
// 1978): a point's last computed gain bounds its gain now, and only the point whose bound leads is
// computed again, until the leader's gain is current: the same picks as computing every gain anew.
func greedySubset(points [][]float64, ref []float64, take int, less func(a, c int) bool) []int {
	h := &gainHeap{less: less}
	for j, p := range points {
		h.items = append(h.items, gainItem{j: j, bound: box(p, ref)}) // current at step 0
	}
	heap.Init(h)
	var picked []int
	var chosen [][]float64
	for len(picked) < take && h.Len() > 0 {
		top := &h.items[0]
		if top.at < len(picked) {
			top.bound, top.at = gain(points[top.j], chosen, ref), len(picked)
			heap.Fix(h, 0)
			continue
		}
		it := heap.Pop(h).(gainItem)
		picked, chosen = append(picked, it.j), append(chosen, points[it.j])
	}
	return picked
}

// gainItem is a point of greedySubset with the gain it had when computed at step at.
type gainItem struct {
	j, at int
	bound float64
}

// gainHeap keeps the largest bound on top, ties to the first by less.
type gainHeap struct {
	items []gainItem
	less  func(a, c int) bool
}

func (h *gainHeap) Len() int { return len(h.items) }
func (h *gainHeap) Less(a, c int) bool {
	x, y := h.items[a], h.items[c]
	if x.bound != y.bound {
		return x.bound > y.bound
	}
	return h.less(x.j, y.j)
}
func (h *gainHeap) Swap(a, c int) { h.items[a], h.items[c] = h.items[c], h.items[a] }
func (h *gainHeap) Push(x any)    { h.items = append(h.items, x.(gainItem)) }
func (h *gainHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// box is the volume p dominates up to ref (0 when it dominates none of it).
func box(p, ref []float64) float64 {
	v := 1.0
	for i := range p {
		v *= max(0, ref[i]-p[i])
	}
	return v
}

// gain is the hypervolume p adds to chosen: its box less the part the chosen points already cover,
// which is the hypervolume of each chosen point limited to p's box.
func gain(p []float64, chosen [][]float64, ref []float64) float64 {
	d := len(p)
	flat := make([]float64, len(chosen)*d)
	limited := make([][]float64, len(chosen))
	for k, q := range chosen {
		limited[k] = flat[k*d : (k+1)*d : (k+1)*d]
		for i := range p {
			limited[k][i] = max(p[i], q[i])
		}
	}
	return max(0, box(p, ref)-results.Hypervolume(limited, ref))
}

// before breaks a tie between the configurations at positions a and c of cs: the larger crowding
// distance first, then the lower configuration number.
func before(crowd []float64, cs []int, a, c int) bool {
	if crowd[a] != crowd[c] {
		return crowd[a] > crowd[c]
	}
	return cs[a] < cs[c]
}
