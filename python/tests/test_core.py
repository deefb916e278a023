"""The core package against the trainer contract (docs/trainer-contract.md) and the probe protocol
(docs/probes.md), as the Go side reads them: metrics/jsonl.go, activities' checkpoint handling,
trainer/probes. Run from the repository root: python3 -m unittest discover -s python/tests"""

import dataclasses
import argparse
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

from helpers import PYTHON_DIR, read_jsonl, rlsweep, sweep_env

try:
    import numpy
except ImportError:
    numpy = None
try:
    import torch
except ImportError:
    torch = None


class ParamsTest(unittest.TestCase):
    DEFAULTS = {"lr": 3e-4, "num_envs": 8, "anneal": True, "hidden": (64, 64), "act": "tanh", "clip": 0.2}

    def test_outside_a_sweep_the_defaults(self):
        with sweep_env():
            self.assertEqual(rlsweep.params(self.DEFAULTS), self.DEFAULTS)

    def test_merged_and_typed_as_the_defaults(self):
        p = {"lr": 1, "num_envs": 16.0, "anneal": "false", "hidden": [32, 32, 32], "act": "relu"}
        with sweep_env(RLSWEEP_PARAMS=json.dumps(p)):
            cfg = rlsweep.params(self.DEFAULTS)
        self.assertEqual(cfg, {"lr": 1.0, "num_envs": 16, "anneal": False, "hidden": (32, 32, 32), "act": "relu", "clip": 0.2})
        self.assertIs(type(cfg["lr"]), float)
        self.assertIs(type(cfg["num_envs"]), int)
        self.assertEqual(cfg.lr, 1.0, "attribute access")
        with sweep_env(RLSWEEP_PARAMS='{"hidden": "128,128", "anneal": 1}'):
            cfg = rlsweep.params(self.DEFAULTS)
        self.assertEqual((cfg.hidden, cfg.anneal), ((128, 128), True))

    def test_bad_value_names_the_parameter(self):
        for raw, want in [('{"num_envs": 2.5}', "parameter 'num_envs': got 2.5 (float), want an integer"),
                          ('{"anneal": "maybe"}', "parameter 'anneal': got \"maybe\" (str), want a boolean"),
                          ('{"lr": "fast"}', "parameter 'lr': got \"fast\" (str), want a number"),
                          ('{"num_envs": true}', "parameter 'num_envs': got true (bool), want an integer")]:
            with self.subTest(raw=raw), sweep_env(RLSWEEP_PARAMS=raw):
                with self.assertRaises(rlsweep.ParamError) as cm:
                    rlsweep.params(self.DEFAULTS)
                self.assertIn(want, str(cm.exception))
        with sweep_env(RLSWEEP_PARAMS="{lr: 1}"), self.assertRaisesRegex(rlsweep.ParamError, "RLSWEEP_PARAMS: got .* not JSON"):
            rlsweep.params(self.DEFAULTS)

    def test_unknown_parameter_warned_or_refused(self):
        with sweep_env(RLSWEEP_PARAMS='{"lrr": 0.1}'):
            with mock.patch("sys.stderr") as err:
                cfg = rlsweep.params(self.DEFAULTS)
            self.assertEqual(cfg["lrr"], 0.1)
            self.assertIn("'lrr'", "".join(c.args[0] for c in err.write.call_args_list))
            with self.assertRaisesRegex(rlsweep.ParamError, "the sweep sets 'lrr'"):
                rlsweep.params(self.DEFAULTS, strict=True)

    def test_dataclass_and_namespace(self):
        @dataclasses.dataclass
        class Args:
            lr: float = 3e-4
            total_timesteps: int = 500000

        with sweep_env(RLSWEEP_PARAMS='{"lr": 0.001, "total_timesteps": 1e5}'):
            a = rlsweep.params(Args())
            ns = rlsweep.params(argparse.Namespace(lr=0.1, total_timesteps=5))
        self.assertEqual(a, Args(lr=0.001, total_timesteps=100000))
        self.assertEqual((ns.lr, ns.total_timesteps), (0.001, 100000))


