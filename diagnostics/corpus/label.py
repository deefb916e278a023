#!/usr/bin/python3
"""Label a PPO training log from its curves, by the procedure in PROCEDURE.md.

Usage:
  label.py FILE [--env ENV] [--nact N] [--reward TAG]      one file, prints JSON
  label.py --spec SPEC.tsv --root DIR                      one line per spec row (TSV)

Readers (stdlib + numpy only): TensorBoard event files (TFRecord + the protobuf fields of
tensorflow.Event that carry scalars), SB3 progress.csv, SB3 monitor.csv, other CSV.
Never consults rlsweep.
"""
import csv, io, json, math, os, struct, sys
import numpy as np

# ---------------------------------------------------------------- readers
def _varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def _fields(b):
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = _varint(b, i); yield f, w, v
        elif w == 1:
            yield f, w, b[i:i+8]; i += 8
        elif w == 5:
            yield f, w, b[i:i+4]; i += 4
        elif w == 2:
            ln, i = _varint(b, i); yield f, w, b[i:i+ln]; i += ln
        else:
            raise ValueError("wire type %d" % w)

def _tensor_scalar(b):
    dtype = None; vals = []
    for f, w, v in _fields(b):
        if f == 1 and w == 0: dtype = v
        elif f == 4 and w == 2 and v:  # tensor_content
            if dtype == 1 and len(v) >= 4: vals.append(struct.unpack('<f', v[:4])[0])
            elif dtype == 2 and len(v) >= 8: vals.append(struct.unpack('<d', v[:8])[0])
            elif dtype == 3 and len(v) >= 4: vals.append(struct.unpack('<i', v[:4])[0])
            elif dtype == 9 and len(v) >= 8: vals.append(struct.unpack('<q', v[:8])[0])
        elif f == 5:  # float_val
            if w == 5: vals.append(struct.unpack('<f', v)[0])
            elif w == 2 and len(v) >= 4: vals.append(struct.unpack('<f', v[:4])[0])
        elif f == 6:  # double_val
            if w == 1: vals.append(struct.unpack('<d', v)[0])
            elif w == 2 and len(v) >= 8: vals.append(struct.unpack('<d', v[:8])[0])
        elif f in (7, 10) and w == 0:  # int_val / int64_val
            vals.append(float(v))
    return vals[0] if vals else None

def read_tfevents(path):
    """-> {tag: [(step, value)]} in file order."""
    out = {}
    data = open(path, 'rb').read()
    i = 0
    while i + 12 <= len(data):
        ln = struct.unpack('<Q', data[i:i+8])[0]
        rec = data[i+12:i+12+ln]
        i += 12 + ln + 4
        if len(rec) < ln:
            break
        step = 0; summ = None
        try:
            for f, w, v in _fields(rec):
                if f == 2 and w == 0: step = v if v < 2**63 else v - 2**64
                elif f == 5 and w == 2: summ = v
            if summ is None:
                continue
            for f, w, v in _fields(summ):
                if f != 1 or w != 2: continue
                tag = None; val = None
                for f2, w2, v2 in _fields(v):
                    if f2 == 1 and w2 == 2: tag = v2.decode('utf-8', 'replace')
                    elif f2 == 2 and w2 == 5: val = struct.unpack('<f', v2)[0]
                    elif f2 == 8 and w2 == 2: val = _tensor_scalar(v2)
                if tag is not None and val is not None:
                    out.setdefault(tag, []).append((step, float(val)))
        except (IndexError, ValueError, struct.error):
            continue
    return out

def _num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None

