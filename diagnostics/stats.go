package diagnostics

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// IQM returns the interquartile mean of xs: the mean of the values left after sorting and dropping
// ⌊n/4⌋ from each end, as scipy.stats.trim_mean(x, 0.25) and rliable compute it. It returns NaN for no
// values. xs is not modified.
func IQM(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	cut := len(s) / 4
	var sum float64
	for _, x := range s[cut : len(s)-cut] {
		sum += x
	}
	return sum / float64(len(s)-2*cut)
}

// StratifiedBootstrapCI returns a percentile confidence interval for stat over strata (for rliable:
// one stratum per task, holding one score per run). Each of reps bootstrap samples draws, within every
// stratum independently, as many scores as the stratum holds, with replacement; the interval is the
// (1−confidence)/2 and (1+confidence)/2 percentiles of stat over the samples, interpolated linearly as
// numpy.percentile does. Randomness comes from rnd only, so a fixed seed gives a fixed interval.
//
// It panics on reps < 1, confidence outside (0, 1), or an empty stratum: those are programmer errors.
func StratifiedBootstrapCI(strata [][]float64, stat func([][]float64) float64, reps int, confidence float64,
	rnd *rand.Rand) (lo, hi float64) {
	if reps < 1 || !(confidence > 0 && confidence < 1) {
		panic("diagnostics: StratifiedBootstrapCI needs reps ≥ 1 and 0 < confidence < 1")
	}
	sample := make([][]float64, len(strata))
	for i, s := range strata {
		if len(s) == 0 {
			panic("diagnostics: StratifiedBootstrapCI got an empty stratum")
		}
		sample[i] = make([]float64, len(s))
	}
	stats := make([]float64, reps)
	for r := range stats {
		for i, s := range strata {
			for j := range sample[i] {
				sample[i][j] = s[rnd.IntN(len(s))]
			}
		}
		stats[r] = stat(sample)
	}
	sort.Float64s(stats)
	alpha := (1 - confidence) / 2
	return percentile(stats, alpha), percentile(stats, 1-alpha)
}

// percentile returns the q-quantile (0 ≤ q ≤ 1) of sorted xs with numpy's default linear
// interpolation: position q·(n−1), interpolated between its neighbours.
func percentile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + frac*(sorted[i+1]-sorted[i])
}

// ProbabilityOfImprovement returns P(X > Y) for X drawn from xs and Y from ys: the fraction of the
// len(xs)·len(ys) pairs with x > y, a tie counting ½ (the Mann–Whitney U statistic over the number of
// pairs, as rliable's probability of improvement computes it for one task). NaN for an empty side.
func ProbabilityOfImprovement(xs, ys []float64) float64 {
	if len(xs) == 0 || len(ys) == 0 {
		return math.NaN()
	}
	var wins float64
	for _, x := range xs {
		for _, y := range ys {
			switch {
			case x > y:
				wins++
			case x == y:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(xs)*len(ys))
}
