// Package ppo is the built-in Proximal Policy Optimization trainer (Schulman et al. 2017), written
// to match CleanRL's ppo.py and ppo_continuous_action.py update for update, with the extras a sweep
// needs: rsl_rl's adaptive learning rate, KL early stopping, observation and reward normalisation,
// value bootstrapping on truncation, every canonical metric of the diagnostics package per
// iteration, and checkpoints that resume bit for bit.
//
// A Trainer runs on any envs.Env: the classic-control environments, or the probe environments of
// docs/probes.md. After (or during) training, Value, ActionProbs and ActionMean evaluate the learned
// value function and policy on arbitrary observations.
//
// One iteration (Iterate) collects NumSteps steps from each of NumEnvs environments, computes GAE
// advantages, and runs Epochs passes of Minibatches minibatches of the clipped-surrogate update.
// Everything random comes from one PCG generator seeded by the caller and saved in checkpoints.
package ppo
