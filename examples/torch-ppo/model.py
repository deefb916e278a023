"""The actor-critic: separate actor and critic MLPs, a categorical or a Gaussian policy, and the
running observation normaliser that turns raw observations into their inputs.

Initialisation as CleanRL's ppo.py: orthogonal weights with gain √2 on hidden layers, 0.01 on the
policy head, 1 on the value head; zero biases. A Gaussian policy has a state-independent log σ,
floored at std_min (torch.clamp: no gradient through the floor).
"""

import math

import torch
from torch import nn
from torch.distributions import Categorical, Distribution, Normal

# The distributions are built from the network's outputs every step: argument validation would cost a
# fifth of a small CPU run and only re-check what the network guarantees.
Distribution.set_default_validate_args(False)


class RunningMeanStd(nn.Module):
    """Gymnasium's RunningMeanStd (count starts at 1e-4, mean 0, variance 1; Chan et al.'s parallel
    update), kept as buffers so it is part of the model's state_dict and checkpoint."""

    def __init__(self, shape):
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(1e-4, dtype=torch.float64))

    @torch.no_grad()
    def update(self, x):
        x = x.double().reshape(-1, *self.mean.shape)
        n = x.shape[0]
        mean, var = x.mean(0), x.var(0, unbiased=False)
        delta, tot = mean - self.mean, self.count + n
        m2 = self.var * self.count + var * n + delta**2 * self.count * n / tot
        self.mean += delta * n / tot
        self.var.copy_(m2 / tot)
        self.count.fill_(tot.item())


class ObsNormalizer(nn.Module):
    """clip((x − mean) / √(var + 1e-8), ±clip) with running statistics; the identity when disabled."""

    def __init__(self, obs_dim, enabled, clip):
        super().__init__()
        self.enabled, self.clip = enabled, clip
        self.rms = RunningMeanStd((obs_dim,))

    def forward(self, x):
        if not self.enabled:
            return x
        z = (x.double() - self.rms.mean) / torch.sqrt(self.rms.var + 1e-8)
        return z.clamp(-self.clip, self.clip).float()

    def update(self, x):
        if self.enabled:
            self.rms.update(x)


def mlp(inp, hidden, out, out_gain):
    layers, size = [], inp
    for h in hidden:
        layers += [layer(size, h, math.sqrt(2)), nn.Tanh()]
        size = h
    layers.append(layer(size, out, out_gain))
    return nn.Sequential(*layers)


def layer(inp, out, gain):
    lin = nn.Linear(inp, out)
    nn.init.orthogonal_(lin.weight, gain)
    nn.init.zeros_(lin.bias)
    return lin


class ActorCritic(nn.Module):
    """π(·|x) and V(x) of normalised observations x = agent.obs_norm(obs). The rollout stores x, as a
    Gymnasium NormalizeObservation wrapper would hand it to the agent, so the update sees exactly the
    inputs the actions were sampled from.

    Discrete: the actor outputs n_actions logits. Continuous: the actor outputs the mean μ and the
    policy is N(μ, σ²) with σ = max(exp(log_std), std_min) per action dimension, unbounded (the
    environment clips the action; the log-probability is of the unclipped sample).
    """

    def __init__(self, env, hidden, norm_obs, clip_obs, init_log_std, std_min):
        super().__init__()
        self.discrete = env.discrete
        out = env.n_actions if self.discrete else env.act_dim
        self.obs_norm = ObsNormalizer(env.obs_dim, norm_obs, clip_obs)
        self.critic = mlp(env.obs_dim, hidden, 1, out_gain=1.0)
        self.actor = mlp(env.obs_dim, hidden, out, out_gain=0.01)
        if not self.discrete:
            self.log_std = nn.Parameter(torch.full((out,), float(init_log_std)))
            self.log_std_min = math.log(std_min)

    def value(self, x):
        """V(x), [N]."""
        return self.critic(x).squeeze(-1)

    def std(self):
        """σ per action dimension (Gaussian policies)."""
        return self.log_std.clamp(min=self.log_std_min).exp()

    def dist(self, x):
        """π(·|x)."""
        out = self.actor(x)
        if self.discrete:
            return Categorical(logits=out)
        return Normal(out, self.std().expand_as(out))

    @torch.no_grad()
    def act(self, x, rng):
        """Samples one action per row with the generator rng; returns (action, log π(action|x), V(x))."""
        d = self.dist(x)
        if self.discrete:
            action = torch.multinomial(d.probs, 1, generator=rng).squeeze(-1)
            logp = d.log_prob(action)
        else:
            noise = torch.randn(d.mean.shape, generator=rng, device=d.mean.device, dtype=d.mean.dtype)
            action = d.mean + d.stddev * noise
            logp = d.log_prob(action).sum(-1)
        return action, logp, self.value(x)

    def evaluate(self, x, actions):
        """log π(actions|x), the policy's entropy and V(x), each [N], with gradients."""
        d = self.dist(x)
        if self.discrete:
            return d.log_prob(actions), d.entropy(), self.value(x)
        return d.log_prob(actions).sum(-1), d.entropy().sum(-1), self.value(x)
