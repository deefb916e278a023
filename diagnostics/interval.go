package diagnostics

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MeanMargin returns t(q, n−1)·s/√n, the margin of the Student-t bound at quantile q on the mean of
// xs (q 0.95: a one-sided 95% bound; 0.975: each side of a two-sided 95% interval), s the sample
// standard deviation of the n values. ok is false with fewer than two values.
func MeanMargin(xs []float64, q float64) (margin float64, ok bool) {
	if len(xs) < 2 {
		return 0, false
	}
	sd := stat.StdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(q)
	return t * sd / math.Sqrt(float64(len(xs))), true
}

// PredictionInterval returns the Student-t prediction interval, at the given level, of the mean of m
// new values drawn like xs: mean ± t((1+level)/2, n−1)·s·√(1/n + 1/m), s the sample standard
// deviation of the n values of xs. ok is false with fewer than two values or m < 1.
func PredictionInterval(xs []float64, m int, level float64) (lo, hi float64, ok bool) {
	if len(xs) < 2 || m < 1 {
		return 0, 0, false
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile((1 + level) / 2)
	half := t * sd * math.Sqrt(1/float64(len(xs))+1/float64(m))
	return mean - half, mean + half, true
}
