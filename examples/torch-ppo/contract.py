"""rlsweep's trainer contract (DESIGN §4; docs/ppo.md "Under the trainer contract"): the variables the
runner sets, the metrics file, checkpoints and the graceful stop. Everything here is optional, so
train.py runs standalone as well. No torch here: train.py reads the contract before importing it.

- RLSWEEP_METRICS_FILE: one JSON object per iteration appended as a line, `step` (environment steps so
  far) first; NaN and ±Inf written as Python's json writes them (NaN, Infinity), which rlsweep reads.
- RLSWEEP_CHECKPOINT_DIR: at the end of the segment (RLSWEEP_STOP_AT_STEP) and on SIGTERM,
  ckpt-<step, 12 digits>.pt is written atomically (temporary file, fsync, rename) and only then
  announced by a record {"step": N, "checkpoint": "ckpt-….pt"}: rlsweep uploads what is announced.
- RLSWEEP_RESUME_FROM: a checkpoint to continue from.
- RLSWEEP_STOP_AT_STEP: stop at the first iteration boundary at or past it, checkpoint, exit 0.
- RLSWEEP_TOTAL_STEPS: the trial's budget (the learning-rate schedule's horizon); RLSWEEP_SEED.
- SIGTERM: finish the iteration in progress, checkpoint, exit 0 (rlsweep sends SIGKILL after the
  spec's grace period, 30 s by default).
"""

import json
import os
import signal
from dataclasses import dataclass

from config import env_int


@dataclass
class Contract:
    """The contract's variables; None where unset (standalone runs)."""

    metrics_file: str = None
    checkpoint_dir: str = None
    resume_from: str = None
    stop_at_step: int = None
    total_steps: int = None
    seed: int = None
    trial_id: str = None
    probe: str = None  # RLSWEEP_PROBE: run the probe protocol instead (probe.py)

    @classmethod
    def from_environ(cls):
        """Reads os.environ; ValueError names a variable that is set but not an integer."""
        get = lambda name: os.environ.get(name) or None  # noqa: E731
        return cls(metrics_file=get("RLSWEEP_METRICS_FILE"), checkpoint_dir=get("RLSWEEP_CHECKPOINT_DIR"),
                   resume_from=get("RLSWEEP_RESUME_FROM"), stop_at_step=env_int("RLSWEEP_STOP_AT_STEP", None),
                   total_steps=env_int("RLSWEEP_TOTAL_STEPS", None), seed=env_int("RLSWEEP_SEED", None),
                   trial_id=get("RLSWEEP_TRIAL_ID"), probe=get("RLSWEEP_PROBE"))


class MetricsWriter:
    """Appends one JSON line per record to the metrics file; does nothing without one."""

    def __init__(self, path):
        self.f = open(path, "a", encoding="utf-8") if path else None

    def write(self, step, values=None, checkpoint=None):
        if self.f is None:
            return
        rec = {"step": int(step)}
        rec.update((k, float(v)) for k, v in (values or {}).items())
        if checkpoint:
            rec["checkpoint"] = checkpoint
        # One write of a whole line, flushed: the runner tails the file and must never see half a
        # record followed by a pause (it would count a malformed line).
        self.f.write(json.dumps(rec, allow_nan=True) + "\n")
        self.f.flush()

    def close(self):
        if self.f:
            self.f.close()


def write_checkpoint(directory, step, write):
    """Writes a checkpoint atomically — write(file) into a temporary file beside it, fsync, rename, fsync
    the directory — and returns its name relative to directory, to be announced only now."""
    os.makedirs(directory, exist_ok=True)
    name = "ckpt-%012d.pt" % step
    path = os.path.join(directory, name)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself survives a crash
    finally:
        os.close(fd)
    return name


class StopFlag:
    """Set by SIGTERM (rlsweep's graceful stop) or SIGINT; the training loop checks it between
    iterations, so a stop never leaves a half-applied update behind."""

    def __init__(self):
        self.signal = None
        signal.signal(signal.SIGTERM, self._set)
        signal.signal(signal.SIGINT, self._set)

    def _set(self, signum, _frame):
        self.signal = signal.Signals(signum).name

    @property
    def requested(self):
        return self.signal is not None
