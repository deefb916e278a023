package ppo

import (
	"math"
	"math/rand/v2"
)

var halfLog2Pi = 0.5 * math.Log(2*math.Pi)

// categorical evaluates a softmax policy row: it writes the probabilities into p and returns
// log Σ exp(logits) (so log π(a) = logits[a] − lse) and the entropy −Σ p log p.
func categorical(logits, p []float64) (lse, entropy float64) {
	m := logits[0]
	for _, z := range logits[1:] {
		m = math.Max(m, z)
	}
	var s float64
	for k, z := range logits {
		p[k] = math.Exp(z - m)
		s += p[k]
	}
	lse = m + math.Log(s)
	for k, z := range logits {
		p[k] /= s
		if p[k] > 0 {
			entropy -= p[k] * (z - lse)
		}
	}
	return lse, entropy
}

// sampleCategorical draws an index from probabilities p by inversion.
func sampleCategorical(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	for k, pk := range p {
		u -= pk
		if u < 0 {
			return k
		}
	}
	return len(p) - 1
}

// gaussianLogProb returns Σ_d log N(a_d; μ_d, σ_d) for σ_d = exp(logStd_d).
func gaussianLogProb(a, mu, logStd []float64) float64 {
	var lp float64
	for d := range mu {
		z := (a[d] - mu[d]) * math.Exp(-logStd[d])
		lp += -0.5*z*z - logStd[d] - halfLog2Pi
	}
	return lp
}

// gaussianEntropy returns Σ_d (½ + ½log 2π + log σ_d).
func gaussianEntropy(logStd []float64) float64 {
	var h float64
	for _, l := range logStd {
		h += 0.5 + halfLog2Pi + l
	}
	return h
}
