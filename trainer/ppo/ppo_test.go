package ppo

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/rlsweep/rlsweep/trainer/envs"
)

func mustMake(t testing.TB, name string) func() envs.Env {
	t.Helper()
	f, err := envs.Make(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func smallConfig(spec envs.Spec) Config {
	c := Defaults(spec)
	c.NumEnvs, c.NumSteps, c.Minibatches, c.Epochs = 2, 16, 2, 2
	c.TotalSteps = 1 << 20
	return c
}

// TestGAE checks GAE against a rollout worked by hand: 2 envs × 3 steps, γ = 0.5, λ = 0.5.
func TestGAE(t *testing.T) {
	// env 0: rewards 1,1,1, values 0,0,0, no episode end, last value 2.
	//   δ = 1,1,1+0.5·2 = 2;  A₂ = 2, A₁ = 1 + 0.25·2 = 1.5, A₀ = 1 + 0.25·1.5 = 1.375.
	// env 1: rewards 1,2,3, values 1,1,1, episode ends at t=1, last value 4.
	//   δ₂ = 3 + 0.5·4 − 1 = 4; δ₁ = 2 − 1 = 1 (done: no bootstrap); δ₀ = 1 + 0.5·1 − 1 = 0.5.
	//   A₂ = 4, A₁ = 1 (done cuts the sum), A₀ = 0.5 + 0.25·1 = 0.75.
	rewards := []float64{1, 1, 1, 2, 1, 3}
	values := []float64{0, 1, 0, 1, 0, 1}
	dones := []float64{0, 0, 0, 1, 0, 0}
	last := []float64{2, 4}
	adv, ret := make([]float64, 6), make([]float64, 6)
	GAE(rewards, values, dones, last, 2, 0.5, 0.5, adv, ret)
	want := []float64{1.375, 0.75, 1.5, 1, 2, 4}
	for i := range want {
		if math.Abs(adv[i]-want[i]) > 1e-15 || math.Abs(ret[i]-(want[i]+values[i])) > 1e-15 {
			t.Errorf("adv[%d], ret[%d] = %v, %v; want %v, %v", i, i, adv[i], ret[i], want[i], want[i]+values[i])
		}
	}
}

// TestLossGradient checks the analytic PPO gradient (policy surrogate, entropy bonus, value loss,
// log σ) against central finite differences of the loss, for both policy types and value-loss forms.
func TestLossGradient(t *testing.T) {
	cases := []struct {
		env       string
		clipVLoss bool
		normAdv   bool
		entCoef   float64
	}{
		{"CartPole-v1", true, true, 0.01},
		{"CartPole-v1", false, false, 0.1},
		{"Pendulum-v1", false, true, 0.01},
		{"Pendulum-v1", true, true, 0.05},
	}
	for _, tc := range cases {
		t.Run(tc.env, func(t *testing.T) {
			newEnv := mustMake(t, tc.env)
			cfg := smallConfig(newEnv().Spec())
			cfg.ClipVLoss, cfg.NormAdv, cfg.EntCoef, cfg.Minibatches = tc.clipVLoss, tc.normAdv, tc.entCoef, 1
			cfg.Hidden = []int{8, 8} // few parameters keep finite differences fast
			tr, err := New(cfg, newEnv, 7)
			if err != nil {
				t.Fatal(err)
			}
			var m Metrics
			tr.collect()
			tr.advantages(&m)
			// Move away from the rollout policy so ratios differ from 1 (but stay inside the clip range).
			rng := rand.New(rand.NewPCG(1, 1))
			for i := range tr.params {
				tr.params[i] += 0.003 * rng.NormFloat64()
			}
			idx := make([]int, len(tr.buf.logp))
			for i := range idx {
				idx[i] = i
			}
			tr.lossGrad(idx)
			got := append([]float64(nil), tr.grads...)
			want := fd.Gradient(nil, func(p []float64) float64 {
				saved := slices.Clone(tr.params)
				copy(tr.params, p)
				l := tr.lossGrad(idx).loss
				copy(tr.params, saved)
				return l
			}, slices.Clone(tr.params), &fd.Settings{Formula: fd.Central, Step: 1e-6})
			var worst, scale float64
			for i := range got {
				worst = math.Max(worst, math.Abs(got[i]-want[i]))
				scale = math.Max(scale, math.Abs(want[i]))
			}
			// Central differences at step 1e-6 on a loss of order 1–100 are good to ~1e-7 absolute.
			if worst > 1e-6*math.Max(1, scale) {
				t.Errorf("max |analytic − numeric| = %g (largest gradient %g)", worst, scale)
			}
		})
	}
}

// TestDeterministic checks that two trainers with the same seed produce the same parameters bit for
// bit, and a different seed different ones.
func TestDeterministic(t *testing.T) {
	for _, name := range []string{"CartPole-v1", "Pendulum-v1"} {
		t.Run(name, func(t *testing.T) {
			newEnv := mustMake(t, name)
			cfg := smallConfig(newEnv().Spec())
			run := func(seed uint64) []float64 {
				tr, err := New(cfg, newEnv, seed)
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.Run(context.Background(), 1000, nil); err != nil {
					t.Fatal(err)
				}
				return slices.Clone(tr.params)
			}
			a, b, c := run(3), run(3), run(4)
			if !slices.Equal(a, b) {
				t.Error("same seed, different parameters")
			}
			if slices.Equal(a, c) {
				t.Error("different seeds, same parameters")
			}
		})
	}
}

// resumeCase trains straight to total, and in two halves with a checkpoint in between, and
// compares the parameters bit for bit.
func resumeCase(t *testing.T, name string, cfg Config, half, total int64) {
	newEnv := mustMake(t, name)
	cfg.TotalSteps = total
	straight, err := New(cfg, newEnv, 11)
	if err != nil {
		t.Fatal(err)
	}
	var straightLast Metrics
	if err := straight.Run(context.Background(), total, func(m Metrics) error { straightLast = m; return nil }); err != nil {
		t.Fatal(err)
	}
	first, _ := New(cfg, newEnv, 11)
	if err := first.Run(context.Background(), half, nil); err != nil {
		t.Fatal(err)
	}
	var ck bytes.Buffer
	if err := first.Save(&ck); err != nil {
		t.Fatal(err)
	}
	second, _ := New(cfg, newEnv, 999) // a different seed: everything must come from the checkpoint
	if err := second.Restore(&ck); err != nil {
		t.Fatal(err)
	}
	var resumedLast Metrics
	if err := second.Run(context.Background(), total, func(m Metrics) error { resumedLast = m; return nil }); err != nil {
		t.Fatal(err)
	}
	if second.Steps() != straight.Steps() {
		t.Fatalf("steps: resumed %d, straight %d", second.Steps(), straight.Steps())
	}
	if !slices.Equal(slices.Clone(second.params), slices.Clone(straight.params)) {
		t.Error("resumed parameters differ from the straight run's")
	}
	if resumedLast.Reward != straightLast.Reward || resumedLast.ValueLoss != straightLast.ValueLoss {
		t.Errorf("last metrics: resumed reward %v value loss %v, straight %v %v",
			resumedLast.Reward, resumedLast.ValueLoss, straightLast.Reward, straightLast.ValueLoss)
	}
}

// TestResumeShort is the fast version of TestResumeBitIdentical, with normalisers on.
func TestResumeShort(t *testing.T) {
	for _, name := range []string{"CartPole-v1", "Pendulum-v1"} {
		t.Run(name, func(t *testing.T) {
			cfg := smallConfig(mustMake(t, name)().Spec())
			cfg.NormObs, cfg.NormReward, cfg.AdaptiveLR = true, true, name == "Pendulum-v1"
			resumeCase(t, name, cfg, 2000, 4000)
		})
	}
}

// TestResumeBitIdentical checks CartPole with CleanRL's defaults, 50k steps, checkpoint,
// resume to 100k, equals a straight 100k run bit for bit.
func TestResumeBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("long: 200k environment steps")
	}
	resumeCase(t, "CartPole-v1", CleanRL(), 50_000, 100_000)
}

