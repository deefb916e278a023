//go:build !purego

package nn

import "gonum.org/v1/gonum/floats"

// useAVX reports whether the CPU runs AVX instructions and the OS saves the YMM registers.
var useAVX = cpuHasAVX()

func cpuHasAVX() bool

// axpyAVX is axpy four elements per instruction; len(y) must equal len(x).
//
//go:noescape
func axpyAVX(alpha float64, x, y []float64)

// axpy4AVX is axpy4 in one pass over y; every x must be as long as y.
//
//go:noescape
func axpy4AVX(a *[4]float64, x0, x1, x2, x3, y []float64)

// dot4AVX is dot4 with the four products interleaved; every y must be as long as x.
//
//go:noescape
func dot4AVX(x, y0, y1, y2, y3 []float64, out *[4]float64)

// axpyGeneric is gonum's SSE2 kernel. Kept out of line so that axpy inlines into the product loops.
//
//go:noinline
func axpyGeneric(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x) }
