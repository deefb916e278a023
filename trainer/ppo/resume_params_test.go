package ppo

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

// A trainer resumed from a checkpoint trains with its own configuration's hyperparameters, not the
// checkpoint's (population-based training changes them on resume): each of lr, clip, ent_coef,
// vf_coef, max_grad_norm, gamma and gae_lambda, changed alone, changes the next iteration; the
// learning rate is the new one, annealed at the checkpoint's step, or with adaptive_lr the adapted
// rate scaled by new lr / old lr.
func TestResumeTakesNewHyperparameters(t *testing.T) {
	newEnv := mustMake(t, "Pendulum-v1")
	base := smallConfig(newEnv().Spec())
	for _, adaptive := range []bool{false, true} {
		cfg := base
		cfg.AdaptiveLR = adaptive
		first, err := New(cfg, newEnv, 3)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			first.Iterate()
		}
		var ck bytes.Buffer
		if err := first.Save(&ck); err != nil {
			t.Fatal(err)
		}
		resumed := func(c Config) *Trainer {
			tr, err := New(c, newEnv, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Restore(bytes.NewReader(ck.Bytes())); err != nil {
				t.Fatal(err)
			}
			return tr
		}
		lrCfg := cfg
		lrCfg.LR = 2 * cfg.LR
		want := 2 * first.currentLR()
		if adaptive {
			want = math.Min(1e-2, want)
		}
		if got := resumed(lrCfg).currentLR(); math.Abs(got-want) > 1e-15 {
			t.Errorf("adaptive_lr %v: learning rate after resuming with lr doubled = %g, want %g", adaptive, got, want)
		}
		if got := resumed(cfg).currentLR(); got != first.currentLR() {
			t.Errorf("adaptive_lr %v: learning rate after resuming with the same lr = %g, want %g", adaptive, got, first.currentLR())
		}
		next := func(c Config) []float64 {
			tr := resumed(c)
			tr.Iterate()
			return slices.Clone(tr.params)
		}
		same := next(cfg)
		changes := map[string]func(*Config){
			"lr":            func(c *Config) { c.LR *= 2 },
			"clip":          func(c *Config) { c.Clip = 0.01 },
			"ent_coef":      func(c *Config) { c.EntCoef = 0.5 },
			"vf_coef":       func(c *Config) { c.VFCoef = 2 },
			"max_grad_norm": func(c *Config) { c.MaxGradNorm = 1e-3 },
			"gamma":         func(c *Config) { c.Gamma = 0.5 },
			"gae_lambda":    func(c *Config) { c.GAELambda = 0.1 },
		}
		for name, change := range changes {
			c := cfg
			change(&c)
			if slices.Equal(next(c), same) {
				t.Errorf("adaptive_lr %v: resuming with another %s trains the same as with the checkpoint's", adaptive, name)
			}
		}
	}
}
