"""rlsweep's probe protocol (docs/probes.md), through the rlsweep package.

When RLSWEEP_PROBE names a probe, train.py trains this same PPO on that probe environment
(rlsweep.ProbeEnv) for RLSWEEP_TOTAL_STEPS steps with γ = RLSWEEP_PROBE_GAMMA, then writes V and π at
the probe's evaluation observations to RLSWEEP_PROBE_RESULT and exits 0. rlsweep judges the record. A
probe of the other action space is declined with exit 3 (by rlsweep.probe in train.py, before torch is
imported): --env CartPole-v1 runs the discrete ladder (1–5) with its categorical policy, --env
Pendulum-v1 the Gaussian one (1c–5c).

The probes run on the CPU with probe_config (config.py), not with the sweep's hyperparameters: they
check the implementation. --inject-bug is honoured, so a broken trainer can be shown to fail.
"""

import sys

import torch

import config
import envs
import rlsweep
from bugs import Bug
from ppo import PPO


def run(args, probe):
    """Trains on the probe (an rlsweep.Probe) and writes the result record; returns the exit status."""
    torch.set_num_threads(1)
    cfg = config.probe_config(probe.discrete, probe.gamma)
    seed = args.seed if args.seed is not None else (probe.seed if probe.seed is not None else 1)
    env = envs.ProbeVec(probe, cfg.num_envs, "cpu", seed)
    learner = PPO(cfg, env, "cpu", seed, probe.budget, Bug(args.inject_bug))
    while learner.step < probe.budget:
        rlsweep.log(learner.step, **learner.iterate())
    rlsweep.report_probe(evaluate(learner, probe.eval_observations), learner.step, cfg.gamma, probe.name)
    print("probe %s: trained %d steps, result written" % (probe.name, learner.step), file=sys.stderr)
    return 0


@torch.no_grad()
def evaluate(learner, observations):
    """V(obs) and π(·|obs) (probabilities, or the Gaussian's mean) at each observation, in reward units
    (the probe configuration does not normalise rewards)."""
    agent, evals = learner.agent, []
    for o in observations:
        x = agent.obs_norm(torch.tensor([o], dtype=torch.float32))
        e = {"obs": o, "value": agent.value(x).item()}
        d = agent.dist(x)
        if agent.discrete:
            e["probs"] = d.probs[0].tolist()
        else:
            e["mean"] = d.mean[0].tolist()
        evals.append(e)
    return evals
