"""The learner: one PPO iteration is collect (rollout.py) → GAE (gae.py) → update (update.py), and
the metrics of DESIGN §4. Its whole state — parameters, Adam's moments, the generators, the environments
mid-episode, the normalisers, the counters — is one dict for checkpoints (rlsweep.checkpoint), so a resumed run
continues bit for bit on the same device.
"""

import dataclasses
import time

import torch

from bugs import Bug
from gae import gae
from model import ActorCritic
from rollout import Collector
from update import batch_stats, update

CHECKPOINT_FORMAT = 1

# Fields that fix the shapes of what a checkpoint holds: resuming with other values is an error.
# Other hyperparameters may differ (with a warning), e.g. to continue with a smaller learning rate.
SHAPE_FIELDS = ("num_envs", "num_steps", "hidden", "norm_obs", "norm_reward")

# Canonical metric names (diagnostics/record.go), in the order rlsweep's reports show them.
CANONICAL = ("reward", "episode_length", "value_loss", "policy_loss", "entropy", "action_std", "action_std_min",
             "approx_kl", "clip_fraction", "explained_variance", "grad_norm", "learning_rate", "fps",
             "advantage_mean", "advantage_std", "advantage_abs_max")


class PPO:
    """PPO on a vectorised environment (envs.py).

    Randomness: the network's initialisation draws from torch's global generator seeded with seed;
    everything after it — action sampling and minibatch shuffling — from self.rng, and the
    environments from their own generator. Both generators are in checkpoints.
    """

    def __init__(self, cfg, env, device, seed, total_steps, bug=Bug.NONE):
        self.cfg, self.env, self.device, self.seed = cfg, env, torch.device(device), seed
        self.total_steps, self.bug = total_steps, bug
        torch.manual_seed(seed)
        self.agent = ActorCritic(env, cfg.hidden, cfg.norm_obs, cfg.clip_obs, cfg.init_log_std, cfg.std_min)
        self.agent.to(self.device)
        self.optimizer = torch.optim.Adam(self.agent.parameters(), lr=cfg.lr, eps=1e-5, foreach=True)
        self.rng = torch.Generator(device=self.device)
        self.rng.manual_seed(seed)
        # no-discount (test aid): GAE and the truncation bootstrap use γ = 1.
        self.gamma = 1.0 if bug == Bug.NO_DISCOUNT else cfg.gamma
        self.collector = Collector(env, self.agent, cfg, self.gamma, self.rng)
        self.step, self.iteration = 0, 0

    def learning_rate(self):
        """The learning rate of the next iteration: linear decay to 0 over total_steps when annealed."""
        if not self.cfg.anneal_lr:
            return self.cfg.lr
        return self.cfg.lr * max(0.0, 1.0 - self.step / self.total_steps)

    def iterate(self):
        """Runs one iteration and returns its metrics: canonical names first, then custom keys."""
        start = time.perf_counter()
        lr = self.learning_rate()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        ro = self.collector.collect()
        adv, ret = gae(ro.rewards, ro.values, ro.dones, ro.last_value, self.gamma, self.cfg.gae_lambda)
        batch = {"x": ro.obs, "actions": ro.actions, "logp": ro.logp, "values": ro.values,
                 "advantages": adv, "returns": ret}
        batch = {k: v.reshape(-1, *v.shape[2:]) for k, v in batch.items()}
        stats = batch_stats(batch["advantages"], batch["values"], batch["returns"])
        upd = update(self.agent, self.optimizer, batch, self.cfg, self.rng, self.bug)
        self.step += self.cfg.num_envs * self.cfg.num_steps
        self.iteration += 1
        values = {**upd, **stats, "learning_rate": lr}
        episodes = self.collector.episodes.means()
        if episodes is not None:  # left out until an episode has finished
            values["reward"], values["episode_length"] = episodes
        if not self.env.discrete:  # a categorical policy has no σ: a made-up 0 would trip std_nonpositive
            std = self.agent.std().detach()
            values["action_std"], values["action_std_min"] = std.mean().item(), std.min().item()
            values["action_std_clamped"] = float((self.agent.log_std < self.agent.log_std_min).sum().item())
        values["fps"] = self.cfg.num_envs * self.cfg.num_steps / (time.perf_counter() - start)
        values["iteration"] = float(self.iteration)
        values["episodes"] = float(len(self.collector.episodes.window))
        return {k: values[k] for k in CANONICAL if k in values} | {k: v for k, v in values.items() if k not in CANONICAL}

    def state_dict(self):
        return {
            "format": CHECKPOINT_FORMAT,
            "config": dataclasses.asdict(self.cfg),
            "device": self.device.type,
            "step": self.step,
            "iteration": self.iteration,
            "agent": self.agent.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": self.rng.get_state(),
            "collector": self.collector.state_dict(),
        }

    def load_state_dict(self, d):
        """Restores a checkpoint of a learner with the same environment and shapes. Moved to another
        device type (a GPU run resumed on a CPU), it continues, but not bit for bit: the generators are
        reseeded from the seed and the step. Returns the warnings to print."""
        if d.get("format") != CHECKPOINT_FORMAT:
            raise ValueError("checkpoint format: got %r, want %d" % (d.get("format"), CHECKPOINT_FORMAT))
        now, warnings = dataclasses.asdict(self.cfg), []
        bad = ["%s: checkpoint %r, now %r" % (k, d["config"][k], now[k]) for k in SHAPE_FIELDS if d["config"][k] != now[k]]
        if bad:
            raise ValueError("checkpoint does not fit this configuration: " + "; ".join(bad))
        warnings += ["%s: checkpoint %r, now %r" % (k, v, now[k]) for k, v in d["config"].items() if v != now[k]]
        self.agent.load_state_dict(d["agent"])
        self.optimizer.load_state_dict(d["optimizer"])
        collector = d["collector"]
        if d["device"] == self.device.type:
            self.rng.set_state(d["rng"])
        else:
            warnings.append("checkpoint from %s resumed on %s: generators reseeded" % (d["device"], self.device.type))
            self.rng.manual_seed(self.seed + d["step"])
            self.env.rng.manual_seed(self.seed + d["step"] + 1)
            collector = {**collector, "env": {k: v for k, v in collector["env"].items() if k != "rng"}}
        self.collector.load_state_dict(collector)
        self.step, self.iteration = d["step"], d["iteration"]
        return warnings
