package envs

import (
	"math"
	"math/rand/v2"
)

// Acrobot constants, as in Gymnasium's classic_control/acrobot.py (AcrobotEnv): Sutton and Barto's
// book dynamics, no torque noise.
const (
	acrobotDt  = 0.2
	acrobotL1  = 1.0 // length of link 1 [m]
	acrobotM1  = 1.0 // mass of link 1 [kg]
	acrobotM2  = 1.0 // mass of link 2 [kg]
	acrobotLC1 = 0.5 // position of link 1's centre of mass [m]
	acrobotLC2 = 0.5 // position of link 2's centre of mass [m]
	acrobotI1  = 1.0 // moment of inertia of link 1
	acrobotI2  = 1.0 // moment of inertia of link 2
	acrobotG   = 9.8
	// AcrobotMaxEpisodeSteps is Acrobot-v1's time limit.
	AcrobotMaxEpisodeSteps = 500
)

// acrobotMaxVel1 and acrobotMaxVel2 bound θ̇1 and θ̇2: 4π and 9π, multiplied in float64 as Python
// does (a Go constant expression would round 9π once, exactly, and can differ in the last bit).
var (
	acrobotPi      = math.Pi
	acrobotMaxVel1 = 4 * acrobotPi
	acrobotMaxVel2 = 9 * acrobotPi
)

// acrobotTorque maps the action index to the torque on the joint between the links.
var acrobotTorque = [3]float64{-1, 0, 1}

// Acrobot is Gymnasium's Acrobot-v1: two links hang from a fixed pivot; a torque of −1, 0 or +1
// (actions 0, 1, 2) on the joint between them must swing the free end above the height of one link
// over the pivot. The state (θ1, θ2, θ̇1, θ̇2) has θ1 = 0 with link 1 pointing down and θ2 relative
// to link 1. One step integrates the book's equations of motion over dt = 0.2 s with a single
// fourth-order Runge–Kutta step, wraps both angles into [−π, π] and clips the velocities to ±4π and
// ±9π. Observation (cos θ1, sin θ1, cos θ2, sin θ2, θ̇1, θ̇2) as float32; reward −1 per step and 0 on
// the step that reaches −cos θ1 − cos(θ1 + θ2) > 1, which terminates; truncated at 500 steps. Reset
// draws the four state variables from uniform(−0.1, 0.1), rounded to float32 as Gymnasium stores them.
type Acrobot struct {
	s [4]float64
}

// NewAcrobot returns an Acrobot; call Reset before Step.
func NewAcrobot() *Acrobot { return &Acrobot{} }

// Spec returns Acrobot-v1's spaces: 6 observations, 3 actions, 500 steps.
func (a *Acrobot) Spec() Spec {
	return Spec{Name: "Acrobot-v1", ObsDim: 6, Actions: 3, ActionDim: 1, MaxEpisodeSteps: AcrobotMaxEpisodeSteps}
}

// Reset draws a state from uniform(−0.1, 0.1)⁴, each value rounded to float32.
func (a *Acrobot) Reset(rng *rand.Rand, obs []float64) {
	for i := range a.s {
		a.s[i] = float64(float32(-0.1 + 0.2*rng.Float64()))
	}
	a.observe(obs)
}

// Step applies the torque of action index action[0]; an index outside 0..2 applies no torque.
func (a *Acrobot) Step(action []float64, obs []float64) (float64, bool) {
	var torque float64
	if i := int(action[0]); float64(i) == action[0] && i >= 0 && i < len(acrobotTorque) {
		torque = acrobotTorque[i]
	}
	ns := acrobotRK4(a.s, torque, acrobotDt)
	ns[0] = acrobotWrap(ns[0])
	ns[1] = acrobotWrap(ns[1])
	ns[2] = clip(ns[2], -acrobotMaxVel1, acrobotMaxVel1)
	ns[3] = clip(ns[3], -acrobotMaxVel2, acrobotMaxVel2)
	a.s = ns
	a.observe(obs)
	if a.terminal() {
		return 0, true
	}
	return -1, false
}

