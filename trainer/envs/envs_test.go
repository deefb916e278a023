package envs

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCartPoleStep checks one step against the Gymnasium equations. References: the first case is
// worked by hand in exact fractions (from rest, action 1: ẍ = 400/41, θ̈ = −600/41); the second was
// computed with Python 3 floats by evaluating the lines of CartPoleEnv.step verbatim.
func TestCartPoleStep(t *testing.T) {
	cases := []struct {
		name   string
		state  [4]float64
		action float64
		want   [4]float64
		tol    float64
	}{
		{"from rest, push right", [4]float64{0, 0, 0, 0}, 1,
			[4]float64{0, 0.02 * 400 / 41, 0, -0.02 * 600 / 41}, 1e-15},
		{"tilted, push left", [4]float64{0.01, 0.02, 0.03, 0.04}, 0,
			[4]float64{0.0104, -0.17553901710278938, 0.030799999999999998, 0.34199522377603914}, 1e-15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCartPole()
			c.SetState(tc.state[:])
			obs := make([]float64, 4)
			r, term := c.Step([]float64{tc.action}, obs)
			if r != 1 || term {
				t.Errorf("reward, terminated = %v, %v; want 1, false", r, term)
			}
			for i, got := range c.State() {
				if math.Abs(got-tc.want[i]) > tc.tol {
					t.Errorf("state[%d] = %.17g, want %.17g", i, got, tc.want[i])
				}
				if obs[i] != float64(float32(got)) {
					t.Errorf("obs[%d] = %v, want the state rounded to float32 %v", i, obs[i], float32(got))
				}
			}
		})
	}
}

func TestCartPoleTermination(t *testing.T) {
	cases := []struct {
		name  string
		state [4]float64
		want  bool
	}{
		{"x beyond 2.4", [4]float64{2.4, 1, 0, 0}, true},          // x becomes 2.42
		{"theta beyond 12°", [4]float64{0, 0, 0.2094, 0.1}, true}, // θ becomes 0.2114 > 0.20944
		{"inside", [4]float64{2.3, 1, 0.2, 0}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCartPole()
			c.SetState(tc.state[:])
			r, term := c.Step([]float64{1}, make([]float64, 4))
			if term != tc.want || r != 1 {
				t.Errorf("terminated, reward = %v, %v; want %v, 1 (the terminating step pays 1 too)", term, r, tc.want)
			}
		})
	}
}

// TestPendulumStep checks one step against Gymnasium's PendulumEnv.step; references computed with
// Python 3 floats from its lines, or by hand where noted.
func TestPendulumStep(t *testing.T) {
	cases := []struct {
		name                         string
		theta, thetaDot, u           float64
		wantReward, wantTh, wantThDt float64
	}{
		// Upright at rest, u=2: cost 0.001·4; θ̇' = 3·2·0.05 = 0.3; θ' = 0.3·0.05.
		{"upright full torque", 0, 0, 2, -0.004, 0.015, 0.3},
		// u=5 is clipped to 2 before both the cost and the dynamics.
		{"torque clipped", 0, 0, 5, -0.004, 0.015, 0.3},
		// θ̇ = 7.9 + (15·sin(π/2) + 6)·0.05 = 8.95 → clipped to 8; θ' = π/2 + 0.4.
		{"speed clipped", math.Pi / 2, 7.9, 2,
			-(math.Pi*math.Pi/4 + 0.1*7.9*7.9 + 0.004), math.Pi/2 + 0.4, 8},
		{"python reference", 1.0, -2.0, 0.7, -1.40049, 0.9368051619302962, -1.2638967613940775},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPendulum()
			p.SetState([]float64{tc.theta, tc.thetaDot})
			obs := make([]float64, 3)
			r, term := p.Step([]float64{tc.u}, obs)
			s := p.State()
			const tol = 1e-14
			if math.Abs(r-tc.wantReward) > tol || term {
				t.Errorf("reward, terminated = %.17g, %v; want %.17g, false", r, term, tc.wantReward)
			}
			if math.Abs(s[0]-tc.wantTh) > tol || math.Abs(s[1]-tc.wantThDt) > tol {
				t.Errorf("state = %.17g, want (%.17g, %.17g)", s, tc.wantTh, tc.wantThDt)
			}
			want := []float32{float32(math.Cos(s[0])), float32(math.Sin(s[0])), float32(s[1])}
			for i := range want {
				if obs[i] != float64(want[i]) {
					t.Errorf("obs[%d] = %v, want %v", i, obs[i], want[i])
				}
			}
		})
	}
}

// TestAngleNormalize checks Python's floored modulo; references from Python 3:
// ((x + math.pi) % (2*math.pi)) - math.pi.
func TestAngleNormalize(t *testing.T) {
	cases := []struct{ x, want float64 }{
		{-4, 2.2831853071795862},
		{3 * math.Pi, -3.141592653589793},
		{-math.Pi, -3.141592653589793},
		{7, 0.7168146928204138},
		{0.5, 0.5},
		{-20, -1.1504440784612413},
	}
	for _, tc := range cases {
		if got := AngleNormalize(tc.x); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("AngleNormalize(%v) = %.17g, want %.17g", tc.x, got, tc.want)
		}
	}
}

func TestResetDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	c, p := NewCartPole(), NewPendulum()
	obs4, obs3 := make([]float64, 4), make([]float64, 3)
	var maxC, maxTh, maxThDot float64
	for i := 0; i < 10000; i++ {
		c.Reset(rng, obs4)
		for _, v := range c.State() {
			maxC = math.Max(maxC, math.Abs(v))
		}
		p.Reset(rng, obs3)
		s := p.State()
		maxTh, maxThDot = math.Max(maxTh, math.Abs(s[0])), math.Max(maxThDot, math.Abs(s[1]))
	}
	// With 10⁴ uniform draws the extremes lie within 1% of the bounds.
	check := func(name string, got, bound float64) {
		if got > bound || got < 0.99*bound {
			t.Errorf("%s: max |draw| = %v, want in [0.99, 1]·%v", name, got, bound)
		}
	}
	check("CartPole state", maxC, 0.05)
	check("Pendulum θ", maxTh, math.Pi)
	check("Pendulum θ̇", maxThDot, 1)
}

// TestRandomPolicyReturns runs uniformly random policies through Vec. References: CartPole-v1's
// random-policy return is about 22 (Gymnasium docs and common baselines report 22 ± 12); Pendulum-v1
// about −1227 (random torques in [−2, 2]). Tolerances are several standard errors.
func TestRandomPolicyReturns(t *testing.T) {
	cases := []struct {
		env      string
		episodes int
		want     float64
		tol      float64
	}{
		{"CartPole-v1", 4000, 22, 1.5},
		{"Pendulum-v1", 1000, -1227, 60},
	}
	for _, tc := range cases {
		t.Run(tc.env, func(t *testing.T) {
			newEnv, err := Make(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(42, 7))
			v := NewVec(newEnv, 8, rng)
			act := make([]float64, v.N*v.Spec.ActionDim)
			var sum float64
			var n int
			for n < tc.episodes {
				for i := range act {
					if v.Spec.Discrete() {
						act[i] = float64(rng.IntN(v.Spec.Actions))
					} else {
						act[i] = v.Spec.ActionLow[0] + (v.Spec.ActionHigh[0]-v.Spec.ActionLow[0])*rng.Float64()
					}
				}
				v.Step(act)
				for _, e := range v.Episodes {
					sum += e.Return
					n++
				}
			}
			if got := sum / float64(n); math.Abs(got-tc.want) > tc.tol {
				t.Errorf("mean random return over %d episodes = %.1f, want %v ± %v", n, got, tc.want, tc.tol)
			} else {
				t.Logf("mean random return over %d episodes = %.2f", n, got)
			}
		})
	}
}

// TestVecAutoreset checks same-step autoreset: at the time limit Truncated is set, FinalObs holds the
// last observation of the old episode, Obs the first of the new one.
func TestVecAutoreset(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	v := NewVec(func() Env { return NewPendulum() }, 2, rng)
	act := []float64{0, 0}
	for step := 1; step <= PendulumMaxEpisodeSteps; step++ {
		before := v.envs[0].State()
		v.Step(act)
		if step < PendulumMaxEpisodeSteps {
			if v.Truncated[0] || v.Terminated[0] || len(v.Episodes) != 0 {
				t.Fatalf("step %d: episode ended early", step)
			}
			continue
		}
		if !v.Truncated[0] || !v.Truncated[1] || v.Terminated[0] || len(v.Episodes) != 2 {
			t.Fatalf("step %d: truncated %v terminated %v episodes %d; want both truncated", step, v.Truncated, v.Terminated, len(v.Episodes))
		}
		p := NewPendulum()
		p.SetState(before)
		final := make([]float64, 3)
		p.Step([]float64{0}, final)
		for i := range final {
			if v.FinalObs[i] != final[i] {
				t.Errorf("FinalObs[%d] = %v, want the old episode's last obs %v", i, v.FinalObs[i], final[i])
			}
		}
		s := v.envs[0].State()
		if got := []float64{float64(float32(math.Cos(s[0]))), float64(float32(math.Sin(s[0]))), float64(float32(s[1]))}; got[0] != v.Obs[0] || got[2] != v.Obs[2] {
			t.Errorf("Obs = %v, want the reset state's observation %v", v.Obs[:3], got)
		}
		if v.Episodes[0].Length != PendulumMaxEpisodeSteps {
			t.Errorf("episode length = %d, want %d", v.Episodes[0].Length, PendulumMaxEpisodeSteps)
		}
	}
}

func TestMake(t *testing.T) {
	if _, err := Make("Acrobot-v1"); err == nil {
		t.Error("Make(Acrobot-v1) succeeded, want an error naming the allowed envs")
	}
	for _, n := range Names() {
		f, err := Make(n)
		if err != nil || f().Spec().Name != n {
			t.Errorf("Make(%q) = %v; want an env of that name", n, err)
		}
	}
}
