package ppo

// Config returns the trainer's configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Steps returns the environment steps taken so far (all environments together).
func (t *Trainer) Steps() int64 { return t.step }

// Value returns the critic's V(obs) for a raw observation (normalised as during training).
func (t *Trainer) Value(obs []float64) float64 {
	x := make([]float64, t.spec.ObsDim)
	t.normalize(x, obs)
	return t.critic.Forward(t.critic.NewWorkspace(1), x, 1)[0]
}

// ActionProbs returns π(·|obs) of a categorical policy for a raw observation; nil for a Gaussian one.
func (t *Trainer) ActionProbs(obs []float64) []float64 {
	if !t.spec.Discrete() {
		return nil
	}
	out := t.policyOutput(obs)
	p := make([]float64, len(out))
	categorical(out, p)
	return p
}

// ActionMean returns μ(obs) of a Gaussian policy for a raw observation; nil for a categorical one.
func (t *Trainer) ActionMean(obs []float64) []float64 {
	if t.spec.Discrete() {
		return nil
	}
	return t.policyOutput(obs)
}

// RecentReturn returns the mean raw return of the last (up to 100) finished episodes and how many
// that is.
func (t *Trainer) RecentReturn() (mean float64, episodes int) {
	var m Metrics
	t.episodeMetrics(&m)
	return m.Reward, m.Episodes
}

func (t *Trainer) policyOutput(obs []float64) []float64 {
	x := make([]float64, t.spec.ObsDim)
	t.normalize(x, obs)
	out := t.actor.Forward(t.actor.NewWorkspace(1), x, 1)
	return append([]float64(nil), out...)
}
