"""Hyperparameters and the command line.

The hyperparameter names are the built-in trainer's parameter keys (docs/ppo.md), with the same
defaults per environment, so a sweep parameter means the same thing for both. Each is a flag, spelt
with dashes or underscores (--num-envs or --num_envs), so a sweep spec templates them straight in:

    command: [/usr/bin/python3, .../train.py, --env={{.Env}}, --lr={{.Params.lr}}, --clip={{.Params.clip}}]

Flags left out keep the environment's default. Seed and budget default to the contract's
RLSWEEP_SEED and RLSWEEP_TOTAL_STEPS.
"""

import argparse
import dataclasses
from dataclasses import dataclass

from bugs import NAMES as BUG_NAMES

# The environments (envs.py) and whether each has a discrete action space (a categorical policy).
DISCRETE = {"CartPole-v1": True, "Pendulum-v1": False}
ENV_NAMES = tuple(DISCRETE)


@dataclass
class Config:
    lr: float = 2.5e-4  # Adam learning rate (ε = 1e-5); the initial value when annealed
    anneal_lr: bool = True  # decay linearly to 0 over the trial's total steps
    clip: float = 0.2  # surrogate (and value) clip range
    num_envs: int = 4
    num_steps: int = 128  # steps per environment per iteration
    epochs: int = 4
    minibatches: int = 4  # per epoch; must divide num_envs × num_steps
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    gamma: float = 0.99
    gae_lambda: float = 0.95
    max_grad_norm: float = 0.5
    hidden: tuple = (64, 64)  # hidden layers of both actor and critic (tanh)
    target_kl: float = 0.0  # stop the update at the first minibatch whose approx KL exceeds it; 0 off
    norm_adv: bool = True  # per-minibatch advantage normalisation
    clip_vloss: bool = True  # CleanRL's clipped value loss
    norm_obs: bool = False  # running mean/std observation normalisation
    clip_obs: float = 10.0
    norm_reward: bool = False  # rewards divided by the running std of the discounted return
    clip_reward: float = 10.0
    init_log_std: float = 0.0  # Gaussian policies: initial log σ
    std_min: float = 1e-3  # Gaussian policies: floor of σ


def cleanrl():
    """CleanRL ppo.py's defaults, for discrete actions (CartPole-v1)."""
    return Config()


def continuous():
    """The built-in trainer's defaults for continuous actions, tuned for Pendulum-v1 (docs/ppo.md)."""
    return dataclasses.replace(Config(), lr=1e-3, num_steps=1024, epochs=10, minibatches=16, ent_coef=0.0,
                               gamma=0.95, clip_vloss=False, norm_obs=True, norm_reward=True)


def defaults(discrete):
    return cleanrl() if discrete else continuous()


def probe_config(discrete, gamma):
    """The configuration probes train with, as the built-in trainer's (docs/probes.md): the defaults of
    the action space with the probe's γ, no reward normalisation (it would rescale the values being
    judged), a constant learning rate of 1e-3 and batches of 256 in 4 minibatches, so each probe gets
    many updates. The batch is 16 envs × 16 steps where the built-in takes 4 × 64: the same samples
    with a quarter of the policy calls, which cost Python overhead here. The sweep's own
    hyperparameters are not used: the probes check the implementation, not a configuration."""
    return dataclasses.replace(defaults(discrete), gamma=gamma, norm_reward=False, anneal_lr=False, lr=1e-3,
                               num_envs=16, num_steps=16, minibatches=4)


def parse_bool(s):
    v = s.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError("got %r, want true or false" % s)


def parse_hidden(s):
    try:
        sizes = tuple(int(x) for x in s.replace(" ", "").split(",") if x)
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError("got %r, want positive layer sizes separated by commas, e.g. 64,64" % s)
    return sizes


def parser():
    p = argparse.ArgumentParser(
        prog="train.py",
        description="PPO in PyTorch speaking rlsweep's trainer contract (DESIGN §4) and probe protocol.")
    p.add_argument("--env", default="CartPole-v1", choices=ENV_NAMES)
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="auto: CUDA when available (CUDA_VISIBLE_DEVICES as the worker sets it), else CPU")
    p.add_argument("--seed", type=int, default=None, help="default: RLSWEEP_SEED, else 1")
    p.add_argument("--steps", type=int, default=None,
                   help="total environment steps (default: RLSWEEP_TOTAL_STEPS, else 500000)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1: the nets are small, and trials share the machine)")
    p.add_argument("--checkpoint-every", type=int, default=0, metavar="STEPS",
                   help="also checkpoint every STEPS environment steps (default 0: only at the end of a "
                        "segment and on SIGTERM)")
    p.add_argument("--inject-bug", default="", choices=[""] + BUG_NAMES,
                   help="test aid: break the trainer on purpose, so the probes can be shown to catch it")
    hp = p.add_argument_group("hyperparameters (defaults: CartPole-v1 / Pendulum-v1)")
    parse = {float: float, int: int, bool: parse_bool, tuple: parse_hidden}
    metavar = {float: "X", int: "N", bool: "BOOL", tuple: "N,N"}
    for f in dataclasses.fields(Config):
        names = ["--" + f.name.replace("_", "-")]
        if "_" in f.name:
            names.append("--" + f.name)
        hp.add_argument(*names, dest=f.name, type=parse[f.type], metavar=metavar[f.type], default=None,
                        help="default %s / %s" % (_show(getattr(cleanrl(), f.name)), _show(getattr(continuous(), f.name))))
    return p


def _show(v):
    return ",".join(map(str, v)) if isinstance(v, tuple) else str(v)


def resolve(args, base):
    """base with every hyperparameter flag that was given; a list of problems as `--flag: got X, want Y`."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(Config) if getattr(args, f.name) is not None}
    cfg = dataclasses.replace(base, **given)
    return cfg, validate(cfg)


def validate(cfg):
    problems = []

    def want(ok, name, what):
        if not ok:
            problems.append("--%s: got %s, want %s" % (name.replace("_", "-"), getattr(cfg, name), what))

    for name in ("lr", "clip", "max_grad_norm", "clip_obs", "clip_reward", "std_min"):
        want(getattr(cfg, name) > 0, name, "> 0")
    for name in ("num_envs", "num_steps", "epochs", "minibatches"):
        want(getattr(cfg, name) >= 1, name, ">= 1")
    for name in ("gamma", "gae_lambda"):
        want(0 <= getattr(cfg, name) <= 1, name, "in [0, 1]")
    for name in ("ent_coef", "vf_coef", "target_kl"):
        want(getattr(cfg, name) >= 0, name, ">= 0")
    batch = cfg.num_envs * cfg.num_steps
    if cfg.minibatches >= 1 and batch % cfg.minibatches:
        problems.append("--minibatches: got %d, want a divisor of num_envs × num_steps = %d" % (cfg.minibatches, batch))
    return problems
