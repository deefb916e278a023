"""rlsweep's probe environments for external trainers (docs/probes.md). Dependency-free.

The probe stage runs your trainer with RLSWEEP_PROBE naming a probe (1-5 discrete, 1c-5c continuous).
Train on ProbeEnv() for budget() steps with discount gamma(), then call write_result() with your value
and policy outputs at eval_observations(). Exit 3 (UNSUPPORTED) to decline an action space.

    env = ProbeEnv()                      # reads RLSWEEP_PROBE
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(action)
"""

import json
import math
import os
import random

UNSUPPORTED = 3  # exit status: this trainer does not support the probe's action space

_OBS = {1: [0.0], 2: [-1.0, 1.0], 3: [0.0, 1.0], 4: [0.0], 5: [-1.0, 1.0]}


def _parse(name):
    continuous = name.endswith("c")
    level = int(name[:-1] if continuous else name)
    if level not in _OBS:
        raise ValueError("RLSWEEP_PROBE: got %r, want 1-5 or 1c-5c" % name)
    return level, continuous


class ProbeEnv:
    """A probe environment with a gymnasium-like API. Observations are lists of one float.

    action_space is {"type": "discrete", "n": N} (N = 1 for probes 1-3, 2 for 4 and 5) or
    {"type": "box", "low": [-2.0], "high": [2.0], "shape": [1]} for the continuous probes.
    """

    def __init__(self, name=None):
        self.name = name or os.environ["RLSWEEP_PROBE"]
        self.level, self.continuous = _parse(self.name)
        self.observation_space = {"type": "box", "low": [-1.0], "high": [1.0], "shape": [1]}
        if self.continuous:
            self.action_space = {"type": "box", "low": [-2.0], "high": [2.0], "shape": [1]}
        else:
            self.action_space = {"type": "discrete", "n": 2 if self.level >= 4 else 1}
        self._rng = random.Random()
        self._obs, self._t = 0.0, 0

    def reset(self, seed=None):
        if seed is not None:
            self._rng.seed(seed)
        self._t, self._obs = 0, 0.0
        if self.level in (2, 5):
            self._obs = self._rng.choice([-1.0, 1.0])
        return [self._obs], {}

    def step(self, action):
        a = action[0] if isinstance(action, (list, tuple)) else action
        a = float(a)
        if self.continuous:
            a = max(-2.0, min(2.0, a))
        self._t += 1
        o = self._obs
        if self.level == 1:
            r = 1.0
        elif self.level == 2:
            r = o
        elif self.level == 3:
            if self._t == 1:
                self._obs = 1.0
                return [1.0], 0.0, False, False, {}
            r = 1.0
        elif self.level == 4:
            r = -(a - 0.5) ** 2 if self.continuous else (1.0 if int(a) == 1 else -1.0)
        else:
            if self.continuous:
                r = -(a - 0.5 * o) ** 2
            else:
                r = 1.0 if int(a) == (1 if o > 0 else 0) else -1.0
        return [self._obs], r, True, False, {}


def probe_name():
    return os.environ["RLSWEEP_PROBE"]


def eval_observations(name=None):
    """The observations at which the stage judges your value and policy."""
    level, _ = _parse(name or probe_name())
    return [[o] for o in _OBS[level]]


def gamma():
    """The discount to train with: probe 3 expects V(0) = gamma."""
    return float(os.environ.get("RLSWEEP_PROBE_GAMMA", "0.5"))


def budget():
    """Environment steps to train for."""
    return int(os.environ.get("RLSWEEP_TOTAL_STEPS", "10000"))


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None  # JSON has no NaN: null is judged a failure


def write_result(evals, gamma_used, steps, path=None):
    """Write the final record. evals: a list of dicts {"obs": [o], "value": v} plus "probs": [p0, ...]
    (discrete) or "mean": [mu] (continuous), one per eval_observations()."""
    rec = {"probe": probe_name(), "gamma": float(gamma_used), "steps": int(steps), "evals": []}
    for e in evals:
        out = {"obs": [float(o) for o in e["obs"]], "value": _finite(e["value"])}
        for k in ("probs", "mean"):
            if k in e:
                out[k] = [_finite(x) for x in e[k]]
        rec["evals"].append(out)
    path = path or os.environ["RLSWEEP_PROBE_RESULT"]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f)
    os.replace(tmp, path)
