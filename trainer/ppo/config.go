package ppo

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/nn"
)

// Config holds PPO's hyperparameters. The param names in comments are the keys of Set, of
// `rlsweep train --set` and of RLSWEEP_PARAMS: the built-in trainer's table (trainer.PPOParamNames).
type Config struct {
	LR          float64       // lr: Adam learning rate (initial value when annealed or adaptive)
	Clip        float64       // clip: surrogate clipping range ε
	NumEnvs     int           // num_envs: parallel environments
	NumSteps    int           // num_steps: steps per environment per iteration
	Epochs      int           // epochs: passes over each batch
	Minibatches int           // minibatches: minibatches per epoch; must divide NumEnvs·NumSteps
	EntCoef     float64       // ent_coef: entropy bonus coefficient
	VFCoef      float64       // vf_coef: value loss coefficient
	Gamma       float64       // gamma: discount
	GAELambda   float64       // gae_lambda: GAE λ
	MaxGradNorm float64       // max_grad_norm: global gradient norm clip
	Hidden      []int         // hidden: hidden layer sizes of both actor and critic
	Activation  nn.Activation // activation: tanh or relu
	AnnealLR    bool          // anneal_lr: linear decay to 0 over TotalSteps
	TargetKL    float64       // target_kl: stop the update when a minibatch's approx KL exceeds it; 0 off
	AdaptiveLR  bool          // adaptive_lr: rsl_rl's KL-adaptive learning rate (overrides anneal_lr)
	DesiredKL   float64       // desired_kl: the KL adaptive_lr aims for
	NormAdv     bool          // norm_adv: per-minibatch advantage normalisation
	ClipVLoss   bool          // clip_vloss: clipped value loss, as in CleanRL
	NormObs     bool          // norm_obs: running mean/std observation normalisation
	NormReward  bool          // norm_reward: scale rewards by the running std of discounted returns
	ClipObs     float64       // clip_obs: bound of normalised observations
	ClipReward  float64       // clip_reward: bound of scaled rewards
	InitLogStd  float64       // init_log_std: initial log σ of a Gaussian policy
	StdMin      float64       // std_min: floor of a Gaussian policy's σ; clamps are counted
	// TotalSteps is the horizon of learning-rate annealing (RLSWEEP_TOTAL_STEPS); not a param key.
	TotalSteps int64
	// Bug injects a deliberate defect, for testing probes and diagnostics; BugNone in real use.
	Bug Bug
}

// CleanRL returns CleanRL ppo.py's defaults for discrete actions (CartPole-v1): 4 envs × 128 steps,
// 4 epochs × 4 minibatches, lr 2.5e-4 annealed, clip 0.2, entropy 0.01, value 0.5, γ 0.99, λ 0.95,
// grad norm 0.5, clipped value loss, 64-64 tanh.
func CleanRL() Config {
	return Config{
		LR: 2.5e-4, Clip: 0.2, NumEnvs: 4, NumSteps: 128, Epochs: 4, Minibatches: 4,
		EntCoef: 0.01, VFCoef: 0.5, Gamma: 0.99, GAELambda: 0.95, MaxGradNorm: 0.5,
		Hidden: []int{64, 64}, Activation: nn.Tanh, AnnealLR: true, DesiredKL: 0.01,
		NormAdv: true, ClipVLoss: true, ClipObs: 10, ClipReward: 10, StdMin: 1e-3,
	}
}

// Continuous returns the defaults for continuous actions, tuned for Pendulum-v1 (docs/ppo.md): the
// SB3 zoo's Pendulum settings (4 envs × 1024 steps, 10 epochs, lr 1e-3, λ 0.95, no entropy bonus)
// with observation and reward normalisation in place of gSDE, minibatches of 256 and γ 0.95 (the
// zoo's 0.9 left one seed in five stuck near −600 without gSDE's exploration).
func Continuous() Config {
	c := CleanRL()
	c.LR, c.NumEnvs, c.NumSteps, c.Epochs, c.Minibatches = 1e-3, 4, 1024, 10, 16
	c.EntCoef, c.Gamma, c.GAELambda = 0, 0.95, 0.95
	c.ClipVLoss, c.NormObs, c.NormReward = false, true, true
	return c
}

// Defaults returns the default configuration for an environment: CleanRL's for discrete actions,
// Continuous for continuous ones.
func Defaults(spec envs.Spec) Config {
	if spec.Discrete() {
		return CleanRL()
	}
	return Continuous()
}

// param is how one hyperparameter of the table is set.
type param struct {
	want  string // what is allowed, for error messages
	apply func(c *Config, v any) bool
}

func floatParam(want string, ok func(float64) bool, field func(*Config) *float64) param {
	return param{want, func(c *Config, v any) bool {
		f, good := toFloat(v)
		if !good || !ok(f) {
			return false
		}
		*field(c) = f
		return true
	}}
}

func intParam(want string, lo int, field func(*Config) *int) param {
	return param{want, func(c *Config, v any) bool {
		f, good := toFloat(v)
		if !good || f != math.Trunc(f) || f < float64(lo) || f > 1<<30 {
			return false
		}
		*field(c) = int(f)
		return true
	}}
}

func boolParam(field func(*Config) *bool) param {
	return param{"true or false", func(c *Config, v any) bool {
		b, good := toBool(v)
		if good {
			*field(c) = b
		}
		return good
	}}
}

func positive(f float64) bool    { return f > 0 && !math.IsInf(f, 0) }
func nonNegative(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }
func unit(f float64) bool        { return f >= 0 && f <= 1 }

