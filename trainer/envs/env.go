// Package envs holds the environments the built-in PPO trainer learns on: CartPole-v1, Acrobot-v1,
// Pendulum-v1 and MountainCarContinuous-v0, ported from Gymnasium's classic_control sources, the Env
// interface any other environment (the probe environments, for one) implements to plug into the
// trainer, and Vec, a vectorised environment with same-step autoreset.
package envs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Spec describes an environment's observation and action spaces and its time limit.
type Spec struct {
	Name   string
	ObsDim int // length of an observation vector
	// Actions is the number of discrete actions; 0 means a continuous (Box) action space.
	Actions int
	// ActionDim, ActionLow and ActionHigh describe a continuous action space; an env clips actions
	// to its own bounds. For a discrete space ActionDim is 1 (the action index as a float64).
	ActionDim             int
	ActionLow, ActionHigh []float64
	// MaxEpisodeSteps is the time limit (Gymnasium's TimeLimit wrapper): an episode reaching it is
	// truncated, not terminated. 0 means no limit.
	MaxEpisodeSteps int
}

// Discrete reports whether the action space is discrete.
func (s Spec) Discrete() bool { return s.Actions > 0 }

// Env is one environment instance. Observations are written into caller-owned slices of length
// Spec().ObsDim; an action is a slice of Spec().ActionDim values (a discrete action is its index,
// stored as a float64). Time limits are applied by Vec from Spec().MaxEpisodeSteps, so Step reports
// only termination (a terminal state of the MDP).
//
// State and SetState capture everything Step depends on, so a checkpoint can resume an episode in
// the middle, bit for bit.
type Env interface {
	Spec() Spec
	// Reset starts a new episode, drawing any randomness from rng, and writes the first observation.
	Reset(rng *rand.Rand, obs []float64)
	// Step applies action, writes the next observation and returns the reward and whether the new
	// state is terminal.
	Step(action []float64, obs []float64) (reward float64, terminated bool)
	// State returns a copy of the environment's internal state; SetState restores one.
	State() []float64
	SetState(state []float64)
}

// registry maps environment names to constructors.
var registry = map[string]func() Env{
	"CartPole-v1":              func() Env { return NewCartPole() },
	"Pendulum-v1":              func() Env { return NewPendulum() },
	"Acrobot-v1":               func() Env { return NewAcrobot() },
	"MountainCarContinuous-v0": func() Env { return NewMountainCarContinuous() },
}

// Names returns the names Make accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Make returns a constructor for the named environment, or an error naming the allowed ones.
func Make(name string) (func() Env, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("env: got %q, want one of %s", name, strings.Join(Names(), ", "))
	}
	return f, nil
}
