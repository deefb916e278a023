"""Stable-Baselines3: a callback that reports each rollout to rlsweep and stops at the segment's end,
and helpers that resume and checkpoint (docs/trainer-contract.md, "Stable-Baselines3").

    from stable_baselines3 import PPO
    import rlsweep, rlsweep.sb3
    cfg = rlsweep.params({"learning_rate": 3e-4, "clip_range": 0.2})
    model = rlsweep.sb3.resume(PPO, env, **cfg) or PPO("MlpPolicy", env, **cfg)
    rlsweep.sb3.learn(model, total_timesteps=100_000)      # was model.learn(100_000)

The callback (Callback, a stable_baselines3 BaseCallback) is built on SB3's documented callback API:
_on_step after every env.step (self.num_timesteps, self.locals["infos"] with the Monitor wrapper's
"episode" entries), _on_rollout_end after each rollout, self.logger.name_to_value holding the values
SB3 recorded since its last dump (train/* of the previous update). It writes one record per rollout at
self.num_timesteps: reward and episode_length over the episodes that ended in it, SB3's train/ and
time/ values under canonical names (TAGS) and every other recorded value under SB3's name. Once a
rollout ends at or past RLSWEEP_STOP_AT_STEP (SB3 then trains on it), or after SIGTERM, _on_step returns
False at the next environment step, which ends model.learn; learn() then checkpoints at
model.num_timesteps (the stop step, or past it by the rollout's remainder and one step per environment).

stable_baselines3 is not installed where rlsweep's tests run (no PyPI): the tests drive this module with
a fake of the same names and call order (python/tests/test_integrations.py).
"""

import math

import rlsweep

try:
    from stable_baselines3.common.callbacks import BaseCallback
except ImportError as e:  # pragma: no cover - exercised only without SB3
    _import_error = e

    class BaseCallback:  # noqa: D101 - a stand-in so this module imports; Callback() then says why it cannot run
        def __init__(self, verbose=0):
            raise ImportError("rlsweep.sb3 needs stable_baselines3 (pip install stable-baselines3): %s" % _import_error)

# SB3's logger keys → canonical keys. entropy_loss is −entropy: it is negated on the way.
TAGS = {
    "train/value_loss": "value_loss",
    "train/policy_gradient_loss": "policy_loss",
    "train/approx_kl": "approx_kl",
    "train/clip_fraction": "clip_fraction",
    "train/explained_variance": "explained_variance",
    "train/learning_rate": "learning_rate",
    "train/std": "action_std",
    "time/fps": "fps",
}


class Callback(BaseCallback):
    def __init__(self, verbose=0):
        super().__init__(verbose)
        self.segment = rlsweep.segment()
        self._returns, self._lengths = [], []
        self._stop_next = False

    def _on_step(self):
        for info in self.locals.get("infos") or ():
            ep = info.get("episode") if isinstance(info, dict) else None
            if ep:
                self._returns.append(float(ep["r"]))
                self._lengths.append(float(ep["l"]))
        return not (self._stop_next or self.segment.stop_signal)

    def _on_rollout_end(self):
        values = {}
        for k, v in dict(getattr(self.logger, "name_to_value", {}) or {}).items():
            x = rlsweep._scalar(v)
            if x is None:
                continue
            if k == "train/entropy_loss":
                values["entropy"] = -x
            values[TAGS.get(k, k)] = x
        values["reward"] = sum(self._returns) / len(self._returns) if self._returns else math.nan
        if self._lengths:
            values["episode_length"] = sum(self._lengths) / len(self._lengths)
        self._returns, self._lengths = [], []
        rlsweep.log(self.num_timesteps, **values)
        self._stop_next = self.segment.should_stop(self.num_timesteps)


def resume(cls, env, **params):
    """cls.load(RLSWEEP_RESUME_FROM, env) when this segment resumes, else None. params override what
    the checkpoint holds (custom_objects: the trial's hyperparameters, which PBT changes)."""
    seg = rlsweep.segment()
    if not seg.resume_from:
        return None
    return cls.load(seg.resume_from, env=env, custom_objects=dict(params) or None)


def learn(model, total_timesteps, callback=None, **kwargs):
    """model.learn up to RLSWEEP_TOTAL_STEPS (else total_timesteps) environment steps in all, reported
    by Callback and stopped at the segment's end; then checkpoints model.save (a .zip) and announces
    it. A resumed model continues its num_timesteps (reset_num_timesteps=False). Returns the model."""
    seg = rlsweep.segment()
    total = seg.steps(total_timesteps)
    callbacks = [Callback()] + ([callback] if callback is not None and not isinstance(callback, list) else list(callback or []))
    remaining = max(0, total - int(model.num_timesteps))
    if remaining and not seg.should_stop(model.num_timesteps):
        kwargs.setdefault("reset_num_timesteps", model.num_timesteps == 0)
        model.learn(remaining, callback=callbacks, **kwargs)
    rlsweep.checkpoint(model.num_timesteps, lambda path: model.save(path), ext=".zip")
    return model
