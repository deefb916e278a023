package envs

import (
	"math"
	"math/rand/v2"
)

// CartPole constants, as in Gymnasium's classic_control/cartpole.py (CartPoleEnv.__init__).
const (
	cartPoleGravity    = 9.8
	cartPoleMassCart   = 1.0
	cartPoleMassPole   = 0.1
	cartPoleTotalMass  = cartPoleMassPole + cartPoleMassCart
	cartPoleLength     = 0.5 // half the pole's length
	cartPolePoleMassL  = cartPoleMassPole * cartPoleLength
	cartPoleForceMag   = 10.0
	cartPoleTau        = 0.02 // seconds between state updates
	cartPoleXThreshold = 2.4
	// CartPoleMaxEpisodeSteps is CartPole-v1's time limit.
	CartPoleMaxEpisodeSteps = 500
)

// cartPoleThetaThreshold is 12 degrees in radians, computed as Gymnasium does: 12·2·π/360.
var cartPoleThetaThreshold = 12 * 2 * math.Pi / 360

// CartPole is Gymnasium's CartPole-v1: push a cart left (action 0) or right (action 1) to keep a pole
// upright. Euler integration with τ = 0.02 s; reward 1 for every step, the terminating one included;
// terminated when |x| > 2.4 or |θ| > 12°; truncated at 500 steps. The state is kept in float64 and
// observations are rounded to float32, as Gymnasium returns np.float32 arrays. Reset draws the four
// state variables from uniform(−0.05, 0.05).
type CartPole struct {
	x, xDot, theta, thetaDot float64
}

// NewCartPole returns a CartPole; call Reset before Step.
func NewCartPole() *CartPole { return &CartPole{} }

// Spec returns CartPole-v1's spaces: 4 observations, 2 actions, 500 steps.
func (c *CartPole) Spec() Spec {
	return Spec{Name: "CartPole-v1", ObsDim: 4, Actions: 2, ActionDim: 1, MaxEpisodeSteps: CartPoleMaxEpisodeSteps}
}

// Reset draws a state from uniform(−0.05, 0.05)⁴ and writes it as the observation.
func (c *CartPole) Reset(rng *rand.Rand, obs []float64) {
	u := func() float64 { return -0.05 + 0.1*rng.Float64() }
	c.x, c.xDot, c.theta, c.thetaDot = u(), u(), u(), u()
	c.observe(obs)
}

// Step pushes the cart with force +10 for action 1 and −10 otherwise.
func (c *CartPole) Step(action []float64, obs []float64) (float64, bool) {
	force := -cartPoleForceMag
	if action[0] == 1 {
		force = cartPoleForceMag
	}
	cosT, sinT := math.Cos(c.theta), math.Sin(c.theta)
	temp := (force + cartPolePoleMassL*c.thetaDot*c.thetaDot*sinT) / cartPoleTotalMass
	thetaAcc := (cartPoleGravity*sinT - cosT*temp) /
		(cartPoleLength * (4.0/3.0 - cartPoleMassPole*cosT*cosT/cartPoleTotalMass))
	xAcc := temp - cartPolePoleMassL*thetaAcc*cosT/cartPoleTotalMass
	// Euler: positions advance with the old velocities.
	c.x += cartPoleTau * c.xDot
	c.xDot += cartPoleTau * xAcc
	c.theta += cartPoleTau * c.thetaDot
	c.thetaDot += cartPoleTau * thetaAcc
	c.observe(obs)
	terminated := c.x < -cartPoleXThreshold || c.x > cartPoleXThreshold ||
		c.theta < -cartPoleThetaThreshold || c.theta > cartPoleThetaThreshold
	return 1, terminated
}

func (c *CartPole) observe(obs []float64) {
	obs[0] = float64(float32(c.x))
	obs[1] = float64(float32(c.xDot))
	obs[2] = float64(float32(c.theta))
	obs[3] = float64(float32(c.thetaDot))
}

// State returns (x, ẋ, θ, θ̇).
func (c *CartPole) State() []float64 { return []float64{c.x, c.xDot, c.theta, c.thetaDot} }

// SetState restores a state returned by State.
func (c *CartPole) SetState(s []float64) { c.x, c.xDot, c.theta, c.thetaDot = s[0], s[1], s[2], s[3] }
