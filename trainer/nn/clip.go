package nn

import "math"

// ClipGradNorm scales grads in place so that their Euclidean norm is at most maxNorm, as
// torch.nn.utils.clip_grad_norm_ does (coefficient maxNorm / (norm + 1e-6), applied only when below
// one), and returns the norm before clipping. A non-finite norm is returned as it is and the
// gradients are left untouched: a NaN gradient is data for the diagnostics, not something to hide.
func ClipGradNorm(grads []float64, maxNorm float64) float64 {
	var ss float64
	for _, g := range grads {
		ss += g * g
	}
	norm := math.Sqrt(ss)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm
	}
	if c := maxNorm / (norm + 1e-6); c < 1 {
		for i := range grads {
			grads[i] *= c
		}
	}
	return norm
}
