"""Fake of stable_baselines3 (see ../README.md): PPO with learn's call order, no learning."""

import json
import os

from stable_baselines3.common.callbacks import BaseCallback, CallbackList


class Logger:
    def __init__(self):
        self.name_to_value = {}
        self.dumps = []

    def record(self, key, value):
        self.name_to_value[key] = value

    def dump(self, step=0):
        self.dumps.append((step, dict(self.name_to_value)))
        self.name_to_value.clear()


class PPO:
    """n_envs environments whose episodes last episode_len steps with reward 1 per step."""

    def __init__(self, policy, env, learning_rate=3e-4, n_steps=8, clip_range=0.2, episode_len=5, n_envs=2):
        self.env, self.learning_rate, self.n_steps, self.clip_range = env, learning_rate, n_steps, clip_range
        self.episode_len, self.n_envs = episode_len, n_envs
        self.num_timesteps = 0
        self.logger = Logger()
        self._ep_t = [0] * n_envs
        self.updates = 0

    def _setup_learn(self, total_timesteps, callback, reset_num_timesteps):
        if reset_num_timesteps:
            self.num_timesteps = 0
        else:
            total_timesteps += self.num_timesteps
        if isinstance(callback, list):
            callback = CallbackList(callback)
        callback.init_callback(self)
        return total_timesteps, callback

    def collect_rollouts(self, callback):
        callback.on_rollout_start()
        for _ in range(self.n_steps):
            infos = []
            for i in range(self.n_envs):
                self._ep_t[i] += 1
                if self._ep_t[i] == self.episode_len:
                    infos.append({"episode": {"r": float(self.episode_len), "l": self.episode_len, "t": 0.0}})
                    self._ep_t[i] = 0
                else:
                    infos.append({})
            self.num_timesteps += self.n_envs
            callback.update_locals(locals())
            if not callback.on_step():
                return False
        callback.on_rollout_end()
        return True

    def train(self):
        self.updates += 1
        self.logger.record("train/value_loss", 1.0 / self.updates)
        self.logger.record("train/policy_gradient_loss", -0.01)
        self.logger.record("train/entropy_loss", -0.69)
        self.logger.record("train/approx_kl", 0.01)
        self.logger.record("train/clip_range", self.clip_range)
        self.logger.record("train/learning_rate", self.learning_rate)
        self.logger.record("train/n_updates", self.updates)

    def learn(self, total_timesteps, callback=None, log_interval=1, reset_num_timesteps=True):
        total_timesteps, callback = self._setup_learn(total_timesteps, callback, reset_num_timesteps)
        callback.on_training_start(locals(), globals())
        iteration = 0
        while self.num_timesteps < total_timesteps:
            if not self.collect_rollouts(callback):
                break
            iteration += 1
            self.logger.record("time/iterations", iteration)
            self.logger.record("time/fps", 1000)
            self.logger.dump(self.num_timesteps)
            self.train()
        callback.on_training_end()
        return self

    def save(self, path):
        if not str(path).endswith(".zip"):
            path = str(path) + ".zip"
        with open(path, "w") as f:
            json.dump({"num_timesteps": self.num_timesteps, "learning_rate": self.learning_rate,
                       "clip_range": self.clip_range, "updates": self.updates}, f)

    @classmethod
    def load(cls, path, env=None, custom_objects=None):
        with open(path) as f:
            state = json.load(f)
        model = cls("MlpPolicy", env, learning_rate=state["learning_rate"], clip_range=state["clip_range"])
        for k, v in (custom_objects or {}).items():
            setattr(model, k, v)
        model.num_timesteps, model.updates = state["num_timesteps"], state["updates"]
        model.loaded_from = path
        return model
