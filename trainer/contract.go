// Package trainer defines the contract between rlsweep and a trainer process (docs/trainer-contract.md):
// the environment variables every trainer gets; and, as data, the built-in trainer's parameter table
// (params.go). The metrics trainers write are read by package metrics.
package trainer

// Environment variables given to every trainer process. They are the whole interface: the built-in
// trainer (`rlsweep train`) reads the same ones as any external command.
const (
	EnvSweepID       = "RLSWEEP_SWEEP_ID"
	EnvTrialID       = "RLSWEEP_TRIAL_ID"
	EnvSeed          = "RLSWEEP_SEED"
	EnvParams        = "RLSWEEP_PARAMS" // a JSON object of the trial's parameter values
	EnvMetricsFile   = "RLSWEEP_METRICS_FILE"
	EnvTBDir         = "RLSWEEP_TB_DIR"
	EnvCheckpointDir = "RLSWEEP_CHECKPOINT_DIR"
	EnvResumeFrom    = "RLSWEEP_RESUME_FROM"
	EnvStopAtStep    = "RLSWEEP_STOP_AT_STEP"
	EnvTotalSteps    = "RLSWEEP_TOTAL_STEPS"
	EnvCUDADevices   = "CUDA_VISIBLE_DEVICES"
	// EnvGPUMemoryFraction is the share of each of its GPUs a trainer holds on a GPU worker: the
	// spec's resources.gpus when that is a fraction (0.25), 1/N for whole-GPU trials under
	// --trials-per-gpu N, 1 for a whole GPU; unset without a GPU. A PyTorch trainer applies it with
	// torch.cuda.set_per_process_memory_fraction.
	EnvGPUMemoryFraction = "RLSWEEP_GPU_MEMORY_FRACTION"
	// EnvXLAMemFraction is JAX's own limit on the GPU memory it preallocates, set for a trainer that
	// holds less than a whole GPU unless the worker or trainer.environment sets it.
	EnvXLAMemFraction = "XLA_PYTHON_CLIENT_MEM_FRACTION"
)
