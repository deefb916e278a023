package nn

import "gonum.org/v1/gonum/floats"

// The network's matrix products, computed in gonum's order so that the bits are blas64.Gemm's
// (TestProductsMatchGemm), with kernels that do several of gonum's at once:
//
//   - A·B and Aᵀ·B (forward pass, input gradients): each row of C is a linear combination of rows
//     of B, added term by term in order of l, skipping zero coefficients, as dgemmSerialNotNot and
//     dgemmSerialTransNot add it; axpy4 adds four terms per pass over the row of C. For Aᵀ·B the
//     loop nest changes too: one row of C at a time stays in L1, where gonum reads and writes the
//     whole of C (64 KiB for a 64×128 layer) k times.
//   - A·Bᵀ (weight gradients, small-batch forward): each element is a dot product of a row of A and
//     a row of B, as dgemmSerialNotTrans computes it; dot4 computes four with one pass over A's row.
//
// blas64.Gemm itself spends most of its time in one call per row pair to kernels that each keep a
// single chain of additions (DotUnitary) or load and store the row of C once per term (AxpyUnitary):
// for 64-wide layers and 128-sample minibatches, that is the ceiling.

// mulAdd adds A·B to C: C (m×n) += A (m×k) · B (k×n), all row-major with unit column stride.
func mulAdd(c, a, b []float64, m, k, n int) {
	for i := 0; i < m; i++ {
		combine(c[i*n:(i+1)*n], a[i*k:], 1, k, b)
	}
}

// mulTransA sets C to Aᵀ·B: C (m×n) = Aᵀ · B for A (k×m) and B (k×n), all row-major.
func mulTransA(c, a, b []float64, m, k, n int) {
	clear(c[:m*n])
	mulTransAAdd(c, a, b, m, k, n)
}

// mulTransAAdd adds Aᵀ·B to C: C (m×n) += Aᵀ · B for A (k×m) and B (k×n), all row-major.
func mulTransAAdd(c, a, b []float64, m, k, n int) {
	for i := 0; i < m; i++ {
		combine(c[i*n:(i+1)*n], a[i:], m, k, b)
	}
}

// combine adds Σ_l coef[l·stride]·B[l,:] to y for l = 0…k−1, B being k×len(y) row-major, one term
// after the other and skipping zero coefficients, four terms per axpy4.
func combine(y, coef []float64, stride, k int, b []float64) {
	n := len(y)
	var a [4]float64
	var row [4]int
	q := 0
	for l := 0; l < k; l++ {
		v := coef[l*stride]
		if v == 0 {
			continue
		}
		a[q], row[q] = v, l*n
		q++
		if q == 4 {
			axpy4(&a, b[row[0]:row[0]+n], b[row[1]:row[1]+n], b[row[2]:row[2]+n], b[row[3]:row[3]+n], y)
			q = 0
		}
	}
	for j := 0; j < q; j++ {
		axpy(a[j], b[row[j]:row[j]+n], y)
	}
}

// mulTransBAdd adds A·Bᵀ to C: C (m×n) += A (m×k) · Bᵀ for B (n×k), all row-major.
func mulTransBAdd(c, a, b []float64, m, k, n int) {
	var d [4]float64
	for i := 0; i < m; i++ {
		ai, ci := a[i*k:(i+1)*k], c[i*n:(i+1)*n]
		j := 0
		for ; j+4 <= n; j += 4 {
			dot4(ai, b[j*k:(j+1)*k], b[(j+1)*k:(j+2)*k], b[(j+2)*k:(j+3)*k], b[(j+3)*k:(j+4)*k], &d)
			ci[j] += d[0]
			ci[j+1] += d[1]
			ci[j+2] += d[2]
			ci[j+3] += d[3]
		}
		for ; j < n; j++ {
			ci[j] += floats.Dot(ai, b[j*k:(j+1)*k])
		}
	}
}
