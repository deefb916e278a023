#!/usr/bin/python3
"""PPO in PyTorch for rlsweep: CartPole-v1 and Pendulum-v1, CUDA when available, speaking the trainer
contract (DESIGN §4) and the probe protocol (docs/probes.md). See README.md.

    /usr/bin/python3 train.py --env CartPole-v1 --steps 100000 --lr 1e-3     # standalone: progress on stderr

Where things are: flags and hyperparameters in config.py, the contract's I/O in the rlsweep package
(python/rlsweep in this repository, found from here), the training loop in training.py, the probe protocol in probe.py; PPO itself in ppo.py (one iteration and
the checkpointed state), model.py (the network), rollout.py (collecting experience), gae.py and
update.py (the clipped-surrogate update), and the environments in envs.py.
"""

import os
import sys

# The rlsweep package of this checkout (python/rlsweep), before any installed copy.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import config  # noqa: E402
import rlsweep  # noqa: E402


def main(argv=None):
    p = config.parser()
    args = p.parse_args(argv)
    # torch is imported only past the cheap checks: it takes seconds, and half of a sweep's probe runs
    # are declined (exit 3: a categorical policy skips the Gaussian ladder and vice versa).
    try:
        pr = rlsweep.probe("discrete" if config.DISCRETE[args.env] else "continuous")
        seg = None if pr else rlsweep.Segment()
    except ValueError as e:
        p.error(str(e))
    if pr:
        import probe

        return probe.run(args, pr)
    cfg, problems = config.resolve(args, config.defaults(config.DISCRETE[args.env]))
    if problems:
        p.error("; ".join(problems))
    import training

    return training.run(p, args, cfg, seg)


if __name__ == "__main__":
    sys.exit(main())
