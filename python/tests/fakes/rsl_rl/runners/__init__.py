"""Fake of rsl_rl.runners (see ../../README.md): OnPolicyRunner's loop, logging and saving, no learning."""

import json
import os
from collections import deque


class _Std:
    def __init__(self, xs):
        self.xs = xs

    def mean(self):
        return sum(self.xs) / len(self.xs)

    def min(self):
        return min(self.xs)


class _Policy:
    def __init__(self):
        self.std = _Std([0.5, 0.25])


class _Alg:
    def __init__(self, lr):
        self.policy = _Policy()
        self.learning_rate = lr

    def update(self):
        return {"value_function": 0.5, "surrogate": -0.02, "entropy": 1.2}


class VecEnv:
    def __init__(self, num_envs, episode_len):
        self.num_envs, self.episode_len = num_envs, episode_len


class OnPolicyRunner:
    def __init__(self, env, train_cfg, log_dir=None, device="cpu"):
        self.env, self.cfg, self.log_dir, self.device = env, train_cfg, log_dir, device
        self.alg = _Alg(train_cfg["algorithm"]["learning_rate"])
        self.num_steps_per_env = train_cfg["num_steps_per_env"]
        self.save_interval = train_cfg["save_interval"]
        self.gpu_world_size = 1
        self.tot_timesteps = 0
        self.current_learning_iteration = 0
        self.logged, self.saved = [], []

    def learn(self, num_learning_iterations, init_at_random_ep_len=False):
        ep_infos = []
        rewbuffer = deque(maxlen=100)
        lenbuffer = deque(maxlen=100)
        t = [0] * self.env.num_envs
        start_iter = self.current_learning_iteration
        tot_iter = start_iter + num_learning_iterations
        for it in range(start_iter, tot_iter):
            for _ in range(self.num_steps_per_env):
                for i in range(self.env.num_envs):
                    t[i] += 1
                    if t[i] == self.env.episode_len:
                        rewbuffer.append(float(it))
                        lenbuffer.append(float(t[i]))
                        ep_infos.append({"Episode_Reward/track": 0.5, "Curriculum/level": it})
                        t[i] = 0
            collection_time, learn_time = 0.01, 0.01
            loss_dict = self.alg.update()
            self.current_learning_iteration = it
            if self.log_dir is not None:
                self.log(locals())
                if it % self.save_interval == 0:
                    self.save(os.path.join(self.log_dir, "model_%d.pt" % it))
            ep_infos.clear()
        if self.log_dir is not None:
            self.save(os.path.join(self.log_dir, "model_%d.pt" % self.current_learning_iteration))

    def log(self, locs, width=80, pad=35):
        self.tot_timesteps += self.num_steps_per_env * self.env.num_envs * self.gpu_world_size
        self.logged.append(locs["it"])
        print("Learning iteration %d" % locs["it"])

    def save(self, path, infos=None):
        self.saved.append(path)
        with open(path, "w") as f:
            json.dump({"iter": self.current_learning_iteration, "lr": self.alg.learning_rate}, f)

    def load(self, path, load_optimizer=True):
        with open(path) as f:
            state = json.load(f)
        self.current_learning_iteration = state["iter"]
        return state