func TestSaveFileAtomic(t *testing.T) {
	newEnv := mustMake(t, "CartPole-v1")
	tr, _ := New(smallConfig(newEnv().Spec()), newEnv, 1)
	tr.Iterate()
	path := t.TempDir() + "/ck.bin"
	if err := tr.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	other, _ := New(smallConfig(newEnv().Spec()), newEnv, 2)
	if err := other.RestoreFile(path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Clone(other.params), slices.Clone(tr.params)) {
		t.Error("restored parameters differ")
	}
	wrong, _ := New(smallConfig(mustMake(t, "Pendulum-v1")().Spec()), mustMake(t, "Pendulum-v1"), 1)
	if err := wrong.RestoreFile(path); err == nil {
		t.Error("restoring a CartPole checkpoint into a Pendulum trainer succeeded, want an error")
	}
}

// TestInjectedBugsChangeTraining checks each injected bug alters what the trainer learns (the probe
// package proves each is caught by its probe).
func TestInjectedBugsChangeTraining(t *testing.T) {
	newEnv := mustMake(t, "CartPole-v1")
	train := func(b Bug) []float64 {
		cfg := smallConfig(newEnv().Spec())
		cfg.Bug = b
		tr, _ := New(cfg, newEnv, 5)
		tr.Run(context.Background(), 500, nil)
		return slices.Clone(tr.params)
	}
	clean := train(BugNone)
	for _, name := range BugNames() {
		b, err := ParseBug(name)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(train(b), clean) {
			t.Errorf("%s: parameters equal the clean run's", name)
		}
	}
	if _, err := ParseBug("off-by-one"); err == nil {
		t.Error("ParseBug(off-by-one) succeeded, want an error")
	}
}

