"""CartPole-v1 and Pendulum-v1 vectorised in torch, with Gymnasium's semantics, and the probe
environments of the rlsweep package behind the same interface.

There is no gymnasium here: the two classic-control tasks are ported from Gymnasium's sources
(gymnasium/envs/classic_control/cartpole.py and pendulum.py, the constants, integrators and reset
distributions unchanged) and step num_envs copies at once as tensor operations on the trainer's device.

    env = make("CartPole-v1", num_envs=8, device="cpu", seed=1)
    obs = env.reset()                                              # [N, obs_dim] float32
    obs, reward, terminated, truncated, final_obs = env.step(actions)

Semantics, as Gymnasium 0.29's SyncVectorEnv (and SB3) with the TimeLimit wrapper:

- terminated: the episode reached a terminal state of the MDP (the pole fell). Its value is 0.
- truncated: the time limit (500 CartPole steps, 200 Pendulum steps) cut the episode. The state was
  not terminal: the trainer bootstraps its value. Here truncated is False where terminated is True
  (Gymnasium may report both; a terminal state is never bootstrapped either way).
- same-step autoreset: where an episode ended, obs is the next episode's first observation and
  final_obs the last observation of the episode that ended; elsewhere final_obs equals obs.
- reward on the step that ends an episode belongs to that episode.
"""

import math

import torch


def make(name, num_envs, device, seed):
    """A vectorised environment by Gymnasium name (config.ENV_NAMES)."""
    if name == "CartPole-v1":
        return CartPole(num_envs, device, seed)
    if name == "Pendulum-v1":
        return Pendulum(num_envs, device, seed)
    raise ValueError("--env: got %r, want CartPole-v1 or Pendulum-v1" % name)


class VecEnv:
    """num_envs copies of one task, stepped together; subclasses define the task.

    State is float64 (as Gymnasium's numpy state), observations float32. All randomness comes from
    self.rng, a torch.Generator on the device, saved in checkpoints with the state.
    """

    discrete = True
    n_actions = 0  # discrete: the number of actions
    act_dim = 0  # continuous: the action dimension
    act_low, act_high = None, None
    obs_dim = 0
    state_dim = 0
    max_episode_steps = 0
    reset_low, reset_high = (), ()  # initial states are uniform in [low, high) per state variable

    def __init__(self, num_envs, device, seed):
        self.num_envs, self.device = num_envs, torch.device(device)
        self.rng = torch.Generator(device=self.device)
        self.rng.manual_seed(seed)
        self._low = torch.tensor(self.reset_low, dtype=torch.float64, device=self.device)
        self._high = torch.tensor(self.reset_high, dtype=torch.float64, device=self.device)
        self.state = torch.zeros(num_envs, self.state_dim, dtype=torch.float64, device=self.device)
        self.elapsed = torch.zeros(num_envs, dtype=torch.long, device=self.device)

    def reset(self):
        self.state = self._initial_state(self.num_envs)
        self.elapsed.zero_()
        return self._obs(self.state)

    def step(self, actions):
        self.state, reward, terminated = self._dynamics(self.state, actions)
        self.elapsed += 1
        truncated = (self.elapsed >= self.max_episode_steps) & ~terminated
        final_obs = self._obs(self.state)
        done = terminated | truncated
        # A fresh start is drawn for every env, finished or not: the same draws whatever ends, and no
        # device-to-host sync to count the finished ones.
        fresh = self._initial_state(self.num_envs)
        self.state = torch.where(done[:, None], fresh, self.state)
        self.elapsed = torch.where(done, torch.zeros_like(self.elapsed), self.elapsed)
        obs = torch.where(done[:, None], self._obs(self.state), final_obs)
        return obs, reward.float(), terminated, truncated, final_obs

    def _initial_state(self, n):
        u = torch.rand(n, self.state_dim, generator=self.rng, dtype=torch.float64, device=self.device)
        return self._low + (self._high - self._low) * u

    def state_dict(self):
        return {"state": self.state, "elapsed": self.elapsed, "rng": self.rng.get_state()}

    def load_state_dict(self, d):
        self.state = d["state"].to(self.device)
        self.elapsed = d["elapsed"].to(self.device)
        if "rng" in d:  # absent when resuming on another device type (its generator state does not fit)
            self.rng.set_state(d["rng"])


