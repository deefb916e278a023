#!/usr/bin/python3
"""Throughput of the whole training loop (rollout, GAE, update): environment steps per second of wall
clock and per CPU-second of this process, after one warm-up iteration. docs/BENCHMARKS.md records them.

    /usr/bin/python3 examples/torch-ppo/bench.py                       # CPU: the default configurations
    /usr/bin/python3 examples/torch-ppo/bench.py --device cuda --wide  # a GPU: adds 64 and 1024 envs
"""

import argparse
import dataclasses
import time

import torch

import config
import envs
from ppo import PPO


def cases(wide):
    cp, pd = config.cleanrl(), config.continuous()
    out = [("CartPole-v1", "CleanRL defaults: 4 envs x 128 steps, 4 x 4 minibatches", cp, 8),
           ("CartPole-v1", "64 envs x 128 steps, 4 x 4 minibatches of 2048", dataclasses.replace(cp, num_envs=64), 2),
           ("Pendulum-v1", "defaults: 4 envs x 1024 steps, 10 x 16 minibatches of 256", pd, 2)]
    if wide:
        out += [("CartPole-v1", "1024 envs x 128 steps, 4 x 4 minibatches", dataclasses.replace(cp, num_envs=1024), 2),
                ("Pendulum-v1", "1024 envs x 64 steps, 10 x 16 minibatches", dataclasses.replace(pd, num_envs=1024, num_steps=64), 2)]
    return out


def measure(env_name, cfg, iterations, device):
    learner = PPO(cfg, envs.make(env_name, cfg.num_envs, device, 2), device, 1, total_steps=10**9)
    learner.iterate()  # warm-up: allocator, lazy initialisation, CUDA kernels
    sync(device)
    wall, cpu, step = time.perf_counter(), time.process_time(), learner.step
    for _ in range(iterations):
        learner.iterate()
    sync(device)
    steps = learner.step - step
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--wide", action="store_true", help="add 1024-env cases (for GPUs)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu, %d torch thread(s)" % args.threads
    print("torch %s on %s" % (torch.__version__, name))
    print("| env | configuration | steps/s (wall) | steps/cpu-s |")
    print("|---|---|---|---|")
    for env_name, what, cfg, iterations in cases(args.wide):
        wall, cpu = measure(env_name, cfg, iterations, device)
        print("| %s | %s | %.0f | %.0f |" % (env_name, what, wall, cpu), flush=True)


if __name__ == "__main__":
    main()
