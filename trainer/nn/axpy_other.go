//go:build !amd64 || purego

package nn

import "gonum.org/v1/gonum/floats"

// useAVX is false: there is no AVX kernel off amd64 or with the purego tag.
var useAVX = false

// axpyAVX is never called where useAVX is false; it is the generic kernel so that tests build.
func axpyAVX(alpha float64, x, y []float64) { axpyGeneric(alpha, x, y) }

func axpyGeneric(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x) }
