package trainer

// The parameter table of the built-in trainer ppo (`trainer: {builtin: ppo}`, `rlsweep train`): the keys
// of RLSWEEP_PARAMS and `--set` it accepts. It is data, so a spec's parameters can be checked against it
// (package sweeps) without linking the trainer; trainer/ppo sets its Config from the same names, and a
// test there ties every name to one Config field and every field to one name.

// PPOParamNames returns the hyperparameters the built-in trainer ppo accepts, in documentation order
// (docs/ppo.md).
func PPOParamNames() []string {
	return []string{
		"lr", "clip", "num_envs", "num_steps", "epochs", "minibatches", "ent_coef", "vf_coef", "gamma", "gae_lambda",
		"max_grad_norm", "hidden", "activation", "anneal_lr", "target_kl", "adaptive_lr", "desired_kl", "norm_adv",
		"clip_vloss", "norm_obs", "norm_reward", "clip_obs", "clip_reward", "init_log_std", "std_min",
	}
}

// PPOBugParam is the key (and sweep parameter) that breaks the built-in trainer ppo on purpose, as
// `rlsweep train --inject-bug` does: a test aid, not a hyperparameter, so PPOParamNames leaves it out.
const PPOBugParam = "inject_bug"

// PPOParamAliases maps the names other PPO implementations (CleanRL, Stable-Baselines3, rsl_rl) give some
// hyperparameters to the built-in trainer's name for them. The trainer does not accept the aliases; they
// serve "did you mean" hints.
func PPOParamAliases() map[string]string {
	return map[string]string{
		"learning_rate": "lr", "clip_coef": "clip", "clip_range": "clip", "clip_param": "clip",
		"n_envs": "num_envs", "n_steps": "num_steps", "num_steps_per_env": "num_steps",
		"update_epochs": "epochs", "n_epochs": "epochs", "num_learning_epochs": "epochs",
		"num_minibatches": "minibatches", "num_mini_batches": "minibatches",
		"entropy_coef": "ent_coef", "value_loss_coef": "vf_coef", "lam": "gae_lambda",
		"normalize_advantage": "norm_adv",
		"normalize":           "norm_obs", "net_arch": "hidden", "activation_fn": "activation",
	}
}

// BuiltinEnvNames returns the environments the built-in trainer ppo learns on (`trainer: {env: ...}`,
// `rlsweep train --env`), sorted: Gymnasium's ids. It is data, like the parameter table, so a spec's
// env can be checked (package sweeps) without linking the environments; a test in trainer/builtin
// ties it to the environments trainer/envs registers.
func BuiltinEnvNames() []string {
	return []string{"Acrobot-v1", "CartPole-v1", "MountainCarContinuous-v0", "Pendulum-v1"}
}

// BuiltinEnvActions returns the number of actions of a built-in environment whose actions are
// categorical (Acrobot-v1 3, CartPole-v1 2), 0 for a continuous one or an unknown name: the diagnostics'
// `actions` for the built-in trainer. Data, like BuiltinEnvNames; the same test ties it to the
// environments.
func BuiltinEnvActions(env string) int {
	return map[string]int{"Acrobot-v1": 3, "CartPole-v1": 2}[env]
}
