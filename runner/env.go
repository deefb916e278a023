package runner

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/trainer"
)

// Contract is what the trainer contract (docs/trainer-contract.md) tells one trainer process through its
// environment: a trial's segment, or a probe run (which adds the probe protocol's variables).
type Contract struct {
	SweepID, TrialID string
	Seed             int64
	Params           map[string]any
	MetricsFile      string
	TBDir            string // "" leaves RLSWEEP_TB_DIR out
	CheckpointDir    string
	StopAtStep       int64
	TotalSteps       int64
	ResumeFrom       string // "" leaves RLSWEEP_RESUME_FROM out
	// CUDADevices is CUDA_VISIBLE_DEVICES: the GPUs the process may use, comma-separated; "" hides every GPU.
	CUDADevices string
	// Precision is the trial's resources.precision setting (trainer.PrecisionEnv); "" when none.
	Precision string
	// GPUMemoryFraction is RLSWEEP_GPU_MEMORY_FRACTION: the share of each of its GPUs the process holds
	// ("0.25" for resources.gpus 0.25, "1" for whole GPUs); "" leaves it out (no GPU).
	GPUMemoryFraction string
}

// Env is the environment of a trainer process, trials and probes alike: the worker's environment
// (environ, os.Environ's form) without the worker's own settings — rlsweep's (RLSWEEP_*), the GPUs it
// hands out (CUDA_VISIBLE_DEVICES), its Temporal connection (TEMPORAL_*: the API key and TLS keys) and
// its store's AWS settings (AWS_*: the keys and AWS_SESSION_TOKEN), credentials a trainer that prints its
// environment would put in its log — then the spec's trainer.environment (spec), which validation keeps
// from setting RLSWEEP_* or CUDA_VISIBLE_DEVICES, then the contract's variables, then extra (NAME=value).
// A precision setting removes the variables it controls from the worker's environment and sets its own
// after the spec's (validation keeps trainer.environment from setting them when it has one).
func (c Contract) Env(environ []string, spec map[string]string, extra ...string) []string {
	setPrecision, unsetPrecision := trainer.PrecisionEnv(c.Precision)
	var env []string
	for _, kv := range trainer.WithoutVars(environ, unsetPrecision) {
		if !strings.HasPrefix(kv, "RLSWEEP_") && !strings.HasPrefix(kv, "TEMPORAL_") && !strings.HasPrefix(kv, "AWS_") &&
			!strings.HasPrefix(kv, trainer.EnvCUDADevices+"=") {
			env = append(env, kv)
		}
	}
	for k, v := range spec {
		env = append(env, k+"="+v)
	}
	env = append(env,
		trainer.EnvSweepID+"="+c.SweepID,
		trainer.EnvTrialID+"="+c.TrialID,
		trainer.EnvSeed+"="+strconv.FormatInt(c.Seed, 10),
		trainer.EnvParams+"="+ParamsJSON(c.Params),
		trainer.EnvMetricsFile+"="+c.MetricsFile,
		trainer.EnvCheckpointDir+"="+c.CheckpointDir,
		trainer.EnvStopAtStep+"="+strconv.FormatInt(c.StopAtStep, 10),
		trainer.EnvTotalSteps+"="+strconv.FormatInt(c.TotalSteps, 10),
		trainer.EnvCUDADevices+"="+c.CUDADevices,
	)
	env = append(env, setPrecision...)
	if c.TBDir != "" {
		env = append(env, trainer.EnvTBDir+"="+c.TBDir)
	}
	if c.ResumeFrom != "" {
		env = append(env, trainer.EnvResumeFrom+"="+c.ResumeFrom)
	}
	if c.GPUMemoryFraction != "" {
		env = append(env, trainer.EnvGPUMemoryFraction+"="+c.GPUMemoryFraction)
	}
	return append(env, extra...)
}

// ParamsJSON is RLSWEEP_PARAMS: a JSON object, {} when there are no parameters (never null).
func ParamsJSON(params map[string]any) string {
	if len(params) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(params) // scalars only: cannot fail
	return string(b)
}
