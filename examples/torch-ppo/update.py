"""The PPO update: epochs of shuffled minibatches over one rollout, the clipped surrogate, the (clipped)
value loss and the entropy bonus, as CleanRL's ppo.py; and the metrics it reports.
"""

import math

import torch
from torch import nn

from bugs import Bug


def update(agent, optimizer, batch, cfg, rng, bug=Bug.NONE):
    """Runs PPO's optimisation on one flattened batch and returns its metrics (canonical names of
    DESIGN §4): losses, entropy, approx KL and clip fraction are means over the minibatches evaluated
    (the one that stopped the update on target_kl included, so they are never empty); grad_norm is the
    global norm before clipping, a mean over the minibatches applied (0 when none was).

    batch: a dict of [B, ...] tensors: x (normalised obs), actions, logp, values, advantages, returns.
    rng draws the minibatch permutations.
    """
    B = batch["advantages"].shape[0]
    size = B // cfg.minibatches
    sums = {k: 0.0 for k in ("value_loss", "policy_loss", "entropy", "approx_kl", "clip_fraction")}
    evaluated, applied, grad_norm, kl_stop = 0, 0, 0.0, False
    for _ in range(cfg.epochs):
        perm = torch.randperm(B, generator=rng, device=rng.device)
        for start in range(0, size * cfg.minibatches, size):
            m = _minibatch_losses(agent, batch, perm[start:start + size], cfg, bug)
            for k in sums:
                sums[k] += float(m[k])
            evaluated += 1
            if cfg.target_kl and float(m["approx_kl"]) > cfg.target_kl:
                kl_stop = True  # this minibatch is not applied
                break
            optimizer.zero_grad()
            m["loss"].backward()
            grad_norm += float(nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm))
            optimizer.step()
            applied += 1
        if kl_stop:
            break
    out = {k: v / evaluated for k, v in sums.items()}
    out["grad_norm"] = grad_norm / applied if applied else 0.0
    out["kl_early_stop"] = 1.0 if kl_stop else 0.0
    out["minibatches"] = float(applied)
    return out


def _minibatch_losses(agent, batch, idx, cfg, bug):
    """The losses of one minibatch (loss with gradients; the rest as detached scalars)."""
    # stale-batch (test aid): pair each observation with another sample's action and targets.
    obs_idx = idx.roll(1) if bug == Bug.STALE_BATCH else idx
    logp, entropy, value = agent.evaluate(batch["x"][obs_idx], batch["actions"][idx])
    logratio = logp - batch["logp"][idx]
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()  # the low-variance estimator (Schulman's blog)
        clip_fraction = ((ratio - 1).abs() > cfg.clip).float().mean()

    adv = batch["advantages"][idx]
    if cfg.norm_adv and len(idx) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    if bug == Bug.FLIP_ADVANTAGE:
        adv = -adv
    policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()

    if bug == Bug.DETACH_VALUE:
        value = value.detach()
    ret, old_v = batch["returns"][idx], batch["values"][idx]
    if cfg.clip_vloss:
        clipped = old_v + (value - old_v).clamp(-cfg.clip, cfg.clip)
        value_loss = 0.5 * torch.max((value - ret) ** 2, (clipped - ret) ** 2).mean()
    else:
        value_loss = 0.5 * ((value - ret) ** 2).mean()

    ent = entropy.mean()
    loss = policy_loss - cfg.ent_coef * ent + cfg.vf_coef * value_loss
    return {"loss": loss, "policy_loss": policy_loss.detach(), "value_loss": value_loss.detach(),
            "entropy": ent.detach(), "approx_kl": approx_kl, "clip_fraction": clip_fraction}


def batch_stats(advantages, values, returns):
    """Advantage statistics over the whole batch before normalisation, and explained variance
    1 − Var(returns − values)/Var(returns), NaN when the returns are constant (as CleanRL and SB3)."""
    adv = advantages.double()
    var_y = returns.double().var(unbiased=False).item()
    ev = math.nan if var_y == 0 else 1 - (returns.double() - values.double()).var(unbiased=False).item() / var_y
    return {
        "advantage_mean": adv.mean().item(),
        "advantage_std": adv.std(unbiased=False).item(),
        "advantage_abs_max": adv.abs().max().item(),
        "explained_variance": ev,
    }
