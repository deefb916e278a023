package ppo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/nn"
)

// episodeWindow is how many recent episodes the reward and episode_length metrics average over, as
// SB3's ep_info_buffer and rsl_rl's rewbuffer do.
const episodeWindow = 100

// Trainer runs PPO on a vectorised environment. It is not safe for concurrent use.
type Trainer struct {
	cfg  Config
	spec envs.Spec
	pcg  *rand.PCG
	rng  *rand.Rand
	vec  *envs.Vec

	actor, critic   *nn.MLP
	params, grads   []float64 // actor, critic, then log σ (continuous only)
	logStd, gLogStd []float64 // views into params and grads
	effLogStd       []float64 // max(log σ, log StdMin), the log σ actually used
	adam            *nn.Adam
	lr              float64 // the adaptive learning rate's state

	obsRMS, retRMS *RunningMeanStd
	retAcc         []float64 // per-env discounted return, for reward scaling
	obsN           []float64 // the current observations as the networks see them

	step       int64
	iter       int
	window     []envs.Episode // ring of the last episodeWindow episodes
	windowNext int
	episodes   int64

	buf rollout
	mb  minibatch
}

// rollout holds one iteration's experience, time major (index t·NumEnvs + i).
type rollout struct {
	obs, actions                 []float64
	logp, values, rewards, dones []float64
	adv, returns, lastValues     []float64
	envActions, probs            []float64
	perm                         []int
	actWS, critWS                *nn.Workspace
}

// minibatch holds the gathered samples and gradient buffers of one minibatch.
type minibatch struct {
	obs, actions, dOut, dv []float64
	actWS, critWS          *nn.Workspace
}

// New returns a trainer for environments made by newEnv, with networks initialised and environments
// reset from seed. It checks cfg (Validate) and that the environment's spaces are usable.
func New(cfg Config, newEnv func() envs.Env, seed uint64) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	spec := newEnv().Spec()
	if spec.ObsDim < 1 || spec.ActionDim < 1 || (spec.Discrete() && spec.ActionDim != 1) {
		return nil, fmt.Errorf("ppo: env %q: got obs dim %d, action dim %d, %d actions; want dims ≥ 1 and one index for discrete actions",
			spec.Name, spec.ObsDim, spec.ActionDim, spec.Actions)
	}
	t := &Trainer{cfg: cfg, spec: spec, lr: cfg.LR}
	t.pcg = rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	t.rng = rand.New(t.pcg)
	t.buildNetworks()
	t.allocate()
	t.vec = envs.NewVec(newEnv, cfg.NumEnvs, t.rng)
	t.obsRMS, t.retRMS = newRunningMeanStd(spec.ObsDim), newRunningMeanStd(1)
	t.retAcc = make([]float64, cfg.NumEnvs)
	t.obsN = make([]float64, len(t.vec.Obs))
	t.observe()
	return t, nil
}

func (t *Trainer) outDim() int {
	if t.spec.Discrete() {
		return t.spec.Actions
	}
	return t.spec.ActionDim
}

// buildNetworks creates actor and critic on one flat parameter buffer, initialised like CleanRL's
// Agent: orthogonal, gain √2 on hidden layers, 1 on the value head, 0.01 on the policy head.
func (t *Trainer) buildNetworks() {
	sizes := func(out int) []int {
		s := append([]int{t.spec.ObsDim}, t.cfg.Hidden...)
		return append(s, out)
	}
	t.critic = nn.NewMLP(t.cfg.Activation, sizes(1)...)
	t.actor = nn.NewMLP(t.cfg.Activation, sizes(t.outDim())...)
	t.critic.InitOrthogonal(t.rng, nn.Sqrt2, 1)
	t.actor.InitOrthogonal(t.rng, nn.Sqrt2, 0.01)
	na, nc, ns := len(t.actor.Params), len(t.critic.Params), 0
	if !t.spec.Discrete() {
		ns = t.spec.ActionDim
	}
	t.params, t.grads = make([]float64, na+nc+ns), make([]float64, na+nc+ns)
	t.actor.Attach(t.params[:na], t.grads[:na])
	t.critic.Attach(t.params[na:na+nc], t.grads[na:na+nc])
	t.logStd, t.gLogStd = t.params[na+nc:], t.grads[na+nc:]
	for i := range t.logStd {
		t.logStd[i] = t.cfg.InitLogStd
	}
	t.effLogStd = make([]float64, ns)
	t.adam = nn.NewAdam(len(t.params), t.cfg.LR)
}

