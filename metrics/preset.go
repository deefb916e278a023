package metrics

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Target is where a framework tag's values go: a canonical metric (Reward, ...) and the
// factor the value is multiplied by on the way (SB3 logs train/entropy_loss = −entropy, so −1).
type Target struct {
	Metric string
	Scale  float64
}

// Mapping maps a trainer's tags to canonical metrics. Tags it does not name are kept under their own
// name as custom metrics.
type Mapping map[string]Target

// Preset names: the frameworks whose tags the readers map (Presets lists them). rsl_rl and sb3 also
// name the console formats source stdout reads (StdoutPresets).
const (
	PresetRSLRL    = "rsl_rl"
	PresetSB3      = "sb3"
	PresetCleanRL  = "cleanrl"
	PresetRLGames  = "rl_games"
	PresetSKRL     = "skrl"
	PresetMLAgents = "mlagents"
)

// presets holds the tag mappings of the frameworks docs/trainer-contract.md names. Tag names are the ones each
// framework's logger writes (rsl_rl runners/on_policy_runner.py and utils/logger.py, SB3
// on_policy_algorithm.py and ppo.py, CleanRL ppo*.py, rl_games common/a2c_common.py, skrl
// agents/torch/ppo/ppo.py); where a framework renamed a tag across versions, both names are mapped.
var presets = map[string]Mapping{
	PresetRSLRL: {
		"Train/mean_reward":         {Reward, 1},
		"Train/mean_episode_length": {EpisodeLength, 1},
		"Loss/value_function":       {ValueLoss, 1},
		"Loss/value":                {ValueLoss, 1},
		"Loss/surrogate":            {PolicyLoss, 1},
		"Loss/entropy":              {Entropy, 1},
		"Policy/mean_noise_std":     {ActionStd, 1},
		"Policy/mean_std":           {ActionStd, 1},
		"Loss/learning_rate":        {LearningRate, 1},
		"Perf/total_fps":            {FPS, 1},
	},
	PresetSB3: {
		"rollout/ep_rew_mean":        {Reward, 1},
		"rollout/ep_len_mean":        {EpisodeLength, 1},
		"train/value_loss":           {ValueLoss, 1},
		"train/policy_gradient_loss": {PolicyLoss, 1},
		"train/entropy_loss":         {Entropy, -1},
		"train/std":                  {ActionStd, 1},
		"train/approx_kl":            {ApproxKL, 1},
		"train/clip_fraction":        {ClipFraction, 1},
		"train/explained_variance":   {ExplainedVariance, 1},
		"train/learning_rate":        {LearningRate, 1},
		"time/fps":                   {FPS, 1},
	},
	PresetCleanRL: {
		"charts/episodic_return":    {Reward, 1},
		"charts/episodic_length":    {EpisodeLength, 1},
		"losses/value_loss":         {ValueLoss, 1},
		"losses/policy_loss":        {PolicyLoss, 1},
		"losses/entropy":            {Entropy, 1},
		"losses/approx_kl":          {ApproxKL, 1},
		"losses/clipfrac":           {ClipFraction, 1},
		"losses/explained_variance": {ExplainedVariance, 1},
		"charts/learning_rate":      {LearningRate, 1},
		"charts/SPS":                {FPS, 1},
	},
	PresetRLGames: {
		"rewards/step":         {Reward, 1},
		"episode_lengths/step": {EpisodeLength, 1},
		"losses/c_loss":        {ValueLoss, 1},
		"losses/a_loss":        {PolicyLoss, 1},
		"losses/entropy":       {Entropy, 1},
		"info/kl":              {ApproxKL, 1},
		"info/last_lr":         {LearningRate, 1},
		"performance/step_fps": {FPS, 1},
	},
	// Unity ML-Agents (mlagents-learn): its steps are environment steps (summary_freq apart), and its
	// Environment/Cumulative Reward is NaN-free but absent from a summary in which no episode ended.
	PresetMLAgents: {
		"Environment/Cumulative Reward": {Reward, 1},
		"Environment/Episode Length":    {EpisodeLength, 1},
		"Losses/Value Loss":             {ValueLoss, 1},
		"Losses/Policy Loss":            {PolicyLoss, 1},
		"Policy/Entropy":                {Entropy, 1},
		"Policy/Learning Rate":          {LearningRate, 1},
	},
	// skrl logs "Loss / Entropy loss" as −entropy_coef × entropy, so entropy cannot be recovered
	// without the coefficient: map it with a custom tag if you need it.
	PresetSKRL: {
		"Reward / Total reward (mean)":     {Reward, 1},
		"Episode / Total timesteps (mean)": {EpisodeLength, 1},
		"Loss / Value loss":                {ValueLoss, 1},
		"Loss / Policy loss":               {PolicyLoss, 1},
		"Policy / Standard deviation":      {ActionStd, 1},
		"Learning / Learning rate":         {LearningRate, 1},
	},
}

