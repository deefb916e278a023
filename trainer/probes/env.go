package probes

import (
	"math/rand/v2"

	"github.com/rlsweep/rlsweep/trainer/envs"
)

// Env is a probe environment (Andy Jones, "Debugging RL without the agonizing pain"): a one- or
// two-step MDP with one observation dimension whose optimal value and policy are known in closed form.
// It implements envs.Env, so the built-in trainer learns on it like on any other environment.
type Env struct {
	probe Probe
	obs   float64 // the current observation
	t     int     // steps taken in this episode
}

// NewEnv returns the probe environment of p.
func NewEnv(p Probe) *Env { return &Env{probe: p} }

// Spec implements envs.Env: one observation dimension; one discrete action for probes 1–3, two for 4
// and 5, and a Box [−2, 2] for every continuous probe (1c–3c ignore the action).
func (e *Env) Spec() envs.Spec {
	s := envs.Spec{Name: "probe-" + string(e.probe.ID), ObsDim: 1, ActionDim: 1}
	switch {
	case e.probe.Continuous:
		s.ActionLow, s.ActionHigh = []float64{-2}, []float64{2}
	case e.probe.Level >= 4:
		s.Actions = 2
	default:
		s.Actions = 1
	}
	return s
}

// Reset implements envs.Env. Probes 2 and 5 draw ±1 with equal probability; the others start at 0.
func (e *Env) Reset(rng *rand.Rand, obs []float64) {
	e.t, e.obs = 0, 0
	if e.probe.Level == 2 || e.probe.Level == 5 {
		e.obs = 1
		if rng.IntN(2) == 0 {
			e.obs = -1
		}
	}
	obs[0] = e.obs
}

// Step implements envs.Env with the rewards of docs/probes.md.
func (e *Env) Step(action []float64, obs []float64) (float64, bool) {
	e.t++
	a := action[0]
	if e.probe.Continuous {
		a = max(-2, min(2, a))
	}
	var r float64
	switch e.probe.Level {
	case 1:
		r = 1
	case 2:
		r = e.obs
	case 3:
		if e.t == 1 {
			e.obs = 1
			obs[0] = 1
			return 0, false
		}
		r = 1
	case 4:
		r = -1
		if e.probe.Continuous {
			r = -(a - 0.5) * (a - 0.5)
		} else if a == 1 {
			r = 1
		}
	case 5:
		want := 0.0
		if e.obs > 0 {
			want = 1
		}
		r = -1
		if e.probe.Continuous {
			r = -(a - 0.5*e.obs) * (a - 0.5*e.obs)
		} else if a == want {
			r = 1
		}
	}
	obs[0] = e.obs
	return r, true
}

// State implements envs.Env.
func (e *Env) State() []float64 { return []float64{e.obs, float64(e.t)} }

// SetState implements envs.Env.
func (e *Env) SetState(s []float64) { e.obs, e.t = s[0], int(s[1]) }
