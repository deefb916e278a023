//go:build !amd64 || purego

package nn

import "gonum.org/v1/gonum/floats"

// useAVX is false: there is no AVX kernel off amd64 or with the purego tag.
var useAVX = false

// axpyAVX is never called where useAVX is false; it is the generic kernel so that tests build.
func axpyAVX(alpha float64, x, y []float64) { axpyGeneric(alpha, x, y) }

func axpyGeneric(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x) }

// axpy4AVX is never called where useAVX is false; it is the generic kernel so that tests build.
func axpy4AVX(a *[4]float64, x0, x1, x2, x3, y []float64) { axpy4Generic(a, x0, x1, x2, x3, y) }

// dot4AVX is never called where useAVX is false; it is the generic kernel so that tests build.
func dot4AVX(x, y0, y1, y2, y3 []float64, out *[4]float64) { dot4Generic(x, y0, y1, y2, y3, out) }
