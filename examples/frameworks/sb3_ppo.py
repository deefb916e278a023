#!/usr/bin/env python3
"""Stable-Baselines3 PPO on CartPole-v1 under rlsweep (docs/python.md, "Stable-Baselines3"): the lines
marked `# rlsweep` are the whole difference from SB3's quick-start. Needs stable-baselines3 and
gymnasium (pip install stable-baselines3 gymnasium ./python); rlsweep's tests drive rlsweep.sb3 with a
fake of SB3's callback API instead, as neither can be installed where they run.

    python examples/frameworks/sb3_ppo.py                 # standalone: 100,000 steps
    rlsweep submit examples/frameworks/sb3.yaml --watch   # a sweep (edit the script's path first)
"""

from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

import rlsweep  # rlsweep
import rlsweep.sb3  # rlsweep

cfg = rlsweep.params({"learning_rate": 3e-4, "clip_range": 0.2, "n_steps": 512, "ent_coef": 0.0, "seed": 1})  # rlsweep
env = make_vec_env("CartPole-v1", n_envs=4, seed=cfg["seed"])  # make_vec_env adds the Monitor the callback reads episodes from
model = rlsweep.sb3.resume(PPO, env, **cfg) or PPO("MlpPolicy", env, verbose=1, **cfg)  # rlsweep: was PPO("MlpPolicy", env, ...)
rlsweep.sb3.learn(model, total_timesteps=100_000)  # rlsweep: was model.learn(total_timesteps=100_000)
env.close()
