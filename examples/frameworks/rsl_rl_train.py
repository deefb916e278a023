#!/usr/bin/env python3
"""rsl_rl's OnPolicyRunner under rlsweep (docs/python.md, "rsl_rl and Isaac Lab"): Isaac Lab's
scripts/reinforcement_learning/rsl_rl/train.py changes in the lines marked `# rlsweep`; everything
else (the app launcher, the task's env and agent configs, RslRlVecEnvWrapper) stays as it is. Needs
Isaac Lab (or any rsl_rl VecEnv) and rsl_rl; rlsweep's tests drive rlsweep.rsl_rl with a fake
OnPolicyRunner of the same names and call order instead, as neither can be installed where they run.

    ./isaaclab.sh -p examples/frameworks/rsl_rl_train.py --task Isaac-Cartpole-v0 --headless
"""

import argparse
import os

from isaaclab.app import AppLauncher

parser = argparse.ArgumentParser()
parser.add_argument("--task", default="Isaac-Cartpole-v0")
parser.add_argument("--num_envs", type=int, default=None)
AppLauncher.add_app_launcher_args(parser)
args = parser.parse_args()
app = AppLauncher(args).app

import gymnasium as gym  # noqa: E402
import isaaclab_tasks  # noqa: E402,F401  (registers the tasks)
from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper  # noqa: E402
from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry, parse_env_cfg  # noqa: E402
from rsl_rl.runners import OnPolicyRunner  # noqa: E402

import rlsweep  # noqa: E402  # rlsweep
import rlsweep.rsl_rl  # noqa: E402  # rlsweep

env_cfg = parse_env_cfg(args.task, num_envs=args.num_envs)
agent_cfg = load_cfg_from_registry(args.task, "rsl_rl_cfg_entry_point")
p = rlsweep.params({"learning_rate": agent_cfg.algorithm.learning_rate, "entropy_coef": agent_cfg.algorithm.entropy_coef,  # rlsweep
                    "seed": agent_cfg.seed})  # rlsweep
agent_cfg.algorithm.learning_rate, agent_cfg.algorithm.entropy_coef, agent_cfg.seed = p.learning_rate, p.entropy_coef, p.seed  # rlsweep
env_cfg.seed = agent_cfg.seed
log_dir = os.path.abspath(os.path.join("logs", "rsl_rl", agent_cfg.experiment_name))
env = RslRlVecEnvWrapper(gym.make(args.task, cfg=env_cfg))
runner = OnPolicyRunner(env, agent_cfg.to_dict(), log_dir=log_dir, device=agent_cfg.device)
rlsweep.rsl_rl.learn(runner, num_learning_iterations=agent_cfg.max_iterations)  # rlsweep: was runner.learn(...)
env.close()
app.close()
