package nn

// The two matrix products whose inner loop is an axpy along a row of the result, with gonum's loop
// order and zero test (dgemmSerialNotNot, dgemmSerialTransNot): every element of C is summed over
// l = 0…k−1 in order, skipping zero coefficients, as blas64.Gemm sums it, so the bits are gonum's.
// What changes is the kernel (axpy: AVX where the CPU has it) and, for Aᵀ·B, the loop nest: one row
// of C at a time stays in L1 instead of the whole of C (64 KiB for a 64×128 layer) being read and
// written k times. The dot-product form (A·Bᵀ) stays with blas64.Gemm.

// mulAdd adds A·B to C: C (m×n) += A (m×k) · B (k×n), all row-major with unit column stride.
func mulAdd(c, a, b []float64, m, k, n int) {
	for i := 0; i < m; i++ {
		ci := c[i*n : (i+1)*n]
		for l, v := range a[i*k : (i+1)*k] {
			if v != 0 {
				axpy(v, b[l*n:(l+1)*n], ci)
			}
		}
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
		ci := c[i*n : (i+1)*n]
		for l := 0; l < k; l++ {
			if v := a[l*m+i]; v != 0 {
				axpy(v, b[l*n:(l+1)*n], ci)
			}
		}
	}
}
