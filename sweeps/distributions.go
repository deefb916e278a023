package sweeps

import (
	"fmt"
	"math"
	"slices"
)

// Distributions beyond uniform, log_uniform and int_uniform, with W&B's names and parameters (q, mu,
// sigma, a, b). Each maps u in [0, 1) to a value by its inverse CDF, as W&B's own sampler does (the
// ppf of wandb/sweeps' params.py), so random and sobol both use them: a Sobol coordinate lands at the
// same quantile of every distribution.

// rangeDists take min and max; shapeDists take none (mu/sigma or a/b instead).
var (
	rangeDists = []string{DistUniform, DistLogUniform, DistIntUniform, DistQUniform, DistQLogUniformValues, DistInvLogUniformValues}
	shapeDists = []string{DistNormal, DistQNormal, DistLogNormal, DistQLogNormal, DistBeta, DistQBeta}
)

// quantised reports whether a distribution rounds to multiples of q.
func quantised(dist string) bool {
	switch dist {
	case DistQUniform, DistQLogUniformValues, DistQNormal, DistQLogNormal, DistQBeta:
		return true
	}
	return false
}

func isShape(dist string) bool { return slices.Contains(shapeDists, dist) }

// Defaults of the shape parameters, W&B's: mu 0, sigma 1, a 1, b 1, q 1.
func orDefault(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// clampU keeps u inside (0, 1), where every inverse CDF is finite.
func clampU(u float64) float64 {
	const eps = 1.0 / (1 << 53)
	return math.Min(math.Max(u, eps), 1-eps)
}

// pickDist maps u onto a parameter with one of the distributions of this file; ok is false for the
// others (uniform, log_uniform, int_uniform), which pick handles.
func pickDist(p Parameter, u float64) (v any, ok bool) {
	var x float64
	switch p.Distribution {
	case DistQUniform:
		x = *p.Min + u*(*p.Max-*p.Min)
	case DistQLogUniformValues:
		lo, hi := math.Log(*p.Min), math.Log(*p.Max)
		x = math.Exp(lo + u*(hi-lo))
	case DistInvLogUniformValues:
		// W&B: exp(-U(-ln max, -ln min)) at 1 − u: log-uniform on [min, max], the quantile reversed.
		lo, hi := -math.Log(*p.Max), -math.Log(*p.Min)
		x = math.Min(*p.Max, math.Max(*p.Min, math.Exp(-(lo+(1-u)*(hi-lo)))))
		return x, true
	case DistNormal, DistQNormal:
		x = orDefault(p.Mu, 0) + orDefault(p.Sigma, 1)*normalPPF(clampU(u))
	case DistLogNormal, DistQLogNormal:
		x = math.Exp(orDefault(p.Mu, 0) + orDefault(p.Sigma, 1)*normalPPF(clampU(u)))
	case DistBeta, DistQBeta:
		x = betaPPF(clampU(u), orDefault(p.A, 1), orDefault(p.B, 1))
	default:
		return nil, false
	}
	if !quantised(p.Distribution) {
		return x, true
	}
	return quantise(x, orDefault(p.Q, 1), p.QInt), true
}

// quantise rounds x to a multiple of q, halves to even as numpy's round does; an integer when qInt.
func quantise(x, q float64, qInt bool) any {
	r := math.RoundToEven(x/q) * q
	if qInt {
		return int64(r)
	}
	return r
}

// normalPPF is the standard normal's inverse CDF.
func normalPPF(u float64) float64 { return math.Sqrt2 * math.Erfinv(2*u-1) }

// betaPPF is the inverse CDF of Beta(a, b), by bisection on the regularised incomplete beta function.
func betaPPF(u, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if betaCDF(mid, a, b) < u {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-15 {
			break
		}
	}
	return (lo + hi) / 2
}

// betaCDF is the regularised incomplete beta function I_x(a, b), by its continued fraction (Lentz's
// method), using the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly.
func betaCDF(x, a, b float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

func betaFraction(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 500; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		f *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		f *= delta
		if math.Abs(delta-1) < 1e-15 {
			break
		}
	}
	return f
}

// weightedIndex is the value index for u under probabilities: the first whose cumulative probability
// exceeds u (W&B's categorical_w_probabilities).
func weightedIndex(probs []float64, u float64) int {
	sum := 0.0
	for i, p := range probs {
		sum += p
		if u < sum {
			return i
		}
	}
	return len(probs) - 1
}

// shape checks a normal, log_normal or beta parameter (and their q_ forms).
func (c *checker) shape(p *Parameter, path string) {
	if c.s.Method == MethodGrid {
		c.add(path+".distribution", quote(p.Distribution),
			"a list of values, a constant, int_uniform or q_uniform for method grid (a "+p.Distribution+" cannot be enumerated; use method random or sobol)")
	}
	switch p.Distribution {
	case DistNormal, DistQNormal, DistLogNormal, DistQLogNormal:
		if p.A != nil || p.B != nil {
			c.add(path, "a or b", "mu and sigma for "+p.Distribution)
		}
		if s := orDefault(p.Sigma, 1); s < 0 {
			c.add(path+".sigma", num(s), "a number >= 0")
		}
	default:
		if p.Mu != nil || p.Sigma != nil {
			c.add(path, "mu or sigma", "a and b for "+p.Distribution)
		}
		for _, x := range []struct {
			key string
			v   *float64
		}{{"a", p.A}, {"b", p.B}} {
			if x.v != nil && *x.v <= 0 {
				c.add(path+"."+x.key, num(*x.v), "a number > 0")
			}
		}
	}
	c.quantum(p, path)
}

// quantum checks q: only with a q_ distribution, and > 0.
func (c *checker) quantum(p *Parameter, path string) {
	if p.Q == nil {
		return
	}
	switch {
	case !quantised(p.Distribution):
		c.add(path+".q", num(*p.Q), "no q with distribution "+p.Distribution+" (q goes with q_uniform, q_log_uniform_values, q_normal, q_log_normal, q_beta)")
	case !(*p.Q > 0) || math.IsInf(*p.Q, 0):
		c.add(path+".q", num(*p.Q), "a number > 0")
	}
}

// probabilities checks the weights of a values parameter: one per value, each >= 0, summing to 1.
func (c *checker) probabilities(p *Parameter, path string) {
	if p.Probabilities == nil {
		return
	}
	pp := path + ".probabilities"
	if c.s.Method == MethodGrid {
		c.add(pp, fmt.Sprintf("%d probabilities", len(p.Probabilities)), "no probabilities for method grid (every value is planned)")
		return
	}
	if len(p.Probabilities) != len(p.Values) {
		c.add(pp, fmt.Sprintf("%d probabilities", len(p.Probabilities)), fmt.Sprintf("one per value (%d)", len(p.Values)))
		return
	}
	sum := 0.0
	for i, w := range p.Probabilities {
		if !(w >= 0) {
			c.add(fmt.Sprintf("%s[%d]", pp, i), num(w), "a number >= 0")
			return
		}
		sum += w
	}
	if math.Abs(sum-1) > 1e-5+1e-8 {
		c.add(pp, "a sum of "+num(sum), "probabilities that sum to 1")
	}
}