def read_csv(path):
    """progress.csv / monitor.csv / other CSV -> {column: [(step, value)]}."""
    text = open(path, 'r', encoding='utf-8', errors='replace').read()
    lines = text.splitlines()
    if lines and lines[0].startswith('#'):  # monitor.csv: #{"t_start":..., "env_id":...}
        lines = lines[1:]
    rows = list(csv.reader(lines))
    if not rows: return {}
    hdr = rows[0]; body = rows[1:]
    if hdr[:3] == ['r', 'l', 't'] or set(['r', 'l']) <= set(hdr):   # monitor: step = cumulative env steps
        ri, li = hdr.index('r'), hdr.index('l')
        out = {'r': [], 'l': []}; tot = 0
        for r in body:
            if len(r) <= max(ri, li): continue
            rv, lv = _num(r[ri]), _num(r[li])
            if rv is None or lv is None: continue
            tot += int(lv)
            out['r'].append((tot, rv)); out['l'].append((tot, lv))
        return out
    stepcol = None
    for c in ('time/total_timesteps', 'time/total timesteps', 'total_timesteps', 'timesteps', 'step', 'Step', 'global_step', 'iteration'):
        if c in hdr: stepcol = hdr.index(c); break
    out = {}
    for k, r in enumerate(body):
        st = _num(r[stepcol]) if stepcol is not None and stepcol < len(r) else k
        if st is None: st = k
        for j, h in enumerate(hdr):
            if j < len(r) and r[j] != '':
                v = _num(r[j])
                if v is None:
                    low = r[j].strip().lower()
                    if low in ('nan', '-nan'): v = float('nan')
                    elif low in ('inf', '+inf'): v = float('inf')
                    elif low == '-inf': v = float('-inf')
                if v is not None:
                    out.setdefault(h, []).append((int(st), v))
    return out

def read_any(path):
    if 'tfevents' in os.path.basename(path):
        return read_tfevents(path)
    return read_csv(path)

# ---------------------------------------------------------------- tags
REWARD = ['rollout/ep_rew_mean', 'charts/episodic_return', 'Environment/Cumulative Reward', 'rewards/iter',
          'rewards/step', 'rewards/frame', 'Reward / Total reward (mean)', 'Train/mean_reward', 'r',
          'eval/mean_reward', 'Reward / Instantaneous reward (mean)']
ENTROPY = [('train/entropy_loss', -1), ('losses/entropy', 1), ('Policy/Entropy', 1), ('Loss/entropy', 1),
           ('charts/entropy', 1)]
STD = ['train/std', 'Policy / Standard deviation', 'Policy/mean_noise_std', 'Policy/mean_std']
VLOSS = ['train/value_loss', 'losses/value_loss', 'Losses/Value Loss', 'losses/c_loss', 'Loss / Value loss',
         'Loss/value_function']
KL = ['train/approx_kl', 'losses/approx_kl', 'info/kl', 'Policy/mean_kl']

# task ranges (worst, best) used as the scale; None -> |start|/|best| scale
RANGES = {
    'CartPole-v1': (0, 500), 'CartPole-v0': (0, 200), 'Acrobot-v1': (-500, -60), 'MountainCar-v0': (-200, -100),
    'MountainCarContinuous-v0': (-60, 95), 'Pendulum-v1': (-1600, -150), 'Pendulum-v0': (-1600, -150),
    'LunarLander-v2': (-200, 250), 'LunarLander-v3': (-200, 250), 'LunarLanderContinuous-v2': (-200, 250),
    'LunarLanderContinuous-v3': (-200, 250), 'BipedalWalker-v3': (-120, 300), 'Pong': (-21, 21),
    'PongNoFrameskip-v4': (-21, 21), 'Taxi-v3': (-200, 8), 'FrozenLake-v1': (0, 1),
}

def pick(d, names):
    for n in names:
        if n in d and d[n]: return n
    return None

def finite(x):
    return not (math.isnan(x) or math.isinf(x))

def rolling(a, w):
    if w <= 1: return a.copy()
    c = np.cumsum(np.insert(a, 0, 0.0))
    return (c[w:] - c[:-w]) / w

# ---------------------------------------------------------------- procedure
MIN_POINTS = 20

