"""Tests of the PyTorch example trainer: environment semantics, GAE, bit-identical resume, and the
trainer contract end to end (segments, checkpoints, SIGTERM). Run from this directory:

    /usr/bin/python3 -m unittest -v test_torch_ppo

integration/torch_example_test.go runs them too, then runs the trainer through a real sweep.
"""

import contextlib
import dataclasses
import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import torch

import config
import envs
import train
from gae import gae
from ppo import PPO

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train.py")
TIMING = {"fps", "steps_per_second"}  # wall-clock metrics: the only values allowed to differ between runs


class CartPoleTest(unittest.TestCase):
    def test_time_limit_truncates_and_autoresets(self):
        env = envs.CartPole(3, "cpu", seed=1)
        env.reset()
        env.state.zero_()
        env.elapsed[:] = torch.tensor([10, 499, 499])
        env.state[2, 2] = 0.3  # pole already past 12°: terminal on this step, also the last allowed one
        obs, reward, term, trunc, final = env.step(torch.tensor([1, 1, 1]))
        self.assertEqual(term.tolist(), [False, False, True])
        self.assertEqual(trunc.tolist(), [False, True, False], "truncated only where not terminated")
        self.assertEqual(reward.tolist(), [1.0, 1.0, 1.0])
        self.assertTrue(torch.equal(obs[0], final[0]), "a running episode: final_obs is obs")
        for i in (1, 2):
            self.assertFalse(torch.equal(obs[i], final[i]), "env %d: obs should be the new episode's" % i)
            self.assertLessEqual(obs[i].abs().max().item(), 0.05, "reset draws from U(±0.05)")
        self.assertEqual(env.elapsed.tolist(), [11, 0, 0])
        # Euler: the position moves with the old velocity (0), the velocity with the force.
        self.assertEqual(final[1, 0].item(), 0.0)
        self.assertGreater(final[1, 1].item(), 0.0)

    def test_random_policy_return(self):
        # Reference: trainer/envs in Go, ported from the same Gymnasium source, measures 22.3 (docs/ppo.md);
        # the return's std is about 12, so 2,000+ episodes put the mean within ±1 with room to spare.
        mean, n = random_returns(envs.CartPole(64, "cpu", seed=3), steps=800, discrete=True)
        self.assertGreater(n, 2000)
        self.assertAlmostEqual(mean, 22.3, delta=1.0)


class PendulumTest(unittest.TestCase):
    def test_never_terminates_truncated_at_200(self):
        env = envs.Pendulum(2, "cpu", seed=1)
        env.reset()
        for t in range(200):
            _, reward, term, trunc, _ = env.step(torch.zeros(2, 1))
            self.assertFalse(term.any())
            self.assertEqual(trunc.all().item(), t == 199)
            self.assertTrue((reward <= 0).all() and (reward >= -16.2736044).all(), "reward in [−(π² + 6.4 + 0.004), 0]")

    def test_dynamics_match_gymnasium(self):
        # One hand-computed Gymnasium step from θ = 1, θ̇ = 0.5, u = 3 (clipped to 2):
        # θ̇' = 0.5 + (15 sin 1 + 3·2)·0.05, θ' = 1 + θ̇'·0.05, reward −(1 + 0.1·0.25 + 0.001·4).
        env = envs.Pendulum(1, "cpu", seed=1)
        env.reset()
        env.state[:] = torch.tensor([[1.0, 0.5]], dtype=torch.float64)
        obs, reward, _, _, _ = env.step(torch.tensor([[3.0]]))
        thdot = 0.5 + (15 * math.sin(1.0) + 6.0) * 0.05
        th = 1.0 + thdot * 0.05
        self.assertAlmostEqual(reward.item(), -(1 + 0.025 + 0.004), places=5)
        for got, want in zip(obs[0].tolist(), [math.cos(th), math.sin(th), thdot]):
            self.assertAlmostEqual(got, want, places=5)

    def test_random_policy_return(self):
        # Reference: −1212 for the Go port (docs/ppo.md); returns spread about ±300, so ±60 over 500+ episodes.
        mean, n = random_returns(envs.Pendulum(128, "cpu", seed=3), steps=800, discrete=False)
        self.assertGreaterEqual(n, 500)
        self.assertAlmostEqual(mean, -1212, delta=60)


