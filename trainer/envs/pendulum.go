package envs

import (
	"math"
	"math/rand/v2"
)

// Pendulum constants, as in Gymnasium's classic_control/pendulum.py.
const (
	pendulumMaxSpeed  = 8.0
	pendulumMaxTorque = 2.0
	pendulumDt        = 0.05
	pendulumG         = 10.0
	pendulumM         = 1.0
	pendulumL         = 1.0
	// PendulumMaxEpisodeSteps is Pendulum-v1's time limit.
	PendulumMaxEpisodeSteps = 200
)

// Pendulum is Gymnasium's Pendulum-v1: swing a pendulum up and keep it upright with a torque in
// [−2, 2]. Observation (cos θ, sin θ, θ̇) as float32; reward −(angle_normalize(θ)² + 0.1·θ̇² +
// 0.001·u²); semi-implicit Euler (the new velocity, clipped to ±8, moves the angle); never terminates,
// truncated at 200 steps. Reset draws θ from uniform(−π, π) and θ̇ from uniform(−1, 1).
type Pendulum struct {
	theta, thetaDot float64
}

// NewPendulum returns a Pendulum; call Reset before Step.
func NewPendulum() *Pendulum { return &Pendulum{} }

// Spec returns Pendulum-v1's spaces: 3 observations, one torque in [−2, 2], 200 steps.
func (p *Pendulum) Spec() Spec {
	return Spec{Name: "Pendulum-v1", ObsDim: 3, ActionDim: 1,
		ActionLow: []float64{-pendulumMaxTorque}, ActionHigh: []float64{pendulumMaxTorque},
		MaxEpisodeSteps: PendulumMaxEpisodeSteps}
}

// Reset draws θ ~ uniform(−π, π), θ̇ ~ uniform(−1, 1).
func (p *Pendulum) Reset(rng *rand.Rand, obs []float64) {
	p.theta = -math.Pi + 2*math.Pi*rng.Float64()
	p.thetaDot = -1 + 2*rng.Float64()
	p.observe(obs)
}

// Step applies torque action[0], clipped to [−2, 2].
func (p *Pendulum) Step(action []float64, obs []float64) (float64, bool) {
	u := clip(action[0], -pendulumMaxTorque, pendulumMaxTorque)
	an := AngleNormalize(p.theta)
	cost := an*an + 0.1*p.thetaDot*p.thetaDot + 0.001*u*u
	newThetaDot := p.thetaDot + (3*pendulumG/(2*pendulumL)*math.Sin(p.theta)+3.0/(pendulumM*pendulumL*pendulumL)*u)*pendulumDt
	newThetaDot = clip(newThetaDot, -pendulumMaxSpeed, pendulumMaxSpeed)
	p.theta += newThetaDot * pendulumDt
	p.thetaDot = newThetaDot
	p.observe(obs)
	return -cost, false
}

func (p *Pendulum) observe(obs []float64) {
	obs[0] = float64(float32(math.Cos(p.theta)))
	obs[1] = float64(float32(math.Sin(p.theta)))
	obs[2] = float64(float32(p.thetaDot))
}

// State returns (θ, θ̇).
func (p *Pendulum) State() []float64 { return []float64{p.theta, p.thetaDot} }

// SetState restores a state returned by State.
func (p *Pendulum) SetState(s []float64) { p.theta, p.thetaDot = s[0], s[1] }

// AngleNormalize maps x to [−π, π) as Gymnasium's angle_normalize does: ((x + π) mod 2π) − π with
// Python's floored modulo, whose result takes the divisor's sign (Go's math.Mod takes the dividend's).
func AngleNormalize(x float64) float64 {
	return floorMod(x+math.Pi, 2*math.Pi) - math.Pi
}

// floorMod is Python's float %: a − b·⌊a/b⌋, computed via math.Mod and corrected for sign.
func floorMod(a, b float64) float64 {
	m := math.Mod(a, b)
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

func clip(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }
