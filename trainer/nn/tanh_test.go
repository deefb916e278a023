package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTanh bounds the approximation's error against math.Tanh on a dense grid and checks its
// symmetry and saturation.
func TestTanh(t *testing.T) {
	var worst float64
	for i := -200000; i <= 200000; i++ {
		x := float64(i) * 1e-4
		worst = math.Max(worst, math.Abs(tanh(x)-math.Tanh(x)))
		if tanh(-x) != -tanh(x) {
			t.Fatalf("tanh(%g) = %v, tanh(%g) = %v: not odd", x, tanh(x), -x, tanh(-x))
		}
	}
	if worst > 3e-7 {
		t.Errorf("max |tanh − math.Tanh| on [−20, 20] = %g, want ≤ 3e-7", worst)
	}
	for _, x := range []float64{30, 1e300, math.Inf(1)} {
		if got := tanh(x); math.Abs(got-1) > 3e-7 {
			t.Errorf("tanh(%g) = %v, want 1 within 3e-7", x, got)
		}
	}
}

// TestTanhInPlace checks that the four-at-a-time evaluation gives exactly tanh's bits, for every
// remainder modulo four and for the values that take the clamp and NaN paths.
func TestTanhInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	special := []float64{0, math.Copysign(0, -1), tanhClamp, -tanhClamp, 8, -8, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	for n := 0; n <= 23; n++ {
		x := randSlice(rng, n)
		for i := range x {
			x[i] *= 4
			if i < len(special) && n > 12 {
				x[i] = special[i]
			}
		}
		got := append([]float64(nil), x...)
		tanhInPlace(got)
		for i, v := range x {
			want := tanh(v)
			if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
				t.Fatalf("n=%d: tanhInPlace gives %v for x[%d] = %v, want tanh's %v", n, got[i], i, v, want)
			}
		}
	}
}

// BenchmarkTanh times tanhInPlace on a 64×128 hidden layer's pre-activations.
func BenchmarkTanh(b *testing.B) {
	x := randSlice(rand.New(rand.NewPCG(1, 1)), 64*128)
	z := make([]float64, len(x))
	for b.Loop() {
		copy(z, x)
		tanhInPlace(z)
	}
}