// TestMetricsComplete checks every canonical metric is present and finite after a few iterations.
func TestMetricsComplete(t *testing.T) {
	for _, name := range []string{"CartPole-v1", "Pendulum-v1"} {
		newEnv := mustMake(t, name)
		tr, _ := New(smallConfig(newEnv().Spec()), newEnv, 1)
		var m Metrics
		tr.Run(context.Background(), 4000, func(x Metrics) error { m = x; return nil })
		got := map[string]float64{}
		for _, v := range m.Values() {
			got[v.Name] = v.Value
		}
		want := []string{"reward", "episode_length", "value_loss", "policy_loss", "entropy", "approx_kl",
			"clip_fraction", "explained_variance", "grad_norm", "learning_rate", "fps", "advantage_mean",
			"advantage_std", "advantage_abs_max"}
		if name == "Pendulum-v1" {
			want = append(want, "action_std", "action_std_min")
		}
		for _, k := range want {
			v, ok := got[k]
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: %s = %v, present %v; want a finite value", name, k, v, ok)
			}
		}
	}
}

func TestConfigSet(t *testing.T) {
	cases := []struct {
		key     string
		value   any
		wantErr string
	}{
		{"lr", "3e-4", ""},
		{"lr", 1e-3, ""},
		{"lr", "-1", `lr: got "-1", want a number > 0`},
		{"num_envs", 2.5, "num_envs: got 2.5, want an integer ≥ 1"},
		{"hidden", "[32,32]", ""},
		{"hidden", "64,64,64", ""},
		{"hidden", []any{128.0, 128.0}, ""},
		{"hidden", "a,b", `hidden: got "a,b", want layer sizes like [64, 64] or "64,64"`},
		{"activation", "relu", ""},
		{"activation", "gelu", `activation: got "gelu", want tanh or relu`},
		{"norm_obs", "true", ""},
		{"norm_obs", true, ""},
		{"norm_obs", "yes", `norm_obs: got "yes", want true or false`},
		{"gamma", 1.5, "gamma: got 1.5, want a number in [0, 1]"},
		{"learning_rate", 1.0, "learning_rate: got an unknown parameter, want one of lr, clip,"},
	}
	for _, tc := range cases {
		c := CleanRL()
		err := c.Set(tc.key, tc.value)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Set(%q, %v) = %v, want nil", tc.key, tc.value, err)
		case tc.wantErr != "" && (err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(tc.wantErr))):
			t.Errorf("Set(%q, %v) = %v, want an error starting %q", tc.key, tc.value, err, tc.wantErr)
		}
	}
	c := CleanRL()
	c.Minibatches = 3
	c.TotalSteps = 1
	if err := c.Validate(); err == nil {
		t.Error("Validate with 3 minibatches of 512 samples succeeded, want an error")
	}
}