class CartPole(VecEnv):
    """CartPole-v1: push the cart left (0) or right (1); +1 per step until the pole falls past 12°
    or the cart leaves ±2.4 (terminated), or 500 steps pass (truncated). Euler integration."""

    discrete, n_actions, obs_dim, state_dim, max_episode_steps = True, 2, 4, 4, 500
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold = 12 * 2 * math.pi / 360
    x_threshold = 2.4
    reset_low, reset_high = [-0.05] * 4, [0.05] * 4

    def _obs(self, state):
        return state.float()

    def _dynamics(self, state, actions):
        x, x_dot, theta, theta_dot = state.unbind(1)
        force = torch.where(actions.reshape(-1) == 1, self.force_mag, -self.force_mag).double()
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        cos, sin = torch.cos(theta), torch.sin(theta)
        temp = (force + polemass_length * theta_dot**2 * sin) / total_mass
        thetaacc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos**2 / total_mass))
        xacc = temp - polemass_length * thetaacc * cos / total_mass
        # Gymnasium's "euler": positions move with the old velocities.
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        state = torch.stack([x, x_dot, theta, theta_dot], dim=1)
        terminated = (x.abs() > self.x_threshold) | (theta.abs() > self.theta_threshold)
        return state, torch.ones_like(x), terminated


class Pendulum(VecEnv):
    """Pendulum-v1: swing up and hold a pendulum with a torque in [−2, 2]; reward
    −(θ² + 0.1·θ̇² + 0.001·u²) with θ normalised to [−π, π); never terminates, truncated at 200 steps.
    Semi-implicit Euler: the new, clipped velocity moves the angle."""

    discrete, act_dim, obs_dim, state_dim, max_episode_steps = False, 1, 3, 2, 200
    act_low, act_high = [-2.0], [2.0]
    max_speed, max_torque, dt, g, m, l = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0
    reset_low, reset_high = [-math.pi, -1.0], [math.pi, 1.0]  # θ, θ̇

    def _obs(self, state):
        th, thdot = state.unbind(1)
        return torch.stack([torch.cos(th), torch.sin(th), thdot], dim=1).float()

    def _dynamics(self, state, actions):
        th, thdot = state.unbind(1)
        u = actions.reshape(-1).double().clamp(-self.max_torque, self.max_torque)
        costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2
        thdot = thdot + (3 * self.g / (2 * self.l) * torch.sin(th) + 3.0 / (self.m * self.l**2) * u) * self.dt
        thdot = thdot.clamp(-self.max_speed, self.max_speed)
        th = th + thdot * self.dt
        return torch.stack([th, thdot], dim=1), -costs, torch.zeros_like(th, dtype=torch.bool)


def angle_normalize(x):
    """x wrapped into [−π, π) with Python's floored modulo (torch.remainder), as Gymnasium does."""
    return torch.remainder(x + math.pi, 2 * math.pi) - math.pi


class ProbeVec:
    """num_envs copies of one rlsweep probe (an rlsweep.Probe, RLSWEEP_PROBE), with the VecEnv interface.

    The probes are rlsweep.ProbeEnv objects stepped one by one in Python: they are tiny, and using
    rlsweep's own environments means the trainer is judged on exactly the environment rlsweep defines.
    """

    def __init__(self, probe, num_envs, device, seed):
        self.device = torch.device(device)
        self.envs = [probe.env() for _ in range(num_envs)]
        self.num_envs = num_envs
        self.discrete = probe.discrete
        self.obs_dim = 1
        space = self.envs[0].action_space
        if self.discrete:
            self.n_actions = space.n
        else:
            self.act_dim = 1
            self.act_low, self.act_high = space.low, space.high
        self._seed = seed

    def reset(self):
        obs = [e.reset(seed=self._seed * 1000 + i)[0] for i, e in enumerate(self.envs)]
        return self._tensor(obs)

    def step(self, actions):
        acts = actions.cpu().tolist()
        obs, final, rew, term, trunc = [], [], [], [], []
        for e, a in zip(self.envs, acts):
            o, r, te, tr, _ = e.step(a)
            final.append(o)
            if te or tr:
                o, _ = e.reset()
            obs.append(o), rew.append(r), term.append(te), trunc.append(tr and not te)
        as_bool = lambda x: torch.tensor(x, dtype=torch.bool, device=self.device)  # noqa: E731
        return (self._tensor(obs), torch.tensor(rew, dtype=torch.float32, device=self.device),
                as_bool(term), as_bool(trunc), self._tensor(final))

    def _tensor(self, rows):
        return torch.tensor(rows, dtype=torch.float32, device=self.device)
