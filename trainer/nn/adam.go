package nn

import "math"

// Adam is the Adam optimiser (Kingma & Ba 2015) exactly as torch.optim.Adam computes it, without
// weight decay or AMSGrad:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²
//	p ← p − (lr / (1−β₁ᵗ)) · m / (√v / √(1−β₂ᵗ) + ε)
//
// LR may be changed between steps (annealing, adaptive schedules).
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	M, V                  []float64 // first and second moment estimates, one per parameter
	T                     int       // steps taken
}

// NewAdam returns an Adam optimiser for n parameters with β₁ 0.9, β₂ 0.999 and ε 1e-5 (the ε CleanRL
// and SB3 use for PPO, not torch's default 1e-8).
func NewAdam(n int, lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-5, M: make([]float64, n), V: make([]float64, n)}
}

// Step applies one update to params from grads. It panics if the lengths differ from the optimiser's.
func (a *Adam) Step(params, grads []float64) {
	if len(params) != len(a.M) || len(grads) != len(a.M) {
		panic("nn: Adam.Step length mismatch")
	}
	a.T++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.T))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.T))
	stepSize := a.LR / bc1
	sqrtBC2 := math.Sqrt(bc2)
	b1, b2, eps := a.Beta1, a.Beta2, a.Eps
	m := a.M
	v := a.V[:len(m)]
	params, grads = params[:len(m)], grads[:len(m)]
	for i, g := range grads {
		mi := b1*m[i] + (1-b1)*g
		vi := b2*v[i] + (1-b2)*g*g
		m[i], v[i] = mi, vi
		params[i] -= stepSize * mi / (math.Sqrt(vi)/sqrtBC2 + eps)
	}
}
