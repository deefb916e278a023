package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/trainer"
)

func TestTrainFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    trainOptions
		wantErr string
	}{
		{[]string{"--env", "CartPole-v1"}, trainOptions{Env: "CartPole-v1", Steps: defaultTrainSteps, Seed: 1}, ""},
		{[]string{"--env", "Pendulum-v1", "--steps", "300000", "--seed", "4", "--set", "lr=1e-3", "--set", "hidden=32,32",
			"--summary-json", "--inject-bug", "flip-advantage"},
			trainOptions{Env: "Pendulum-v1", Steps: 300000, Seed: 4, Sets: []string{"lr=1e-3", "hidden=32,32"},
				SummaryJSON: true, InjectBug: "flip-advantage", stepsSet: true, seedSet: true}, ""},
		{[]string{}, trainOptions{}, "--env: got nothing, want one of CartPole-v1, Pendulum-v1"},
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

func TestTrainBadInput(t *testing.T) {
	tests := []struct {
		name    string
		opts    trainOptions
		env     map[string]string
		wantErr string
	}{
		{"unknown env", trainOptions{Env: "Acrobot-v1"}, nil, `env: got "Acrobot-v1", want one of CartPole-v1, Pendulum-v1`},
		{"bad set", trainOptions{Env: "CartPole-v1", Sets: []string{"clip=-0.2"}}, nil, `clip: got "-0.2", want a number > 0`},
		{"set without =", trainOptions{Env: "CartPole-v1", Sets: []string{"clip"}}, nil, `--set: got "clip", want key=value`},
		{"unknown param key", trainOptions{Env: "CartPole-v1"}, map[string]string{trainer.EnvParams: `{"learning_rate": 0.1}`},
			"RLSWEEP_PARAMS: learning_rate: got an unknown parameter, want one of lr, clip, num_envs"},
		{"params not an object", trainOptions{Env: "CartPole-v1"}, map[string]string{trainer.EnvParams: `[1]`},
			`RLSWEEP_PARAMS: got "[1]", want a JSON object of parameters`},
		{"bad stop step", trainOptions{Env: "CartPole-v1"}, map[string]string{trainer.EnvStopAtStep: "soon"},
			`RLSWEEP_STOP_AT_STEP: got "soon", want a positive integer`},
		{"minibatches", trainOptions{Env: "CartPole-v1", Sets: []string{"minibatches=7"}}, nil,
			"minibatches: got 7, want a divisor of num_envs×num_steps = 512"},
		{"bug", trainOptions{Env: "CartPole-v1", InjectBug: "typo"}, nil, `inject-bug: got "typo", want one of no-discount,`},
	}
	for _, tt := range tests {
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
}

// TestTrainContract runs two segments under the trainer contract and checks them against one
// straight run: records, checkpoint announcements, resume, and the final checkpoint bit for bit.
func TestTrainContract(t *testing.T) {
	dir := t.TempDir()
	params := `{"num_envs": 2, "num_steps": 64, "hidden": "16,16", "norm_obs": true}`
	segment := func(name string, stop, resume string) []diagnostics.Record {
		env := map[string]string{
			trainer.EnvMetricsFile: filepath.Join(dir, name+".jsonl"), trainer.EnvCheckpointDir: filepath.Join(dir, name),
			trainer.EnvStopAtStep: stop, trainer.EnvTotalSteps: "2048", trainer.EnvSeed: "3", trainer.EnvParams: params,
			trainer.EnvResumeFrom: resume,
		}
		var out bytes.Buffer
		opts := &trainOptions{Env: "CartPole-v1", Out: &out, ErrOut: &bytes.Buffer{}, Getenv: mapEnv(env), SummaryJSON: true}
		if err := runTrain(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"steps":`+stop) {
			t.Errorf("summary = %s, want steps %s", out.String(), stop)
		}
		return readRecords(t, env[trainer.EnvMetricsFile])
	}
	first := segment("a", "1024", "")
	last := first[len(first)-1]
	if last.Checkpoint != "ckpt-000000001024.bin" || last.Step != 1024 {
		t.Fatalf("last record = %+v, want the checkpoint announced at step 1024", last)
	}
	for _, k := range []string{"reward", "value_loss", "entropy", "grad_norm", "advantage_abs_max", "fps"} {
		if _, ok := first[0].Value(k); !ok {
			t.Errorf("first record lacks %s: %+v", k, first[0])
		}
	}
	segment("a", "2048", filepath.Join(dir, "a", last.Checkpoint))
	segment("b", "2048", "")
	resumed, err := os.ReadFile(filepath.Join(dir, "a", "ckpt-000000002048.bin"))
	if err != nil {
		t.Fatal(err)
	}
	straight, err := os.ReadFile(filepath.Join(dir, "b", "ckpt-000000002048.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resumed, straight) {
		t.Error("checkpoint after resuming differs from the straight run's")
	}
	all := readRecords(t, filepath.Join(dir, "a.jsonl"))
	for i := 1; i < len(all); i++ {
		if all[i].Step < all[i-1].Step {
			t.Fatalf("record %d: step %d after %d", i, all[i].Step, all[i-1].Step)
		}
	}
}

// TestTrainStopped checks a cancelled context (what SIGTERM becomes) still ends with a checkpoint,
// announced, and no error.
func TestTrainStopped(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{trainer.EnvMetricsFile: filepath.Join(dir, "m.jsonl"), trainer.EnvCheckpointDir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := &trainOptions{Env: "Pendulum-v1", Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: mapEnv(env)}
	if err := runTrain(ctx, opts); err != nil {
		t.Fatalf("runTrain after SIGTERM = %v, want nil", err)
	}
	recs := readRecords(t, env[trainer.EnvMetricsFile])
	if len(recs) != 1 || recs[0].Checkpoint == "" {
		t.Fatalf("records = %+v, want one announcing a checkpoint", recs)
	}
	if _, err := os.Stat(filepath.Join(dir, recs[0].Checkpoint)); err != nil {
		t.Error(err)
	}
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func readRecords(t *testing.T, path string) []diagnostics.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []diagnostics.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, err := trainer.ParseJSONLine(sc.Bytes())
		if err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}
