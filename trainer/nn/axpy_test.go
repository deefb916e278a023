package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestAxpyKernelsAgree checks that the AVX kernel gives gonum's bits for every length up to 70
// (each remainder of the 16- and 4-element loops) at every 8-byte offset within 32 bytes.
func TestAxpyKernelsAgree(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this CPU or architecture")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 0; n <= 70; n++ {
		for off := 0; off < 4; off++ {
			x := randSlice(rng, n+off)[off:]
			y0 := randSlice(rng, n+off+1)[off:]
			alpha := rng.NormFloat64()
			got, want := append([]float64(nil), y0...), append([]float64(nil), y0...)
			axpyAVX(alpha, x, got[:n])
			axpyGeneric(alpha, x, want[:n])
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d offset=%d: y[%d] = %v, want gonum's %v", n, off, i, got[i], want[i])
				}
			}
		}
	}
}

// TestProductsMatchGemm checks mulAdd, mulTransA and mulTransAAdd against blas64.Gemm bit for bit,
// on the shapes the PPO networks use and odd ones, with zeros in A to exercise the skipped terms.
func TestProductsMatchGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, s := range []struct{ m, k, n int }{{64, 64, 128}, {2, 64, 128}, {64, 4, 128}, {64, 64, 4}, {3, 5, 7}, {1, 1, 1}} {
		a := randSlice(rng, s.m*s.k)
		for i := 0; i < len(a); i += 3 {
			a[i] = 0
		}
		b, c0 := randSlice(rng, s.k*s.n), randSlice(rng, s.m*s.n)
		check := func(name string, got []float64, tA blas.Transpose, beta float64) {
			t.Helper()
			want := append([]float64(nil), c0...)
			ga := general(s.m, s.k, a)
			if tA == blas.Trans {
				ga = general(s.k, s.m, a)
			}
			blas64.Gemm(tA, blas.NoTrans, 1, ga, general(s.k, s.n, b), beta, general(s.m, s.n, want))
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s %d×%d×%d: C[%d] = %v, want Gemm's %v", name, s.m, s.k, s.n, i, got[i], want[i])
				}
			}
		}
		c := append([]float64(nil), c0...)
		mulAdd(c, a, b, s.m, s.k, s.n)
		check("mulAdd", c, blas.NoTrans, 1)
		c = append([]float64(nil), c0...)
		mulTransAAdd(c, a, b, s.m, s.k, s.n)
		check("mulTransAAdd", c, blas.Trans, 1)
		c = append([]float64(nil), c0...)
		mulTransA(c, a, b, s.m, s.k, s.n)
		check("mulTransA", c, blas.Trans, 0)
	}
}

// BenchmarkAxpy128 times one axpy of a 128-sample minibatch row.
func BenchmarkAxpy128(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := randSlice(rng, 128), randSlice(rng, 128)
	for b.Loop() {
		axpy(1e-3, x, y)
	}
}