func (t *Trainer) allocate() {
	n, steps, d, a, k := t.cfg.NumEnvs, t.cfg.NumSteps, t.spec.ObsDim, t.spec.ActionDim, t.outDim()
	size := n * steps
	m := size / t.cfg.Minibatches
	f := func(l int) []float64 { return make([]float64, l) }
	t.buf = rollout{
		obs: f(size * d), actions: f(size * a), logp: f(size), values: f(size), rewards: f(size),
		dones: f(size), adv: f(size), returns: f(size), lastValues: f(n), envActions: f(n * a),
		probs: f(k), perm: make([]int, size),
		actWS: t.actor.NewWorkspace(n), critWS: t.critic.NewWorkspace(max(n, 1)),
	}
	t.mb = minibatch{
		obs: f(m * d), actions: f(m * a), dOut: f(m * k), dv: f(m),
		actWS: t.actor.NewWorkspace(max(m, 1)), critWS: t.critic.NewWorkspace(max(m, 1)),
	}
}

// observe refreshes obsN from the environments' current observations, updating the normaliser.
func (t *Trainer) observe() {
	if t.cfg.NormObs {
		t.obsRMS.Update(t.vec.Obs)
	}
	t.normalize(t.obsN, t.vec.Obs)
}

func (t *Trainer) normalize(dst, obs []float64) {
	if t.cfg.NormObs {
		t.obsRMS.normalizeInto(dst, obs, t.cfg.ClipObs)
		return
	}
	copy(dst, obs)
}

// refreshLogStd computes the effective log σ, floored at log StdMin, and returns how many
// dimensions the floor clamped.
func (t *Trainer) refreshLogStd() int {
	floor, clamped := math.Log(t.cfg.StdMin), 0
	for i, l := range t.logStd {
		t.effLogStd[i] = l
		if l < floor {
			t.effLogStd[i] = floor
			clamped++
		}
	}
	return clamped
}

// gamma is the discount GAE and bootstrapping use.
func (t *Trainer) gamma() float64 {
	if t.cfg.Bug == BugNoDiscount {
		return 1
	}
	return t.cfg.Gamma
}

// currentLR is the learning rate for the coming iteration.
func (t *Trainer) currentLR() float64 {
	switch {
	case t.cfg.AdaptiveLR:
		return t.lr
	case t.cfg.AnnealLR:
		return t.cfg.LR * math.Max(0, 1-float64(t.step)/float64(t.cfg.TotalSteps))
	}
	return t.cfg.LR
}

// Iterate runs one PPO iteration (collect NumEnvs·NumSteps steps, then update) and returns its
// metrics.
func (t *Trainer) Iterate() Metrics {
	start := time.Now()
	t.adam.LR = t.currentLR()
	t.collect()
	var m Metrics
	t.advantages(&m)
	t.update(&m)
	t.iter++
	m.Step, m.Iteration = t.step, t.iter
	m.LearningRate = t.adam.LR
	m.FPS = float64(t.cfg.NumEnvs*t.cfg.NumSteps) / time.Since(start).Seconds()
	t.episodeMetrics(&m)
	return m
}

