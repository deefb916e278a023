package sweeps

import (
	"strings"
	"testing"
)

// A trainer that logs only to its console: source stdout with the format's preset, and the rsl_rl
// iteration converted to environment steps.
func TestMetricsSourceStdout(t *testing.T) {
	load := func(y string) (*Spec, error) {
		s, err := Decode(strings.NewReader(y), "console.yaml")
		if err != nil {
			return nil, err
		}
		return s, s.Validate()
	}
	for _, tt := range []struct {
		metrics string
		want    MetricsSource
	}{
		{"{source: stdout, preset: rsl_rl, steps_per_iteration: 98304}", MetricsSource{Source: "stdout", Preset: "rsl_rl", StepsPerIteration: 98304}},
		{"{source: stdout, preset: sb3}", MetricsSource{Source: "stdout", Preset: "sb3"}},
		{"{source: csv, preset: sb3}", MetricsSource{Source: "csv", Preset: "sb3"}},
		{"{source: tensorboard, preset: rsl_rl, steps_per_iteration: 4096}", MetricsSource{Source: "tensorboard", Preset: "rsl_rl", StepsPerIteration: 4096}},
	} {
		y := "name: console\ntrainer:\n  command: [python, train.py]\n  total_steps: 1000000\n  metrics: " + tt.metrics + "\n"
		s, err := load(y)
		if err != nil {
			t.Errorf("%s: %v", tt.metrics, err)
			continue
		}
		if got := s.Trainer.Metrics; got.Source != tt.want.Source || got.Preset != tt.want.Preset || got.StepsPerIteration != tt.want.StepsPerIteration {
			t.Errorf("%s: metrics = %+v, want %+v", tt.metrics, got, tt.want)
		}
	}
	for metrics, want := range map[string]string{
		"{source: stdout}": `trainer.metrics.preset: got "", want rsl_rl or sb3`,
		"{source: stdout, preset: sb3, steps_per_iteration: 2048}":        "trainer.metrics.steps_per_iteration: got 2048, want no steps_per_iteration with source stdout",
		"{source: tensorboard, preset: rsl_rl, steps_per_iteration: -1}":  "trainer.metrics.steps_per_iteration: got -1, want an integer ≥ 1",
		"{source: tensorboard, preset: rsl_rl, steps_per_iteration: 1.5}": "trainer.metrics.steps_per_iteration",
	} {
		y := "name: console\ntrainer:\n  command: [python, train.py]\n  total_steps: 1000000\n  metrics: " + metrics + "\n"
		_, err := load(y)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", metrics, err, want)
		}
	}
}

// A trainer that logs with wandb.log: source wandb or auto, the step from a logged key.
func TestMetricsSourceWandb(t *testing.T) {
	load := func(y string) (*Spec, error) {
		s, err := Decode(strings.NewReader(y), "wandb.yaml")
		if err != nil {
			return nil, err
		}
		return s, s.Validate()
	}
	for metrics, want := range map[string]MetricsSource{
		"{source: wandb}":                        {Source: "wandb"},
		"{source: wandb, step_key: global_step}": {Source: "wandb", StepKey: "global_step"},
		"{source: auto, step_key: global_step}":  {Source: "auto", StepKey: "global_step"},
	} {
		s, err := load("name: w\ntrainer:\n  command: [python, train.py]\n  total_steps: 1000\n  metrics: " + metrics + "\n")
		if err != nil {
			t.Errorf("%s: %v", metrics, err)
			continue
		}
		if got := s.Trainer.Metrics; got.Source != want.Source || got.StepKey != want.StepKey {
			t.Errorf("%s: metrics = %+v, want %+v", metrics, got, want)
		}
	}
	for metrics, want := range map[string]string{
		"{source: jsonl, step_key: global_step}": `trainer.metrics.step_key: got "global_step", want no step_key with source jsonl`,
		"{source: wandb, step_key: ''}":          `trainer.metrics.step_key: got "", want a logged key holding the step`,
		"{source: wandb, step_key: [a]}":         "trainer.metrics.step_key",
	} {
		_, err := load("name: w\ntrainer:\n  command: [python, train.py]\n  total_steps: 1000\n  metrics: " + metrics + "\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", metrics, err, want)
		}
	}
	// The rlsweep block of a W&B config takes it too.
	y := "program: train.py\nmethod: random\nmetric: {name: reward, goal: maximize}\nparameters:\n  lr: {min: 0.001, max: 0.1}\n" +
		"rlsweep:\n  total_steps: 1000\n  metrics: {source: wandb, step_key: global_step}\n"
	s, err := Decode(strings.NewReader(y), "sweep.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil || s.Trainer.Metrics.StepKey != "global_step" || s.Trainer.Metrics.Source != "wandb" {
		t.Errorf("W&B config: %v, metrics %+v", err, s.Trainer.Metrics)
	}
}
