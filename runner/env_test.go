package runner

import (
	"slices"
	"strings"
	"testing"
)

// A trainer's environment keeps the worker's ordinary variables and none of its own settings or
// credentials, adds the spec's, then the contract's, then the extra ones.
func TestContractEnv(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/home/u", "TEMPORAL_API_KEY=tk-secret", "TEMPORAL_TLS_CLIENT_KEY_DATA=pem",
		"AWS_SECRET_ACCESS_KEY=aws-secret", "AWS_SESSION_TOKEN=tok", "RLSWEEP_STORE=s3://b/p", "CUDA_VISIBLE_DEVICES=0,1,2,3"}
	c := Contract{SweepID: "sweep/a/1", TrialID: "0-s1", Seed: 7, MetricsFile: "/w/m.jsonl", CheckpointDir: "/w/ck",
		StopAtStep: 100, TotalSteps: 200, CUDADevices: "2"}
	env := c.Env(environ, map[string]string{"OMP_NUM_THREADS": "1"}, "RLSWEEP_PROBE=p1")
	for _, kv := range env {
		for _, bad := range []string{"TEMPORAL_", "AWS_", "RLSWEEP_STORE"} {
			if strings.HasPrefix(kv, bad) {
				t.Errorf("trainer environment has %s", kv)
			}
		}
	}
	for _, want := range []string{"PATH=/usr/bin", "HOME=/home/u", "OMP_NUM_THREADS=1", "RLSWEEP_SWEEP_ID=sweep/a/1",
		"RLSWEEP_TRIAL_ID=0-s1", "RLSWEEP_SEED=7", "RLSWEEP_PARAMS={}", "RLSWEEP_METRICS_FILE=/w/m.jsonl",
		"RLSWEEP_CHECKPOINT_DIR=/w/ck", "RLSWEEP_STOP_AT_STEP=100", "RLSWEEP_TOTAL_STEPS=200", "CUDA_VISIBLE_DEVICES=2", "RLSWEEP_PROBE=p1"} {
		if !slices.Contains(env, want) {
			t.Errorf("trainer environment lacks %s: %q", want, env)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return !strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") })); n != 1 {
		t.Errorf("CUDA_VISIBLE_DEVICES set %d times, want once", n)
	}
	for _, absent := range []string{"RLSWEEP_RESUME_FROM=", "RLSWEEP_TB_DIR=", "RLSWEEP_GPU_MEMORY_FRACTION="} {
		for _, kv := range env {
			if strings.HasPrefix(kv, absent) {
				t.Errorf("%s set without a value to give: %s", absent, kv)
			}
		}
	}
}

// A precision setting removes the variables it controls from the worker's environment and sets its
// own: each variable appears at most once, with the setting's value.
func TestContractEnvPrecision(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "NVIDIA_TF32_OVERRIDE=0", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0", "XLA_FLAGS=--xla_gpu_autotune_level=0"}
	for _, tc := range []struct {
		precision     string
		want, without []string
	}{
		{"", []string{"NVIDIA_TF32_OVERRIDE=0", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0"}, []string{"RLSWEEP_PRECISION="}},
		{"fp32", []string{"NVIDIA_TF32_OVERRIDE=0", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0", "JAX_DEFAULT_MATMUL_PRECISION=highest", "RLSWEEP_PRECISION=fp32"}, nil},
		{"tf32", []string{"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1", "JAX_DEFAULT_MATMUL_PRECISION=tensorfloat32", "RLSWEEP_PRECISION=tf32"},
			[]string{"NVIDIA_TF32_OVERRIDE="}},
		{"default", []string{"RLSWEEP_PRECISION=default"},
			[]string{"NVIDIA_TF32_OVERRIDE=", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=", "JAX_DEFAULT_MATMUL_PRECISION="}},
	} {
		env := Contract{TrialID: "0-s1", Precision: tc.precision}.Env(environ, nil)
		for _, w := range append(tc.want, "PATH=/usr/bin", "XLA_FLAGS=--xla_gpu_autotune_level=0") {
			if !slices.Contains(env, w) {
				t.Errorf("precision %q: environment lacks %s: %q", tc.precision, w, env)
			}
		}
		seen := map[string]bool{}
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if seen[name] {
				t.Errorf("precision %q: %s set twice: %q", tc.precision, name, env)
			}
			seen[name] = true
			for _, w := range tc.without {
				if strings.HasPrefix(kv, w) {
					t.Errorf("precision %q: environment has %s", tc.precision, kv)
				}
			}
		}
	}
}

// A trainer holding a share of a GPU is told it in RLSWEEP_GPU_MEMORY_FRACTION, which the worker's
// environment cannot set.
func TestContractEnvGPUMemoryFraction(t *testing.T) {
	env := Contract{CUDADevices: "0", GPUMemoryFraction: "0.25"}.Env([]string{"RLSWEEP_GPU_MEMORY_FRACTION=1"}, nil)
	var got []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "RLSWEEP_GPU_MEMORY_FRACTION=") {
			got = append(got, kv)
		}
	}
	if !slices.Equal(got, []string{"RLSWEEP_GPU_MEMORY_FRACTION=0.25"}) {
		t.Errorf("RLSWEEP_GPU_MEMORY_FRACTION: %q, want 0.25 once", got)
	}
}
