package envs

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
// about −1227 (random torques in [−2, 2]); Acrobot-v1 −498.9 ± 0.7 (400 episodes of the independent
// Python reference of TestAcrobotStep: the goal is almost never reached); MountainCarContinuous-v0
// −999·0.1·E[a²] = −33.3 for a ~ U(−1, 1), plus about 0.25 for the one episode in 400 that reaches
// the goal by chance (+100): −33.05.
// Tolerances are several standard errors.
func TestRandomPolicyReturns(t *testing.T) {
	cases := []struct {
		env      string
		episodes int
		want     float64
		tol      float64
	}{
		{"CartPole-v1", 4000, 22, 1.5},
		{"Pendulum-v1", 1000, -1227, 60},
		{"Acrobot-v1", 400, -498.9, 3},
		{"MountainCarContinuous-v0", 2000, -33.05, 0.5},
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
	_, err := Make("MountainCar-v0")
	if err == nil {
		t.Error("Make(MountainCar-v0) succeeded, want an error naming the allowed envs")
	} else if want := "want one of Acrobot-v1, CartPole-v1, MountainCarContinuous-v0, Pendulum-v1"; !strings.Contains(err.Error(), want) {
		t.Errorf("Make(MountainCar-v0) error %q, want it to contain %q", err, want)
	}
	for _, n := range Names() {
		f, err := Make(n)
		if err != nil || f().Spec().Name != n {
			t.Errorf("Make(%q) = %v; want an env of that name", n, err)
		}
	}
}

// TestAcrobotStep checks single steps and trajectories against an independent reference: a short
// Python 3 script written from the equations of Gymnasium's acrobot.py (book dynamics, one rk4 step of
// dt 0.2, wrap to [−π, π], velocities clipped to ±4π and ±9π) with plain float64 floats. Go's sin and
// cos may differ from C's in the last bit, so states agree to 1e-12 after one step and 1e-9 after
// many.
func TestAcrobotStep(t *testing.T) {
	start := []float64{0.05, -0.03, 0.02, 0.01}
	steps := map[float64][4]float64{
		0: {0.060487724678205332, -0.054539985093977963, 0.08185570403465979, -0.24927319984543655},
		1: {0.047227743833418538, -0.02025946833616004, -0.046780434736391846, 0.085173319504877415},
		2: {0.033964268077167063, 0.014028356136744108, -0.17546465025153701, 0.41971560226526911},
	}
	for action, want := range steps {
		a := NewAcrobot()
		a.SetState(start)
		obs := make([]float64, 6)
		r, term := a.Step([]float64{action}, obs)
		if r != -1 || term {
			t.Errorf("action %v: reward, terminated = %v, %v; want -1, false", action, r, term)
		}
		s := a.State()
		for i := range want {
			if math.Abs(s[i]-want[i]) > 1e-12 {
				t.Errorf("action %v: state[%d] = %.17g, want %.17g", action, i, s[i], want[i])
			}
		}
		wantObs := []float32{float32(math.Cos(s[0])), float32(math.Sin(s[0])), float32(math.Cos(s[1])),
			float32(math.Sin(s[1])), float32(s[2]), float32(s[3])}
		for i := range wantObs {
			if obs[i] != float64(wantObs[i]) {
				t.Errorf("action %v: obs[%d] = %v, want %v", action, i, obs[i], wantObs[i])
			}
		}
	}

	// Angles past ±π wrap, velocities past 4π and 9π are clipped (reference: the same script).
	a := NewAcrobot()
	a.SetState([]float64{3.1, -3.1, 12.5, -28.2})
	a.Step([]float64{2}, make([]float64, 6))
	want := []float64{-0.18786697150003562, 2.821155210165049, 4 * math.Pi, -9 * math.Pi}
	for i, got := range a.State() {
		if math.Abs(got-want[i]) > 1e-12 {
			t.Errorf("wrap and clip: state[%d] = %.17g, want %.17g", i, got, want[i])
		}
	}
	if s := a.State(); s[2] != acrobotMaxVel1 || s[3] != -acrobotMaxVel2 {
		t.Errorf("velocities = %v, %v; want exactly ±4π, ±9π", s[2], s[3])
	}

	// 100 steps alternating five of action 2 and five of action 0 from (0.01, 0.02, −0.03, 0.04):
	// the reference's states after 10, 50 and 100 steps, reward −1 each.
	a.SetState([]float64{0.01, 0.02, -0.03, 0.04})
	checkpoints := map[int][4]float64{
		10:  {0.33838645691563096, -0.74508115556019172, 0.20381919078741961, -1.0484350537964318},
		50:  {-0.39864803609630273, 0.68277455380016272, 0.23409849057904919, -0.6825840192711099},
		100: {-0.51762441790584535, 0.65608931885051802, 1.3701952273533506, -2.6573864099592361},
	}
	var ret float64
	for step := 1; step <= 100; step++ {
		act := 2.0
		if (step-1)/5%2 == 1 {
			act = 0
		}
		r, term := a.Step([]float64{act}, make([]float64, 6))
		if term {
			t.Fatalf("alternating: terminated at step %d; the reference does not", step)
		}
		ret += r
		if want, ok := checkpoints[step]; ok {
			for i, got := range a.State() {
				if math.Abs(got-want[i]) > 1e-9 {
					t.Errorf("alternating, step %d: state[%d] = %.17g, want %.17g", step, i, got, want[i])
				}
			}
		}
	}
	if ret != -100 {
		t.Errorf("alternating: return over 100 steps = %v, want -100", ret)
	}
}

// TestAcrobotReachesGoal drives Acrobot from rest with torque in the direction of θ̇2: the reference
// script reaches −cos θ1 − cos(θ1 + θ2) > 1 on step 73 at state (−1.8188, −1.3456, −1.5034, 3.9342),
// that step paying 0 and terminating, every earlier one −1.
func TestAcrobotReachesGoal(t *testing.T) {
	a := NewAcrobot()
	a.SetState([]float64{0, 0, 0, 0})
	obs := make([]float64, 6)
	// torque in the direction of θ̇2 pumps energy in.
	pol := func(s []float64) float64 {
		if s[3] >= 0 {
			return 2
		}
		return 0
	}
	for step := 1; step <= AcrobotMaxEpisodeSteps; step++ {
		r, term := a.Step([]float64{pol(a.State())}, obs)
		if !term {
			if r != -1 {
				t.Fatalf("step %d: reward %v, want -1", step, r)
			}
			continue
		}
		if step != 73 || r != 0 {
			t.Fatalf("terminated at step %d with reward %v; want step 73, reward 0", step, r)
		}
		want := []float64{-1.8188137670543634, -1.3455667125128079, -1.5034264341790928, 3.9342329437236354}
		for i, got := range a.State() {
			if math.Abs(got-want[i]) > 1e-9 {
				t.Errorf("goal state[%d] = %.17g, want %.17g", i, got, want[i])
			}
		}
		if s := a.State(); -math.Cos(s[0])-math.Cos(s[0]+s[1]) <= 1 {
			t.Errorf("terminated below the goal height")
		}
		return
	}
	t.Fatal("never reached the goal; the reference does on step 73")
}

// TestMountainCarContinuousStep checks single steps against an independent reference: a Python 3
// script written from Gymnasium's continuous_mountain_car.py with float64 arithmetic and the state
// stored as float32 after the step.
func TestMountainCarContinuousStep(t *testing.T) {
	cases := []struct {
		name             string
		pos, vel, action float64
		wantPos, wantVel float64
		wantReward       float64
		wantTerminated   bool
	}{
		{"push right", -0.5, 0, 0.5, -0.49942684173583984, 0.00057315698359161615, -0.025, false},
		// The force is clipped to 1; the penalty squares the action as given: 0.1·3² = 0.9.
		{"action beyond 1", -0.5, 0, 3, -0.4986768364906311, 0.0013231569901108742, -0.9, false},
		// The left wall: the position clips to −1.2 (stored as float32) and the velocity becomes 0.
		{"left wall", -1.19, -0.05, -1, float64(float32(-1.2)), 0, -0.1, false},
		// Reaching 0.45 with velocity ≥ 0: 100 minus 0.1·0.2².
		{"goal", 0.44, 0.02, 0.2, 0.45967957377433777, 0.019679561257362366, 99.996, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMountainCarContinuous()
			m.SetState([]float64{tc.pos, tc.vel})
			obs := make([]float64, 2)
			r, term := m.Step([]float64{tc.action}, obs)
			if math.Abs(r-tc.wantReward) > 1e-12 || term != tc.wantTerminated {
				t.Errorf("reward, terminated = %.17g, %v; want %.17g, %v", r, term, tc.wantReward, tc.wantTerminated)
			}
			s := m.State()
			if s[0] != tc.wantPos || s[1] != tc.wantVel {
				t.Errorf("state = (%.17g, %.17g), want (%.17g, %.17g)", s[0], s[1], tc.wantPos, tc.wantVel)
			}
			if obs[0] != s[0] || obs[1] != s[1] {
				t.Errorf("obs = %v, want the float32 state %v", obs, s)
			}
		})
	}
}

