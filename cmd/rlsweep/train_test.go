package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/trainer/builtin"
)

func TestTrainFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    trainOptions
		wantErr string
	}{
		{[]string{"--env", "CartPole-v1"}, trainOptions{Env: "CartPole-v1", Steps: builtin.DefaultSteps, Seed: 1}, ""},
		{[]string{"--env", "Pendulum-v1", "--steps", "300000", "--seed", "4", "--set", "lr=1e-3", "--set", "hidden=32,32",
			"--summary-json", "--inject-bug", "flip-advantage"},
			trainOptions{Env: "Pendulum-v1", Steps: 300000, Seed: 4, Sets: []string{"lr=1e-3", "hidden=32,32"},
				SummaryJSON: true, InjectBug: "flip-advantage", stepsSet: true, seedSet: true}, ""},
		{[]string{}, trainOptions{}, "--env: got nothing, want one of Acrobot-v1, CartPole-v1, MountainCarContinuous-v0, Pendulum-v1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *trainOptions
			f := &Factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := newTrainCmdWith(f, func(_ context.Context, o *trainOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Out, got.ErrOut, got.Getenv = nil, nil, nil
			if got.Env != tt.want.Env || got.Steps != tt.want.Steps || got.Seed != tt.want.Seed ||
				!slices.Equal(got.Sets, tt.want.Sets) || got.SummaryJSON != tt.want.SummaryJSON ||
				got.InjectBug != tt.want.InjectBug || got.stepsSet != tt.want.stepsSet || got.seedSet != tt.want.seedSet {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// TestTrainWiring: bad input, from a flag or from the contract's variables, exits 2; a run under the
// contract writes its records and prints the summary --summary-json asks for (trainer/builtin tests
// the contract itself).
func TestTrainWiring(t *testing.T) {
	bad := []struct {
		name    string
		opts    trainOptions
		env     map[string]string
		wantErr string
	}{
		{"unknown env", trainOptions{Env: "MountainCar-v0"}, nil, `env: got "MountainCar-v0", want one of Acrobot-v1, CartPole-v1, MountainCarContinuous-v0, Pendulum-v1`},
		{"steps 0", trainOptions{Env: "CartPole-v1", Steps: 0, stepsSet: true}, nil, `--steps: got 0, want > 0`},
		{"params not an object", trainOptions{Env: "CartPole-v1"}, map[string]string{trainer.EnvParams: `[1]`},
			`RLSWEEP_PARAMS: got "[1]", want a JSON object of parameters`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Out, opts.ErrOut, opts.Getenv = &bytes.Buffer{}, &bytes.Buffer{}, mapEnv(tt.env)
			err := runTrain(context.Background(), &opts)
			var ec *exitCodeError
			if !errors.As(err, &ec) || ec.code != exitInvalid || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("runTrain = %v, want exit code %d and an error starting %q", err, exitInvalid, tt.wantErr)
			}
		})
	}
	dir := t.TempDir()
	metrics := filepath.Join(dir, "m.jsonl")
	var out, errOut bytes.Buffer
	opts := &trainOptions{Env: "CartPole-v1", Steps: 512, stepsSet: true, Seed: 2, seedSet: true, SummaryJSON: true,
		Sets: []string{"num_envs=2", "num_steps=128"}, Out: &out, ErrOut: &errOut,
		Getenv: mapEnv(map[string]string{trainer.EnvMetricsFile: metrics, trainer.EnvSeed: "9"})}
	if err := runTrain(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), `{"reward":`) || !strings.Contains(out.String(), `,"steps":512,"steps_per_second":`) {
		t.Errorf("summary = %q, want the --summary-json line at step 512", out.String())
	}
	if !strings.Contains(errOut.String(), "done at step 512") {
		t.Errorf("progress = %q, want the closing line on stderr", errOut.String())
	}
	if b, err := os.ReadFile(metrics); err != nil || bytes.Count(b, []byte("\n")) != 2 {
		t.Errorf("metrics file: %d lines (%v), want 2 iterations of 256 steps", bytes.Count(b, []byte("\n")), err)
	}
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
