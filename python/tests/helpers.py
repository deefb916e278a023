"""Shared by the package's tests: the package from this checkout, and a sweep's environment."""

import contextlib
import json
import os
import sys
from unittest import mock

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

import rlsweep  # noqa: E402

CONTRACT_VARS = [v for k, v in vars(rlsweep).items() if k.startswith("ENV_")]


@contextlib.contextmanager
def sweep_env(**env):
    """os.environ with every RLSWEEP_* variable removed, then env set; the package's per-process
    state (the metrics file, the segment) reset before and after."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RLSWEEP_")}
    clean.update({k: str(v) for k, v in env.items()})
    reset()
    try:
        with mock.patch.dict(os.environ, clean, clear=True):
            yield
    finally:
        reset()


def reset():
    rlsweep._writer.close()
    rlsweep._writer = rlsweep._Writer()
    if rlsweep._segment is not None:
        rlsweep._segment.restore_handlers()
    rlsweep._segment = None


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]