// params sets each name of the built-in trainer's table (trainer.PPOParamNames); TestParamTable ties
// the two and Config.
var params = map[string]param{
	"lr":            floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.LR }),
	"clip":          floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.Clip }),
	"num_envs":      intParam("an integer ≥ 1", 1, func(c *Config) *int { return &c.NumEnvs }),
	"num_steps":     intParam("an integer ≥ 1", 1, func(c *Config) *int { return &c.NumSteps }),
	"epochs":        intParam("an integer ≥ 1", 1, func(c *Config) *int { return &c.Epochs }),
	"minibatches":   intParam("an integer ≥ 1", 1, func(c *Config) *int { return &c.Minibatches }),
	"ent_coef":      floatParam("a number ≥ 0", nonNegative, func(c *Config) *float64 { return &c.EntCoef }),
	"vf_coef":       floatParam("a number ≥ 0", nonNegative, func(c *Config) *float64 { return &c.VFCoef }),
	"gamma":         floatParam("a number in [0, 1]", unit, func(c *Config) *float64 { return &c.Gamma }),
	"gae_lambda":    floatParam("a number in [0, 1]", unit, func(c *Config) *float64 { return &c.GAELambda }),
	"max_grad_norm": floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.MaxGradNorm }),
	"hidden":        {"layer sizes like [64, 64] or \"64,64\"", setHidden},
	"activation": {"tanh or relu", func(c *Config, v any) bool {
		s, ok := v.(string)
		if !ok {
			return false
		}
		a, err := nn.ParseActivation(s)
		c.Activation = a
		return err == nil
	}},
	"anneal_lr":   boolParam(func(c *Config) *bool { return &c.AnnealLR }),
	"target_kl":   floatParam("a number ≥ 0 (0 turns it off)", nonNegative, func(c *Config) *float64 { return &c.TargetKL }),
	"adaptive_lr": boolParam(func(c *Config) *bool { return &c.AdaptiveLR }),
	"desired_kl":  floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.DesiredKL }),
	"norm_adv":    boolParam(func(c *Config) *bool { return &c.NormAdv }),
	"clip_vloss":  boolParam(func(c *Config) *bool { return &c.ClipVLoss }),
	"norm_obs":    boolParam(func(c *Config) *bool { return &c.NormObs }),
	"norm_reward": boolParam(func(c *Config) *bool { return &c.NormReward }),
	"clip_obs":    floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.ClipObs }),
	"clip_reward": floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.ClipReward }),
	"init_log_std": floatParam("a finite number", func(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) },
		func(c *Config) *float64 { return &c.InitLogStd }),
	"std_min": floatParam("a number > 0", positive, func(c *Config) *float64 { return &c.StdMin }),
}

// Set sets the hyperparameter key to value. value is a string (as given to --set; JSON syntax is
// accepted, so "[64,64]" and "true" work) or a JSON-decoded value (float64, bool, string, []any).
// Errors read `key: got VALUE, want ALLOWED`.
func (c *Config) Set(key string, value any) error {
	p, ok := params[key]
	if !ok {
		return fmt.Errorf("%s: got an unknown parameter, want one of %s", key, strings.Join(trainer.PPOParamNames(), ", "))
	}
	if p.apply(c, value) {
		return nil
	}
	if s, ok := value.(string); ok {
		var decoded any
		if json.Unmarshal([]byte(s), &decoded) == nil && p.apply(c, decoded) {
			return nil
		}
	}
	return fmt.Errorf("%s: got %s, want %s", key, show(value), p.want)
}

// SetAll applies a JSON-decoded object of parameters (RLSWEEP_PARAMS), in sorted key order, and
// reports every bad key at once.
func (c *Config) SetAll(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []string
	for _, k := range keys {
		if err := c.Set(k, m[k]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Validate checks the relations between parameters that Set cannot check one at a time.
func (c Config) Validate() error {
	var errs []string
	batch := c.NumEnvs * c.NumSteps
	if c.Minibatches > batch || (c.Minibatches > 0 && batch%c.Minibatches != 0) {
		errs = append(errs, fmt.Sprintf("minibatches: got %d, want a divisor of num_envs×num_steps = %d", c.Minibatches, batch))
	}
	if c.AnnealLR && !c.AdaptiveLR && c.TotalSteps <= 0 {
		errs = append(errs, fmt.Sprintf("total_steps: got %d, want > 0 when anneal_lr is on", c.TotalSteps))
	}
	if len(c.Hidden) == 0 {
		errs = append(errs, "hidden: got [], want at least one layer size")
	}
	if c.LR <= 0 || c.Clip <= 0 || c.NumEnvs < 1 || c.NumSteps < 1 || c.Epochs < 1 || c.Minibatches < 1 {
		errs = append(errs, fmt.Sprintf("config: got lr %g clip %g num_envs %d num_steps %d epochs %d minibatches %d, want all positive",
			c.LR, c.Clip, c.NumEnvs, c.NumSteps, c.Epochs, c.Minibatches))
	}
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func setHidden(c *Config, v any) bool {
	var sizes []int
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			f, ok := toFloat(e)
			if !ok || f != math.Trunc(f) || f < 1 || f > 1<<16 {
				return false
			}
			sizes = append(sizes, int(f))
		}
	case float64:
		return setHidden(c, []any{x, x})
	case string:
		for _, part := range strings.Split(x, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n < 1 || n > 1<<16 {
				return false
			}
			sizes = append(sizes, n)
		}
	default:
		return false
	}
	if len(sizes) == 0 {
		return false
	}
	c.Hidden = sizes
	return true
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case int:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil && !math.IsNaN(f)
	}
	return 0, false
}

func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	}
	return false, false
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
