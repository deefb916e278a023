"""rlsweep's framework integrations. Stable-Baselines3 and rsl_rl cannot be installed here (no PyPI):
they run against fakes with the frameworks' names and call order (fakes/README.md)."""

import contextlib
import io
import json
import math
import os
import sys
import tempfile
import unittest

from helpers import read_jsonl, rlsweep, sweep_env

FAKES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fakes")
if FAKES not in sys.path:
    sys.path.insert(0, FAKES)

import rlsweep.cleanrl  # noqa: E402
import rlsweep.rsl_rl  # noqa: E402
import rlsweep.sb3  # noqa: E402
import rlsweep.tensorboard  # noqa: E402
import rsl_rl.runners  # noqa: E402
import stable_baselines3  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def trial_env(tmp, **more):
    env = {"RLSWEEP_TRIAL_ID": "0-s1", "RLSWEEP_METRICS_FILE": os.path.join(tmp, "m.jsonl"),
           "RLSWEEP_CHECKPOINT_DIR": os.path.join(tmp, "ckpt")}
    env.update(more)
    return env


class SummaryWriterTest(unittest.TestCase):
    def test_one_record_per_step_with_means(self):
        with tempfile.TemporaryDirectory() as tmp, sweep_env(**trial_env(tmp)):
            w = rlsweep.tensorboard.SummaryWriter(tags={"charts/episodic_return": "reward"})
            w.add_scalar("charts/episodic_return", 10.0, 100)
            w.add_scalar("charts/episodic_return", 20.0, 100)
            w.add_scalar("losses/value_loss", float("nan"), 100)
            self.assertFalse(os.path.exists(os.path.join(tmp, "m.jsonl")), "step 100 may still get values")
            w.add_scalars("perf", {"sps": 5}, 200)
            w.add_histogram("h", [1, 2], 200)  # no wrapped writer: nothing, no error
            rlsweep.checkpoint(200, lambda p: open(p, "w").close())
            w.add_scalar("charts/episodic_return", 30.0, 300)
            w.close()
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
        self.assertEqual(recs[0]["step"], 100)
        self.assertEqual(recs[0]["reward"], 15.0)
        self.assertTrue(math.isnan(recs[0]["losses/value_loss"]))
        self.assertEqual(recs[1:], [{"step": 200, "perf/sps": 5.0}, {"step": 200, "checkpoint": "ckpt-000000000200.pt"},
                                    {"step": 300, "reward": 30.0}], "pending values written before the checkpoint")

    def test_forwards_to_the_wrapped_writer(self):
        calls = []

        class Real:
            def add_scalar(self, *a):
                calls.append(a)

            def add_text(self, *a):
                calls.append(("text",) + a)

        with sweep_env():
            w = rlsweep.tensorboard.SummaryWriter(wrapped=Real())
            w.add_scalar("a", 1.0, 5)
            w.add_text("t", "x")
            w.close()
        self.assertEqual(calls, [("a", 1.0, 5, None), ("text", "t", "x")])


class SB3Test(unittest.TestCase):
    def test_records_stop_checkpoint_resume(self):
        with tempfile.TemporaryDirectory() as tmp:
            with sweep_env(**trial_env(tmp, RLSWEEP_STOP_AT_STEP="32", RLSWEEP_TOTAL_STEPS="64",
                                        RLSWEEP_PARAMS='{"learning_rate": 0.001}')):
                cfg = rlsweep.params({"learning_rate": 3e-4, "clip_range": 0.2})
                model = rlsweep.sb3.resume(stable_baselines3.PPO, "env", **cfg) or stable_baselines3.PPO("MlpPolicy", "env", **cfg)
                rlsweep.sb3.learn(model, total_timesteps=10**6)
            # The rollout that reaches RLSWEEP_STOP_AT_STEP is trained on; learn ends at the next step.
            self.assertEqual(model.num_timesteps, 34, "stopped at RLSWEEP_STOP_AT_STEP, not total_timesteps")
            self.assertEqual(model.updates, 2)
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual([r["step"] for r in recs], [16, 32, 34])
            self.assertEqual(recs[-1], {"step": 34, "checkpoint": "ckpt-000000000034.zip"})
            self.assertEqual(recs[0]["reward"], 5.0)
            self.assertEqual(recs[0]["episode_length"], 5.0)
            self.assertEqual(recs[1]["value_loss"], 1.0, "train/ values of the previous update, renamed")
            self.assertAlmostEqual(recs[1]["entropy"], 0.69)
            self.assertEqual(recs[1]["learning_rate"], 0.001)
            self.assertEqual(recs[1]["train/clip_range"], 0.2, "other values under SB3's names")
            ckpt = os.path.join(tmp, "ckpt", "ckpt-000000000034.zip")
            with sweep_env(**trial_env(tmp, RLSWEEP_STOP_AT_STEP="64", RLSWEEP_TOTAL_STEPS="64", RLSWEEP_RESUME_FROM=ckpt,
                                        RLSWEEP_PARAMS='{"learning_rate": 0.002}')):
                cfg = rlsweep.params({"learning_rate": 3e-4, "clip_range": 0.2})
                model = rlsweep.sb3.resume(stable_baselines3.PPO, "env", **cfg) or self.fail("did not resume")
                self.assertEqual((model.num_timesteps, model.learning_rate), (34, 0.002), "PBT: the new learning rate wins")
                rlsweep.sb3.learn(model, total_timesteps=10**6)
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual([r["step"] for r in recs], [16, 32, 34, 50, 66, 66], "SB3 ends at the rollout past total_timesteps")
            self.assertEqual(model.num_timesteps, 66)

    def test_sigterm_stops_learn(self):
        with tempfile.TemporaryDirectory() as tmp, sweep_env(**trial_env(tmp, RLSWEEP_STOP_AT_STEP="1000")):
            model = stable_baselines3.PPO("MlpPolicy", "env")
            seg = rlsweep.segment()

            class Term(stable_baselines3.BaseCallback):
                def _on_step(self):
                    if self.num_timesteps == 20:
                        seg._on_signal(15, None)  # what SIGTERM runs
                    return True

            with contextlib.redirect_stderr(io.StringIO()):
                rlsweep.sb3.learn(model, total_timesteps=1000, callback=Term())
            self.assertEqual(model.num_timesteps, 22, "the environment step after the signal")
            self.assertEqual(read_jsonl(os.path.join(tmp, "m.jsonl"))[-1], {"step": 22, "checkpoint": "ckpt-000000000022.zip"})

    def test_outside_a_sweep_learns_the_given_steps(self):
        with sweep_env():
            model = stable_baselines3.PPO("MlpPolicy", "env")
            self.assertIsNone(rlsweep.sb3.resume(stable_baselines3.PPO, "env"))
            rlsweep.sb3.learn(model, total_timesteps=48)
        self.assertEqual(model.num_timesteps, 48)


