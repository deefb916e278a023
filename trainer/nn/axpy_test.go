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

// TestAxpy4KernelsAgree checks that the four-term AVX kernel gives the bits of four gonum axpys in
// turn, for every length up to 40 at every 8-byte offset within 32 bytes.
func TestAxpy4KernelsAgree(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this CPU or architecture")
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for n := 0; n <= 40; n++ {
		for off := 0; off < 4; off++ {
			var x [4][]float64
			for j := range x {
				x[j] = randSlice(rng, n+off)[off:]
			}
			y0 := randSlice(rng, n+off+1)[off:]
			a := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			got, want := append([]float64(nil), y0...), append([]float64(nil), y0...)
			axpy4AVX(&a, x[0], x[1], x[2], x[3], got[:n])
			axpy4Generic(&a, x[0], x[1], x[2], x[3], want[:n])
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d offset=%d: y[%d] = %v, want four gonum axpys' %v", n, off, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDot4KernelsAgree checks that the four-product AVX kernel gives the bits of four gonum dot
// products, for every length up to 40 at every 8-byte offset within 32 bytes.
func TestDot4KernelsAgree(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this CPU or architecture")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for n := 0; n <= 40; n++ {
		for off := 0; off < 4; off++ {
			x := randSlice(rng, n+off)[off:]
			var y [4][]float64
			for j := range y {
				y[j] = randSlice(rng, n+off)[off:]
			}
			var got, want [4]float64
			dot4AVX(x, y[0], y[1], y[2], y[3], &got)
			dot4Generic(x, y[0], y[1], y[2], y[3], &want)
			for j := range got {
				if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
					t.Fatalf("n=%d offset=%d: dot %d = %v, want gonum's %v", n, off, j, got[j], want[j])
				}
			}
		}
	}
}

// TestProductsMatchGemm checks mulAdd, mulTransA, mulTransAAdd and mulTransBAdd against blas64.Gemm
// bit for bit, on the shapes the PPO networks use and odd ones, with zeros in A to exercise the
// skipped terms.
func TestProductsMatchGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, s := range []struct{ m, k, n int }{{64, 64, 128}, {2, 64, 128}, {64, 4, 128}, {64, 64, 4}, {3, 5, 7}, {1, 1, 1}} {
		a := randSlice(rng, s.m*s.k)
		for i := 0; i < len(a); i += 3 {
			a[i] = 0
		}
		b, c0 := randSlice(rng, s.k*s.n), randSlice(rng, s.m*s.n)
		check := func(name string, got []float64, tA, tB blas.Transpose, beta float64) {
			t.Helper()
			want := append([]float64(nil), c0...)
			ga, gb := general(s.m, s.k, a), general(s.k, s.n, b)
			if tA == blas.Trans {
				ga = general(s.k, s.m, a)
			}
			if tB == blas.Trans {
				gb = general(s.n, s.k, b)
			}
			blas64.Gemm(tA, tB, 1, ga, gb, beta, general(s.m, s.n, want))
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s %d×%d×%d: C[%d] = %v, want Gemm's %v", name, s.m, s.k, s.n, i, got[i], want[i])
				}
			}
		}
		c := append([]float64(nil), c0...)
		mulAdd(c, a, b, s.m, s.k, s.n)
		check("mulAdd", c, blas.NoTrans, blas.NoTrans, 1)
		c = append([]float64(nil), c0...)
		mulTransAAdd(c, a, b, s.m, s.k, s.n)
		check("mulTransAAdd", c, blas.Trans, blas.NoTrans, 1)
		c = append([]float64(nil), c0...)
		mulTransA(c, a, b, s.m, s.k, s.n)
		check("mulTransA", c, blas.Trans, blas.NoTrans, 0)
		c = append([]float64(nil), c0...)
		mulTransBAdd(c, a, b, s.m, s.k, s.n)
		check("mulTransBAdd", c, blas.NoTrans, blas.Trans, 1)
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

func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}
