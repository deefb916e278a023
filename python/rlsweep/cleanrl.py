"""CleanRL-style loops (ppo.py's `Args` dataclass, `global_step`, `writer.add_scalar`): three changes
report to rlsweep, prune with checkpoints and resume (docs/trainer-contract.md, "CleanRL").

    args = rlsweep.params(tyro.cli(Args))                # the trial's parameters over the flags' values
    writer = rlsweep.cleanrl.SummaryWriter(f"runs/{run_name}")   # was torch's SummaryWriter
    seg = rlsweep.segment()
    ... (resume) if seg.resume_from: global_step, start_iteration = rlsweep.cleanrl.load(seg.resume_from, agent, optimizer)
    ... at the end of each iteration:
        if seg.should_stop(global_step): break
    rlsweep.cleanrl.save(global_step, iteration, agent, optimizer)

SummaryWriter is rlsweep.tensorboard.SummaryWriter with CleanRL's tags mapped to the contract's
canonical keys (TAGS) and, when torch has TensorBoard, the usual event files under log_dir as well.
save/load keep the agent's and optimiser's state dicts with the step and iteration in one torch file.
"""

import rlsweep
from rlsweep import tensorboard

# CleanRL ppo.py / ppo_continuous_action.py tags → canonical keys (docs/trainer-contract.md, "Metrics").
TAGS = {
    "charts/episodic_return": "reward",
    "charts/episodic_length": "episode_length",
    "charts/learning_rate": "learning_rate",
    "charts/SPS": "fps",
    "losses/value_loss": "value_loss",
    "losses/policy_loss": "policy_loss",
    "losses/entropy": "entropy",
    "losses/approx_kl": "approx_kl",
    "losses/clipfrac": "clip_fraction",
    "losses/explained_variance": "explained_variance",
}


def SummaryWriter(log_dir=None, tags=None, wrapped=None, **kwargs):
    """rlsweep.tensorboard.SummaryWriter with TAGS (updated by tags)."""
    t = dict(TAGS)
    t.update(tags or {})
    return tensorboard.SummaryWriter(log_dir, tags=t, wrapped=wrapped, **kwargs)


def save(global_step, iteration, agent, optimizer, **extra):
    """Checkpoints the agent and optimiser (torch state dicts), the step and the iteration, and
    announces it; returns its name, or None outside a sweep."""
    import torch

    state = {"global_step": int(global_step), "iteration": int(iteration), "agent": agent.state_dict(),
             "optimizer": optimizer.state_dict()}
    state.update(extra)
    return rlsweep.checkpoint(global_step, lambda path: torch.save(state, path))


def load(path, agent, optimizer, map_location="cpu"):
    """Loads what save() wrote into agent and optimizer; returns (global_step, next iteration). The
    optimiser's learning rate is left as the trial's parameters set it (PBT explores it)."""
    import torch

    state = torch.load(path, map_location=map_location)
    agent.load_state_dict(state["agent"])
    lrs = [g["lr"] for g in optimizer.param_groups]
    optimizer.load_state_dict(state["optimizer"])
    for g, lr in zip(optimizer.param_groups, lrs):
        g["lr"] = lr
    return state["global_step"], state["iteration"] + 1