class RslRlTest(unittest.TestCase):
    CFG = {"algorithm": {"learning_rate": 1e-3}, "num_steps_per_env": 4, "save_interval": 50}

    def runner(self, tmp):
        return rsl_rl.runners.OnPolicyRunner(rsl_rl.runners.VecEnv(num_envs=2, episode_len=3), dict(self.CFG), log_dir=tmp)

    def test_records_stop_checkpoint_resume(self):
        with tempfile.TemporaryDirectory() as tmp:
            with sweep_env(**trial_env(tmp, RLSWEEP_STOP_AT_STEP="24", RLSWEEP_TOTAL_STEPS="48")), \
                    contextlib.redirect_stdout(io.StringIO()):
                r = self.runner(tmp)
                self.assertEqual(rlsweep.rsl_rl.learn(r, num_learning_iterations=1500), 24)
            self.assertEqual(r.logged, [0, 1, 2])
            recs = read_jsonl(os.path.join(tmp, "m.jsonl"))
            self.assertEqual([x["step"] for x in recs], [8, 16, 24, 24])
            self.assertEqual(recs[-1], {"step": 24, "checkpoint": "ckpt-000000000024.pt"})
            first = recs[0]
            self.assertEqual((first["value_loss"], first["policy_loss"], first["entropy"]), (0.5, -0.02, 1.2))
            self.assertEqual((first["action_std"], first["action_std_min"], first["learning_rate"]), (0.375, 0.25, 1e-3))
            self.assertEqual((first["reward"], first["episode_length"]), (0.0, 3.0))
            self.assertEqual(first["Episode_Reward/track"], 0.5)
            with open(os.path.join(tmp, "ckpt", "ckpt-000000000024.pt")) as f:
                self.assertEqual(json.load(f)["iter"], 2)
            resume = os.path.join(tmp, "ckpt", "ckpt-000000000024.pt")
            with sweep_env(**trial_env(tmp, RLSWEEP_STOP_AT_STEP="48", RLSWEEP_TOTAL_STEPS="48", RLSWEEP_RESUME_FROM=resume)), \
                    contextlib.redirect_stdout(io.StringIO()):
                r = self.runner(tmp)
                self.assertEqual(rlsweep.rsl_rl.learn(r, num_learning_iterations=1500), 48)
            self.assertEqual(r.logged, [3, 4, 5], "goes on with the iteration after the checkpoint's")
            self.assertEqual([x["step"] for x in read_jsonl(os.path.join(tmp, "m.jsonl"))], [8, 16, 24, 24, 32, 40, 48, 48])

    def test_outside_a_sweep_runs_the_iterations(self):
        with tempfile.TemporaryDirectory() as tmp, sweep_env(), contextlib.redirect_stdout(io.StringIO()):
            r = self.runner(tmp)
            self.assertEqual(rlsweep.rsl_rl.learn(r, num_learning_iterations=5), 40)
            self.assertEqual(r.logged, [0, 1, 2, 3, 4])


@unittest.skipUnless(torch is not None, "torch not installed")
class CleanRLTest(unittest.TestCase):
    def test_tags_and_checkpoint_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            agent = torch.nn.Linear(2, 1)
            opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
            with sweep_env(**trial_env(tmp)):
                w = rlsweep.cleanrl.SummaryWriter()
                w.add_scalar("charts/episodic_return", 9.0, 128)
                w.add_scalar("losses/clipfrac", 0.1, 128)
                name = rlsweep.cleanrl.save(128, 1, agent, opt)
                w.close()
            self.assertEqual(read_jsonl(os.path.join(tmp, "m.jsonl")),
                             [{"step": 128, "reward": 9.0, "clip_fraction": 0.1}, {"step": 128, "checkpoint": name}])
            agent2 = torch.nn.Linear(2, 1)
            opt2 = torch.optim.Adam(agent2.parameters(), lr=5e-3)
            step, it = rlsweep.cleanrl.load(os.path.join(tmp, "ckpt", name), agent2, opt2)
            self.assertEqual((step, it), (128, 2))
            self.assertTrue(torch.equal(agent.weight, agent2.weight))
            self.assertEqual(opt2.param_groups[0]["lr"], 5e-3, "the trial's learning rate, not the checkpoint's")


if __name__ == "__main__":
    unittest.main()
