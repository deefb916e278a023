"""examples/frameworks: the CleanRL-style script runs under the contract (torch); the SB3 and rsl_rl
scripts, whose frameworks are not installed here, at least compile and use the package's API as the
docs show it."""

import ast
import os
import subprocess
import sys
import tempfile
import unittest

from helpers import PYTHON_DIR, read_jsonl

try:
    import torch
except ImportError:
    torch = None

EXAMPLES = os.path.join(os.path.dirname(PYTHON_DIR), "examples", "frameworks")


class FrameworkExamplesTest(unittest.TestCase):
    def test_scripts_compile_and_call_the_integrations(self):
        for name, calls in [("sb3_ppo.py", ["rlsweep.sb3.resume", "rlsweep.sb3.learn", "rlsweep.params"]),
                            ("rsl_rl_train.py", ["rlsweep.rsl_rl.learn", "rlsweep.params"]),
                            ("cleanrl_ppo.py", ["rlsweep.cleanrl.SummaryWriter", "rlsweep.cleanrl.save", "rlsweep.cleanrl.load"])]:
            with open(os.path.join(EXAMPLES, name)) as f:
                src = f.read()
            tree = ast.parse(src, name)
            called = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
            for c in calls:
                self.assertIn(c, called, name)

    @unittest.skipUnless(torch is not None, "torch not installed")
    def test_cleanrl_segments(self):
        script = os.path.join(EXAMPLES, "cleanrl_ppo.py")
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if not k.startswith("RLSWEEP_")}
            env.update(RLSWEEP_TRIAL_ID="0-s1", RLSWEEP_SEED="1", RLSWEEP_PARAMS='{"learning_rate": 0.001, "num_steps": 64}',
                       RLSWEEP_METRICS_FILE=os.path.join(tmp, "m.jsonl"), RLSWEEP_CHECKPOINT_DIR=os.path.join(tmp, "ckpt"),
                       RLSWEEP_TOTAL_STEPS="1024", RLSWEEP_STOP_AT_STEP="512")
            r = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual(recs[-1], {"step": 512, "checkpoint": "ckpt-000000000512.pt"})
            updates = [x for x in recs if "value_loss" in x]
            self.assertEqual([x["step"] for x in updates], [256, 512])
            self.assertEqual(updates[0]["learning_rate"], 0.001, "the trial's learning_rate, annealed from the first iteration")
            self.assertTrue({"policy_loss", "entropy", "approx_kl", "clip_fraction", "explained_variance", "fps"} <= set(updates[0]))
            self.assertTrue(any("reward" in x for x in recs))
            env.update(RLSWEEP_STOP_AT_STEP="1024", RLSWEEP_RESUME_FROM=os.path.join(tmp, "ckpt", "ckpt-000000000512.pt"))
            r = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual([x["step"] for x in recs if "value_loss" in x], [256, 512, 768, 1024])
            self.assertEqual(recs[-1], {"step": 1024, "checkpoint": "ckpt-000000001024.pt"})
            steps = [x["step"] for x in recs]
            self.assertEqual(steps, sorted(steps), "steps never decrease across the resume")


if __name__ == "__main__":
    unittest.main()
