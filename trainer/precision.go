package trainer

import "strings"

// EnvPrecision is the resources.precision setting a trial runs under ("fp32", "tf32", "default"); unset
// when the sweep has no precision dimension. The variables of PrecisionEnv already apply the setting to
// cuBLAS, cuDNN and XLA; a trainer that sets its precision in code (torch.set_float32_matmul_precision)
// reads this one.
const EnvPrecision = "RLSWEEP_PRECISION"

// Precision settings of resources.precision.
const (
	// PrecisionDefault runs the trainer under its frameworks' own defaults: the variables below are
	// removed from its environment.
	PrecisionDefault = "default"
	// PrecisionFP32 keeps matrix products in full float32: TF32 off in cuBLAS and cuDNN
	// (NVIDIA_TF32_OVERRIDE=0, TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0) and JAX's matmul precision "highest".
	PrecisionFP32 = "fp32"
	// PrecisionTF32 lets matrix products use TF32 on GPUs that have it (Ampere and newer): PyTorch's
	// cuBLAS override on (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1), JAX's matmul precision "tensorfloat32",
	// NVIDIA_TF32_OVERRIDE removed (it can only turn TF32 off).
	PrecisionTF32 = "tf32"
)

// Precisions lists the settings of resources.precision.
var Precisions = []string{PrecisionDefault, PrecisionFP32, PrecisionTF32}

// The variables a precision setting controls.
const (
	envTF32Override     = "NVIDIA_TF32_OVERRIDE"
	envTorchTF32        = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"
	envJAXMatmul        = "JAX_DEFAULT_MATMUL_PRECISION"
	jaxMatmulHighest    = "highest"
	jaxMatmulTensorFP32 = "tensorfloat32"
)

// PrecisionVars are the variables a precision setting sets or removes; the spec's trainer.environment
// may not set them in a sweep with resources.precision.
var PrecisionVars = []string{envTF32Override, envTorchTF32, envJAXMatmul}

// PrecisionEnv is what setting does to a trainer's environment: the variables it removes from the
// worker's environment (every one of PrecisionVars, whatever the worker set) and those it sets
// (NAME=value, EnvPrecision among them). Both are empty for "" (no precision dimension).
func PrecisionEnv(setting string) (set, unset []string) {
	switch setting {
	case "":
		return nil, nil
	case PrecisionFP32:
		set = []string{envTF32Override + "=0", envTorchTF32 + "=0", envJAXMatmul + "=" + jaxMatmulHighest}
	case PrecisionTF32:
		set = []string{envTorchTF32 + "=1", envJAXMatmul + "=" + jaxMatmulTensorFP32}
	}
	return append(set, EnvPrecision+"="+setting), PrecisionVars
}

// WithoutVars is environ (os.Environ's form) without the variables named in names.
func WithoutVars(environ, names []string) []string {
	if len(names) == 0 {
		return environ
	}
	out := make([]string, 0, len(environ))
next:
	for _, kv := range environ {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