// TestMountainCarContinuousReachesGoal rocks the car with force sign(velocity) (+1 at rest) from
// −0.5: the reference script reaches the goal on step 106 at (0.50208675861358643,
// 0.064047686755657196) with return 100 − 106·0.1 = 89.4.
func TestMountainCarContinuousReachesGoal(t *testing.T) {
	m := NewMountainCarContinuous()
	m.SetState([]float64{-0.5, 0})
	obs := make([]float64, 2)
	var ret float64
	for step := 1; step <= MountainCarContinuousMaxEpisodeSteps; step++ {
		a := 1.0
		if m.State()[1] < 0 {
			a = -1
		}
		r, term := m.Step([]float64{a}, obs)
		ret += r
		if !term {
			continue
		}
		s := m.State()
		if step != 106 || s[0] != 0.50208675861358643 || s[1] != 0.064047686755657196 {
			t.Errorf("terminated at step %d in state %.17g; want step 106 at (0.50208675861358643, 0.064047686755657196)", step, s)
		}
		if math.Abs(ret-89.4) > 1e-9 {
			t.Errorf("return = %.17g, want 89.4", ret)
		}
		return
	}
	t.Fatal("never reached the goal; the reference does on step 106")
}

// TestNewEnvsResetAndBounds checks the reset distributions (Acrobot: uniform(−0.1, 0.1)⁴ rounded to
// float32; MountainCarContinuous: position uniform(−0.6, −0.4), velocity 0), that observations stay
// inside Gymnasium's observation spaces under random actions, and that a seed fixes a run.
func TestNewEnvsResetAndBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, m := NewAcrobot(), NewMountainCarContinuous()
	obs6, obs2 := make([]float64, 6), make([]float64, 2)
	var maxA float64
	minP, maxP := math.Inf(1), math.Inf(-1)
	for i := 0; i < 10000; i++ {
		a.Reset(rng, obs6)
		for _, v := range a.State() {
			if v != float64(float32(v)) {
				t.Fatalf("Acrobot reset value %v is not a float32", v)
			}
			maxA = math.Max(maxA, math.Abs(v))
		}
		m.Reset(rng, obs2)
		s := m.State()
		if s[1] != 0 {
			t.Fatalf("MountainCarContinuous reset velocity %v, want 0", s[1])
		}
		minP, maxP = math.Min(minP, s[0]), math.Max(maxP, s[0])
	}
	if maxA > 0.1 || maxA < 0.099 {
		t.Errorf("Acrobot: max |reset value| = %v, want in [0.099, 0.1]", maxA)
	}
	if minP < -0.6 || minP > -0.598 || maxP > -0.4 || maxP < -0.402 {
		t.Errorf("MountainCarContinuous: reset positions in [%v, %v], want [−0.6, −0.4] nearly filled", minP, maxP)
	}

	high := map[string][]float64{
		"Acrobot-v1":               {1, 1, 1, 1, 4 * math.Pi, 9 * math.Pi},
		"MountainCarContinuous-v0": {0.6, 0.07},
	}
	low := map[string][]float64{
		"Acrobot-v1":               {-1, -1, -1, -1, -4 * math.Pi, -9 * math.Pi},
		"MountainCarContinuous-v0": {-1.2, -0.07},
	}
	for name := range high {
		run := func(seed uint64) []float64 {
			newEnv, err := Make(name)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, 1))
			v := NewVec(newEnv, 4, rng)
			act := make([]float64, v.N*v.Spec.ActionDim)
			var trace []float64
			for step := 0; step < 3000; step++ {
				for i := range act {
					if v.Spec.Discrete() {
						act[i] = float64(rng.IntN(v.Spec.Actions))
					} else {
						act[i] = 3 * rng.NormFloat64() // beyond the bounds too: the env clips
					}
				}
				v.Step(act)
				for i, o := range v.Obs {
					d := i % v.Spec.ObsDim
					if o < float64(float32(low[name][d])) || o > float64(float32(high[name][d])) {
						t.Fatalf("%s: obs[%d] = %v outside [%v, %v]", name, d, o, low[name][d], high[name][d])
					}
				}
				trace = append(trace, v.Obs...)
				trace = append(trace, v.Rewards...)
			}
			return trace
		}
		x, y, z := run(5), run(5), run(6)
		if !slices.Equal(x, y) {
			t.Errorf("%s: two runs on seed 5 differ", name)
		}
		if slices.Equal(x, z) {
			t.Errorf("%s: seeds 5 and 6 give the same run", name)
		}
	}
}
