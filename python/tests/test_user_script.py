"""A new user's plain PyTorch PPO loop (fixtures/plain_ppo.py) and the same script with the lines the
docs show (fixtures/user_ppo.py): at most 10 lines apart; unchanged on its own; under the contract it
reports metrics, stops at the segment's end with a checkpoint, resumes, stops on SIGTERM, and speaks
the probe protocol. integration/python_package_test.go runs it through a real asha sweep and probe stage."""

import difflib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from helpers import PYTHON_DIR, read_jsonl

try:
    import torch
except ImportError:
    torch = None

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
PLAIN, USER = os.path.join(FIXTURES, "plain_ppo.py"), os.path.join(FIXTURES, "user_ppo.py")
REPO = os.path.dirname(PYTHON_DIR)


def code_lines(path):
    """The script's lines after its module docstring."""
    with open(path) as f:
        text = f.read()
    return text[text.index('"""', 3) + 3:].splitlines()


def env(tmp=None, **more):
    e = {k: v for k, v in os.environ.items() if not k.startswith("RLSWEEP_")}
    e["PYTHONPATH"] = PYTHON_DIR
    if tmp:
        e.update(RLSWEEP_SWEEP_ID="sweep/user/1", RLSWEEP_TRIAL_ID="0-s1", RLSWEEP_SEED="1", RLSWEEP_PARAMS="{}",
                 RLSWEEP_METRICS_FILE=os.path.join(tmp, "m.jsonl"), RLSWEEP_CHECKPOINT_DIR=os.path.join(tmp, "ckpt"))
    e.update(more)
    return e


class TenLinesTest(unittest.TestCase):
    def test_at_most_ten_lines_changed(self):
        diff = [d for d in difflib.ndiff(code_lines(PLAIN), code_lines(USER)) if d[:2] in ("+ ", "- ")]
        added = [d for d in diff if d.startswith("+ ")]
        self.assertLessEqual(len(added), 10, "\n".join(diff))
        self.assertTrue(all("rlsweep" in d or "probe" in d for d in added), "\n".join(added))

    def test_docs_show_each_line(self):
        with open(os.path.join(REPO, "docs", "trainer-contract.md"), encoding="utf-8") as f:
            doc = f.read()
        added = [d[2:].strip() for d in difflib.ndiff(code_lines(PLAIN), code_lines(USER)) if d.startswith("+ ")]
        for line in added:
            self.assertTrue(line.split("  # noqa")[0] in doc, "docs/trainer-contract.md does not show %r" % line)


