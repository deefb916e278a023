#!/usr/bin/python3
"""CleanRL's ppo.py, in its shape (an Args dataclass, global_step, iterations, writer.add_scalar), on the
rlsweep package: three changes and a checkpoint make it a trainer rlsweep can prune, resume and
probe-check (docs/python.md, "CleanRL"). The lines marked `# rlsweep` are the whole difference.

Environments: examples/torch-ppo's vectorised CartPole-v1 (Gymnasium's dynamics in torch; there is no
gymnasium here), stepped like gymnasium.vector with same-step autoreset. Runs as it is with torch:

    PYTHONPATH=python /usr/bin/python3 examples/frameworks/cleanrl_ppo.py --total-timesteps 50000

examples/frameworks/cleanrl.yaml sweeps it; python/tests/test_examples.py runs it under the contract.
"""

import argparse
import dataclasses
import os
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "torch-ppo"))  # envs.py: CartPole-v1 vectorised in torch
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # the rlsweep package of this checkout

import envs  # noqa: E402
import rlsweep  # noqa: E402  # rlsweep
import rlsweep.cleanrl  # noqa: E402  # rlsweep


@dataclasses.dataclass
class Args:
    seed: int = 1
    total_timesteps: int = 100000
    learning_rate: float = 2.5e-4
    num_envs: int = 4
    num_steps: int = 128
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


def cli():
    p = argparse.ArgumentParser()
    for f in dataclasses.fields(Args):
        kind = (lambda s: s.lower() in ("1", "true", "yes")) if f.type is bool else f.type
        p.add_argument("--" + f.name.replace("_", "-"), type=kind, default=f.default)
    return Args(**vars(p.parse_args()))


def layer(n_in, n_out, std=2**0.5):
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, n_actions, 0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        probs = torch.distributions.Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main():
    args = rlsweep.params(cli())  # rlsweep: the trial's parameters over the flags
    args.total_timesteps = rlsweep.segment().steps(args.total_timesteps)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)
    writer = rlsweep.cleanrl.SummaryWriter()  # rlsweep: was SummaryWriter(f"runs/{run_name}")
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = envs.make("CartPole-v1", args.num_envs, "cpu", args.seed)
    agent = Agent(env.obs_dim, env.n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    global_step, start_iteration = 0, 1
    seg = rlsweep.segment()
    if seg.resume_from:  # rlsweep
        global_step, start_iteration = rlsweep.cleanrl.load(seg.resume_from, agent, optimizer)  # rlsweep
    obs = torch.zeros((args.num_steps, args.num_envs, env.obs_dim))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs, rewards, dones, values, next_values = (torch.zeros((args.num_steps, args.num_envs)) for _ in range(5))
    next_obs = env.reset()
    ep_ret = torch.zeros(args.num_envs)
    ep_len = torch.zeros(args.num_envs)
    start_time = time.time()
    iteration = start_iteration - 1
    for iteration in range(start_iteration, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step] = next_obs
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value.flatten()
            next_obs, reward, term, trunc, final_obs = env.step(action)
            rewards[step], dones[step] = reward, (term | trunc).float()
            with torch.no_grad():  # bootstrap from the final observation where the time limit cut the episode
                next_values[step] = torch.where(term, 0.0, agent.get_value(final_obs).flatten())
            ep_ret, ep_len = ep_ret + reward, ep_len + 1
            for i in torch.nonzero(term | trunc).flatten().tolist():
                writer.add_scalar("charts/episodic_return", ep_ret[i].item(), global_step)
                writer.add_scalar("charts/episodic_length", ep_len[i].item(), global_step)
                ep_ret[i], ep_len[i] = 0.0, 0.0
        with torch.no_grad():
            advantages, last = torch.zeros_like(rewards), torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                delta = rewards[t] + args.gamma * next_values[t] - values[t]
                last = delta + args.gamma * args.gae_lambda * (1.0 - dones[t]) * last
                advantages[t] = last
            returns = advantages + values
        b_obs, b_logprobs, b_actions = obs.reshape(-1, env.obs_dim), logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        clipfracs = []
        for _ in range(args.update_epochs):
            for mb in torch.randperm(batch_size).split(minibatch_size):
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions[mb])
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = (b_advantages[mb] - b_advantages[mb].mean()) / (b_advantages[mb].std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        var_y = b_returns.var()
        explained_var = float("nan") if var_y == 0 else 1 - (b_returns - b_values).var() / var_y
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
        writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
        writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
        writer.add_scalar("losses/entropy", entropy_loss.item(), global_step)
        writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
        writer.add_scalar("losses/clipfrac", sum(clipfracs) / len(clipfracs), global_step)
        writer.add_scalar("losses/explained_variance", explained_var, global_step)
        writer.add_scalar("charts/SPS", int(global_step / (time.time() - start_time + 1e-9)), global_step)
        if seg.should_stop(global_step):  # rlsweep
            break
    rlsweep.cleanrl.save(global_step, iteration, agent, optimizer)  # rlsweep
    writer.close()


if __name__ == "__main__":
    main()
