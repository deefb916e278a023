package envs

import (
	"math"
	"math/rand/v2"
)

// MountainCarContinuous constants, as in Gymnasium's classic_control/continuous_mountain_car.py
// (Continuous_MountainCarEnv.__init__, goal_velocity 0).
const (
	mountainCarMinAction    = -1.0
	mountainCarMaxAction    = 1.0
	mountainCarMinPosition  = -1.2
	mountainCarMaxPosition  = 0.6
	mountainCarMaxSpeed     = 0.07
	mountainCarGoalPosition = 0.45
	mountainCarGoalVelocity = 0.0
	mountainCarPower        = 0.0015
	// MountainCarContinuousMaxEpisodeSteps is MountainCarContinuous-v0's time limit.
	MountainCarContinuousMaxEpisodeSteps = 999
)

// MountainCarContinuous is Gymnasium's MountainCarContinuous-v0: drive an underpowered car out of a
// valley, rocking it to and fro, with a force in [−1, 1]. Velocity += force·0.0015 − 0.0025·cos(3x),
// clipped to ±0.07; the position moves by the new velocity and is clipped to [−1.2, 0.6], and a car
// at the left wall moving left stops. Terminated when x ≥ 0.45 with velocity ≥ 0; reward 100 on that
// step, minus 0.1·a² on every step, where a is the action as given (Gymnasium's environment squares
// the unclipped action; the dynamics use the clipped one); truncated at 999 steps. The state is kept
// as float32 after each step and observed as float32, as Gymnasium stores it. Reset draws the
// position from uniform(−0.6, −0.4), kept in float64 until the first step as Gymnasium does, with
// velocity 0.
type MountainCarContinuous struct {
	pos, vel float64
}

// NewMountainCarContinuous returns a MountainCarContinuous; call Reset before Step.
func NewMountainCarContinuous() *MountainCarContinuous { return &MountainCarContinuous{} }

// Spec returns MountainCarContinuous-v0's spaces: 2 observations, one force in [−1, 1], 999 steps.
func (m *MountainCarContinuous) Spec() Spec {
	return Spec{Name: "MountainCarContinuous-v0", ObsDim: 2, ActionDim: 1,
		ActionLow: []float64{mountainCarMinAction}, ActionHigh: []float64{mountainCarMaxAction},
		MaxEpisodeSteps: MountainCarContinuousMaxEpisodeSteps}
}

// Reset draws the position from uniform(−0.6, −0.4) and sets the velocity to 0.
func (m *MountainCarContinuous) Reset(rng *rand.Rand, obs []float64) {
	m.pos = -0.6 + 0.2*rng.Float64()
	m.vel = 0
	m.observe(obs)
}

// Step applies force action[0], clipped to [−1, 1].
func (m *MountainCarContinuous) Step(action []float64, obs []float64) (float64, bool) {
	force := clip(action[0], mountainCarMinAction, mountainCarMaxAction)
	pos, vel := m.pos, m.vel
	vel += force*mountainCarPower - 0.0025*math.Cos(3*pos)
	vel = clip(vel, -mountainCarMaxSpeed, mountainCarMaxSpeed)
	pos += vel
	pos = clip(pos, mountainCarMinPosition, mountainCarMaxPosition)
	if pos == mountainCarMinPosition && vel < 0 {
		vel = 0
	}
	terminated := pos >= mountainCarGoalPosition && vel >= mountainCarGoalVelocity
	var reward float64
	if terminated {
		reward = 100
	}
	reward -= action[0] * action[0] * 0.1
	m.pos, m.vel = float64(float32(pos)), float64(float32(vel))
	m.observe(obs)
	return reward, terminated
}

func (m *MountainCarContinuous) observe(obs []float64) {
	obs[0] = float64(float32(m.pos))
	obs[1] = float64(float32(m.vel))
}

// State returns (position, velocity).
func (m *MountainCarContinuous) State() []float64 { return []float64{m.pos, m.vel} }

// SetState restores a state returned by State.
func (m *MountainCarContinuous) SetState(s []float64) { m.pos, m.vel = s[0], s[1] }
