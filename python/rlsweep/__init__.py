"""rlsweep's trainer contract for Python training scripts (docs/trainer-contract.md, docs/probes.md).

Stdlib only, Python >= 3.8. This file is the whole core: copy it next to a script as rlsweep.py, or
`pip install ./python` from the rlsweep repository. Outside a sweep (no RLSWEEP_* variables) every call
is harmless: params() returns the defaults, log() and checkpoint() do nothing, segment() never stops a
loop, probe() returns None. So a script using it still runs on its own.

    import rlsweep
    cfg = rlsweep.params({"lr": 3e-4, "clip": 0.2})       # the trial's values over the defaults, typed as them
    seg = rlsweep.segment()                                # stop step, resume path, SIGTERM
    ... if seg.resume_from: state = torch.load(seg.resume_from)
    ... each iteration: rlsweep.log(step, reward=r, value_loss=vl); if seg.should_stop(step): break
    rlsweep.checkpoint(step, lambda path: torch.save(state, path))
"""

import json
import math
import os
import shutil
import signal
import sys
import threading

__all__ = [
    "params", "log", "segment", "checkpoint", "resume", "probe", "report_probe", "in_sweep",
    "gpu_memory_fraction", "apply_gpu_memory_fraction", "precision", "apply_precision",
    "Params", "ParamError", "Segment", "Probe", "ProbeEnv", "Discrete", "Box", "PROBES", "EXIT_DECLINE",
]

__version__ = "0.1.0"

# The contract's variables (docs/trainer-contract.md, "Environment"; docs/probes.md, the protocol).
ENV_SWEEP_ID = "RLSWEEP_SWEEP_ID"
ENV_TRIAL_ID = "RLSWEEP_TRIAL_ID"
ENV_SEED = "RLSWEEP_SEED"
ENV_PARAMS = "RLSWEEP_PARAMS"
ENV_METRICS_FILE = "RLSWEEP_METRICS_FILE"
ENV_TB_DIR = "RLSWEEP_TB_DIR"
ENV_CHECKPOINT_DIR = "RLSWEEP_CHECKPOINT_DIR"
ENV_RESUME_FROM = "RLSWEEP_RESUME_FROM"
ENV_STOP_AT_STEP = "RLSWEEP_STOP_AT_STEP"
ENV_TOTAL_STEPS = "RLSWEEP_TOTAL_STEPS"
ENV_GPU_MEMORY_FRACTION = "RLSWEEP_GPU_MEMORY_FRACTION"
ENV_PROBE = "RLSWEEP_PROBE"
ENV_PROBE_RESULT = "RLSWEEP_PROBE_RESULT"
ENV_PROBE_GAMMA = "RLSWEEP_PROBE_GAMMA"

EXIT_DECLINE = 3  # the probe protocol's exit status for "this trainer does not have that action space"

_RESERVED = ("step", "checkpoint")  # keys of a metrics record with a meaning of their own

# Called before a checkpoint is announced: writers that hold a step's values back (rlsweep.tensorboard)
# write them first, so the records stay in step order.
_before_checkpoint = []


def _env(name):
    v = os.environ.get(name, "")
    return v if v.strip() else None


def _env_int(name):
    v = _env(name)
    if v is None:
        return None
    try:
        return int(v.strip())
    except ValueError:
        raise ValueError("%s: got %r, want an integer (rlsweep sets it; do not set it by hand)" % (name, v)) from None


def in_sweep():
    """Whether this process runs under rlsweep (a trial's segment or a probe run)."""
    return any(_env(n) is not None for n in (ENV_TRIAL_ID, ENV_METRICS_FILE, ENV_PROBE))


