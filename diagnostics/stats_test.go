package diagnostics

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestIQM(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		// Hand-computed: n=8 drops 2 from each end: mean(3, 4, 5, 6) = 4.5.
		{[]float64{8, 1, 7, 2, 6, 3, 5, 4}, 4.5},
		// n=5 drops ⌊1.25⌋ = 1 from each end: mean(2, 3, 100) = 35.
		{[]float64{1, 2, 3, 100, 1000}, 35},
		// n=3 drops none: the mean.
		{[]float64{1, 2, 6}, 3},
		// n=4 drops 1 from each end: mean(2, 3) = 2.5.
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	}
	for _, tt := range tests {
		if got := IQM(tt.xs); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("IQM(%v) = %g, want %g", tt.xs, got, tt.want)
		}
	}
	if got := IQM(nil); !math.IsNaN(got) {
		t.Errorf("IQM(nil) = %g, want NaN", got)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	// numpy.percentile([1,2,3,4], [0, 25, 50, 97.5, 100]) = [1, 1.75, 2.5, 3.925, 4].
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.975, 3.925}, {1, 4}} {
		if got := percentile(xs, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("percentile(%v, %g) = %g, want %g", xs, c.q, got, c.want)
		}
	}
}

func TestStratifiedBootstrapCI(t *testing.T) {
	mean := func(strata [][]float64) float64 {
		var s float64
		var n int
		for _, st := range strata {
			for _, x := range st {
				s += x
				n++
			}
		}
		return s / float64(n)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	// Two constant strata: every stratified resample keeps 3 zeros and 3 tens, so the mean is always 5.
	// (An unstratified bootstrap of the six values would vary from 0 to 10.)
	lo, hi := StratifiedBootstrapCI([][]float64{{0, 0, 0}, {10, 10, 10}}, mean, 1000, 0.95, rnd)
	if lo != 5 || hi != 5 {
		t.Errorf("constant strata: CI = [%g, %g], want [5, 5]", lo, hi)
	}
	// Mean of a resample of {0, 1}: 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so the 2.5th
	// percentile is 0 and the 97.5th is 1 once reps is large.
	lo, hi = StratifiedBootstrapCI([][]float64{{0, 1}}, mean, 4000, 0.95, rnd)
	if lo != 0 || hi != 1 {
		t.Errorf("{0, 1}: CI = [%g, %g], want [0, 1]", lo, hi)
	}
	// A 40% interval: the 30th and 70th percentiles, both inside the middle half of mass at 0.5.
	lo, hi = StratifiedBootstrapCI([][]float64{{0, 1}}, mean, 4000, 0.4, rnd)
	if lo != 0.5 || hi != 0.5 {
		t.Errorf("{0, 1} at 40%%: CI = [%g, %g], want [0.5, 0.5]", lo, hi)
	}
	// Same seed, same interval.
	iqm := func(s [][]float64) float64 { return IQM(s[0]) }
	a1, b1 := StratifiedBootstrapCI([][]float64{{1, 5, 2, 8}}, iqm, 200, 0.95, rand.New(rand.NewPCG(7, 7)))
	a2, b2 := StratifiedBootstrapCI([][]float64{{1, 5, 2, 8}}, iqm, 200, 0.95, rand.New(rand.NewPCG(7, 7)))
	if a1 != a2 || b1 != b2 || !(a1 < b1) {
		t.Errorf("seeded CIs [%g, %g] and [%g, %g], want equal and non-empty", a1, b1, a2, b2)
	}
}

func TestProbabilityOfImprovement(t *testing.T) {
	// Reference values counted by hand over every (x, y) pair, ties ½.
	cases := []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"all better", []float64{3, 4}, []float64{1, 2}, 1},
		{"all worse", []float64{1, 2}, []float64{3, 4}, 0},
		{"identical", []float64{1, 2}, []float64{1, 2}, 0.5},         // ½ + 0 + 1 + ½ over 4
		{"ties", []float64{2, 3, 5}, []float64{1, 3}, 0.75},          // 1+0 + 1+½ + 1+1 over 6
		{"one baseline", []float64{1, 2, 3, 4}, []float64{2.5}, 0.5}, // 2 of 4
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ProbabilityOfImprovement(c.xs, c.ys); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("ProbabilityOfImprovement(%v, %v) = %v, want %v", c.xs, c.ys, got, c.want)
			}
		})
	}
	if got := ProbabilityOfImprovement(nil, []float64{1}); !math.IsNaN(got) {
		t.Errorf("ProbabilityOfImprovement(nil, [1]) = %v, want NaN", got)
	}
}

// MeanMargin: t(q, n−1)·s/√n.
func TestMeanMargin(t *testing.T) {
	// s = √2, n = 2, t(0.95, 1) = 6.31375: the margin is t itself.
	if m, ok := MeanMargin([]float64{1, 3}, 0.95); !ok || math.Abs(m-6.31375) > 1e-4 {
		t.Errorf("MeanMargin(1, 3; 0.95) = %v %v, want 6.31375", m, ok)
	}
	// s = 1, n = 3, t(0.975, 2) = 4.30265: 4.30265/√3 = 2.48414.
	if m, ok := MeanMargin([]float64{1, 2, 3}, 0.975); !ok || math.Abs(m-2.48414) > 1e-4 {
		t.Errorf("MeanMargin(1, 2, 3; 0.975) = %v %v, want 2.48414", m, ok)
	}
	if _, ok := MeanMargin([]float64{1}, 0.95); ok {
		t.Error("a margin from one value")
	}
}

// PredictionInterval: mean ± t(0.975, n−1)·s·√(1/n + 1/m).
func TestPredictionInterval(t *testing.T) {
	lo, hi, ok := PredictionInterval([]float64{20, 22}, 1, 0.95)
	// mean 21, s = √2, t(0.975, 1) = 12.7062: half 12.7062·√2·√1.5 = 22.0078.
	if !ok || math.Abs(lo-(21-22.0078)) > 1e-3 || math.Abs(hi-(21+22.0078)) > 1e-3 {
		t.Errorf("PredictionInterval(20, 22; 1) = [%v, %v] %v, want 21 ± 22.008", lo, hi, ok)
	}
	if _, _, ok := PredictionInterval([]float64{1}, 1, 0.95); ok {
		t.Error("an interval from one value")
	}
}