// signatures are tags each framework's logger writes that its preset does not map (they have no canonical
// metric, or the same value on another step axis), but that tell which framework wrote a run: rl_games
// writes rewards/iter and rewards/time beside rewards/step (the mean return against epochs and seconds),
// skrl its Loss / Entropy loss (−entropy_coef × entropy), SB3 train/loss and train/clip_range, ML-Agents
// Policy/Extrinsic Reward.
var signatures = map[string][]string{
	PresetRSLRL: {"Perf/collection time", "Perf/learning_time", "Train/mean_reward/time", "Train/mean_episode_length/time"},
	PresetSB3: {"train/loss", "train/clip_range", "train/n_updates", "time/iterations", "time/time_elapsed",
		"time/total_timesteps"},
	PresetCleanRL: {"losses/old_approx_kl"},
	PresetRLGames: {"rewards/iter", "rewards/time", "episode_lengths/iter", "episode_lengths/time", "info/e_clip",
		"info/lr_mul", "losses/bounds_loss", "performance/step_inference_rl_update_fps", "performance/rl_update_time"},
	PresetSKRL: {"Loss / Entropy loss", "Reward / Instantaneous reward (mean)", "Reward / Instantaneous reward (max)",
		"Reward / Instantaneous reward (min)", "Reward / Total reward (max)", "Reward / Total reward (min)",
		"Episode / Total timesteps (max)", "Episode / Total timesteps (min)"},
	PresetMLAgents: {"Policy/Extrinsic Reward", "Policy/Extrinsic Value Estimate", "Policy/Epsilon", "Policy/Beta",
		"Environment/Lesson Number", "Is Training"},
}

// DetectPreset names the preset whose tags a run's metrics carry (keys, read with no preset): the one
// with the most of its tags (those it maps and its signatures) among keys, at least two of them. It
// returns "" when no preset has two, or when two presets tie (CleanRL and rl_games share losses/entropy,
// for one).
func DetectPreset(keys []string) string {
	best, bestN, tie := "", 1, false
	for _, name := range Presets() {
		n := 0
		for tag := range presets[name] {
			if slices.Contains(keys, tag) {
				n++
			}
		}
		for _, tag := range signatures[name] {
			if slices.Contains(keys, tag) {
				n++
			}
		}
		switch {
		case n > bestN:
			best, bestN, tie = name, n, false
		case n == bestN && best != "":
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// Presets lists the preset names NewMapping accepts, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewMapping returns the mapping of preset ("" for none) with custom tags laid over it. Each custom
// entry maps a tag to a canonical metric name, or to "-name" to negate the value on the way (for a
// framework that logs an entropy loss = −entropy). All problems are reported at once.
func NewMapping(preset string, custom map[string]string) (Mapping, error) {
	return newMapping(presets, preset, custom)
}

// newMapping is NewMapping over a table of presets: the TensorBoard tags' (presets) or the console
// labels' (consolePresets).
func newMapping(table map[string]Mapping, preset string, custom map[string]string) (Mapping, error) {
	m := Mapping{}
	var errs []string
	if preset != "" {
		p, ok := table[preset]
		if !ok {
			names := make([]string, 0, len(table))
			for n := range table {
				names = append(names, n)
			}
			sort.Strings(names)
			errs = append(errs, fmt.Sprintf("metrics.preset: got %q, want one of %s", preset, QuotedList(names)))
		}
		for tag, t := range p {
			m[tag] = t
		}
	}
	tags := make([]string, 0, len(custom))
	for tag := range custom {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		t, err := parseTarget(custom[tag])
		if err != nil {
			errs = append(errs, fmt.Sprintf("metrics.tags[%q]: %v", tag, err))
			continue
		}
		m[tag] = t
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// parseTarget reads a custom mapping's right-hand side: a canonical name, "-" in front to negate.
func parseTarget(s string) (Target, error) {
	t := Target{Metric: s, Scale: 1}
	if name, ok := strings.CutPrefix(s, "-"); ok {
		t = Target{Metric: name, Scale: -1}
	}
	if !slices.Contains(CanonicalMetrics, t.Metric) {
		return Target{}, fmt.Errorf("got %q, want a canonical metric, optionally prefixed by \"-\": one of %s",
			s, QuotedList(CanonicalMetrics))
	}
	return t, nil
}

// Lookup returns the canonical name and value for a tag's value; a tag the mapping does not name keeps
// its own name and value.
func (m Mapping) Lookup(tag string, v float64) (string, float64) {
	if t, ok := m[tag]; ok {
		return t.Metric, v * t.Scale
	}
	return tag, v
}

// Apply renames r's values through the mapping. r is modified in place and returned.
func (m Mapping) Apply(r Record) Record {
	if len(m) == 0 {
		return r
	}
	var moved []Target
	var vals []float64
	for k, v := range r.Values {
		if t, ok := m[k]; ok {
			moved = append(moved, t)
			vals = append(vals, v*t.Scale)
			delete(r.Values, k)
		}
	}
	for i, t := range moved {
		r.Values[t.Metric] = vals[i]
	}
	return r
}
