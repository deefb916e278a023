package nn

// axpy adds alpha·x to y: y[i] += alpha·x[i] for i < len(x). It panics if y is shorter than x.
//
// Every element is one rounded product and one rounded sum, x[i]·alpha + y[i]: the AVX kernel
// (axpy_amd64.s, four elements per instruction) and gonum's SSE2 AxpyUnitary (two) give the same
// bits, so on amd64 results do not depend on whether the CPU a trial lands on has AVX.
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	if useAVX {
		axpyAVX(alpha, x, y)
		return
	}
	axpyGeneric(alpha, x, y)
}
