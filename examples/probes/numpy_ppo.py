"""A tiny PPO-ish trainer in numpy that speaks rlsweep's probe protocol (docs/probes.md).

Linear actor and critic over features [1, obs], GAE, a clipped surrogate, minibatch SGD. It is the CI
example of an external trainer: it passes every probe, and numpy_ppo_broken.py (this trainer with the
discount dropped from GAE) fails probe 3.
"""

import sys

import numpy as np

import rlsweep_probe as rp

def features(obs):
    obs = np.asarray(obs, dtype=float).reshape(-1)
    return np.stack([np.ones_like(obs), obs], axis=1)


def main(discount_in_gae=True):
    env = rp.ProbeEnv()
    gamma, lam, clip, lr, epochs = rp.gamma(), 0.95, 0.2, 0.05, 4
    rng = np.random.default_rng(1)
    env.reset(seed=1)
    discrete = not env.continuous
    k = env.action_space["n"] if discrete else 1
    w_v = np.zeros(2)
    w_pi = np.zeros((2, k))
    log_std = 0.0
    steps, total, n = 0, rp.budget(), 256
    obs, _ = env.reset()
    while steps < total:
        O, A, R, D, LP = [], [], [], [], []
        for _ in range(n):
            x = features(obs)[0]
            if discrete:
                z = x @ w_pi
                p = np.exp(z - z.max())
                p /= p.sum()
                a = int(rng.choice(k, p=p))
                lp = np.log(p[a])
            else:
                mu = (x @ w_pi)[0]
                a = mu + np.exp(log_std) * rng.standard_normal()
                lp = -0.5 * ((a - mu) / np.exp(log_std)) ** 2 - log_std
            nobs, r, term, trunc, _ = env.step([a])
            O.append(obs[0]), A.append(a), R.append(r), D.append(term or trunc), LP.append(lp)
            obs = env.reset()[0] if (term or trunc) else nobs
        steps += n
        X = features(O)
        V = X @ w_v
        nextV = np.append(V[1:], features(obs)[0] @ w_v)
        g = gamma if discount_in_gae else 1.0
        adv, last = np.zeros(n), 0.0
        for t in reversed(range(n)):
            nonterm = 0.0 if D[t] else 1.0
            delta = R[t] + g * nextV[t] * nonterm - V[t]
            last = delta + g * lam * nonterm * last
            adv[t] = last
        ret = adv + V
        A_, LP = np.array(A), np.array(LP)
        for _ in range(epochs):
            for idx in np.array_split(rng.permutation(n), 4):
                x, a, lp_old = X[idx], A_[idx], LP[idx]
                ad = adv[idx]
                ad = (ad - ad.mean()) / (ad.std() + 1e-8) if len(idx) > 1 else ad
                # critic: gradient of 1/2 (V - R)^2
                w_v -= lr * x.T @ (x @ w_v - ret[idx]) / len(idx)
                if discrete:
                    z = x @ w_pi
                    p = np.exp(z - z.max(axis=1, keepdims=True))
                    p /= p.sum(axis=1, keepdims=True)
                    ai = a.astype(int)
                    lp = np.log(p[np.arange(len(idx)), ai])
                else:
                    mu = (x @ w_pi)[:, 0]
                    lp = -0.5 * ((a - mu) / np.exp(log_std)) ** 2 - log_std
                ratio = np.exp(lp - lp_old)
                live = ~(((ratio > 1 + clip) & (ad > 0)) | ((ratio < 1 - clip) & (ad < 0)))
                coef = ad * ratio * live / len(idx)  # d(surrogate)/d(log pi)
                if discrete:
                    onehot = np.eye(k)[ai]
                    w_pi += lr * x.T @ (coef[:, None] * (onehot - p))
                else:
                    # natural-gradient step for the mean (scaled by sigma^2), so a shrinking sigma
                    # does not blow the step up; log sigma kept in [-2, 0.5]
                    s2 = np.exp(2 * log_std)
                    w_pi[:, 0] += lr * x.T @ (coef * (a - mu))
                    log_std += 0.2 * lr * np.sum(coef * (((a - mu) ** 2) / s2 - 1))
                    log_std = min(0.5, max(-2.0, log_std))
    evals = []
    for o in rp.eval_observations():
        x = features(o)[0]
        e = {"obs": o, "value": float(x @ w_v)}
        if discrete:
            z = x @ w_pi
            p = np.exp(z - z.max())
            e["probs"] = list(p / p.sum())
        else:
            e["mean"] = [float((x @ w_pi)[0])]
        evals.append(e)
    rp.write_result(evals, gamma, steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
