"""rsl_rl and Isaac Lab: a hook on OnPolicyRunner that reports each iteration to rlsweep, stops at the
segment's end with a checkpoint, and resumes (docs/trainer-contract.md, "rsl_rl and Isaac Lab").

    runner = OnPolicyRunner(env, train_cfg, log_dir=log_dir, device=device)   # as before
    rlsweep.rsl_rl.learn(runner, num_learning_iterations=1500)              # was runner.learn(1500)

learn() resumes from RLSWEEP_RESUME_FROM (runner.load; the run goes on with the iteration after the
checkpoint's), wraps runner.log — which OnPolicyRunner.learn calls once per iteration with its locals
when log_dir is set — so that each call also writes a record at the iteration's environment steps
((it + 1) × num_steps_per_env × env.num_envs), and stops learn at RLSWEEP_STOP_AT_STEP or after SIGTERM
by raising out of log once the record is written; then it checkpoints with runner.save and announces it.
The runner's own TensorBoard files, console table and periodic saves are left as they are.

Values: reward and episode_length are the means of rsl_rl's episode buffers (rewbuffer, lenbuffer: the
last 100 finished episodes, what rsl_rl reports as Mean reward); value_loss, policy_loss and entropy
come from loss_dict (rsl_rl 2.x: value_function, surrogate, entropy) or mean_value_loss and
mean_surrogate_loss (1.x); action_std is the policy's std (alg.policy or alg.actor_critic); the
learning rate is alg.learning_rate; every ep_infos key (Episode_Reward/..., the environment's terms) is
kept as a mean under its own name.

With no runner hook wanted, the console preset reads rsl_rl's table from stdout instead
(metrics: {source: stdout, preset: rsl_rl}); it cannot checkpoint or stop, so segments need this hook.

rsl_rl is not installed where rlsweep's tests run (no PyPI): the tests drive this module with a fake
OnPolicyRunner of the same names and call order (python/tests/test_integrations.py).
"""

import math

import rlsweep


class _Stop(Exception):
    """Raised out of runner.log to end OnPolicyRunner.learn at the segment's end."""


def _mean(xs):
    xs = [rlsweep._scalar(x) for x in xs]
    xs = [float(x) for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else math.nan


def collection_size(runner):
    """Environment steps per iteration: num_steps_per_env × env.num_envs (× GPUs when distributed)."""
    return int(runner.num_steps_per_env) * int(runner.env.num_envs) * int(getattr(runner, "gpu_world_size", 1) or 1)


def record(runner, locs):
    """The metrics of one iteration from OnPolicyRunner.log's locals."""
    v = {"reward": _mean(locs.get("rewbuffer") or ()), "episode_length": _mean(locs.get("lenbuffer") or ())}
    losses = locs.get("loss_dict") or {}
    for src, dst in (("value_function", "value_loss"), ("surrogate", "policy_loss"), ("entropy", "entropy")):
        if src in losses:
            v[dst] = losses[src]
    for k, x in losses.items():
        v.setdefault("loss/" + k, x)
    if "mean_value_loss" in locs:
        v["value_loss"] = locs["mean_value_loss"]
    if "mean_surrogate_loss" in locs:
        v["policy_loss"] = locs["mean_surrogate_loss"]
    alg = getattr(runner, "alg", None)
    policy = getattr(alg, "policy", None) or getattr(alg, "actor_critic", None)
    std = getattr(policy, "action_std", None)
    if std is None:
        std = getattr(policy, "std", None)
    if std is not None and hasattr(std, "mean"):
        v["action_std"] = std.mean()
        v["action_std_min"] = std.min()
    if hasattr(alg, "learning_rate"):
        v["learning_rate"] = alg.learning_rate
    eps = locs.get("ep_infos") or []
    for key in (eps[0] if eps else {}):
        if isinstance(key, str):
            vals = [i[key] for i in eps if key in i]
            flat = []
            for x in vals:
                flat.extend(x.reshape(-1).tolist() if hasattr(x, "reshape") else [x])
            v[key] = _mean(flat)
    return v


def learn(runner, num_learning_iterations, init_at_random_ep_len=False):
    """runner.learn under rlsweep: resume, one record per iteration, stop at the segment's end,
    checkpoint. num_learning_iterations is used outside a sweep; in one, the iterations that reach
    RLSWEEP_TOTAL_STEPS. Returns the environment steps done."""
    seg = rlsweep.segment()
    size = collection_size(runner)
    if seg.resume_from:
        runner.load(seg.resume_from)
        runner.current_learning_iteration += 1  # the checkpoint's iteration is done
    if seg.total_steps is not None:
        num_learning_iterations = max(0, -(-seg.total_steps // size) - runner.current_learning_iteration)
    original = runner.log
    done = {"step": runner.current_learning_iteration * size}

    def log(locs, *args, **kwargs):
        out = original(locs, *args, **kwargs)
        it = locs.get("it", runner.current_learning_iteration)
        step = (int(it) + 1) * size
        done["step"] = step
        rlsweep.log(step, **record(runner, locs))
        if seg.should_stop(step):
            runner.current_learning_iteration = int(it)  # what runner.save stores (rsl_rl 1.x sets it only after learn)
            raise _Stop()
        return out

    runner.log = log
    try:
        if num_learning_iterations > 0:
            runner.learn(num_learning_iterations=num_learning_iterations, init_at_random_ep_len=init_at_random_ep_len)
    except _Stop:
        pass
    finally:
        runner.log = original
    if done["step"] > 0:
        rlsweep.checkpoint(done["step"], runner.save)
    return done["step"]
