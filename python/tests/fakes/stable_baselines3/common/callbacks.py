"""Fake of stable_baselines3.common.callbacks (see ../../README.md)."""


class BaseCallback:
    def __init__(self, verbose=0):
        self.verbose = verbose
        self.n_calls = 0
        self.num_timesteps = 0
        self.locals = {}
        self.globals = {}
        self.model = None

    def init_callback(self, model):
        self.model = model
        self.training_env = model.env
        self.logger = model.logger

    def on_training_start(self, locals_, globals_):
        self.locals, self.globals = locals_, globals_
        self.num_timesteps = self.model.num_timesteps
        self._on_training_start()

    def _on_training_start(self):
        pass

    def on_rollout_start(self):
        self._on_rollout_start()

    def _on_rollout_start(self):
        pass

    def on_step(self):
        self.n_calls += 1
        self.num_timesteps = self.model.num_timesteps
        return self._on_step()

    def _on_step(self):
        return True

    def on_rollout_end(self):
        self._on_rollout_end()

    def _on_rollout_end(self):
        pass

    def on_training_end(self):
        self._on_training_end()

    def _on_training_end(self):
        pass

    def update_locals(self, locals_):
        self.locals.update(locals_)


class CallbackList(BaseCallback):
    def __init__(self, callbacks):
        super().__init__()
        self.callbacks = callbacks

    def init_callback(self, model):
        super().init_callback(model)
        for c in self.callbacks:
            c.init_callback(model)

    def on_training_start(self, locals_, globals_):
        for c in self.callbacks:
            c.on_training_start(locals_, globals_)

    def on_rollout_start(self):
        for c in self.callbacks:
            c.on_rollout_start()

    def on_step(self):
        ok = True
        for c in self.callbacks:
            ok = c.on_step() and ok
        return ok

    def on_rollout_end(self):
        for c in self.callbacks:
            c.on_rollout_end()

    def on_training_end(self):
        for c in self.callbacks:
            c.on_training_end()

    def update_locals(self, locals_):
        for c in self.callbacks:
            c.update_locals(locals_)
