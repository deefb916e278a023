package results

import (
	"math"
	"slices"
	"sort"
)

// The Pareto arithmetic of multi-objective sweeps. Every function here takes points whose coordinates are
// all to be minimized: a caller turns a maximized objective into its negation first (Minimizing).

// Dominates says whether a is at least as good as b in every coordinate and better in one.
func Dominates(a, b []float64) bool {
	better := false
	for i := range a {
		switch {
		case a[i] > b[i]:
			return false
		case a[i] < b[i]:
			better = true
		}
	}
	return better
}

// ParetoRanks is the non-dominated sorting of points (Deb et al. 2002): rank 1 for the points no other
// point dominates, rank 2 for those only rank-1 points dominate, and so on. Equal points share a rank.
func ParetoRanks(points [][]float64) []int {
	n := len(points)
	ranks := make([]int, n)
	dominatedBy := make([]int, n) // how many points dominate i
	dominates := make([][]int, n) // the points i dominates
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case Dominates(points[i], points[j]):
				dominates[i] = append(dominates[i], j)
				dominatedBy[j]++
			case Dominates(points[j], points[i]):
				dominates[j] = append(dominates[j], i)
				dominatedBy[i]++
			}
		}
	}
	var front []int
	for i := range n {
		if dominatedBy[i] == 0 {
			front = append(front, i)
		}
	}
	for rank := 1; len(front) > 0; rank++ {
		var next []int
		for _, i := range front {
			ranks[i] = rank
			for _, j := range dominates[i] {
				if dominatedBy[j]--; dominatedBy[j] == 0 {
					next = append(next, j)
				}
			}
		}
		front = next
	}
	return ranks
}

// Crowding is NSGA-II's crowding distance of each point among the points of its own rank (ranks as
// ParetoRanks gives them): per coordinate, the gap between its two neighbours divided by the rank's range
// there, summed. A rank's extreme points in any coordinate, and a rank of one or two points, get +Inf.
func Crowding(points [][]float64, ranks []int) []float64 {
	out := make([]float64, len(points))
	byRank := map[int][]int{}
	for i, r := range ranks {
		byRank[r] = append(byRank[r], i)
	}
	for _, members := range byRank {
		if len(members) <= 2 {
			for _, i := range members {
				out[i] = math.Inf(1)
			}
			continue
		}
		for m := range points[members[0]] {
			sorted := slices.Clone(members)
			sort.SliceStable(sorted, func(a, b int) bool { return points[sorted[a]][m] < points[sorted[b]][m] })
			lo, hi := points[sorted[0]][m], points[sorted[len(sorted)-1]][m]
			out[sorted[0]], out[sorted[len(sorted)-1]] = math.Inf(1), math.Inf(1)
			if hi == lo || math.IsInf(hi-lo, 0) || math.IsNaN(hi-lo) {
				continue
			}
			for k := 1; k < len(sorted)-1; k++ {
				out[sorted[k]] += (points[sorted[k+1]][m] - points[sorted[k-1]][m]) / (hi - lo)
			}
		}
	}
	return out
}

// Hypervolume is the volume of the region the points dominate and that dominates ref (all coordinates
// minimized): the size of what a front covers, up to the reference point. Points that do not strictly
// dominate ref in every coordinate add nothing. Exact, by the WFG algorithm (While, Bradstreet and Barone
// 2012), with a sweep for two coordinates.
func Hypervolume(points [][]float64, ref []float64) float64 {
	var in [][]float64
	for _, p := range points {
		inside := true
		for i := range p {
			if !(p[i] < ref[i]) || math.IsNaN(p[i]) {
				inside = false
				break
			}
		}
		if inside {
			in = append(in, p)
		}
	}
	return wfg(nonDominated(in), ref)
}

// HypervolumeContributions is each point's exclusive share of Hypervolume: what the front loses
// without it (0 for a dominated or duplicated point).
func HypervolumeContributions(points [][]float64, ref []float64) []float64 {
	total := Hypervolume(points, ref)
	out := make([]float64, len(points))
	for i := range points {
		rest := make([][]float64, 0, len(points)-1)
		rest = append(rest, points[:i]...)
		rest = append(rest, points[i+1:]...)
		out[i] = max(0, total-Hypervolume(rest, ref))
	}
	return out
}

// nonDominated keeps one copy of each point no other point dominates.
func nonDominated(points [][]float64) [][]float64 {
	var out [][]float64
	for i, p := range points {
		keep := true
		for j, q := range points {
			if i != j && (Dominates(q, p) || (j < i && slices.Equal(q, p))) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

// wfg is the hypervolume of mutually non-dominated points inside ref.
func wfg(points [][]float64, ref []float64) float64 {
	if len(points) == 0 {
		return 0
	}
	d := len(ref)
	if d == 1 {
		best := points[0][0]
		for _, p := range points {
			best = min(best, p[0])
		}
		return ref[0] - best
	}
	if d == 2 {
		sorted := slices.Clone(points)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a][0] < sorted[b][0] })
		vol, y := 0.0, ref[1]
		for _, p := range sorted {
			if p[1] < y {
				vol += (ref[0] - p[0]) * (y - p[1])
				y = p[1]
			}
		}
		return vol
	}
	// Sorting by the last coordinate, worst first, keeps the limited sets small.
	sorted := slices.Clone(points)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a][d-1] > sorted[b][d-1] })
	vol := 0.0
	for k, p := range sorted {
		box := 1.0
		for i := range p {
			box *= ref[i] - p[i]
		}
		// Exclusive volume of p against the points after it: its box less what they cover of it.
		limited := make([][]float64, 0, len(sorted)-k-1)
		for _, q := range sorted[k+1:] {
			l := make([]float64, d)
			for i := range q {
				l[i] = max(p[i], q[i])
			}
			limited = append(limited, l)
		}
		vol += box - wfg(nonDominated(limited), ref)
	}
	return vol
}
