"""The training loop under rlsweep's trainer contract: resume, iterate to RLSWEEP_STOP_AT_STEP (or a
SIGTERM), one metrics record per iteration, then checkpoint and exit 0, each through the rlsweep package
(docs/trainer-contract.md says what each variable means).
"""

import os
import sys
import time

import torch

import envs
import rlsweep
from bugs import Bug
from ppo import PPO

DEFAULT_STEPS = 500_000
ENV_SEED_OFFSET = 1_000_003  # the environments draw from a generator of their own, seeded apart


def run(p, args, cfg, seg):
    """Trains one segment (seg: an rlsweep.Segment) with the hyperparameters cfg; p reports bad input
    (exit 2, naming the flag)."""
    seed = first(args.seed, seg.seed, 1)
    total = first(args.steps, seg.total_steps, DEFAULT_STEPS)
    stop_at = first(seg.stop_at, total)
    if total <= 0:
        p.error("--steps: got %d, want > 0" % total)
    device = pick_device(p, args.device)
    torch.set_num_threads(args.threads)

    env = envs.make(args.env, cfg.num_envs, device, seed + ENV_SEED_OFFSET)
    learner = PPO(cfg, env, device, seed, total, Bug(args.inject_bug))
    if seg.resume_from:
        try:
            # weights_only=False: the checkpoint holds plain Python numbers besides tensors, which torch
            # 1.13's restricted unpickler refuses; it is this trainer's own file from the sweep's store.
            warnings = learner.load_state_dict(torch.load(seg.resume_from, map_location="cpu", weights_only=False))
        except ValueError as e:
            log("resume from %s: %s" % (seg.resume_from, e))
            return 1
        for w in warnings:
            log("resume: " + w)
        log("resumed from %s at step %d" % (seg.resume_from, learner.step))
    log("%s on %s, seed %d, steps %d → %d of %d; %s" % (args.env, device, seed, learner.step, stop_at, total, cfg))

    start_step = learner.step
    train(learner, stop_at, args.checkpoint_every, seg)
    # A resumed run that had nothing left to do has nothing new to save: its checkpoint is the one it
    # resumed from, and announcing another at the same step would repeat that step in the metrics.
    if learner.step > start_step or not seg.resume_from:
        checkpoint(learner)
    log("%s at step %d" % ("stopped by " + seg.stop_signal if seg.stop_signal else "done", learner.step))
    return 0


def train(learner, stop_at, checkpoint_every, seg):
    """Iterates until stop_at or rlsweep's stop signal (seg.stop_signal), one metrics record per
    iteration."""
    progress = Progress(stop_at)
    begin, begin_step = time.perf_counter(), learner.step
    while learner.step < stop_at and seg.stop_signal is None:
        before = learner.step
        values = learner.iterate()
        values["steps_per_second"] = (learner.step - begin_step) / (time.perf_counter() - begin)
        rlsweep.log(learner.step, **values)
        progress.report(learner.step, values)
        if checkpoint_every and learner.step // checkpoint_every > before // checkpoint_every and learner.step < stop_at:
            checkpoint(learner)


def checkpoint(learner):
    """Saves the learner's whole state atomically, then announces it (a record with only step and
    checkpoint); nothing outside a sweep."""
    state = learner.state_dict()
    name = rlsweep.checkpoint(learner.step, lambda path: torch.save(state, path))
    if name:
        log("checkpoint %s" % name)


def pick_device(p, choice):
    """auto: CUDA when torch sees a GPU (the worker's CUDA_VISIBLE_DEVICES decides which), else CPU."""
    if choice == "cuda" and not torch.cuda.is_available():
        p.error("--device: got cuda, but torch %s sees no CUDA device (CUDA_VISIBLE_DEVICES=%r); want auto or cpu"
                % (torch.__version__, os.environ.get("CUDA_VISIBLE_DEVICES")))
    if choice == "auto":
        choice = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(choice)


def first(*values):
    """The first value that is not None."""
    return next(v for v in values if v is not None)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Progress:
    """A readable line on stderr (the trial's log) at most once a second."""

    def __init__(self, total):
        self.total, self.last = total, 0.0

    def report(self, step, m):
        if time.monotonic() - self.last < 1.0:
            return
        self.last = time.monotonic()
        reward = "%8.1f" % m["reward"] if "reward" in m else "     n/a"
        log("step %8d/%d  reward %s  value_loss %8.3g  entropy %7.3f  kl %7.4f  clip %5.3f  ev %6.3f  %6.0f steps/s"
            % (step, self.total, reward, m["value_loss"], m["entropy"], m["approx_kl"], m["clip_fraction"],
               m["explained_variance"], m["steps_per_second"]))
