package scheduler

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The tree-structured Parzen estimator (TPE) behind method bayes: the multivariate form of Bergstra
// et al. (2011) as Optuna's TPESampler(multivariate=True, group=True, constant_liar=True) runs it.
// Pure and deterministic: randomness comes only from the generator handed to Suggest.
//
// A point has one coordinate per dimension: a numeric dimension holds a quantile u in [0, 1] of its
// parameter (sweeps.Pick maps it onto the parameter: log scale for the log distributions, the inverse
// CDF for normal and beta, rounding for integers and q_ distributions, the value of an ordered list);
// a categorical dimension holds the index of a value. An inactive conditional dimension holds NaN.
//
// Given the points observed so far, ranked best first (pending ones last, at the worst value: the
// constant liar), the best γ(n) = min(⌈0.1·n⌉, 25) are the good group and the others the bad group.
// Each group gets a Parzen estimator over the dimensions: a mixture of one kernel per point and one
// prior kernel, each of weight 1; numeric kernels are normals truncated to [0, 1] with the bandwidth
// 0.2·n^(−1/(d+4)) (clipped below at 1/min(100, n+2)), the prior's centred at 0.5 with bandwidth 1;
// categorical kernels put 1 + 1/(n+1) on the point's value and 1/(n+1) on every value, normalised, the
// prior's uniform. The suggestion is, of TPECandidates points drawn from the good estimator l, the one
// with the largest l(x)/g(x), g the bad estimator's density.
//
// Conditional dimensions (Dim.Parent) are sampled group by group, as Optuna's group=True does: the
// dimensions always active are one group; those active under the same parent values another, sampled
// only when the parent's sampled value activates them, from the points in which they were active.

// TPE parameters: Optuna's defaults.
const (
	TPECandidates  = 24
	tpeMaxGood     = 25
	tpePriorWeight = 1.0
	tpeSigma0      = 0.2
)

// Dim is one dimension of a TPE search space.
type Dim struct {
	// Choices > 0: categorical with that many values; 0: numeric, a quantile in [0, 1].
	Choices int
	// Parent >= 0: the dimension is active only when categorical dimension Parent (an earlier one)
	// takes one of When; -1: always active.
	Parent int
	When   []int
}

// TPEGood is γ(n), the size of the good group among n ranked points.
func TPEGood(n int) int {
	return min(int(math.Ceil(0.1*float64(n))), tpeMaxGood)
}

// Suggest returns the next point of space given the points ranked best first. dup reports a point
// that must not be suggested (it maps onto a configuration observed or pending); Suggest draws
// TPECandidates candidates at a time, up to 20 times, and then points from the prior, and returns
// false when every draw was a duplicate.
func Suggest(space []Dim, ranked [][]float64, rng *rand.Rand, dup func([]float64) bool) ([]float64, bool) {
	return SuggestGood(space, ranked, TPEGood(len(ranked)), rng, dup)
}

// SuggestGood is Suggest with the good group's size given: the first nGood of ranked (at most
// TPEGood(len(ranked)) for Suggest's own split; fewer where the caller holds that the points past
// nGood must not count as good). With none good, the good estimator is the prior alone.
func SuggestGood(space []Dim, ranked [][]float64, nGood int, rng *rand.Rand, dup func([]float64) bool) ([]float64, bool) {
	nGood = max(0, min(nGood, len(ranked)))
	good, bad := ranked[:nGood], ranked[nGood:]
	groups := tpeGroups(space)
	type pair struct{ l, b *parzen }
	est := make([]pair, len(groups))
	for i, g := range groups {
		est[i] = pair{newParzen(space, g.dims, g.having(good)), newParzen(space, g.dims, g.having(bad))}
	}
	for round := 0; round < 20; round++ {
		best, bestScore := []float64(nil), math.Inf(-1)
		for range TPECandidates {
			x := make([]float64, len(space))
			score := 0.0
			for i, g := range groups {
				if !g.active(x) {
					for _, d := range g.dims {
						x[d] = math.NaN()
					}
					continue
				}
				est[i].l.sample(rng, x)
				score += est[i].l.logPDF(x) - est[i].b.logPDF(x)
			}
			if score > bestScore && !dup(x) {
				best, bestScore = x, score
			}
		}
		if best != nil {
			return best, true
		}
	}
	for range 1000 { // the estimator keeps proposing points already taken: draw from the prior
		x := make([]float64, len(space))
		for _, g := range groups {
			if !g.active(x) {
				for _, d := range g.dims {
					x[d] = math.NaN()
				}
				continue
			}
			newParzen(space, g.dims, nil).sample(rng, x)
		}
		if !dup(x) {
			return x, true
		}
	}
	return nil, false
}

// tpeGroup is a set of dimensions active together.
type tpeGroup struct {
	dims   []int
	parent int
	when   []int
}

func (g tpeGroup) active(x []float64) bool {
	if g.parent < 0 {
		return true
	}
	v := x[g.parent]
	return !math.IsNaN(v) && slices.Contains(g.when, int(v))
}

// having returns the points in which the group was active.
func (g tpeGroup) having(points [][]float64) [][]float64 {
	var out [][]float64
	for _, p := range points {
		if !math.IsNaN(p[g.dims[0]]) {
			out = append(out, p)
		}
	}
	return out
}

