"""Collecting experience: num_steps steps of every environment with the current policy.

What carries over from one rollout to the next (and so into checkpoints): the environments and
their current observations, the per-env episode accumulators and the window of finished episodes
behind the reward metric, and the reward scaler's statistics.
"""

from collections import deque
from dataclasses import dataclass

import torch

from model import RunningMeanStd

EPISODE_WINDOW = 100  # the reward and episode_length metrics are means over this many episodes


@dataclass
class Rollout:
    """One iteration's experience, [T, N, ...] tensors on the device (T = num_steps, N = num_envs)."""

    obs: torch.Tensor  # normalised observations, the policy's inputs
    actions: torch.Tensor
    logp: torch.Tensor  # log π_old(action | obs)
    values: torch.Tensor  # V_old(obs)
    rewards: torch.Tensor  # as trained on: scaled when norm_reward, plus γ·V(final obs) on truncation
    dones: torch.Tensor  # the episode ended with this step (terminated or truncated)
    last_value: torch.Tensor  # [N]: V of the observation after the last step


class Episodes:
    """Per-env return and length of the episodes in progress, and the last finished ones (raw rewards)."""

    def __init__(self, num_envs, device):
        self.ret = torch.zeros(num_envs, dtype=torch.float64, device=device)
        self.len = torch.zeros(num_envs, dtype=torch.long, device=device)
        self.window = deque(maxlen=EPISODE_WINDOW)  # (return, length) pairs

    def add(self, reward, done):
        self.ret += reward
        self.len += 1
        if done.any():
            for r, n in zip(self.ret[done].tolist(), self.len[done].tolist()):
                self.window.append((r, n))
            self.ret[done] = 0
            self.len[done] = 0

    def means(self):
        """(mean return, mean length) over the window; None when no episode has finished."""
        if not self.window:
            return None
        n = len(self.window)
        return sum(r for r, _ in self.window) / n, sum(k for _, k in self.window) / n

    def state_dict(self):
        return {"ret": self.ret, "len": self.len, "window": list(self.window)}

    def load_state_dict(self, d):
        self.ret.copy_(d["ret"])
        self.len.copy_(d["len"])
        self.window = deque(d["window"], maxlen=EPISODE_WINDOW)


class RewardScaler:
    """Gymnasium's NormalizeReward: rewards divided by the running std of the discounted return,
    then clipped to ±clip. The value function then learns scaled returns."""

    def __init__(self, num_envs, gamma, clip, device):
        self.gamma, self.clip = gamma, clip
        self.acc = torch.zeros(num_envs, dtype=torch.float64, device=device)
        self.rms = RunningMeanStd(())
        self.rms.to(device)

    def __call__(self, reward, done):
        self.acc = self.acc * self.gamma + reward.double()
        self.rms.update(self.acc)
        self.acc[done] = 0
        scaled = reward.double() / torch.sqrt(self.rms.var + 1e-8)
        return scaled.clamp(-self.clip, self.clip).float()

    def state_dict(self):
        return {"acc": self.acc, "rms": self.rms.state_dict()}

    def load_state_dict(self, d):
        self.acc.copy_(d["acc"])
        self.rms.load_state_dict(d["rms"])


class Collector:
    """Runs the policy in the environments and returns Rollouts."""

    def __init__(self, env, agent, cfg, gamma, rng):
        self.env, self.agent, self.cfg, self.gamma, self.rng = env, agent, cfg, gamma, rng
        self.obs = env.reset()
        self.agent.obs_norm.update(self.obs)
        self.episodes = Episodes(env.num_envs, env.device)
        self.scaler = RewardScaler(env.num_envs, cfg.gamma, cfg.clip_reward, env.device) if cfg.norm_reward else None

    @torch.no_grad()
    def collect(self):
        T, N, dev = self.cfg.num_steps, self.env.num_envs, self.env.device
        obs = torch.zeros(T, N, self.env.obs_dim, device=dev)
        act_shape = (T, N) if self.env.discrete else (T, N, self.env.act_dim)
        actions = torch.zeros(act_shape, dtype=torch.long if self.env.discrete else torch.float32, device=dev)
        logp, values, rewards = (torch.zeros(T, N, device=dev) for _ in range(3))
        dones = torch.zeros(T, N, dtype=torch.bool, device=dev)
        norm, agent = self.agent.obs_norm, self.agent
        for t in range(T):
            obs[t] = norm(self.obs)
            actions[t], logp[t], values[t] = agent.act(obs[t], self.rng)
            self.obs, reward, terminated, truncated, final_obs = self.env.step(actions[t])
            done = terminated | truncated
            self.episodes.add(reward, done)
            rewards[t] = self.scaler(reward, done) if self.scaler else reward
            if truncated.any():
                # A truncated episode did not end in a terminal state: its last reward is bootstrapped
                # with the value of the state it was cut in. A terminated one is not (its value is 0).
                rewards[t] += self.gamma * agent.value(norm(final_obs)) * truncated
            dones[t] = done
            norm.update(self.obs)
        return Rollout(obs, actions, logp, values, rewards, dones, agent.value(norm(self.obs)))

    def state_dict(self):
        d = {"env": self.env.state_dict(), "obs": self.obs, "episodes": self.episodes.state_dict()}
        if self.scaler:
            d["scaler"] = self.scaler.state_dict()
        return d

    def load_state_dict(self, d):
        self.env.load_state_dict(d["env"])
        self.obs = d["obs"].to(self.env.device)
        self.episodes.load_state_dict(d["episodes"])
        if self.scaler:
            self.scaler.load_state_dict(d["scaler"])
