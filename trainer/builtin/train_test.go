package builtin

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/trainer/envs"
)

func TestNewBadInput(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		env     map[string]string
		wantErr string
	}{
		{"unknown env", Options{Env: "MountainCar-v0"}, nil, `env: got "MountainCar-v0", want one of Acrobot-v1, CartPole-v1, MountainCarContinuous-v0, Pendulum-v1`},
		{"bad set", Options{Env: "CartPole-v1", Sets: []string{"clip=-0.2"}}, nil, `clip: got "-0.2", want a number > 0`},
		{"set without =", Options{Env: "CartPole-v1", Sets: []string{"clip"}}, nil, `--set: got "clip", want key=value`},
		{"unknown param key", Options{Env: "CartPole-v1"}, map[string]string{trainer.EnvParams: `{"learning_rate": 0.1}`},
			"RLSWEEP_PARAMS: learning_rate: got an unknown parameter, want one of lr, clip, num_envs"},
		{"params not an object", Options{Env: "CartPole-v1"}, map[string]string{trainer.EnvParams: `[1]`},
			`RLSWEEP_PARAMS: got "[1]", want a JSON object of parameters`},
		{"bad stop step", Options{Env: "CartPole-v1"}, map[string]string{trainer.EnvStopAtStep: "soon"},
			`RLSWEEP_STOP_AT_STEP: got "soon", want a positive integer`},
		{"bad total steps", Options{Env: "CartPole-v1"}, map[string]string{trainer.EnvTotalSteps: "0"},
			`RLSWEEP_TOTAL_STEPS: got "0", want a positive integer`},
		{"bad seed", Options{Env: "CartPole-v1"}, map[string]string{trainer.EnvSeed: "-1"},
			`RLSWEEP_SEED: got "-1", want a non-negative integer`},
		{"minibatches", Options{Env: "CartPole-v1", Sets: []string{"minibatches=7"}}, nil,
			"minibatches: got 7, want a divisor of num_envs×num_steps = 512"},
		{"bug", Options{Env: "CartPole-v1", InjectBug: "typo"}, nil, `inject-bug: got "typo", want one of no-discount,`},
		{"bug in params", Options{Env: "CartPole-v1"}, map[string]string{trainer.EnvParams: `{"inject_bug": "typo"}`},
			`inject-bug: got "typo", want one of no-discount,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Getenv = mapEnv(tt.env)
			if _, err := New(opts); err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("New = %v, want an error starting %q", err, tt.wantErr)
			}
		})
	}
}

// TestTrainContract runs two segments under the trainer contract and checks them against one
// straight run: records, checkpoint announcements, resume, and the final checkpoint bit for bit.
func TestTrainContract(t *testing.T) {
	dir := t.TempDir()
	params := `{"num_envs": 2, "num_steps": 64, "hidden": "16,16", "norm_obs": true}`
	segment := func(name string, stop, resume string) []metrics.Record {
		env := map[string]string{
			trainer.EnvMetricsFile: filepath.Join(dir, name+".jsonl"), trainer.EnvCheckpointDir: filepath.Join(dir, name),
			trainer.EnvStopAtStep: stop, trainer.EnvTotalSteps: "2048", trainer.EnvSeed: "3", trainer.EnvParams: params,
			trainer.EnvResumeFrom: resume,
		}
		run, err := New(Options{Env: "CartPole-v1", Getenv: mapEnv(env), Progress: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := run.Train(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if out := string(sum.AppendJSON(nil)); !strings.Contains(out, `"steps":`+stop) || sum.Stopped {
			t.Errorf("summary = %s (stopped %v), want steps %s", out, sum.Stopped, stop)
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
	run, err := New(Options{Env: "Pendulum-v1", Getenv: mapEnv(env)})
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := run.Train(ctx); err != nil || !sum.Stopped {
		t.Fatalf("Train after SIGTERM = %+v, %v; want stopped and no error", sum, err)
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

func readRecords(t *testing.T, path string) []metrics.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []metrics.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, err := metrics.ParseJSONLine(sc.Bytes())
		if err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestBuiltinEnvNamesMatchRegistry ties the env table specs are checked against (trainer.BuiltinEnvNames)
// and the diagnostics' action counts (trainer.BuiltinEnvActions) to the environments the trainer can make.
func TestBuiltinEnvNamesMatchRegistry(t *testing.T) {
	if got, want := trainer.BuiltinEnvNames(), envs.Names(); !slices.Equal(got, want) {
		t.Errorf("trainer.BuiltinEnvNames() = %v, want envs.Names() %v", got, want)
	}
	for _, name := range envs.Names() {
		mk, err := envs.Make(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := trainer.BuiltinEnvActions(name), mk().Spec().Actions; got != want {
			t.Errorf("trainer.BuiltinEnvActions(%q) = %d, want the env's Spec().Actions %d", name, got, want)
		}
	}
}
