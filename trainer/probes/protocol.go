package probes

// The probe protocol (docs/probes.md): the variables an external trainer gets on top of the trainer
// contract's when it is run on a probe, and the exit code by which it declines one.
const (
	EnvProbe       = "RLSWEEP_PROBE"        // the probe to train on: 1–5, 1c–5c
	EnvProbeResult = "RLSWEEP_PROBE_RESULT" // where the trainer writes its Record as JSON
	EnvProbeGamma  = "RLSWEEP_PROBE_GAMMA"  // the discount to train with (Gamma)
	// ExitUnsupported is the exit code by which a trainer declines a probe whose action space it does
	// not support; the probe is skipped, not failed.
	ExitUnsupported = 3
)