class LogTest(unittest.TestCase):
    def test_outside_a_sweep_nothing(self):
        with sweep_env():
            self.assertIsNone(rlsweep.log(10, reward=1.0))

    def test_records_as_the_go_reader_wants(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.jsonl")
            with sweep_env(RLSWEEP_METRICS_FILE=path):
                rlsweep.log(128, reward=1.5, value_loss=float("nan"), grad_norm=float("inf"), kl=-math.inf)
                # Each record is on disk as soon as log returns (flushed), before any close.
                with open(path, encoding="utf-8") as f:
                    self.assertEqual(f.read(), '{"step": 128, "reward": 1.5, "value_loss": NaN, "grad_norm": Infinity, "kl": -Infinity}\n')
                rlsweep.log({"reward": 2.0, "charts/sps": 10}, step=256)
                rlsweep.log({"step": 512, "reward": 3})
            recs = read_jsonl(path)
        self.assertEqual(recs[1:], [{"step": 256, "reward": 2.0, "charts/sps": 10}, {"step": 512, "reward": 3}])

    def test_odd_values_never_crash(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.jsonl")
            with sweep_env(RLSWEEP_METRICS_FILE=path), mock.patch("sys.stderr"):
                rec = rlsweep.log(1, s="text", n=None, l=[1, 2], d={"a": 1}, b=True, ok=0.5, checkpoint=3)
        self.assertEqual(rec, {"step": 1, "b": 1, "ok": 0.5})

    @unittest.skipUnless(numpy is not None, "numpy not installed")
    def test_numpy(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.jsonl")
            with sweep_env(RLSWEEP_METRICS_FILE=path), mock.patch("sys.stderr"):
                rec = rlsweep.log(numpy.int64(5), a=numpy.float32(0.5), b=numpy.array([2.0]), c=numpy.array(numpy.nan),
                                  d=numpy.zeros(3), e=numpy.float64(numpy.inf))
            with open(path) as f:
                line = f.read()
        self.assertEqual(rec["step"], 5)
        self.assertEqual((rec["a"], rec["b"]), (0.5, 2.0))
        self.assertNotIn("d", rec)
        self.assertIn('"c": NaN', line)
        self.assertIn('"e": Infinity', line)

    @unittest.skipUnless(torch is not None, "torch not installed")
    def test_torch(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.jsonl")
            w = torch.ones(1, requires_grad=True)
            with sweep_env(RLSWEEP_METRICS_FILE=path), mock.patch("sys.stderr"):
                rec = rlsweep.log(torch.tensor(7), loss=(w * 2).sum(), one=torch.tensor([3.0]), many=torch.zeros(2),
                                  nan=torch.tensor(float("nan")))
        self.assertEqual(rec["step"], 7)
        self.assertEqual((rec["loss"], rec["one"]), (2.0, 3.0))
        self.assertNotIn("many", rec)
        self.assertTrue(math.isnan(rec["nan"]))

    def test_bad_step(self):
        with tempfile.TemporaryDirectory() as tmp:
            with sweep_env(RLSWEEP_METRICS_FILE=os.path.join(tmp, "m.jsonl")):
                for bad in (-1, 1.5, "x", None, float("nan")):
                    with self.subTest(step=bad), self.assertRaises((ValueError, TypeError)):
                        rlsweep.log(bad, reward=1.0)
                rlsweep.log(100, reward=1.0)
                with self.assertRaisesRegex(ValueError, "step 50 after step 100: .* must not decrease"):
                    rlsweep.log(50, reward=1.0)
                rlsweep.log(100.0, reward=2.0)  # equal is fine, and an integral float is a step


class SegmentTest(unittest.TestCase):
    def test_outside_a_sweep(self):
        with sweep_env():
            seg = rlsweep.segment()
            self.assertEqual((seg.stop_at, seg.resume_from, seg.checkpoint_dir), (None, None, None))
            self.assertFalse(seg.should_stop(10**12))
            self.assertEqual(seg.steps(5000), 5000)
            self.assertIsNone(rlsweep.checkpoint(10, lambda p: self.fail("save_fn called outside a sweep")))

    def test_variables(self):
        with sweep_env(RLSWEEP_TRIAL_ID="0-s1", RLSWEEP_STOP_AT_STEP="1024", RLSWEEP_TOTAL_STEPS="4096",
                       RLSWEEP_RESUME_FROM="/c/ckpt-000000000512.pt", RLSWEEP_CHECKPOINT_DIR="/c", RLSWEEP_SEED="3"):
            seg = rlsweep.segment()
            self.assertEqual((seg.stop_at, seg.total_steps, seg.seed, seg.resume_from, seg.checkpoint_dir),
                             (1024, 4096, 3, "/c/ckpt-000000000512.pt", "/c"))
            self.assertFalse(seg.should_stop(1023))
            self.assertTrue(seg.should_stop(1024))
            self.assertTrue(seg.should_stop(1100))
            self.assertEqual(seg.steps(10), 4096)
            self.assertEqual(seg.restore(lambda p: "loaded " + p), "loaded /c/ckpt-000000000512.pt")
        with sweep_env(RLSWEEP_STOP_AT_STEP="soon"), self.assertRaisesRegex(ValueError, "RLSWEEP_STOP_AT_STEP: got 'soon', want an integer"):
            rlsweep.segment()

    def test_checkpoint_file_written_then_announced(self):
        with tempfile.TemporaryDirectory() as tmp:
            metrics, ckpt = os.path.join(tmp, "m.jsonl"), os.path.join(tmp, "ckpt")
            seen = []

            def save(path):
                seen.append(path)
                self.assertFalse(os.path.exists(os.path.join(ckpt, "ckpt-000000002048.pt")), "final name before the write ended")
                with open(path, "w") as f:
                    f.write("state")

            with sweep_env(RLSWEEP_METRICS_FILE=metrics, RLSWEEP_CHECKPOINT_DIR=ckpt):
                rlsweep.log(2048, reward=1.0)
                name = rlsweep.checkpoint(2048, save)
            self.assertEqual(name, "ckpt-000000002048.pt")
            self.assertEqual(os.path.dirname(seen[0]), ckpt, "the temporary file is beside the final one (same filesystem)")
            self.assertEqual(read_jsonl(metrics)[-1], {"step": 2048, "checkpoint": "ckpt-000000002048.pt"})
            self.assertEqual(sorted(os.listdir(ckpt)), ["ckpt-000000002048.pt"], "nothing left behind")

    def test_checkpoint_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            metrics, ckpt = os.path.join(tmp, "m.jsonl"), os.path.join(tmp, "ckpt")

            def save(path):
                os.makedirs(os.path.join(path, "sub"))
                for n in ("model.bin", "sub/opt.bin"):
                    with open(os.path.join(path, n), "w") as f:
                        f.write(n)

            with sweep_env(RLSWEEP_METRICS_FILE=metrics, RLSWEEP_CHECKPOINT_DIR=ckpt):
                self.assertEqual(rlsweep.checkpoint(10, save, ext=""), "ckpt-000000000010")
                self.assertEqual(rlsweep.checkpoint(10, save, ext=""), "ckpt-000000000010", "again at the same step")
            with open(os.path.join(ckpt, "ckpt-000000000010", "sub", "opt.bin")) as f:
                self.assertEqual(f.read(), "sub/opt.bin")
            self.assertEqual(os.listdir(ckpt), ["ckpt-000000000010"])

    def test_failed_save_announces_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            metrics, ckpt = os.path.join(tmp, "m.jsonl"), os.path.join(tmp, "ckpt")

            def save(path):
                with open(path, "w") as f:
                    f.write("half")
                raise OSError("disk full")

            with sweep_env(RLSWEEP_METRICS_FILE=metrics, RLSWEEP_CHECKPOINT_DIR=ckpt):
                with self.assertRaisesRegex(OSError, "disk full"):
                    rlsweep.checkpoint(10, save)
                with self.assertRaisesRegex(RuntimeError, "save_fn wrote nothing"):
                    rlsweep.checkpoint(10, lambda p: None)
                with self.assertRaisesRegex(ValueError, "relative path inside"):
                    rlsweep.checkpoint(10, save, name="../x.pt")
            self.assertFalse(os.path.exists(metrics))
            self.assertEqual(os.listdir(ckpt), [])


# A loop as the docs show it, run as a real process: SIGTERM mid-run ends it with a checkpoint and exit 0.
LOOP = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
import rlsweep
seg = rlsweep.segment()
step = int(open(seg.resume_from).read()) if seg.resume_from else 0
while True:
    time.sleep(0.01)
    step += 10
    rlsweep.log(step, reward=1.0)
    if seg.should_stop(step):
        break
rlsweep.checkpoint(step, lambda p: open(p, "w").write(str(step)))
print("stopped at", step, seg.stop_signal, file=sys.stderr)
'''


class SignalTest(unittest.TestCase):
    def run_loop(self, tmp, env, term_after=None):
        metrics = os.path.join(tmp, "m.jsonl")
        full = {k: v for k, v in os.environ.items() if not k.startswith("RLSWEEP_")}
        full.update(RLSWEEP_TRIAL_ID="0-s1", RLSWEEP_METRICS_FILE=metrics, RLSWEEP_CHECKPOINT_DIR=os.path.join(tmp, "ckpt"), **env)
        proc = subprocess.Popen([sys.executable, "-c", LOOP, PYTHON_DIR], env=full, stderr=subprocess.PIPE, text=True)
        if term_after is not None:
            deadline = time.monotonic() + 30
            while not (os.path.exists(metrics) and os.path.getsize(metrics) > 0):
                self.assertLess(time.monotonic(), deadline, "no record within 30 s")
                time.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        return proc.returncode, err, read_jsonl(metrics)

    def test_stop_at_then_resume(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, err, recs = self.run_loop(tmp, {"RLSWEEP_STOP_AT_STEP": "100", "RLSWEEP_TOTAL_STEPS": "200"})
            self.assertEqual(code, 0, err)
            self.assertEqual(recs[-1], {"step": 100, "checkpoint": "ckpt-000000000100.pt"})
            resume = os.path.join(tmp, "ckpt", "ckpt-000000000100.pt")
            code, err, recs = self.run_loop(tmp, {"RLSWEEP_STOP_AT_STEP": "200", "RLSWEEP_RESUME_FROM": resume})
            self.assertEqual(code, 0, err)
            self.assertEqual([r["step"] for r in recs if "checkpoint" not in r], list(range(10, 201, 10)))
            self.assertEqual(recs[-1], {"step": 200, "checkpoint": "ckpt-000000000200.pt"})

    def test_sigterm_checkpoints_and_exits_0(self):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.monotonic()
            code, err, recs = self.run_loop(tmp, {"RLSWEEP_STOP_AT_STEP": "100000000"}, term_after=True)
            self.assertEqual(code, 0, err)
            self.assertLess(time.monotonic() - start, 20)
            self.assertIn("SIGTERM", err)
            last = recs[-1]
            self.assertEqual(set(last), {"step", "checkpoint"})
            self.assertLess(last["step"], 100000000)
            self.assertTrue(os.path.exists(os.path.join(tmp, "ckpt", last["checkpoint"])))


class ProbeEnvTest(unittest.TestCase):
    """The environments as trainer/probes/env.go defines them."""

    def episode(self, name, actions, seed=1):
        env = rlsweep.ProbeEnv(name)
        obs, info = env.reset(seed=seed)
        out = [("reset", obs)]
        for a in actions:
            obs, r, term, trunc, _ = env.step(a)
            out.append((obs, r, term, trunc))
            if term or trunc:
                break
        return out

    def test_discrete(self):
        self.assertEqual(self.episode("1", [0]), [("reset", [0.0]), ([0.0], 1.0, True, False)])
        self.assertEqual(self.episode("3", [0, 0]), [("reset", [0.0]), ([1.0], 0.0, False, False), ([1.0], 1.0, True, False)])
        self.assertEqual(self.episode("4", [1])[1][1], 1.0)
        self.assertEqual(self.episode("4", [0])[1][1], -1.0)
        for seed in range(20):
            (_, (o,)), (_, r, term, _) = self.episode("2", [0], seed)
            self.assertIn(o, (-1.0, 1.0))
            self.assertEqual((r, term), (o, True))
            (_, (o,)), (_, r, _, _) = self.episode("5", [1], seed)
            self.assertEqual(r, 1.0 if o > 0 else -1.0)
            (_, (o,)), (_, r, _, _) = self.episode("5", [0], seed)
            self.assertEqual(r, 1.0 if o < 0 else -1.0)
        obs = {self.episode("2", [0], s)[0][1][0] for s in range(20)}
        self.assertEqual(obs, {-1.0, 1.0}, "both signs drawn")

    def test_continuous(self):
        self.assertEqual(self.episode("1c", [[1.7]]), [("reset", [0.0]), ([0.0], 1.0, True, False)])
        self.assertEqual(self.episode("4c", [[0.5]])[1][1], 0.0)
        self.assertAlmostEqual(self.episode("4c", [[5.0]])[1][1], -(2.0 - 0.5) ** 2, msg="actions clipped to [−2, 2]")
        for seed in range(10):
            (_, (o,)), (_, r, _, _) = self.episode("5c", [[0.0]], seed)
            self.assertAlmostEqual(r, -(0.5 * o) ** 2)

    def test_spaces(self):
        self.assertEqual([rlsweep.ProbeEnv(n).action_space.n for n in "12345"], [1, 1, 1, 2, 2])
        box = rlsweep.ProbeEnv("3c").action_space
        self.assertEqual((box.low, box.high, box.shape), ([-2.0], [2.0], (1,)))
        self.assertEqual(rlsweep.ProbeEnv("5").observation_space.shape, (1,))
        with self.assertRaisesRegex(ValueError, "RLSWEEP_PROBE: got '6', want one of 1, 2"):
            rlsweep.ProbeEnv("6")


class ProbeProtocolTest(unittest.TestCase):
    def test_not_a_probe_run(self):
        with sweep_env(RLSWEEP_TRIAL_ID="0-s1"):
            self.assertIsNone(rlsweep.probe("discrete"))

    def test_probe_variables_and_budget(self):
        with sweep_env(RLSWEEP_PROBE="5c", RLSWEEP_PROBE_GAMMA="0.5", RLSWEEP_TOTAL_STEPS="20000", RLSWEEP_SEED="2"):
            p = rlsweep.probe("continuous")
        self.assertEqual((p.name, p.level, p.continuous, p.gamma, p.budget, p.seed), ("5c", 5, True, 0.5, 20000, 2))
        self.assertEqual(p.eval_observations, [[-1.0], [1.0]])
        with sweep_env(RLSWEEP_PROBE="4c"):
            self.assertEqual(rlsweep.probe().budget, 20000, "trainer/probes.Budget without RLSWEEP_TOTAL_STEPS")
        with sweep_env(RLSWEEP_PROBE="3"):
            self.assertEqual(rlsweep.probe().budget, 10000)

    def test_declines_the_other_action_space_with_exit_3(self):
        code = subprocess.call([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import rlsweep; "
                                "rlsweep.probe('discrete'); print('not declined')", PYTHON_DIR],
                               env=dict(os.environ, RLSWEEP_PROBE="2c"), stderr=subprocess.DEVNULL)
        self.assertEqual(code, rlsweep.EXIT_DECLINE)
        self.assertEqual(rlsweep.EXIT_DECLINE, 3)

    def test_report_writes_the_record_the_judge_reads(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "result.json")
            with sweep_env(RLSWEEP_PROBE="5", RLSWEEP_PROBE_RESULT=path, RLSWEEP_PROBE_GAMMA="0.5", RLSWEEP_TOTAL_STEPS="10000"):
                p = rlsweep.probe("discrete")
                p.report(lambda o: 0.99, lambda o: [0.01, 0.99] if o[0] > 0 else [[0.98, float("nan")]])
            with open(path) as f:
                rec = json.load(f)
        self.assertEqual(rec, {"probe": "5", "gamma": 0.5, "steps": 10000, "evals": [
            {"obs": [-1.0], "value": 0.99, "probs": [0.98, None]},
            {"obs": [1.0], "value": 0.99, "probs": [0.01, 0.99]}]})

    def test_report_continuous_mean(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "result.json")
            with sweep_env(RLSWEEP_PROBE="4c", RLSWEEP_PROBE_RESULT=path):
                rlsweep.probe("continuous").report(lambda o: 0.0, lambda o: [0.49], steps=20480)
            with open(path) as f:
                rec = json.load(f)
        self.assertEqual(rec, {"probe": "4c", "gamma": 0.5, "steps": 20480, "evals": [{"obs": [0.0], "value": 0.0, "mean": [0.49]}]})


class CopyOneFileTest(unittest.TestCase):
    def test_core_works_copied_as_one_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(PYTHON_DIR, "rlsweep", "__init__.py")) as src, open(os.path.join(tmp, "rlsweep.py"), "w") as dst:
                dst.write(src.read())
            metrics = os.path.join(tmp, "m.jsonl")
            script = "import rlsweep; c = rlsweep.params({'lr': 0.1}); rlsweep.log(1, lr=c.lr)"
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env.update(RLSWEEP_METRICS_FILE=metrics, RLSWEEP_PARAMS='{"lr": 0.5}')
            subprocess.check_call([sys.executable, "-c", script], cwd=tmp, env=env)
            self.assertEqual(read_jsonl(metrics), [{"step": 1, "lr": 0.5}])


if __name__ == "__main__":
    unittest.main()


class GPUMemoryFractionTest(unittest.TestCase):
    """RLSWEEP_GPU_MEMORY_FRACTION: a trial's share of its GPU, applied to PyTorch's CUDA allocator."""

    class FakeCUDA:
        def __init__(self, available=True, count=2):
            self.available, self.count, self.calls = available, count, []

        def is_available(self):
            return self.available

        def device_count(self):
            return self.count

        def set_per_process_memory_fraction(self, fraction, device=None):
            self.calls.append((fraction, device))

    def fake_torch(self, **kw):
        cuda = self.FakeCUDA(**kw)
        return mock.MagicMock(cuda=cuda), cuda

    def test_outside_a_sweep_nothing(self):
        with sweep_env():
            self.assertIsNone(rlsweep.gpu_memory_fraction())
            self.assertIsNone(rlsweep.apply_gpu_memory_fraction())

    def test_share_applied_on_every_visible_gpu(self):
        fake, cuda = self.fake_torch()
        with sweep_env(RLSWEEP_GPU_MEMORY_FRACTION="0.25"), mock.patch.dict(sys.modules, {"torch": fake}):
            self.assertEqual(rlsweep.gpu_memory_fraction(), 0.25)
            self.assertEqual(rlsweep.apply_gpu_memory_fraction(), 0.25)
            self.assertEqual(cuda.calls, [(0.25, 0), (0.25, 1)])
            cuda.calls.clear()
            rlsweep.apply_gpu_memory_fraction(device=1)
            self.assertEqual(cuda.calls, [(0.25, 1)])

    def test_whole_gpu_or_no_cuda_nothing_applied(self):
        for env, kw in (("1", {}), ("0.5", {"available": False})):
            fake, cuda = self.fake_torch(**kw)
            with sweep_env(RLSWEEP_GPU_MEMORY_FRACTION=env), mock.patch.dict(sys.modules, {"torch": fake}):
                self.assertIsNone(rlsweep.apply_gpu_memory_fraction())
                self.assertEqual(cuda.calls, [])

    def test_bad_value_refused(self):
        for bad in ("quarter", "0", "1.5", "nan"):
            with sweep_env(RLSWEEP_GPU_MEMORY_FRACTION=bad):
                with self.assertRaisesRegex(ValueError, "RLSWEEP_GPU_MEMORY_FRACTION: got"):
                    rlsweep.gpu_memory_fraction()

    @unittest.skipIf(torch is None, "no torch")
    def test_real_torch_without_cuda(self):
        with sweep_env(RLSWEEP_GPU_MEMORY_FRACTION="0.25"):
            if not torch.cuda.is_available():
                self.assertIsNone(rlsweep.apply_gpu_memory_fraction())


class PrecisionTest(unittest.TestCase):
    def test_outside_a_sweep_nothing(self):
        with sweep_env():
            self.assertIsNone(rlsweep.precision())
            self.assertIsNone(rlsweep.apply_precision())

    def test_setting_applied(self):
        for setting, matmul, tf32 in (("fp32", "highest", False), ("tf32", "high", True)):
            fake = mock.MagicMock()
            with sweep_env(RLSWEEP_PRECISION=setting), mock.patch.dict(sys.modules, {"torch": fake}):
                self.assertEqual(rlsweep.apply_precision(), setting)
                fake.set_float32_matmul_precision.assert_called_once_with(matmul)
                self.assertIs(fake.backends.cuda.matmul.allow_tf32, tf32)
                self.assertIs(fake.backends.cudnn.allow_tf32, tf32)

    def test_default_leaves_the_trainer_alone(self):
        fake = mock.MagicMock()
        with sweep_env(RLSWEEP_PRECISION="default"), mock.patch.dict(sys.modules, {"torch": fake}):
            self.assertIsNone(rlsweep.apply_precision())
            fake.set_float32_matmul_precision.assert_not_called()

    def test_bad_value_refused(self):
        with sweep_env(RLSWEEP_PRECISION="fp16"):
            with self.assertRaisesRegex(ValueError, "RLSWEEP_PRECISION: got 'fp16', want one of default, fp32, tf32"):
                rlsweep.precision()

    @unittest.skipIf(torch is None, "no torch")
    def test_real_torch(self):
        with sweep_env(RLSWEEP_PRECISION="fp32"):
            self.assertEqual(rlsweep.apply_precision(), "fp32")
            self.assertEqual(torch.get_float32_matmul_precision(), "highest")