@unittest.skipUnless(torch is not None, "torch not installed")
class UserScriptTest(unittest.TestCase):
    def test_unchanged_outside_rlsweep(self):
        outs = []
        for script in (PLAIN, USER):
            p = subprocess.Popen([sys.executable, script], stdout=subprocess.PIPE, text=True, env=env())
            outs.append([p.stdout.readline() for _ in range(4)])
            p.kill()
            p.wait()
            p.stdout.close()
        self.assertEqual(outs[0], outs[1])
        self.assertTrue(outs[0][0].startswith("step 256 "), outs[0])

    def run_user(self, tmp, timeout=120, **more):
        return subprocess.run([sys.executable, USER], env=env(tmp, **more), capture_output=True, text=True, timeout=timeout)

    def test_segments_checkpoint_and_resume(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = self.run_user(tmp, RLSWEEP_STOP_AT_STEP="1024", RLSWEEP_TOTAL_STEPS="2048", RLSWEEP_PARAMS='{"lr": 0.002}')
            self.assertEqual(r.returncode, 0, r.stderr)
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual([x["step"] for x in recs], [256, 512, 768, 1024, 1024])
            self.assertEqual(recs[-1], {"step": 1024, "checkpoint": "ckpt-000000001024.pt"})
            self.assertEqual(set(recs[0]), {"step", "reward", "value_loss", "entropy"})
            ckpt = torch.load(os.path.join(tmp, "ckpt", "ckpt-000000001024.pt"))
            self.assertEqual(ckpt["opt"]["param_groups"][0]["lr"], 0.002, "the trial's lr")
            r = self.run_user(tmp, RLSWEEP_STOP_AT_STEP="2048", RLSWEEP_TOTAL_STEPS="2048", RLSWEEP_PARAMS='{"lr": 0.0005}',
                              RLSWEEP_RESUME_FROM=os.path.join(tmp, "ckpt", "ckpt-000000001024.pt"))
            self.assertEqual(r.returncode, 0, r.stderr)
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual([x["step"] for x in recs], [256, 512, 768, 1024, 1024, 1280, 1536, 1792, 2048, 2048])
            ckpt = torch.load(os.path.join(tmp, "ckpt", "ckpt-000000002048.pt"))
            self.assertEqual(ckpt["opt"]["param_groups"][0]["lr"], 0.0005, "PBT's new lr, not the checkpoint's")
            self.assertGreater(ckpt["opt"]["state"][0]["step"], 16, "Adam's state resumed")

    def test_sigterm(self):
        with tempfile.TemporaryDirectory() as tmp:
            metrics = os.path.join(tmp, "m.jsonl")
            p = subprocess.Popen([sys.executable, USER], env=env(tmp, RLSWEEP_STOP_AT_STEP="1000000"), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while not (os.path.exists(metrics) and os.path.getsize(metrics) > 0):
                self.assertLess(time.monotonic(), deadline, "no record within 60 s")
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, err)
            last = read_jsonl(metrics)[-1]
            self.assertEqual(set(last), {"step", "checkpoint"})
            self.assertTrue(os.path.exists(os.path.join(tmp, "ckpt", last["checkpoint"])))

    def test_probe_protocol(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = os.path.join(tmp, "result.json")
            r = self.run_user(tmp, RLSWEEP_PROBE="3", RLSWEEP_PROBE_RESULT=result, RLSWEEP_PROBE_GAMMA="0.5",
                              RLSWEEP_TOTAL_STEPS="10000", RLSWEEP_STOP_AT_STEP="10000")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(result) as f:
                rec = json.load(f)
            self.assertEqual((rec["probe"], rec["gamma"]), ("3", 0.5))
            self.assertGreaterEqual(rec["steps"], 10000)
            (v0, v1) = [e["value"] for e in rec["evals"]]
            self.assertEqual([e["obs"] for e in rec["evals"]], [[0.0], [1.0]])
            self.assertAlmostEqual(v0, 0.5, delta=0.15, msg="V(0) = γ (trainer/probes.ValueTol)")
            self.assertAlmostEqual(v1, 1.0, delta=0.15)
            r = self.run_user(tmp, RLSWEEP_PROBE="3c", RLSWEEP_PROBE_RESULT=result)
            self.assertEqual(r.returncode, 3, "a continuous probe is declined")


class InstallTest(unittest.TestCase):
    def test_pip_install_offline(self):
        """pip install --no-build-isolation --no-index ./python into a venv (Debian's python3-setuptools
        builds it; no network)."""
        # setuptools builds wheels with the wheel package, or by itself from 70.1 on.
        check = ("import setuptools, pip, venv, ensurepip\n"
                 "try:\n    import wheel\nexcept ImportError:\n    import setuptools.command.bdist_wheel")
        if subprocess.run([sys.executable, "-c", check], capture_output=True).returncode:
            self.skipTest("%s lacks setuptools with wheel support, pip or venv (Debian: python3-setuptools, "
                          "python3-wheel, python3-pip, python3-venv; scripts/install-python-deps.sh)" % sys.executable)
        with tempfile.TemporaryDirectory() as tmp:
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True, capture_output=True)
            py = os.path.join(venv, "bin", "python")
            src = os.path.join(tmp, "src")
            shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
            r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--disable-pip-version-check", src],
                               capture_output=True, text=True, env=env())
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            e = env()
            del e["PYTHONPATH"]
            out = subprocess.run([py, "-c", "import rlsweep, rlsweep.sb3, rlsweep.rsl_rl, rlsweep.cleanrl, rlsweep.tensorboard; "
                                  "print(rlsweep.__file__); print(rlsweep.params({'a': 1}))"],
                                 capture_output=True, text=True, cwd=tmp, env=e)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn(os.path.join(venv, "lib"), out.stdout)
            self.assertIn("{'a': 1}", out.stdout)


if __name__ == "__main__":
    unittest.main()