def random_returns(env, steps, discrete):
    g = torch.Generator().manual_seed(7)
    env.reset()
    ret, done_returns = torch.zeros(env.num_envs, dtype=torch.float64), []
    for _ in range(steps):
        if discrete:
            a = torch.randint(0, 2, (env.num_envs,), generator=g)
        else:
            a = torch.rand(env.num_envs, 1, generator=g) * 4 - 2
        _, r, term, trunc, _ = env.step(a)
        ret += r
        done = term | trunc
        done_returns += ret[done].tolist()
        ret[done] = 0
    return sum(done_returns) / len(done_returns), len(done_returns)


class GAETest(unittest.TestCase):
    def test_hand_computed(self):
        # One env, three steps, the episode ending with step 1: the trace is cut there.
        r = torch.tensor([[1.0], [2.0], [3.0]])
        v = torch.tensor([[0.5], [1.0], [1.5]])
        d = torch.tensor([[False], [True], [False]])
        g, lam, last = 0.9, 0.8, torch.tensor([2.0])
        adv, ret = gae(r, v, d, last, g, lam)
        d2 = 3 + g * 2.0 - 1.5
        d1 = 2 - 1.0  # terminal: no bootstrap from step 2's value
        d0 = 1 + g * 1.0 - 0.5
        want = [d0 + g * lam * d1, d1, d2]
        for got, w in zip(adv[:, 0].tolist(), want):
            self.assertAlmostEqual(got, w, places=6)
        self.assertTrue(torch.allclose(ret, adv + v))


class ResumeTest(unittest.TestCase):
    """A run checkpointed after one iteration and resumed equals a straight run, bit for bit."""

    def check(self, env_name):
        cfg = config.defaults(config.DISCRETE[env_name])
        cfg = dataclasses.replace(cfg, num_envs=4, num_steps=64, minibatches=4, epochs=2)

        def learner():
            return PPO(cfg, envs.make(env_name, cfg.num_envs, "cpu", 11), "cpu", 5, total_steps=1024)

        straight = learner()
        for _ in range(3):
            want = straight.iterate()
        first = learner()
        first.iterate()
        buf = io.BytesIO()
        torch.save(first.state_dict(), buf)
        buf.seek(0)
        resumed = learner()
        self.assertEqual(resumed.load_state_dict(torch.load(buf, map_location="cpu", weights_only=False)), [])
        resumed.iterate()
        got = resumed.iterate()
        self.assertEqual(without(got, TIMING), without(want, TIMING))
        for (name, a), (_, b) in zip(straight.agent.state_dict().items(), resumed.agent.state_dict().items()):
            self.assertTrue(torch.equal(a, b), name)

    def test_cartpole(self):
        self.check("CartPole-v1")

    def test_pendulum(self):
        # Gaussian policy, observation and reward normalisation, truncation bootstraps (200-step episodes).
        self.check("Pendulum-v1")

    def test_other_device_type_reseeds(self):
        # A GPU checkpoint resumed on a CPU: the generator states do not fit, so they are reseeded.
        cfg = dataclasses.replace(config.cleanrl(), num_steps=32)
        a = PPO(cfg, envs.make("CartPole-v1", 4, "cpu", 1), "cpu", 1, total_steps=1024)
        a.iterate()
        state = a.state_dict()
        state["device"] = "cuda"
        b = PPO(cfg, envs.make("CartPole-v1", 4, "cpu", 1), "cpu", 1, total_steps=1024)
        self.assertEqual(b.load_state_dict(state), ["checkpoint from cuda resumed on cpu: generators reseeded"])
        self.assertEqual(b.step, 128)
        self.assertEqual(b.iterate()["iteration"], 2.0)

    def test_shape_mismatch_is_refused(self):
        a = PPO(config.cleanrl(), envs.make("CartPole-v1", 4, "cpu", 1), "cpu", 1, total_steps=1024)
        cfg = dataclasses.replace(config.cleanrl(), num_envs=8)
        b = PPO(cfg, envs.make("CartPole-v1", 8, "cpu", 1), "cpu", 1, total_steps=1024)
        with self.assertRaisesRegex(ValueError, "num_envs: checkpoint 4, now 8"):
            b.load_state_dict(a.state_dict())


