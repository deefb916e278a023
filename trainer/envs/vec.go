package envs

import (
	"fmt"
	"math/rand/v2"
)

// Episode is a finished episode's undiscounted return and length, in raw environment rewards.
type Episode struct {
	Return float64
	Length int
}

// Vec steps n copies of an environment in lockstep with same-step autoreset, the semantics of
// Gymnasium 0.29's SyncVectorEnv and of SB3's VecEnv, which CleanRL's PPO relies on:
//
//   - After Step, Obs[i] is the observation the agent acts on next. For an env whose episode just
//     ended (Terminated[i] or Truncated[i]), that is the first observation of the new episode, and
//     the observation the old episode ended in is in FinalObs[i].
//   - Truncated[i] means the time limit (Spec.MaxEpisodeSteps) cut the episode while the state was
//     not terminal; a learner should bootstrap the return from V(FinalObs[i]). Terminated[i] means
//     a terminal state: no bootstrap. A step can be both; Terminated wins and Truncated is false.
//   - Episodes lists the episodes that ended on the last Step (raw returns and lengths).
//
// Randomness (resets) comes from the rng given to NewVec, shared by all copies in index order, so a
// Vec is deterministic for a given rng state.
type Vec struct {
	N    int
	Spec Spec

	Obs        []float64 // N×ObsDim, the observations to act on
	FinalObs   []float64 // N×ObsDim, valid for rows whose episode ended on the last Step
	Rewards    []float64 // N, raw rewards of the last Step
	Terminated []bool    // N
	Truncated  []bool    // N
	Episodes   []Episode // episodes that ended on the last Step

	envs     []Env
	rng      *rand.Rand
	elapsed  []int
	epReturn []float64
}

// NewVec returns n environments made by newEnv, reset with draws from rng.
func NewVec(newEnv func() Env, n int, rng *rand.Rand) *Vec {
	if n <= 0 {
		panic(fmt.Sprintf("envs: NewVec with %d environments", n))
	}
	v := &Vec{N: n, rng: rng}
	for i := 0; i < n; i++ {
		v.envs = append(v.envs, newEnv())
	}
	v.Spec = v.envs[0].Spec()
	d := v.Spec.ObsDim
	v.Obs, v.FinalObs = make([]float64, n*d), make([]float64, n*d)
	v.Rewards, v.Terminated, v.Truncated = make([]float64, n), make([]bool, n), make([]bool, n)
	v.elapsed, v.epReturn = make([]int, n), make([]float64, n)
	v.Reset()
	return v
}

// Reset starts a new episode in every environment.
func (v *Vec) Reset() {
	d := v.Spec.ObsDim
	for i, e := range v.envs {
		e.Reset(v.rng, v.Obs[i*d:(i+1)*d])
		v.elapsed[i], v.epReturn[i] = 0, 0
	}
}

// Step applies actions (N×ActionDim, row i for env i) and autoresets every env whose episode ended.
func (v *Vec) Step(actions []float64) {
	d, a := v.Spec.ObsDim, v.Spec.ActionDim
	v.Episodes = v.Episodes[:0]
	for i, e := range v.envs {
		obs := v.Obs[i*d : (i+1)*d]
		r, term := e.Step(actions[i*a:(i+1)*a], obs)
		v.elapsed[i]++
		v.epReturn[i] += r
		trunc := !term && v.Spec.MaxEpisodeSteps > 0 && v.elapsed[i] >= v.Spec.MaxEpisodeSteps
		v.Rewards[i], v.Terminated[i], v.Truncated[i] = r, term, trunc
		if term || trunc {
			copy(v.FinalObs[i*d:(i+1)*d], obs)
			v.Episodes = append(v.Episodes, Episode{Return: v.epReturn[i], Length: v.elapsed[i]})
			e.Reset(v.rng, obs)
			v.elapsed[i], v.epReturn[i] = 0, 0
		}
	}
}

// VecState is everything a Vec needs to continue exactly where it was (the rng is the caller's).
type VecState struct {
	EnvStates [][]float64
	Obs       []float64
	Elapsed   []int
	EpReturn  []float64
}

// State returns a copy of the Vec's state.
func (v *Vec) State() VecState {
	s := VecState{
		Obs:      append([]float64(nil), v.Obs...),
		Elapsed:  append([]int(nil), v.elapsed...),
		EpReturn: append([]float64(nil), v.epReturn...),
	}
	for _, e := range v.envs {
		s.EnvStates = append(s.EnvStates, e.State())
	}
	return s
}

// SetState restores a state returned by State from a Vec of the same size and environment.
func (v *Vec) SetState(s VecState) error {
	if len(s.EnvStates) != v.N || len(s.Obs) != len(v.Obs) || len(s.Elapsed) != v.N || len(s.EpReturn) != v.N {
		return fmt.Errorf("envs: state for %d environments of %d observations, want %d of %d",
			len(s.EnvStates), len(s.Obs), v.N, len(v.Obs))
	}
	for i, e := range v.envs {
		e.SetState(s.EnvStates[i])
	}
	copy(v.Obs, s.Obs)
	copy(v.elapsed, s.Elapsed)
	copy(v.epReturn, s.EpReturn)
	return nil
}
