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

// axpyGeneric is gonum's SSE2 kernel.
func axpyGeneric(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x) }