// terminal reports whether the free end is above the goal height: −cos θ1 − cos(θ1 + θ2) > 1.
func (a *Acrobot) terminal() bool {
	return -math.Cos(a.s[0])-math.Cos(a.s[1]+a.s[0]) > 1.0
}

func (a *Acrobot) observe(obs []float64) {
	obs[0] = float64(float32(math.Cos(a.s[0])))
	obs[1] = float64(float32(math.Sin(a.s[0])))
	obs[2] = float64(float32(math.Cos(a.s[1])))
	obs[3] = float64(float32(math.Sin(a.s[1])))
	obs[4] = float64(float32(a.s[2]))
	obs[5] = float64(float32(a.s[3]))
}

// State returns (θ1, θ2, θ̇1, θ̇2).
func (a *Acrobot) State() []float64 { return a.s[:] }

// SetState restores a state returned by State.
func (a *Acrobot) SetState(s []float64) { copy(a.s[:], s) }

// acrobotDeriv is the time derivative of (θ1, θ2, θ̇1, θ̇2) under torque on the second joint, by
// the book's equations (Sutton and Barto; Gymnasium's book_or_nips = "book").
func acrobotDeriv(s [4]float64, torque float64) [4]float64 {
	const m1, m2, l1, lc1, lc2, i1, i2 = acrobotM1, acrobotM2, acrobotL1, acrobotLC1, acrobotLC2, acrobotI1, acrobotI2
	// g is a variable so that products with it round in float64 as Python's do, not exactly as Go
	// folds constants.
	g := acrobotG
	th1, th2, dth1, dth2 := s[0], s[1], s[2], s[3]
	d1 := m1*lc1*lc1 + m2*(l1*l1+lc2*lc2+2*l1*lc2*math.Cos(th2)) + i1 + i2
	d2 := m2*(lc2*lc2+l1*lc2*math.Cos(th2)) + i2
	phi2 := m2 * lc2 * g * math.Cos(th1+th2-math.Pi/2)
	phi1 := -m2*l1*lc2*(dth2*dth2)*math.Sin(th2) -
		2*m2*l1*lc2*dth2*dth1*math.Sin(th2) +
		(m1*lc1+m2*l1)*g*math.Cos(th1-math.Pi/2) +
		phi2
	ddth2 := (torque + d2/d1*phi1 - m2*l1*lc2*(dth1*dth1)*math.Sin(th2) - phi2) /
		(m2*lc2*lc2 + i2 - d2*d2/d1)
	ddth1 := -(d2*ddth2 + phi1) / d1
	return [4]float64{dth1, dth2, ddth1, ddth2}
}

// acrobotRK4 advances s by one classical Runge–Kutta step of length dt.
func acrobotRK4(s [4]float64, torque, dt float64) [4]float64 {
	add := func(y [4]float64, h float64, k [4]float64) [4]float64 {
		for i := range y {
			y[i] += h * k[i]
		}
		return y
	}
	dt2 := dt / 2
	k1 := acrobotDeriv(s, torque)
	k2 := acrobotDeriv(add(s, dt2, k1), torque)
	k3 := acrobotDeriv(add(s, dt2, k2), torque)
	k4 := acrobotDeriv(add(s, dt, k3), torque)
	var out [4]float64
	for i := range s {
		out[i] = s[i] + dt/6*(k1[i]+2*k2[i]+2*k3[i]+k4[i])
	}
	return out
}

// acrobotWrap wraps an angle into [−π, π] by adding or subtracting 2π until it lies inside, as
// Gymnasium's wrap does (an angle of exactly ±π stays as it is). A non-finite angle is returned as it
// is.
func acrobotWrap(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	const diff = 2 * math.Pi
	for x > math.Pi {
		x -= diff
	}
	for x < -math.Pi {
		x += diff
	}
	return x
}
