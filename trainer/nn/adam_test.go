package nn

import (
	"math"
	"testing"
)

func TestAdamStep(t *testing.T) {
	// Reference values computed by hand from torch.optim.Adam's update with β=(0.9, 0.999), ε=1e-5:
	// step 1 with g=0.5, lr=0.1: m=0.05, v=2.5e-4, m̂=0.5, √v̂=0.5 → p = 1 − 0.1·0.5/(0.5+1e-5).
	// step 2 with g=−1: m=0.045−0.1=−0.055, v=2.4975e-4+1e-3, m̂=m/0.19, v̂=v/(1−0.999²).
	cases := []struct {
		name  string
		grads []float64
		want  float64
	}{
		{"one step", []float64{0.5}, 1 - 0.1*0.5/(0.5+1e-5)},
		{"two steps", []float64{0.5, -1}, func() float64 {
			p := 1 - 0.1*0.5/(0.5+1e-5)
			m := 0.9*0.05 + 0.1*-1
			v := 0.999*2.5e-4 + 0.001*1
			return p - 0.1/(1-0.81)*m/(math.Sqrt(v)/math.Sqrt(1-0.999*0.999)+1e-5)
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAdam(1, 0.1)
			p := []float64{1}
			for _, g := range tc.grads {
				a.Step(p, []float64{g})
			}
			if got := p[0]; math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("p = %.17g, want %.17g", got, tc.want)
			}
		})
	}
}

func TestClipGradNorm(t *testing.T) {
	cases := []struct {
		name     string
		grads    []float64
		max      float64
		wantNorm float64
		want     []float64
	}{
		// 3-4-5 triangle; torch scales by max/(norm+1e-6).
		{"clipped", []float64{3, 4}, 1, 5, []float64{3 / (5 + 1e-6), 4 / (5 + 1e-6)}},
		{"under the limit", []float64{0.3, 0.4}, 1, 0.5, []float64{0.3, 0.4}},
		{"NaN left alone", []float64{math.NaN(), 1}, 1, math.NaN(), []float64{math.NaN(), 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := append([]float64(nil), tc.grads...)
			norm := ClipGradNorm(g, tc.max)
			if !same(norm, tc.wantNorm) {
				t.Errorf("norm = %g, want %g", norm, tc.wantNorm)
			}
			for i := range g {
				if !same(g[i], tc.want[i]) {
					t.Errorf("g[%d] = %.17g, want %.17g", i, g[i], tc.want[i])
				}
			}
		})
	}
}

func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-15
}
