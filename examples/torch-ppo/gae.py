"""Generalised advantage estimation (Schulman et al. 2016)."""

import torch


def gae(rewards, values, dones, last_value, gamma, lam):
    """Advantages and returns of one rollout.

    rewards, values, dones: [T, N], where dones[t] says the episode ended with step t (its reward
    rewards[t] was the last; a truncated episode's bootstrap γ·V(final obs) is already in it), and
    last_value [N] is V of the observation after the last step.

        δ_t = r_t + γ (1 − d_t) V_{t+1} − V_t
        A_t = δ_t + γ λ (1 − d_t) A_{t+1}
        returns_t = A_t + V_t

    The trace stops at every episode boundary, terminated and truncated alike.
    """
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(last_value)
    next_value = last_value
    for t in reversed(range(T)):
        live = 1.0 - dones[t].float()
        delta = rewards[t] + gamma * live * next_value - values[t]
        last = delta + gamma * lam * live * last
        adv[t] = last
        next_value = values[t]
    return adv, adv + values