def label(d, env=None, nact=None, reward_tag=None):
    rt = reward_tag if reward_tag in d else pick(d, REWARD)
    et = next(((t, s) for t, s in ENTROPY if t in d and d[t]), None)
    st = pick(d, STD); vt = pick(d, VLOSS); kt = pick(d, KL)
    res = {'reward_tag': rt, 'entropy_tag': et[0] if et else None, 'std_tag': st, 'vloss_tag': vt, 'kl_tag': kt}
    if rt is None:
        res.update(label='unclear', reason='no return series found', bad_from='-'); return res
    pts = d[rt]
    steps = np.array([p[0] for p in pts], dtype=float); R = np.array([p[1] for p in pts], dtype=float)
    allsteps = [p[0] for v in d.values() for p in v]
    res['n'] = len(R); res['first_step'] = int(steps[0]); res['last_step'] = int(max(allsteps))
    res['length'] = '%d points, steps %d..%d (last step %d over all series)' % (len(R), steps[0], steps[-1], max(allsteps))
    # 1. non-finite anywhere in return / losses / entropy / std
    bad = None
    for t in [rt, vt, st, kt, et[0] if et else None] + [k for k in d if 'loss' in k.lower()]:
        if not t or t not in d: continue
        for s, v in d[t]:
            if not finite(v):
                if bad is None or s < bad[0]: bad = (s, t, v)
                break
    if bad:
        res.update(label='diverged', bad_from=str(int(bad[0])),
                   reason='non-finite value %s in %s at step %d' % (bad[2], bad[1], bad[0])); return res
    n = len(R)
    if n < MIN_POINTS:
        res.update(label='unclear', bad_from='-', reason='only %d return points (< %d)' % (n, MIN_POINTS)); return res
    k10 = max(1, int(round(0.10 * n))); w5 = min(max(3, int(round(0.05 * n))), k10 * 2)
    start = R[:k10].mean(); final = R[-k10:].mean()
    roll = rolling(R, w5); ib = int(np.argmax(roll)); best = roll[ib]
    best_step = steps[ib + w5 - 1]
    rng = RANGES.get(env) if env else None
    if rng: S = float(rng[1] - rng[0]); scale_s = 'task range %g..%g' % rng
    else: S = max(abs(start), abs(best), 1e-9); scale_s = 'no task range; scale max(|start|,|best|)=%.3g' % S
    gain = best - start
    lost = (best - final) / gain if gain > 0 else 0.0
    # trend over the last 10 %: slope of a line through the last k10 points, as change over that window
    tail = R[-k10:]; ts = steps[-k10:]
    slope = np.polyfit(ts, tail, 1)[0] * (ts[-1] - ts[0]) if k10 >= 3 and ts[-1] > ts[0] else 0.0
    falling = slope < 0
    res.update(start=start, best=best, final=final, gain=gain, lost=lost, scale=S)
    # entropy / std summaries
    extra = []
    if et:
        E = np.array([v for _, v in d[et[0]]]) * et[1]
        if len(E) >= 2:
            k = max(1, len(E) // 10)
            e0, e1 = E[:k].mean(), E[-k:].mean()
            s = 'entropy %.3g → %.3g' % (e0, e1)
            if nact: s += ' (log %d = %.3g; final %.0f%% of max)' % (nact, math.log(nact), 100 * e1 / math.log(nact))
            extra.append(s); res['entropy_final'] = e1
    std_run = None
    if st:
        Sd = np.array([v for _, v in d[st]]); Ss = np.array([p[0] for p in d[st]], dtype=float)
        if len(Sd) >= 5:
            k = max(1, len(Sd) // 10)
            s0, s1 = Sd[:k].mean(), Sd[-k:].mean()
            at_best = Sd[np.searchsorted(Ss, best_step, side='right') - 1] if Ss[0] <= best_step else Sd[0]
            sl = np.polyfit(Ss[-k:], Sd[-k:], 1)[0] if k >= 3 and Ss[-1] > Ss[-k] else 0.0
            extra.append('std %.3g → %.3g (%.3g at best)' % (s0, s1, at_best))
            res['std_ratio_vs_best'] = s1 / at_best if at_best > 0 else float('inf')
            if gain >= 0.10 * S and at_best > 0 and s1 >= 3 * at_best and sl > 0:
                std_run = s1 / at_best
            if s0 > 0 and s1 >= 10 * s0:
                res.update(label='diverged', bad_from='-', reason='action std explodes %.3g → %.3g (≥10×); ' % (s0, s1) +
                           'return %.4g → best %.4g → final %.4g' % (start, best, final)); return res
    vblow = None
    if vt:
        V = np.array([v for _, v in d[vt]]); Vs = np.array([p[0] for p in d[vt]], dtype=float)
        if len(V) >= 10:
            k = max(1, len(V) // 10)
            base = max(np.median(np.abs(V[:k])), 1e-6)
            late = np.abs(V[len(V) // 2:])
            if late.max() >= 1e3 * base:
                vblow = (Vs[len(V) // 2 + int(np.argmax(late >= 1e3 * base))], late.max() / base)
    nums = 'start %.4g, best %.4g, final %.4g (%s); gain %.4g = %.0f%% of scale' % (start, best, final, scale_s, gain, 100 * gain / S)
    if gain > 0 and gain >= 0.10 * S:
        nums += ', final keeps %.0f%% of it' % (100 * (1 - lost))
    nums += '; last-10%% trend %+.3g' % slope
    tail_s = ('; ' + '; '.join(extra)) if extra else ''
    # bad_from for a lost gain: first step after the best where the rolling mean is ≤ best − 0.4·gain
    def loss_step():
        thr = best - 0.4 * gain
        for j in range(ib, len(roll)):
            if roll[j] <= thr: return str(int(steps[j + w5 - 1]))
        return '-'
    if vblow and (gain < 0.10 * S or lost >= 0.40):
        res.update(label='diverged', bad_from=str(int(vblow[0])),
                   reason='value loss blows up %.0f× over its start while the return does not hold: ' % vblow[1] + nums + tail_s); return res
    if gain < 0.10 * S:
        res.update(label='never-learned', bad_from='-', reason='flat: ' + nums + tail_s); return res
    best_in_tail = (ib + w5 - 1) >= n - k10
    if lost >= 0.40 and best_in_tail:
        res.update(label='unclear', bad_from='-', reason='best window ends inside the final 10%% (noise, not a loss): ' + nums + tail_s); return res
    if lost >= 0.75:
        pre = 'std runaway ×%.1f after its best, ' % std_run if std_run else ''
        res.update(label='collapsed', bad_from=loss_step(), reason=pre + 'collapse: ' + nums + tail_s); return res
    if lost >= 0.40 and falling:
        pre = 'std runaway ×%.1f after its best, ' % std_run if std_run else ''
        res.update(label='collapsed', bad_from=loss_step(), reason=pre + 'partial collapse, still falling: ' + nums + tail_s); return res
    if std_run and lost >= 0.40:
        res.update(label='collapsed', bad_from=loss_step(), reason='std runaway ×%.1f after its best, return lost: ' % std_run + nums + tail_s); return res
    if lost < 0.25 and not std_run:
        res.update(label='healthy', bad_from='-', reason='learns and holds: ' + nums + tail_s); return res
    why = ('std runaway ×%.1f while the return holds' % std_run) if std_run and lost < 0.40 else \
          ('loses %.0f%% of its gain but not falling at the end' % (100 * lost) if lost >= 0.40 else
           'sags: loses %.0f%% of its gain (25–40%%)' % (100 * lost))
    res.update(label='unclear', bad_from='-', reason=why + ': ' + nums + tail_s); return res

def tags_column(res, path):
    if res.get('reward_tag') == 'r' and os.path.basename(path).endswith('monitor.csv'):
        return 'columns=r,l,t (per-episode return, length, wall time)'
    parts = ['reward=' + res['reward_tag']] if res.get('reward_tag') else []
    if res.get('vloss_tag'): parts.append('vloss=' + res['vloss_tag'])
    if res.get('std_tag'): parts.append('std=' + res['std_tag'])
    if res.get('entropy_tag'): parts.append('entropy=' + res['entropy_tag'])
    if res.get('kl_tag'): parts.append('kl=' + res['kl_tag'])
    return ' '.join(parts)

def main():
    a = sys.argv[1:]
    if a and a[0] == '--spec':
        spec, root = a[1], a[3]
        rows = list(csv.DictReader(open(spec), delimiter='\t'))
        for r in rows:
            p = os.path.join(root, r['path'])
            d = read_any(p)
            res = label(d, r.get('env') or None, int(r['nact']) if r.get('nact') else None, r.get('reward') or None)
            prefix = (r.get('what') + ': ') if r.get('what') else ''
            print('\t'.join([r['id'], res['label'], res.get('length', '-'), res.get('bad_from', '-'),
                             tags_column(res, p), prefix + res['reason']]))
        return
    path = a[0]; env = nact = rt = None
    if '--env' in a: env = a[a.index('--env') + 1]
    if '--nact' in a: nact = int(a[a.index('--nact') + 1])
    if '--reward' in a: rt = a[a.index('--reward') + 1]
    res = label(read_any(path), env, nact, rt)
    res['tags'] = tags_column(res, path)
    print(json.dumps(res, default=float))

if __name__ == '__main__':
    main()