// tpeGroups groups the dimensions by their condition, in the order of their first dimension (a
// parent comes before the dimensions it conditions).
func tpeGroups(space []Dim) []tpeGroup {
	var out []tpeGroup
	index := map[string]int{}
	for d, dim := range space {
		key := "-"
		if dim.Parent >= 0 {
			ws := make([]string, len(dim.When))
			for i, w := range dim.When {
				ws[i] = strconv.Itoa(w)
			}
			key = strconv.Itoa(dim.Parent) + ":" + strings.Join(ws, ",")
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, tpeGroup{parent: dim.Parent, when: dim.When})
		}
		out[i].dims = append(out[i].dims, d)
	}
	return out
}

// parzen is a Parzen estimator over some dimensions: one kernel per point plus the prior (the last).
type parzen struct {
	space  []Dim
	dims   []int
	points [][]float64
	sigma  float64 // numeric bandwidth of the points' kernels
	n      int
	// konst[j]: kernel j's log density terms that do not depend on x (the numeric dimensions'
	// normalisers); logOwn and logOther per position in dims: a point kernel's log probability of its
	// own categorical value and of another.
	konst            []float64
	logOwn, logOther []float64
}

func newParzen(space []Dim, dims []int, points [][]float64) *parzen {
	n := len(points)
	sigma := tpeSigma0 * math.Pow(float64(max(n, 1)), -1/float64(len(dims)+4))
	sigma = math.Max(sigma, 1/math.Min(100, float64(n+2))) // the points and the prior, plus one
	sigma = math.Min(sigma, 1)
	p := &parzen{space: space, dims: dims, points: points, sigma: sigma, n: n, konst: make([]float64, n+1),
		logOwn: make([]float64, len(dims)), logOther: make([]float64, len(dims))}
	base := tpePriorWeight / float64(n+1)
	for k, d := range dims {
		if c := space[d].Choices; c > 0 {
			p.logOwn[k] = math.Log((base + 1) / (1 + base*float64(c)))
			p.logOther[k] = math.Log(base / (1 + base*float64(c)))
			p.konst[n] -= math.Log(float64(c)) // the prior: uniform
			continue
		}
		for j := range n + 1 {
			mu, sg := p.kernel(j, d)
			p.konst[j] += truncNormalLogNorm(mu, sg)
		}
	}
	return p
}

// kernel is kernel j's mean and bandwidth in numeric dimension d.
func (p *parzen) kernel(j, d int) (mu, sigma float64) {
	if j == p.n {
		return 0.5, 1
	}
	return p.points[j][d], p.sigma
}

// sample draws one point of the mixture into x's dimensions of the estimator.
func (p *parzen) sample(rng *rand.Rand, x []float64) {
	j := rng.IntN(p.n + 1) // every kernel weighs 1, the prior too
	for k, d := range p.dims {
		if c := p.space[d].Choices; c > 0 {
			x[d] = float64(p.sampleCat(rng, j, k, d, c))
			continue
		}
		mu, sigma := p.kernel(j, d)
		x[d] = truncNormal(rng, mu, sigma)
	}
}

// sampleCat draws categorical dimension d (position k in dims, c values) from kernel j.
func (p *parzen) sampleCat(rng *rand.Rand, j, k, d, c int) int {
	if j == p.n {
		return rng.IntN(c)
	}
	own := int(p.points[j][d])
	u := rng.Float64()
	sum := 0.0
	for v := range c {
		if v == own {
			sum += math.Exp(p.logOwn[k])
		} else {
			sum += math.Exp(p.logOther[k])
		}
		if u < sum {
			return v
		}
	}
	return c - 1
}

// logPDF is the log density of the mixture at x's dimensions of the estimator.
func (p *parzen) logPDF(x []float64) float64 {
	logs := make([]float64, p.n+1)
	for j := range logs {
		l := p.konst[j]
		for k, d := range p.dims {
			if c := p.space[d].Choices; c > 0 {
				switch {
				case j == p.n:
				case int(p.points[j][d]) == int(x[d]):
					l += p.logOwn[k]
				default:
					l += p.logOther[k]
				}
				continue
			}
			mu, sigma := p.kernel(j, d)
			z := (x[d] - mu) / sigma
			l -= 0.5 * z * z
		}
		logs[j] = l
	}
	// logsumexp minus log(n+1): every kernel weighs the same.
	m := slices.Max(logs)
	sum := 0.0
	for _, l := range logs {
		sum += math.Exp(l - m)
	}
	return m + math.Log(sum) - math.Log(float64(p.n+1))
}

// truncNormal draws from a normal of mean mu and deviation sigma truncated to [0, 1], by inverting
// its CDF.
func truncNormal(rng *rand.Rand, mu, sigma float64) float64 {
	a, b := normCDF(-mu/sigma), normCDF((1-mu)/sigma)
	u := a + rng.Float64()*(b-a)
	u = math.Min(math.Max(u, 1e-300), 1-1e-16)
	x := mu + sigma*math.Sqrt2*math.Erfinv(2*u-1)
	return math.Min(math.Max(x, 0), 1)
}

// truncNormalLogNorm is the log density of a normal truncated to [0, 1] at its mean:
// −log σ − ½ log 2π − log(its mass in [0, 1]).
func truncNormalLogNorm(mu, sigma float64) float64 {
	mass := normCDF((1-mu)/sigma) - normCDF(-mu/sigma)
	return -math.Log(sigma) - 0.5*math.Log(2*math.Pi) - math.Log(math.Max(mass, 1e-300))
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