def _warn(msg):
    print("rlsweep: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Parameters


class ParamError(ValueError):
    """A trial parameter whose value does not fit the script's default (its name, value and type)."""


class Params(dict):
    """The merged parameters: a dict that also reads as attributes (cfg.lr is cfg["lr"])."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError("parameter %r: not among the defaults or the trial's parameters (%s)"
                                 % (name, ", ".join(sorted(self)) or "none")) from None

    def __setattr__(self, name, value):
        self[name] = value


_TRUE = ("1", "true", "yes", "on", "t", "y")
_FALSE = ("0", "false", "no", "off", "f", "n")


def _coerce(name, value, default):
    """value (from RLSWEEP_PARAMS's JSON) as the type of default; ParamError names what is wrong."""

    def bad(want):
        return ParamError("parameter %r: got %s (%s), want %s like the default %r; fix the sweep's "
                          "parameters or the script's default" % (name, json.dumps(value), type(value).__name__, want, default))

    if default is None:
        return value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise bad("a boolean (true/false, 1/0, yes/no, on/off)")
    if isinstance(default, int):
        if isinstance(value, bool):
            raise bad("an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                try:
                    f = float(value)
                except ValueError:
                    raise bad("an integer") from None
                if math.isfinite(f) and f == int(f):
                    return int(f)
        raise bad("an integer")
    if isinstance(default, float):
        if isinstance(value, bool):
            raise bad("a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise bad("a number")
    if isinstance(default, str):
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return json.dumps(value)
        raise bad("a string")
    if isinstance(default, (list, tuple)):
        items = value
        if isinstance(value, str):
            items = [x for x in value.replace(" ", "").split(",") if x]
        if not isinstance(items, list):
            raise bad("a list (a JSON array or comma-separated)")
        if default:
            items = [_coerce("%s[%d]" % (name, i), x, default[0]) for i, x in enumerate(items)]
        return type(default)(items)
    return value


def params(defaults=None, strict=False):
    """The trial's parameters (RLSWEEP_PARAMS) merged over defaults, each typed as its default.

    defaults: a dict, a dataclass instance or an argparse.Namespace; the result is of the same kind
    (a Params dict, dataclasses.replace(defaults, ...), a new Namespace). Ints stay ints (64.0 → 64),
    floats take ints, bools read true/false/1/0/yes/no/on/off, lists and tuples read JSON arrays or
    "64,64". A default named seed takes the trial's seed (RLSWEEP_SEED) unless a parameter sets it.
    A value that does not fit raises ParamError naming the parameter. A parameter the
    defaults lack is kept as given, with a warning on stderr naming it (strict=True: an error),
    since a sweep parameter the script never reads is usually a typo. Outside a sweep: the defaults.
    """
    raw = _env(ENV_PARAMS)
    given = {}
    if raw is not None:
        try:
            given = json.loads(raw)
        except ValueError as e:
            raise ParamError("%s: got %r, not JSON (%s); rlsweep sets it to a JSON object" % (ENV_PARAMS, raw[:200], e)) from None
        if not isinstance(given, dict):
            raise ParamError("%s: got %r, want a JSON object" % (ENV_PARAMS, raw[:200]))

    kind, base = "dict", {}
    if defaults is None:
        pass
    elif isinstance(defaults, dict):
        base = dict(defaults)
    elif hasattr(defaults, "__dataclass_fields__"):
        import dataclasses

        kind, base = "dataclass", {f.name: getattr(defaults, f.name) for f in dataclasses.fields(defaults)}
    elif hasattr(defaults, "__dict__"):
        kind, base = "namespace", dict(vars(defaults))
    else:
        raise TypeError("rlsweep.params: defaults must be a dict, a dataclass instance or an argparse.Namespace, got %s"
                        % type(defaults).__name__)

    seed = _env_int(ENV_SEED)
    if seed is not None and "seed" in base and "seed" not in given:
        given = dict(given, seed=seed)  # the trial's seed, where the script has one
    merged = dict(base)
    unknown = []
    for k, v in given.items():
        if k in base:
            merged[k] = _coerce(k, v, base[k])
        else:
            unknown.append(k)
            merged[k] = v
    if unknown:
        msg = ("the sweep sets %s, which the script's defaults lack (%s)"
               % (", ".join(repr(k) for k in sorted(unknown)), ", ".join(sorted(base)) or "none"))
        if strict:
            raise ParamError(msg + "; fix the parameter's name in the sweep or add a default for it")
        if base:
            _warn(msg + ": kept as given")
    if kind == "dataclass":
        import dataclasses

        known = {k: v for k, v in merged.items() if k in base}
        return dataclasses.replace(defaults, **known)
    if kind == "namespace":
        ns = type(defaults)()
        for k, v in merged.items():
            setattr(ns, k, v)
        return ns
    return Params(merged)


# ---------------------------------------------------------------------------------------------------
# Metrics


class _Writer:
    """Appends JSON lines to RLSWEEP_METRICS_FILE: each record one write of a whole line, flushed, so
    the worker tailing the file never reads half a record followed by a pause."""

    def __init__(self):
        self._lock = threading.Lock()
        self._f = None
        self._path = None
        self._last_step = None
        self._skipped = set()

    def _file(self):
        path = _env(ENV_METRICS_FILE)
        if path is None:
            return None
        if self._f is None or path != self._path:
            if self._f is not None:
                self._f.close()
            self._f, self._path = open(path, "a", encoding="utf-8"), path
            self._last_step = None
        return self._f

    def write(self, step, values, checkpoint=None):
        step = _step(step)
        rec = {"step": step}
        for k, v in values.items():
            if not isinstance(k, str):
                k = str(k)
            if k in _RESERVED:
                self._skip(k, "a key of its own in the contract")
                continue
            x = _scalar(v)
            if x is None:
                self._skip(k, "not a number (%s)" % type(v).__name__)
                continue
            rec[k] = x
        if checkpoint is not None:
            rec["checkpoint"] = checkpoint
        with self._lock:
            f = self._file()
            if f is None:
                return None
            if self._last_step is not None and step < self._last_step:
                raise ValueError("rlsweep.log: step %d after step %d: the contract's step (environment steps so far) "
                                 "must not decrease; pass the global step counter" % (step, self._last_step))
            self._last_step = step
            f.write(json.dumps(rec, allow_nan=True) + "\n")
            f.flush()
        return rec

    def _skip(self, key, why):
        if key not in self._skipped:
            self._skipped.add(key)
            _warn("metric %r skipped: %s (said once per key)" % (key, why))

    def close(self):
        with self._lock:
            if self._f is not None:
                self._f.close()
            self._f, self._path = None, None


def _step(step):
    s = _scalar(step)
    if s is None or not math.isfinite(s) or s != int(s) or s < 0:
        raise ValueError("rlsweep.log: step: got %r, want an integer >= 0 (environment steps so far)" % (step,))
    return int(s)


def _scalar(v):
    """v as an int or float, or None when it is no single number. numpy and torch scalars, 0-d and
    one-element arrays and tensors (via .item(), after .detach().cpu() where present) are numbers;
    NaN and ±inf stay as they are (written NaN, Infinity, -Infinity, which rlsweep reads)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v
    try:
        numel = getattr(v, "numel", None)  # torch
        n = numel() if callable(numel) else getattr(v, "size", None)  # numpy: size is an int
        if isinstance(n, int) and n != 1:
            return None
        if hasattr(v, "detach"):
            v = v.detach()
        if hasattr(v, "cpu"):
            v = v.cpu()
        if hasattr(v, "item"):
            x = v.item()
            if isinstance(x, (int, float)) and not isinstance(x, complex):
                return x if not isinstance(x, bool) else int(x)
            return None
        if hasattr(v, "__float__") and not isinstance(v, (str, bytes)):
            return float(v)
    except Exception:  # a value that cannot be read as a number is skipped, never a crash
        return None
    return None


_writer = _Writer()


def log(*args, **metrics):
    """Appends one record to RLSWEEP_METRICS_FILE and flushes it: log(step, reward=r, ...) or
    log({"reward": r, ...}, step=N) (a dict holding "step" needs no step=).

    step is the environment steps so far (an integer, never decreasing). Values may be Python numbers,
    numpy or torch scalars and one-element tensors; NaN and ±inf are written as NaN, Infinity and
    -Infinity. Anything else (strings, None, larger tensors) is skipped with one warning per key on
    stderr, never an exception. Returns the record written, or None outside a sweep."""
    if len(args) > 1:
        raise TypeError("rlsweep.log: metrics go by name, log(step, reward=r), or in a dict, log({...}, step=N)")
    step = metrics.pop("step", None)
    if args and isinstance(args[0], dict):
        values = dict(args[0])
        if step is None:
            step = values.get("step")
        values.pop("step", None)
        values.update(metrics)
    else:
        if args:
            if step is not None:
                raise TypeError("rlsweep.log: the step given twice")
            step = args[0]
        values = metrics
    if step is None:
        raise TypeError("rlsweep.log: no step; call log(step, reward=...) or log({...}, step=N)")
    return _writer.write(step, values)


# ---------------------------------------------------------------------------------------------------
# Segments, checkpoints, the graceful stop


class Segment:
    """This process's part of the trial (docs/trainer-contract.md, "Checkpoints and segments").

    stop_at: the step at which to checkpoint and exit 0 (RLSWEEP_STOP_AT_STEP; None outside a sweep).
    resume_from: the checkpoint to load, a file or a directory (RLSWEEP_RESUME_FROM), or None.
    checkpoint_dir: where checkpoint() writes (RLSWEEP_CHECKPOINT_DIR), or None.
    total_steps: the trial's whole budget (RLSWEEP_TOTAL_STEPS), or None; seed, trial_id, sweep_id.
    stop_signal: "SIGTERM" once rlsweep asked for a graceful stop (pruned, PBT, cancelled, worker
    shutting down), else None. should_stop(step) is True at stop_at or after that signal.
    """

    def __init__(self, environ_only=False):
        self.stop_at = _env_int(ENV_STOP_AT_STEP)
        self.total_steps = _env_int(ENV_TOTAL_STEPS)
        self.seed = _env_int(ENV_SEED)
        self.resume_from = _env(ENV_RESUME_FROM)
        self.checkpoint_dir = _env(ENV_CHECKPOINT_DIR)
        self.trial_id = _env(ENV_TRIAL_ID)
        self.sweep_id = _env(ENV_SWEEP_ID)
        self.stop_signal = None
        self._previous = {}
        if not environ_only and in_sweep():
            self._install()

    def _install(self):
        if threading.current_thread() is not threading.main_thread():
            _warn("segment() called outside the main thread: SIGTERM is not handled (call it from the main thread)")
            return
        for s in (signal.SIGTERM,):
            self._previous[s] = signal.signal(s, self._on_signal)

    def _on_signal(self, signum, _frame):
        if self.stop_signal is not None:
            # A second signal: the script did not stop at the first. Do what the previous handler does.
            prev = self._previous.get(signum)
            signal.signal(signum, prev if prev is not None else signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.stop_signal = signal.Signals(signum).name
        _warn("%s received: stopping at the end of this iteration with a checkpoint" % self.stop_signal)

    def should_stop(self, step):
        """True when the loop must end now: step reached stop_at, or rlsweep sent SIGTERM. Call it
        once per iteration, after logging the iteration; then checkpoint and exit 0."""
        if self.stop_signal is not None:
            return True
        return self.stop_at is not None and int(_step(step)) >= self.stop_at

    def steps(self, default):
        """The trial's total steps (RLSWEEP_TOTAL_STEPS), or default outside a sweep."""
        return self.total_steps if self.total_steps is not None else default

    def restore(self, load_fn):
        """load_fn(resume_from) when resuming, else None."""
        return load_fn(self.resume_from) if self.resume_from else None

    def restore_handlers(self):
        """Puts back the signal handlers segment() replaced (tests, or a script done with the loop)."""
        for s, h in self._previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        self._previous = {}

    def __repr__(self):
        return ("Segment(stop_at=%r, resume_from=%r, checkpoint_dir=%r, total_steps=%r, stop_signal=%r)"
                % (self.stop_at, self.resume_from, self.checkpoint_dir, self.total_steps, self.stop_signal))


_segment = None


def segment():
    """The current Segment (created once; it installs the SIGTERM handler under rlsweep)."""
    global _segment
    if _segment is None:
        _segment = Segment()
    return _segment


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(path):
    if os.path.isdir(path):
        for root, _dirs, files in os.walk(path):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    os.fsync(f.fileno())
            _fsync_dir(root)
    else:
        with open(path, "rb") as f:
            os.fsync(f.fileno())


def checkpoint(step, save_fn=None, name=None, ext=".pt", **objects):
    """Writes a checkpoint atomically and announces it; returns its name (relative to
    RLSWEEP_CHECKPOINT_DIR), or None outside a sweep (save_fn is then not called).

    save_fn(path) writes the checkpoint at path: a file (torch.save(state, path)) or a directory
    (model.save_pretrained(path), orbax). It writes a temporary name beside the final one; rlsweep's
    package then fsyncs it, renames it to ckpt-<step, 12 digits><ext> (or name), fsyncs the
    directory, and only then appends {"step": step, "checkpoint": name} to the metrics: the contract
    uploads what is announced, so a half-written checkpoint is never announced.

    Without save_fn, objects with a state_dict() (torch modules, optimisers, schedulers) are saved
    with torch.save as {"step": step, "<keyword>": obj.state_dict(), ...}: checkpoint(step, net=net,
    opt=opt); resume(net=net, opt=opt) loads them back."""
    step = _step(step)
    if save_fn is None:
        if not objects:
            raise TypeError("rlsweep.checkpoint(step, save_fn) or checkpoint(step, net=net, opt=opt): nothing to save")
        save_fn = _torch_saver(step, objects)
    elif objects:
        raise TypeError("rlsweep.checkpoint: got save_fn and objects (%s); pass one or the other" % ", ".join(sorted(objects)))
    directory = _env(ENV_CHECKPOINT_DIR)
    if directory is None:
        return None
    for flush in list(_before_checkpoint):
        flush()
    if name is None:
        name = "ckpt-%012d%s" % (step, ext)
    if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
        raise ValueError("rlsweep.checkpoint: name %r, want a relative path inside the checkpoint directory" % name)
    final = os.path.join(directory, name)
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, ".tmp-%d-%s" % (os.getpid(), os.path.basename(final)))
    if os.path.isdir(tmp):
        shutil.rmtree(tmp)
    elif os.path.exists(tmp):
        os.remove(tmp)
    try:
        save_fn(tmp)
        if not os.path.exists(tmp):
            raise RuntimeError("rlsweep.checkpoint: save_fn wrote nothing at the path it was given (%s)" % tmp)
        _fsync_tree(tmp)
        if os.path.isdir(tmp) and os.path.isdir(final):
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        elif os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_dir(parent)
    _writer.write(step, {}, checkpoint=name.replace(os.sep, "/"))
    return name


def _torch_saver(step, objects):
    bad = [k for k, o in objects.items() if not hasattr(o, "state_dict")]
    if bad:
        raise TypeError("rlsweep.checkpoint: %s has no state_dict(); pass torch modules and optimisers, or a save_fn"
                        % ", ".join(bad))
    state = {"step": step}
    state.update((k, o.state_dict()) for k, o in objects.items())

    def save(path):
        import torch

        torch.save(state, path)

    return save


def gpu_memory_fraction():
    """The share of each of its GPUs this trial holds (RLSWEEP_GPU_MEMORY_FRACTION: 0.25 for
    resources.gpus 0.25, 1.0 for a whole GPU), or None when it holds none or runs outside a sweep."""
    v = _env(ENV_GPU_MEMORY_FRACTION)
    if v is None:
        return None
    try:
        f = float(v.strip())
    except ValueError:
        f = float("nan")
    if not 0 < f <= 1:
        raise ValueError("%s: got %r, want a fraction in (0, 1] (rlsweep sets it; do not set it by hand)"
                         % (ENV_GPU_MEMORY_FRACTION, v))
    return f


def apply_gpu_memory_fraction(device=None):
    """Keeps PyTorch's CUDA allocator to this trial's share of the GPU, for trials that share one
    (resources.gpus 0.25): torch.cuda.set_per_process_memory_fraction(share, device), on every visible
    GPU when device is None. Call it before the first CUDA allocation. Returns the share applied, or
    None when there is nothing to apply (no share, a whole GPU, no CUDA). Beyond the share, an
    allocation raises torch.OutOfMemoryError in this trial instead of starving the others; with
    several trials on a GPU, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (trainer.environment)
    keeps fragmentation from using up the share early."""
    f = gpu_memory_fraction()
    if f is None or f >= 1:
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    devices = [device] if device is not None else range(torch.cuda.device_count())
    for d in devices:
        torch.cuda.set_per_process_memory_fraction(f, d)
    return f


PRECISIONS = ("default", "fp32", "tf32")


def precision():
    """The resources.precision setting this trial runs under (RLSWEEP_PRECISION): "default", "fp32" or
    "tf32"; None without one. Raises ValueError on any other value."""
    p = os.environ.get("RLSWEEP_PRECISION")
    if p is None or p == "":
        return None
    if p not in PRECISIONS:
        raise ValueError(f"RLSWEEP_PRECISION: got {p!r}, want one of {', '.join(PRECISIONS)}")
    return p


def apply_precision():
    """Sets PyTorch's float32 matmul and cuDNN precision to this trial's setting, for code that sets
    its own (torch.backends.cuda.matmul.allow_tf32 = True, say), which the environment variables the
    worker sets cannot override: "fp32" turns TF32 off (torch.set_float32_matmul_precision("highest"),
    cuDNN's allow_tf32 False), "tf32" on ("high", allow_tf32 True). Call it after the trainer's own
    settings. Returns the setting applied, or None for none or "default" (the trainer's own stand)."""
    p = precision()
    if p is None or p == "default":
        return None
    import torch

    tf32 = p == "tf32"
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    return p


def resume(**objects):
    """Loads the checkpoint checkpoint(step, **objects) wrote into the same objects when this segment
    resumes (RLSWEEP_RESUME_FROM), and returns its step; returns 0 otherwise. An optimiser keeps its
    current hyperparameters (lr, betas, ...: the trial's parameters, which PBT changes at an exploit);
    only its state (moments, counters) comes from the checkpoint."""
    seg = segment()
    if not seg.resume_from:
        return 0
    import torch

    state = torch.load(seg.resume_from, map_location="cpu")
    missing = [k for k in objects if k not in state]
    if missing:
        raise ValueError("rlsweep.resume: the checkpoint %s holds %s, not %s" % (
            seg.resume_from, ", ".join(sorted(k for k in state if k != "step")), ", ".join(missing)))
    for k, o in objects.items():
        groups = getattr(o, "param_groups", None)
        keep = [{h: v for h, v in g.items() if h != "params"} for g in groups] if groups is not None else None
        o.load_state_dict(state[k])
        if keep is not None:
            for g, h in zip(o.param_groups, keep):
                g.update(h)
    return int(state["step"])


# ---------------------------------------------------------------------------------------------------
# Probes (docs/probes.md): the five probe environments, discrete and continuous, as trainer/probes in Go.


class Discrete:
    """Gymnasium's Discrete space, in shape: n actions 0..n-1."""

    def __init__(self, n):
        self.n, self.shape, self.dtype = n, (), int

    def contains(self, a):
        try:
            return 0 <= int(a) < self.n
        except (TypeError, ValueError):
            return False

    def sample(self, rng=None):
        import random

        return (rng or random).randrange(self.n)

    def __repr__(self):
        return "Discrete(%d)" % self.n


class Box:
    """Gymnasium's Box space, in shape: low and high lists, shape (dims,)."""

    def __init__(self, low, high, shape):
        self.low, self.high, self.shape, self.dtype = list(low), list(high), tuple(shape), float

    def contains(self, x):
        xs = x if isinstance(x, (list, tuple)) else [x]
        return len(xs) == self.shape[0] and all(lo <= float(v) <= hi for v, lo, hi in zip(xs, self.low, self.high))

    def sample(self, rng=None):
        import random

        r = rng or random
        return [r.uniform(lo, hi) for lo, hi in zip(self.low, self.high)]

    def __repr__(self):
        return "Box(%r, %r, %r)" % (self.low, self.high, self.shape)


# The observations each level is judged at (trainer/probes: Probe.Obs).
_EVAL_OBS = {1: [0.0], 2: [-1.0, 1.0], 3: [0.0, 1.0], 4: [0.0], 5: [-1.0, 1.0]}
PROBES = ("1", "2", "3", "4", "5", "1c", "2c", "3c", "4c", "5c")


def _parse_probe(name):
    if name not in PROBES:
        raise ValueError("%s: got %r, want one of %s" % (ENV_PROBE, name, ", ".join(PROBES)))
    continuous = name.endswith("c")
    return int(name.rstrip("c")), continuous


class ProbeEnv:
    """One probe environment with Gymnasium's reset/step shape (trainer/probes/env.go):

    1: obs 0, reward +1, one step.          2: obs ±1 at random, reward = obs, one step.
    3: obs 0 then 1, reward 0 then +1, two steps (the only one with a non-terminal step).
    4: obs 0, reward +1 for action 1 else −1 (4c: −(a − 0.5)²).
    5: obs ±1 at random, reward +1 when the action matches the obs (1 ↔ +1) else −1 (5c: −(a − 0.5·obs)²).

    Observations are lists of one float. Discrete probes have Discrete(1) actions on 1–3 and
    Discrete(2) on 4–5; continuous ones a Box [−2, 2] of one dimension (clipped; ignored on 1c–3c).
    Episodes end terminated, never truncated. The randomness is random.Random(seed) of reset(seed=...).
    """

    def __init__(self, name):
        self.name = str(name)
        self.level, self.continuous = _parse_probe(self.name)
        self.observation_space = Box([-1.0], [1.0], (1,))
        if self.continuous:
            self.action_space = Box([-2.0], [2.0], (1,))
        else:
            self.action_space = Discrete(2 if self.level >= 4 else 1)
        self.max_episode_steps = 2 if self.level == 3 else 1
        import random

        self._rng = random.Random()
        self._obs, self._t = 0.0, 0

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng.seed(seed)
        self._t, self._obs = 0, 0.0
        if self.level in (2, 5):
            self._obs = 1.0 if self._rng.randrange(2) else -1.0
        return [self._obs], {}

    def step(self, action):
        a = _scalar(action[0] if isinstance(action, (list, tuple)) else action)
        if a is None:
            raise ValueError("probe %s: action %r, want a number" % (self.name, action))
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
            r = -(a - 0.5) ** 2 if self.continuous else (1.0 if a == 1 else -1.0)
        elif self.continuous:
            r = -(a - 0.5 * o) ** 2
        else:
            r = 1.0 if a == (1.0 if o > 0 else 0.0) else -1.0
        return [self._obs], r, True, False, {}

    def close(self):
        pass


class Probe:
    """A probe run (RLSWEEP_PROBE): train on env() for budget steps with discount gamma, then report().

    name: "1"–"5" or "1c"–"5c"; level 1–5; continuous: whether it is the Gaussian ladder;
    gamma: RLSWEEP_PROBE_GAMMA (0.5); budget: RLSWEEP_TOTAL_STEPS (10,000, or 20,000 on 4c and 5c);
    seed: RLSWEEP_SEED; eval_observations: where the value and policy are judged.
    """

    def __init__(self, name):
        self.name = name
        self.level, self.continuous = _parse_probe(name)
        g = _env(ENV_PROBE_GAMMA)
        try:
            self.gamma = float(g) if g is not None else 0.5
        except ValueError:
            raise ValueError("%s: got %r, want a number" % (ENV_PROBE_GAMMA, g)) from None
        total = _env_int(ENV_TOTAL_STEPS)
        self.budget = total if total is not None else (20000 if self.continuous and self.level >= 4 else 10000)
        self.seed = _env_int(ENV_SEED)
        self.eval_observations = [[o] for o in _EVAL_OBS[self.level]]

    @property
    def discrete(self):
        return not self.continuous

    def env(self):
        """A new probe environment (call it once per environment of a vectorised trainer)."""
        return ProbeEnv(self.name)

    def decline(self, reason=""):
        """Exits 3: this trainer does not support the probe's action space; the probe is skipped."""
        space = "continuous" if self.continuous else "discrete"
        _warn("probe %s: declined (a %s action space)%s" % (self.name, space, ": " + reason if reason else ""))
        sys.exit(EXIT_DECLINE)

    def report(self, value, policy=None, steps=None, gamma=None):
        """Writes the result record to RLSWEEP_PROBE_RESULT: value(obs) and policy(obs) at each
        evaluation observation. obs is a list of one float; value returns a number, policy the action
        probabilities (discrete) or the Gaussian's mean (continuous) as a sequence (a tensor or array
        is fine). steps: environment steps trained (default: budget); gamma: the discount used
        (default: this probe's). Values must be in reward units (undo any reward normalisation)."""
        evals = []
        for obs in self.eval_observations:
            e = {"obs": list(obs), "value": value(list(obs))}
            if policy is not None:
                e["mean" if self.continuous else "probs"] = policy(list(obs))
            evals.append(e)
        return report_probe(evals, steps=self.budget if steps is None else steps,
                            gamma=self.gamma if gamma is None else gamma, probe_name=self.name)

    def __repr__(self):
        return "Probe(%r, gamma=%r, budget=%r)" % (self.name, self.gamma, self.budget)


def probe(action_space=None):
    """The probe this run trains on, or None when it is not a probe run (RLSWEEP_PROBE unset).

    action_space: "discrete" or "continuous" (or a Probe's env's space type) — the one the trainer
    supports; a probe of the other kind is declined at once (exit 3, the protocol's "skip"). Leave it
    out to decline yourself with Probe.decline()."""
    name = _env(ENV_PROBE)
    if name is None:
        return None
    p = Probe(name.strip())
    if action_space is not None:
        if action_space not in ("discrete", "continuous"):
            raise ValueError("rlsweep.probe: action_space: got %r, want \"discrete\" or \"continuous\"" % (action_space,))
        if (action_space == "continuous") != p.continuous:
            p.decline("this trainer's action space is %s" % action_space)
    return p


def _finite_list(name, xs):
    if hasattr(xs, "detach"):
        xs = xs.detach()
    if hasattr(xs, "cpu"):
        xs = xs.cpu()
    if hasattr(xs, "tolist"):
        xs = xs.tolist()
    if not isinstance(xs, (list, tuple)):
        xs = [xs]
    while len(xs) == 1 and isinstance(xs[0], (list, tuple)):  # a batch of one: [[p0, p1]]
        xs = xs[0]
    return [_finite(name, x) for x in xs]


def _finite(name, x):
    v = _scalar(x)
    if v is None:
        raise ValueError("rlsweep.report_probe: %s: got %r, want a number" % (name, x))
    v = float(v)
    return v if math.isfinite(v) else None  # JSON has no NaN: null, which the judge fails


def report_probe(evals, steps, gamma=None, probe_name=None, path=None):
    """Writes the probe protocol's record atomically to RLSWEEP_PROBE_RESULT (or path).

    evals: one dict per evaluation observation: {"obs": [o], "value": v} plus "probs" (discrete) or
    "mean" (continuous); non-finite numbers are written as null (a failure, as the protocol says)."""
    name = probe_name or _env(ENV_PROBE)
    if name is None:
        raise ValueError("rlsweep.report_probe: no probe (%s is unset); call it only when rlsweep.probe() returned one" % ENV_PROBE)
    if gamma is None:
        g = _env(ENV_PROBE_GAMMA)
        gamma = float(g) if g is not None else 0.5
    rec = {"probe": name, "gamma": float(gamma), "steps": int(steps), "evals": []}
    for e in evals:
        out = {"obs": [float(o) for o in e["obs"]], "value": _finite("value", e["value"])}
        for k in ("probs", "mean"):
            if e.get(k) is not None:
                out[k] = _finite_list(k, e[k])
        rec["evals"].append(out)
    path = path or _env(ENV_PROBE_RESULT)
    if path is None:
        raise ValueError("rlsweep.report_probe: %s is unset: rlsweep names the result file in probe runs" % ENV_PROBE_RESULT)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rec, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return rec