def without(d, keys):
    return {k: v for k, v in d.items() if k not in keys}


class ContractTest(unittest.TestCase):
    """train.py as rlsweep runs it: RLSWEEP_* variables, segments, checkpoints, bad flags (in this
    process, through train.main), and SIGTERM (a real process)."""

    def run_segment(self, tmp, stop_at, resume=None, extra=()):
        env = {"RLSWEEP_METRICS_FILE": os.path.join(tmp, "metrics.jsonl"), "RLSWEEP_CHECKPOINT_DIR": os.path.join(tmp, "ckpt"),
               "RLSWEEP_TOTAL_STEPS": "2048", "RLSWEEP_STOP_AT_STEP": str(stop_at), "RLSWEEP_SEED": "3",
               "RLSWEEP_RESUME_FROM": resume or ""}
        return run_main(["--env=CartPole-v1", "--num-steps=64", *extra], env)

    def test_two_segments_equal_one(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            code, err = self.run_segment(a, 2048)
            self.assertEqual(code, 0, err)
            code, err = self.run_segment(b, 1024)
            self.assertEqual(code, 0, err)
            recs = read_jsonl(os.path.join(b, "metrics.jsonl"))
            self.assertEqual(recs[-1], {"step": 1024, "checkpoint": "ckpt-000000001024.pt"})
            code, err = self.run_segment(b, 2048, resume=os.path.join(b, "ckpt", "ckpt-000000001024.pt"))
            self.assertEqual(code, 0, err)
            self.assertIn("resumed from", err)
            straight, split = read_jsonl(os.path.join(a, "metrics.jsonl")), read_jsonl(os.path.join(b, "metrics.jsonl"))
            steps = [r["step"] for r in split if "checkpoint" not in r]
            self.assertEqual(steps, list(range(256, 2049, 256)), "one record per iteration, each step once")
            self.assertEqual([without(r, TIMING) for r in split if "checkpoint" not in r],
                             [without(r, TIMING) for r in straight if "checkpoint" not in r])
            sa = torch.load(os.path.join(a, "ckpt", "ckpt-000000002048.pt"))
            sb = torch.load(os.path.join(b, "ckpt", "ckpt-000000002048.pt"))
            for part in ("agent", "optimizer"):
                self.assertEqual(repr(sa[part]), repr(sb[part]), part)

    def test_bad_flags_exit_2_naming_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, err = self.run_segment(tmp, 1024, extra=["--minibatches=5", "--lr=-1"])
            self.assertEqual(code, 2)
            self.assertIn("--lr: got -1.0, want > 0", err)
            self.assertIn("--minibatches: got 5, want a divisor of num_envs × num_steps = 256", err)

    def test_sigterm_checkpoints_and_exits_0(self):
        with tempfile.TemporaryDirectory() as tmp:
            metrics = os.path.join(tmp, "metrics.jsonl")
            env = dict(os.environ, RLSWEEP_METRICS_FILE=metrics, RLSWEEP_CHECKPOINT_DIR=os.path.join(tmp, "ckpt"),
                       RLSWEEP_TOTAL_STEPS="100000000")
            proc = subprocess.Popen([sys.executable, TRAIN, "--env=CartPole-v1"], env=env, cwd=tmp,
                                    stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while not (os.path.exists(metrics) and os.path.getsize(metrics) > 0):
                self.assertLess(time.monotonic(), deadline, "no metrics record within 60 s")
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn("stopped by SIGTERM", err)
            last = read_jsonl(metrics)[-1]
            self.assertEqual(set(last), {"step", "checkpoint"})
            self.assertTrue(os.path.exists(os.path.join(tmp, "ckpt", last["checkpoint"])))


def run_main(argv, env):
    """train.main(argv) in this process with env added to os.environ; returns (exit status, stderr).
    The signal handlers it installs are put back."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    err = io.StringIO()
    try:
        with mock.patch.dict(os.environ, env), contextlib.redirect_stderr(err):
            code = train.main(argv)
    except SystemExit as e:
        code = e.code
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    return code, err.getvalue()


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


if __name__ == "__main__":
    unittest.main()
