package ppo

import (
	"math"

	"github.com/rlsweep/rlsweep/trainer/nn"
)

// mbStats are one minibatch's loss terms, before weighting.
type mbStats struct {
	loss, policyLoss, valueLoss, entropy, approxKL, clipFrac float64
}

// update runs Epochs passes of Minibatches clipped-surrogate steps over the rollout.
func (t *Trainer) update(m *Metrics) {
	size := len(t.buf.logp)
	mbSize := size / t.cfg.Minibatches
	perm := t.buf.perm
	for i := range perm {
		perm[i] = i
	}
	var sum mbStats
	var gradSum float64
epochs:
	for e := 0; e < t.cfg.Epochs; e++ {
		t.rng.Shuffle(size, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for k := 0; k < t.cfg.Minibatches; k++ {
			s := t.lossGrad(perm[k*mbSize : (k+1)*mbSize])
			gradSum += nn.ClipGradNorm(t.grads, t.cfg.MaxGradNorm)
			m.Minibatches++
			sum.policyLoss += s.policyLoss
			sum.valueLoss += s.valueLoss
			sum.entropy += s.entropy
			sum.approxKL += s.approxKL
			sum.clipFrac += s.clipFrac
			if t.cfg.TargetKL > 0 && s.approxKL > t.cfg.TargetKL {
				m.KLStop = true
				break epochs
			}
			if t.cfg.AdaptiveLR {
				t.adaptLR(s.approxKL)
			}
			t.adam.Step(t.params, t.grads)
		}
	}
	n := float64(m.Minibatches)
	m.PolicyLoss, m.ValueLoss, m.Entropy = sum.policyLoss/n, sum.valueLoss/n, sum.entropy/n
	m.ApproxKL, m.ClipFraction, m.GradNorm = sum.approxKL/n, sum.clipFrac/n, gradSum/n
	if !t.spec.Discrete() {
		m.Continuous = true
		m.StdClamped = t.refreshLogStd()
		m.ActionStdMin = math.Inf(1)
		for _, l := range t.effLogStd {
			s := math.Exp(l)
			m.ActionStd += s / float64(len(t.effLogStd))
			m.ActionStdMin = math.Min(m.ActionStdMin, s)
		}
	}
}

// adaptLR is rsl_rl's schedule: divide the learning rate by 1.5 when the KL exceeds twice the
// desired KL, multiply it by 1.5 when the KL is below half of it, within [1e-5, 1e-2].
func (t *Trainer) adaptLR(kl float64) {
	switch {
	case kl > 2*t.cfg.DesiredKL:
		t.lr = math.Max(1e-5, t.lr/1.5)
	case kl < t.cfg.DesiredKL/2 && kl > 0:
		t.lr = math.Min(1e-2, t.lr*1.5)
	}
	t.adam.LR = t.lr
}

// lossGrad evaluates the PPO loss on the rollout samples idx and sets t.grads to its gradient:
//
//	L = −mean min(rA, clip(r, 1±ε)A) − c_ent·mean H + c_vf·½·mean (V − R)²  (or the clipped value loss)
//
// with r = π(a|s)/π_old(a|s) and A normalised over the minibatch when NormAdv is on.
func (t *Trainer) lossGrad(idx []int) mbStats {
	t.gather(idx)
	clear(t.grads)
	t.refreshLogStd()
	mSize := len(idx)
	out := t.actor.Forward(t.mb.actWS, t.mb.obs, mSize)
	advMean, advScale := t.advNorm(idx)
	var s mbStats
	if t.spec.Discrete() {
		s = t.categoricalGrad(idx, out, advMean, advScale)
	} else {
		s = t.gaussianGrad(idx, out, advMean, advScale)
	}
	t.actor.Backward(t.mb.actWS, t.mb.dOut[:mSize*t.outDim()], nil)
	s.valueLoss = t.valueGrad(idx)
	if t.cfg.Bug != BugDetachValue {
		t.critic.Backward(t.mb.critWS, t.mb.dv[:mSize], nil)
	}
	s.loss = s.policyLoss - t.cfg.EntCoef*s.entropy + t.cfg.VFCoef*s.valueLoss
	return s
}

// gather copies the minibatch's observations and actions into contiguous buffers.
func (t *Trainer) gather(idx []int) {
	d, a := t.spec.ObsDim, t.spec.ActionDim
	for j, k := range idx {
		src := k
		if t.cfg.Bug == BugStaleBatch {
			src = idx[(j+1)%len(idx)]
		}
		copy(t.mb.obs[j*d:(j+1)*d], t.buf.obs[src*d:(src+1)*d])
		copy(t.mb.actions[j*a:(j+1)*a], t.buf.actions[k*a:(k+1)*a])
	}
}

// advNorm returns the shift and scale that normalise the minibatch's advantages (torch's unbiased
// std, +1e-8), or (0, 1) when NormAdv is off or the minibatch has one sample; flip-advantage negates
// the scale.
func (t *Trainer) advNorm(idx []int) (mean, scale float64) {
	scale = 1
	if t.cfg.NormAdv && len(idx) > 1 {
		for _, k := range idx {
			mean += t.buf.adv[k]
		}
		mean /= float64(len(idx))
		var ss float64
		for _, k := range idx {
			ss += (t.buf.adv[k] - mean) * (t.buf.adv[k] - mean)
		}
		scale = 1 / (math.Sqrt(ss/float64(len(idx)-1)) + 1e-8)
	}
	if t.cfg.Bug == BugFlipAdvantage {
		scale = -scale
	}
	return mean, scale
}

// surrogate returns the clipped surrogate loss term of one sample and its derivative with respect
// to log π(a|s), and accumulates KL and clipping statistics into s.
func (t *Trainer) surrogate(logp, oldLogp, adv float64, s *mbStats) (loss, dLogp float64) {
	logRatio := logp - oldLogp
	ratio := math.Exp(logRatio)
	s.approxKL += (ratio - 1) - logRatio
	if math.Abs(ratio-1) > t.cfg.Clip {
		s.clipFrac++
	}
	unclipped := -adv * ratio
	clipped := -adv * math.Max(1-t.cfg.Clip, math.Min(1+t.cfg.Clip, ratio))
	if unclipped >= clipped {
		return unclipped, -adv * ratio
	}
	return clipped, 0
}

func (t *Trainer) categoricalGrad(idx []int, out []float64, advMean, advScale float64) mbStats {
	k, mSize := t.outDim(), float64(len(idx))
	p := t.buf.probs
	gEnt := -t.cfg.EntCoef / mSize
	if t.cfg.Bug == BugNoEntropyGrad {
		gEnt = 0
	}
	var s mbStats
	for j, i := range idx {
		row, d := out[j*k:(j+1)*k], t.mb.dOut[j*k:(j+1)*k]
		a := int(t.mb.actions[j])
		lse, h := categorical(row, p)
		loss, gLogp := t.surrogate(row[a]-lse, t.buf.logp[i], (t.buf.adv[i]-advMean)*advScale, &s)
		s.policyLoss += loss
		s.entropy += h
		gLogp /= mSize
		for c := range d {
			// ∂log π(a)/∂z_c = 1[c=a] − p_c;  ∂H/∂z_c = −p_c(log p_c + H)
			var g float64
			if p[c] > 0 {
				g = gEnt * -p[c] * (row[c] - lse + h)
			}
			d[c] = gLogp*(-p[c]) + g
		}
		d[a] += gLogp
	}
	return s.mean(mSize)
}

func (t *Trainer) gaussianGrad(idx []int, out []float64, advMean, advScale float64) mbStats {
	k, mSize := t.outDim(), float64(len(idx))
	var s mbStats
	gLS := t.gLogStd
	for j, i := range idx {
		mu, d, act := out[j*k:(j+1)*k], t.mb.dOut[j*k:(j+1)*k], t.mb.actions[j*k:(j+1)*k]
		loss, gLogp := t.surrogate(gaussianLogProb(act, mu, t.effLogStd), t.buf.logp[i], (t.buf.adv[i]-advMean)*advScale, &s)
		s.policyLoss += loss
		gLogp /= mSize
		for c := range d {
			inv := math.Exp(-t.effLogStd[c])
			z := (act[c] - mu[c]) * inv
			// ∂log π/∂μ = (a−μ)/σ²;  ∂log π/∂log σ = z² − 1
			d[c] = gLogp * z * inv
			gLS[c] += gLogp * (z*z - 1)
		}
	}
	h := gaussianEntropy(t.effLogStd)
	s.entropy = h * mSize
	if t.cfg.Bug != BugNoEntropyGrad {
		for c := range gLS {
			gLS[c] -= t.cfg.EntCoef // ∂H/∂log σ_c = 1, weighted by −c_ent
		}
	}
	for c, l := range t.logStd {
		if l < t.effLogStd[c] { // clamped at the floor: no gradient, as through torch.clamp
			gLS[c] = 0
		}
	}
	return s.mean(mSize)
}

// valueGrad writes ∂L/∂V into mb.dv and returns the value loss ½·mean(max((V−R)², (V_clip−R)²)),
// V_clip = V_old + clip(V − V_old, ±ε), or ½·mean (V−R)² without ClipVLoss.
func (t *Trainer) valueGrad(idx []int) float64 {
	mSize := float64(len(idx))
	vals := t.critic.Forward(t.mb.critWS, t.mb.obs, len(idx))
	var loss float64
	for j, i := range idx {
		v, ret := vals[j], t.buf.returns[i]
		l, g := (v-ret)*(v-ret), v-ret
		if t.cfg.ClipVLoss {
			old := t.buf.values[i]
			vc := old + math.Max(-t.cfg.Clip, math.Min(t.cfg.Clip, v-old))
			if lc := (vc - ret) * (vc - ret); lc > l {
				l, g = lc, 0 // V_clip is constant in V once clipped
			}
		}
		loss += l
		t.mb.dv[j] = t.cfg.VFCoef * g / mSize
	}
	return 0.5 * loss / mSize
}

func (s mbStats) mean(n float64) mbStats {
	s.policyLoss /= n
	s.entropy /= n
	s.approxKL /= n
	s.clipFrac /= n
	return s
}
