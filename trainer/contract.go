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
)
