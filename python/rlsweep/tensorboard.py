"""A SummaryWriter-style shim: scripts that already call writer.add_scalar(tag, value, step) report
to rlsweep with no other change (docs/trainer-contract.md, "The Python package").

    from rlsweep.tensorboard import SummaryWriter
    writer = SummaryWriter(tags={"charts/episodic_return": "reward"})    # was torch's SummaryWriter
    writer.add_scalar("charts/episodic_return", ret, global_step)

Every value logged at one step becomes one JSON-lines record: the mean per tag when a tag is logged
several times at the same step (CleanRL logs each finished episode's return). A step's record is
written when a later step is logged, at flush() and close(), and before rlsweep.checkpoint()
announces a checkpoint. tags renames tags to the contract's canonical keys; other tags keep their
names. wrapped: a real SummaryWriter to forward every call to (TensorBoard files as before);
SummaryWriter(log_dir) with torch installed makes one under log_dir itself.
"""

import rlsweep


class SummaryWriter:
    def __init__(self, log_dir=None, tags=None, wrapped=None, **kwargs):
        self.tags = dict(tags or {})
        self.wrapped = wrapped
        if wrapped is None and log_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter as TorchWriter
            except ImportError:  # no TensorBoard here: the records still reach rlsweep
                TorchWriter = None
            if TorchWriter is not None:
                self.wrapped = TorchWriter(log_dir, **kwargs)
        self._step = None
        self._sums = {}
        self._closed = False
        rlsweep._before_checkpoint.append(self.flush)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, **kwargs):
        if self.wrapped is not None:
            self.wrapped.add_scalar(tag, scalar_value, global_step, walltime, **kwargs)
        self._add(tag, scalar_value, global_step)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        if self.wrapped is not None:
            self.wrapped.add_scalars(main_tag, tag_scalar_dict, global_step, walltime)
        for k, v in tag_scalar_dict.items():
            self._add(main_tag + "/" + k, v, global_step)

    def _add(self, tag, value, step):
        if step is None:
            step = self._step if self._step is not None else 0
        step = rlsweep._step(step)
        if self._step is not None and step != self._step:
            self.flush()
        self._step = step
        x = rlsweep._scalar(value)
        key = self.tags.get(tag, tag)
        if x is None:
            self._sums.setdefault(key, (0.0, 0, value))
            return
        s, n, _ = self._sums.get(key, (0.0, 0, None))
        self._sums[key] = (s + float(x), n + 1, None)

    def flush(self):
        """Writes the pending step's record (and flushes the wrapped writer)."""
        if self._sums and self._step is not None:
            values = {k: (s / n if n else odd) for k, (s, n, odd) in self._sums.items()}
            rlsweep.log(self._step, **values)
        self._sums = {}
        if self.wrapped is not None and hasattr(self.wrapped, "flush"):
            self.wrapped.flush()

    def close(self):
        if self._closed:
            return
        self.flush()
        self._closed = True
        if self.flush in rlsweep._before_checkpoint:
            rlsweep._before_checkpoint.remove(self.flush)
        if self.wrapped is not None and hasattr(self.wrapped, "close"):
            self.wrapped.close()

    def __getattr__(self, name):
        # add_histogram, add_text, add_hparams, ...: the wrapped writer's, or nothing without one.
        if name.startswith("_") or name in ("tags", "wrapped"):
            raise AttributeError(name)
        w = self.__dict__.get("wrapped")
        if w is not None:
            return getattr(w, name)
        return lambda *a, **k: None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
