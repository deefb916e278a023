package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
)

// TestMLPGradients checks Backward against central finite differences of the scalar loss
// L = Σ c⊙Forward(x), for parameters and inputs.
func TestMLPGradients(t *testing.T) {
	cases := []struct {
		name  string
		act   Activation
		sizes []int
		batch int
		tol   float64 // absolute; central differences with step 1e-6 are accurate to ~1e-8 here
	}{
		{"tanh 4-64-64-2", Tanh, []int{4, 64, 64, 2}, 5, 1e-6},
		{"relu 3-16-16-1", ReLU, []int{3, 16, 16, 1}, 7, 1e-6},
		{"tanh single layer", Tanh, []int{3, 2}, 4, 1e-6},
		{"tanh batch 1", Tanh, []int{2, 8, 3}, 1, 1e-6},
		// From featureMajorMin rows on, the feature-major path runs.
		{"tanh feature-major 4-16-16-2", Tanh, []int{4, 16, 16, 2}, featureMajorMin + 3, 1e-6},
		{"relu feature-major 12-16-1", ReLU, []int{12, 16, 1}, 2 * featureMajorMin, 1e-6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := NewMLP(tc.act, tc.sizes...)
			m.InitOrthogonal(rng, Sqrt2, 1)
			for i := range m.Params { // non-zero biases so they are exercised
				m.Params[i] += 0.1 * rng.NormFloat64()
			}
			in, out := tc.sizes[0], tc.sizes[len(tc.sizes)-1]
			x := randSlice(rng, tc.batch*in)
			c := randSlice(rng, tc.batch*out)
			ws := m.NewWorkspace(tc.batch)
			loss := func(p, xx []float64) float64 {
				saved := append([]float64(nil), m.Params...)
				copy(m.Params, p)
				y := m.Forward(ws, xx, tc.batch)
				copy(m.Params, saved)
				return floats.Dot(y, c)
			}
			clear(m.Grads)
			m.Forward(ws, x, tc.batch)
			dX := make([]float64, len(x))
			m.Backward(ws, c, dX)
			settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
			wantP := fd.Gradient(nil, func(p []float64) float64 { return loss(p, x) }, m.Params, settings)
			p0 := append([]float64(nil), m.Params...)
			wantX := fd.Gradient(nil, func(xx []float64) float64 { return loss(p0, xx) }, x, settings)
			if d := maxAbsDiff(m.Grads, wantP); d > tc.tol {
				t.Errorf("parameter gradient: max |got-want| = %g, want ≤ %g", d, tc.tol)
			}
			if d := maxAbsDiff(dX, wantX); d > tc.tol {
				t.Errorf("input gradient: max |got-want| = %g, want ≤ %g", d, tc.tol)
			}
		})
	}
}

// TestBackwardAccumulates checks that Backward adds to Grads rather than overwriting them.
func TestBackwardAccumulates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := NewMLP(Tanh, 3, 5, 2)
	m.InitOrthogonal(rng, 1, 1)
	ws := m.NewWorkspace(2)
	x, d := randSlice(rng, 6), randSlice(rng, 4)
	m.Forward(ws, x, 2)
	m.Backward(ws, d, nil)
	once := append([]float64(nil), m.Grads...)
	m.Backward(ws, d, nil)
	for i := range once {
		if got, want := m.Grads[i], 2*once[i]; math.Abs(got-want) > 1e-12 {
			t.Fatalf("Grads[%d] after two Backward = %g, want %g", i, got, want)
		}
	}
}

func TestOrthogonal(t *testing.T) {
	for _, tc := range []struct{ rows, cols int }{{64, 4}, {4, 64}, {64, 64}, {1, 64}, {2, 64}} {
		rng := rand.New(rand.NewPCG(5, 6))
		w := make([]float64, tc.rows*tc.cols)
		gain := 1.5
		Orthogonal(rng, w, tc.rows, tc.cols, gain)
		// The shorter side's vectors are orthonormal: W·Wᵀ = gain²·I (rows ≤ cols) or Wᵀ·W (rows > cols).
		n, stride := tc.rows, tc.cols
		vec := func(k, i int) float64 { return w[k*stride+i] }
		length := tc.cols
		if tc.rows > tc.cols {
			n, length = tc.cols, tc.rows
			vec = func(k, i int) float64 { return w[i*stride+k] }
		}
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				var s float64
				for i := 0; i < length; i++ {
					s += vec(a, i) * vec(b, i)
				}
				want := 0.0
				if a == b {
					want = gain * gain
				}
				if math.Abs(s-want) > 1e-12 {
					t.Fatalf("%dx%d: <v%d,v%d> = %g, want %g", tc.rows, tc.cols, a, b, s, want)
				}
			}
		}
	}
}

func TestParseActivation(t *testing.T) {
	for _, a := range []Activation{Tanh, ReLU} {
		got, err := ParseActivation(a.String())
		if err != nil || got != a {
			t.Errorf("ParseActivation(%q) = %v, %v; want %v", a.String(), got, err, a)
		}
	}
	if _, err := ParseActivation("gelu"); err == nil {
		t.Error("ParseActivation(gelu) succeeded, want an error")
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func maxAbsDiff(a, b []float64) float64 {
	var d float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// TestLayoutsAgree checks the batch-major and feature-major passes give the same outputs and
// gradients (up to summation order) on the same rows.
func TestLayoutsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := NewMLP(Tanh, 4, 64, 64, 2)
	m.InitOrthogonal(rng, Sqrt2, 0.5)
	batch := featureMajorMin
	x, d := randSlice(rng, batch*4), randSlice(rng, batch*2)
	big := m.NewWorkspace(batch)
	yBig := append([]float64(nil), m.Forward(big, x, batch)...)
	clear(m.Grads)
	dxBig := make([]float64, len(x))
	m.Backward(big, d, dxBig)
	gBig := append([]float64(nil), m.Grads...)
	// The same rows in chunks below featureMajorMin take the batch-major path.
	small := m.NewWorkspace(featureMajorMin / 2)
	clear(m.Grads)
	half := batch / 2
	for c := 0; c < 2; c++ {
		y := m.Forward(small, x[c*half*4:(c+1)*half*4], half)
		if diff := maxAbsDiff(y, yBig[c*half*2:(c+1)*half*2]); diff > 1e-12 {
			t.Errorf("outputs differ by %g", diff)
		}
		dx := make([]float64, half*4)
		m.Backward(small, d[c*half*2:(c+1)*half*2], dx)
		if diff := maxAbsDiff(dx, dxBig[c*half*4:(c+1)*half*4]); diff > 1e-12 {
			t.Errorf("input gradients differ by %g", diff)
		}
	}
	if diff := maxAbsDiff(m.Grads, gBig); diff > 1e-12 {
		t.Errorf("parameter gradients differ by %g", diff)
	}
}

func BenchmarkForwardBackward128(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := NewMLP(Tanh, 4, 64, 64, 2)
	m.InitOrthogonal(rng, Sqrt2, 0.01)
	ws := m.NewWorkspace(128)
	x, d := randSlice(rng, 128*4), randSlice(rng, 128*2)
	for b.Loop() {
		m.Forward(ws, x, 128)
		m.Backward(ws, d, nil)
	}
}