// Run iterates until at least until environment steps have been taken, calling each (if not nil)
// after every iteration. It stops early, between iterations, when ctx is done (returning ctx.Err())
// or each returns an error.
func (t *Trainer) Run(ctx context.Context, until int64, each func(Metrics) error) error {
	for t.step < until {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := t.Iterate()
		if each != nil {
			if err := each(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// collect runs NumSteps steps of every environment with the current policy.
func (t *Trainer) collect() {
	n, d, a := t.cfg.NumEnvs, t.spec.ObsDim, t.spec.ActionDim
	t.refreshLogStd()
	for s := 0; s < t.cfg.NumSteps; s++ {
		base := s * n
		obs := t.buf.obs[base*d : (base+n)*d]
		copy(obs, t.obsN)
		out := t.actor.Forward(t.buf.actWS, obs, n)
		copy(t.buf.values[base:base+n], t.critic.Forward(t.buf.critWS, obs, n))
		t.sample(out, base)
		t.vec.Step(t.buf.envActions)
		copy(t.buf.actions[base*a:(base+n)*a], t.buf.envActions)
		t.recordEpisodes()
		t.storeRewards(base)
		t.observe()
	}
	copy(t.buf.lastValues, t.critic.Forward(t.buf.critWS, t.obsN, n))
	t.step += int64(n * t.cfg.NumSteps)
}

// sample draws one action per environment from the policy outputs, writing the actions to
// buf.envActions and their log-probabilities to buf.logp[base:].
func (t *Trainer) sample(out []float64, base int) {
	n, k := t.cfg.NumEnvs, t.outDim()
	for i := 0; i < n; i++ {
		row := out[i*k : (i+1)*k]
		if t.spec.Discrete() {
			lse, _ := categorical(row, t.buf.probs)
			act := sampleCategorical(t.rng, t.buf.probs)
			t.buf.envActions[i] = float64(act)
			t.buf.logp[base+i] = row[act] - lse
			continue
		}
		act := t.buf.envActions[i*k : (i+1)*k]
		for j, mu := range row {
			act[j] = mu + math.Exp(t.effLogStd[j])*t.rng.NormFloat64()
		}
		t.buf.logp[base+i] = gaussianLogProb(act, row, t.effLogStd)
	}
}

func (t *Trainer) recordEpisodes() {
	for _, e := range t.vec.Episodes {
		if len(t.window) < episodeWindow {
			t.window = append(t.window, e)
		} else {
			t.window[t.windowNext] = e
		}
		t.windowNext = (t.windowNext + 1) % episodeWindow
		t.episodes++
	}
}

// storeRewards stores the last step's rewards (scaled when NormReward is on, plus γ·V(final
// observation) on truncation) and episode ends at rollout index base.
func (t *Trainer) storeRewards(base int) {
	v, d := t.vec, t.spec.ObsDim
	scale := 1.0
	if t.cfg.NormReward {
		for i, r := range v.Rewards {
			t.retAcc[i] = t.retAcc[i]*t.cfg.Gamma + r
		}
		t.retRMS.Update(t.retAcc)
		scale = 1 / math.Sqrt(t.retRMS.Var[0]+1e-8)
	}
	for i, r := range v.Rewards {
		if t.cfg.NormReward {
			r = math.Max(-t.cfg.ClipReward, math.Min(t.cfg.ClipReward, r*scale))
		}
		done := v.Terminated[i] || v.Truncated[i]
		if v.Truncated[i] {
			r += t.gamma() * t.valueOfRaw(v.FinalObs[i*d:(i+1)*d])
		}
		t.buf.rewards[base+i] = r
		t.buf.dones[base+i] = 0
		if done {
			t.buf.dones[base+i] = 1
			t.retAcc[i] = 0
		}
	}
}

// valueOfRaw returns V of a raw observation, normalised with the current statistics.
func (t *Trainer) valueOfRaw(obs []float64) float64 {
	x := t.mb.obs[:t.spec.ObsDim]
	t.normalize(x, obs)
	return t.critic.Forward(t.mb.critWS, x, 1)[0]
}

// advantages computes GAE and the advantage statistics (before any normalisation).
func (t *Trainer) advantages(m *Metrics) {
	b := &t.buf
	GAE(b.rewards, b.values, b.dones, b.lastValues, t.cfg.NumEnvs, t.gamma(), t.cfg.GAELambda, b.adv, b.returns)
	var sum, sq, absMax float64
	for _, a := range b.adv {
		sum += a
		absMax = math.Max(absMax, math.Abs(a))
	}
	mean := sum / float64(len(b.adv))
	for _, a := range b.adv {
		sq += (a - mean) * (a - mean)
	}
	m.AdvantageMean, m.AdvantageStd, m.AdvantageAbsMax = mean, math.Sqrt(sq/float64(len(b.adv))), absMax
	m.ExplainedVariance = explainedVariance(b.values, b.returns)
}

// explainedVariance is 1 − Var(returns − values)/Var(returns), NaN when the returns are constant
// (as CleanRL and SB3 report it).
func explainedVariance(values, returns []float64) float64 {
	n := float64(len(returns))
	var my, md float64
	for i, y := range returns {
		my += y
		md += y - values[i]
	}
	my, md = my/n, md/n
	var vy, vd float64
	for i, y := range returns {
		vy += (y - my) * (y - my)
		e := y - values[i] - md
		vd += e * e
	}
	if vy == 0 {
		return math.NaN()
	}
	return 1 - vd/vy
}

func (t *Trainer) episodeMetrics(m *Metrics) {
	m.Episodes = len(t.window)
	if len(t.window) == 0 {
		return
	}
	var r, l float64
	for _, e := range t.window {
		r += e.Return
		l += float64(e.Length)
	}
	m.Reward, m.EpisodeLength = r/float64(len(t.window)), l/float64(len(t.window))
}
