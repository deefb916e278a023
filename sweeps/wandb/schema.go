package wandb

// W&B's sweep config schema for a parameter (src/sweeps/config/schema.json of github.com/wandb/sweeps).

// Distributions are the distribution names a W&B parameter may give.
var Distributions = []string{"constant", "categorical", "categorical_w_probabilities", "int_uniform", "uniform", "q_uniform",
	"log_uniform", "log_uniform_values", "inv_log_uniform", "inv_log_uniform_values", "q_log_uniform", "q_log_uniform_values",
	"normal", "q_normal", "log_normal", "q_log_normal", "beta", "q_beta"}

// ParamKeys are the keys of a W&B parameter that say what it draws from.
var ParamKeys = []string{"values", "value", "probabilities", "min", "max", "q", "mu", "sigma", "a", "b"}

// DistributionKeys are the keys of ParamKeys that go with a distribution of Distributions; W&B refuses
// the others.
func DistributionKeys(dist string) []string {
	switch dist {
	case "categorical":
		return []string{"values"}
	case "categorical_w_probabilities":
		return []string{"values", "probabilities"}
	case "constant":
		return []string{"value"}
	case "normal", "log_normal":
		return []string{"mu", "sigma"}
	case "q_normal", "q_log_normal":
		return []string{"mu", "sigma", "q"}
	case "beta":
		return []string{"a", "b"}
	case "q_beta":
		return []string{"a", "b", "q"}
	case "q_uniform", "q_log_uniform", "q_log_uniform_values":
		return []string{"min", "max", "q"}
	}
	return []string{"min", "max"}
}
