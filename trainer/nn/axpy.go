package nn

import "gonum.org/v1/gonum/floats"

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

// axpy4 adds a[0]·x0, a[1]·x1, a[2]·x2 and a[3]·x3 to y, in that order, with the bits of four axpy
// calls in turn. It panics if an x is shorter than y.
func axpy4(a *[4]float64, x0, x1, x2, x3, y []float64) {
	n := len(y)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	if useAVX {
		axpy4AVX(a, x0, x1, x2, x3, y)
		return
	}
	axpy4Generic(a, x0, x1, x2, x3, y)
}

func axpy4Generic(a *[4]float64, x0, x1, x2, x3, y []float64) {
	axpyGeneric(a[0], x0, y)
	axpyGeneric(a[1], x1, y)
	axpyGeneric(a[2], x2, y)
	axpyGeneric(a[3], x3, y)
}

// dot4 sets out[j] to the dot product of x and y_j, with the bits of gonum's DotUnitary (floats.Dot)
// for each. It panics if a y is shorter than x.
func dot4(x, y0, y1, y2, y3 []float64, out *[4]float64) {
	n := len(x)
	y0, y1, y2, y3 = y0[:n], y1[:n], y2[:n], y3[:n]
	if useAVX {
		dot4AVX(x, y0, y1, y2, y3, out)
		return
	}
	dot4Generic(x, y0, y1, y2, y3, out)
}

func dot4Generic(x, y0, y1, y2, y3 []float64, out *[4]float64) {
	out[0], out[1], out[2], out[3] = floats.Dot(x, y0), floats.Dot(x, y1), floats.Dot(x, y2), floats.Dot(x, y3)
}
