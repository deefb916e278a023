#!/usr/bin/python3
"""PPO in PyTorch for rlsweep: CartPole-v1 and Pendulum-v1, CUDA when available, speaking the trainer
contract (DESIGN §4) and the probe protocol (docs/probes.md). See README.md.

    /usr/bin/python3 train.py --env CartPole-v1 --steps 100000 --lr 1e-3     # standalone: progress on stderr

Where things are: flags and hyperparameters in config.py, the contract's I/O in contract.py, the
training loop in training.py, the probe protocol in probe.py; PPO itself in ppo.py (one iteration and
the checkpointed state), model.py (the network), rollout.py (collecting experience), gae.py and
update.py (the clipped-surrogate update), and the environments in envs.py.
"""

import sys

import config
from contract import Contract

EXIT_UNSUPPORTED = 3  # the probe protocol's "this trainer does not have that action space" (rlsweep_probe.py)


def main(argv=None):
    p = config.parser()
    args = p.parse_args(argv)
    try:
        contract = Contract.from_environ()
    except ValueError as e:
        p.error(str(e))
    # torch is imported only past the cheap checks: it takes seconds, and half of a sweep's probe runs
    # are declined (a categorical policy skips the Gaussian ladder and vice versa).
    if contract.probe:
        if config.DISCRETE[args.env] == contract.probe.endswith("c"):
            space = "discrete" if config.DISCRETE[args.env] else "continuous"
            print("probe %s: declined, %s has a %s action space" % (contract.probe, args.env, space), file=sys.stderr)
            return EXIT_UNSUPPORTED
        import probe

        return probe.run(args, contract)
    cfg, problems = config.resolve(args, config.defaults(config.DISCRETE[args.env]))
    if problems:
        p.error("; ".join(problems))
    import training

    return training.run(p, args, cfg, contract)


if __name__ == "__main__":
    sys.exit(main())
