#!/usr/bin/python3
"""Replays Optuna's own pruners over a recorded PPO grid (scripts/ppo-grid, scheduler/testdata/ppo-grid).

Each unit (a run, or with --grouped every seed of a configuration) is an Optuna trial (study.ask()). It
reports trial.report(value, k) at its k-th evaluation (k = 1, 2, …, as RL Baselines3 Zoo's
TrialEvalCallback counts them), stops when trial.should_prune() says so (study.tell(trial,
state=PRUNED)), and a unit that reaches its budget is told its final value (study.tell(trial, value)).
Evaluations follow RL Zoo's hyperparameter search: n_evaluations = max(1, steps // 100,000) (or the
config's "evaluations"), one every steps // n_evaluations environment steps. The value a run reports at an evaluation is its windowed
objective at that step, what rlsweep's worker reports (diagnostics.ObjectiveWindow: the mean of the
run's records at or after s − ⌊0.1·s⌋ for its last record's step s, at least the last record); with
--grouped, the IQM over the configuration's seeds of those values.

The clock is scheduler/replay_sim_test.go's Replay: units start in the given order while enough of the
slots are free; every tick each running unit, in the order they started, advances quantum steps (at
most its budget) and reports the evaluations it passed; a unit that ends frees its slots for the next
tick.

Pruners (--pruner):
  median-rlzoo  MedianPruner as rl_zoo3/exp_manager.py sets it up: n_startup_trials 10 (train.py's
                --n-startup-trials default), n_warmup_steps n_evaluations // 3.
  sha           SuccessiveHalvingPruner with Optuna's defaults (min_resource "auto", reduction_factor 4,
                min_early_stopping_rate 0).
  hyperband     HyperbandPruner with Optuna's defaults (min_resource 1, reduction_factor 3) and
                max_resource the number of evaluations.

Usage: optuna-replay.py --grid GRID.jsonl.gz --config CONFIG.json --pruner NAME [--grouped]
CONFIG.json: {"orders": [[unit, …], …], "slots": 8, "quantum": 2500} and optionally "evaluations" (how
many a run reports, RL Zoo's max(1, steps // 100,000) when left out); a unit is a run (its index is
config·seeds + the seed's place among the grid's seeds) or, with --grouped, a configuration.
Writes JSON to stdout: per order the env-steps used and saved and the units that completed, with the
value each was told.

Needs only the standard library and optuna (Debian: apt-get install python3-optuna).
"""

import argparse
import gzip
import json
import math
import sys

WINDOW_FRACTION = 0.1
RLZOO_STARTUP_TRIALS = 10
RLZOO_STEPS_PER_EVALUATION = 100_000


def fail(msg):
    print("optuna-replay: " + msg, file=sys.stderr)
    sys.exit(2)


def load_grid(path):
    """Reads a recording: a header line, then one run a line. Returns (env, steps, seeds, configs) with
    configs[c] the runs of configuration c sorted by seed."""
    try:
        with gzip.open(path, "rt") as f:
            lines = [line for line in f if line.strip()]
    except OSError as e:
        fail(f"--grid {path}: {e}")
    if not lines:
        fail(f"--grid {path}: empty, want a header line and one run a line (scripts/ppo-grid)")
    grid = json.loads(lines[0]).get("grid") or {}
    steps, seeds = grid.get("steps"), grid.get("seeds")
    if not isinstance(steps, int) or steps <= 0 or not seeds:
        fail(f"--grid {path}: header has steps {steps!r}, seeds {seeds!r}; want a positive budget and the seeds")
    by_config = {}
    for n, line in enumerate(lines[1:], start=2):
        run = json.loads(line)
        if len(run["steps"]) != len(run["reward"]) or not run["steps"]:
            fail(f"--grid {path}: line {n}: {len(run['steps'])} steps, {len(run['reward'])} rewards")
        by_config.setdefault(run["config"], []).append(run)
    configs = []
    for c in range(len(by_config)):
        runs = by_config.get(c)
        if runs is None or len(runs) != len(seeds):
            fail(f"--grid {path}: config {c} has {0 if runs is None else len(runs)} runs, want one per seed ({len(seeds)})")
        configs.append(sorted(runs, key=lambda r: r["seed"]))
    return grid.get("env", ""), steps, seeds, configs


def windowed(run, step):
    """The run's windowed objective a segment ending at step reports (Run.Windowed): NaN when none."""
    kept = []  # (step, value) in the window
    for s, v in zip(run["steps"], run["reward"]):
        if s > step:
            break
        v = math.nan if v is None else float(v)
        if kept and s < kept[-1][0]:
            kept = []
        kept.append((s, v))
        start = s - int(float(s) * WINDOW_FRACTION)
        drop = 0
        while drop < len(kept) - 1 and kept[drop][0] < start:
            drop += 1
        kept = kept[drop:]
    if not kept:
        return math.nan
    m = sum(v for _, v in kept) / len(kept)
    return m if math.isfinite(m) else math.nan


def iqm(xs):
    """The interquartile mean (diagnostics.IQM): the mean after dropping ⌊n/4⌋ values at each end."""
    s = sorted(xs)
    cut = len(s) // 4
    mid = s[cut:len(s) - cut]
    return sum(mid) / len(mid)


def unit_value(runs, step):
    vals = [v for v in (windowed(r, step) for r in runs) if not math.isnan(v)]
    if not vals:
        return math.nan
    return vals[0] if len(vals) == 1 else iqm(vals)


def make_pruner(optuna, name, evaluations):
    if name == "median-rlzoo":
        return optuna.pruners.MedianPruner(n_startup_trials=RLZOO_STARTUP_TRIALS, n_warmup_steps=evaluations // 3), {
            "n_startup_trials": RLZOO_STARTUP_TRIALS, "n_warmup_steps": evaluations // 3}
    if name == "sha":
        return optuna.pruners.SuccessiveHalvingPruner(), {
            "min_resource": "auto", "reduction_factor": 4, "min_early_stopping_rate": 0}
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(max_resource=evaluations), {
            "min_resource": 1, "max_resource": evaluations, "reduction_factor": 3}
    fail(f"--pruner {name!r}: want median-rlzoo, sha or hyperband")


def replay(optuna, pruner_name, units, total, order, slots, quantum, evaluations):
    pruner, _ = make_pruner(optuna, pruner_name, evaluations)
    # A fixed study name: HyperbandPruner assigns a trial's bracket from crc32("{study_name}_{number}").
    study = optuna.create_study(study_name="optuna-replay", direction="maximize", pruner=pruner,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    every = total // evaluations
    state = {}
    running, nxt, free = [], 0, slots
    used = full = 0
    for runs in units:
        full += len(runs) * total
    completed, pruned, ended = [], 0, 0
    while nxt < len(order) or running:
        while nxt < len(order) and free >= len(units[order[nxt]]):
            u = order[nxt]
            state[u] = {"trial": study.ask(), "reached": 0, "k": 0}
            running.append(u)
            free -= len(units[u])
            nxt += 1
        if not running:
            fail(f"a unit of {len(units[order[nxt]])} runs cannot start with {slots} slots")
        still = []
        for u in running:
            st, runs = state[u], units[u]
            st["reached"] = min(st["reached"] + quantum, total)
            stop = False
            while not stop and st["k"] < evaluations and (st["k"] + 1) * every <= st["reached"]:
                st["k"] += 1
                st["trial"].report(unit_value(runs, st["k"] * every), st["k"])
                stop = st["trial"].should_prune()
            if stop:
                study.tell(st["trial"], state=optuna.trial.TrialState.PRUNED)
                pruned += 1
            elif st["reached"] >= total:
                v = unit_value(runs, total)
                if math.isnan(v):
                    study.tell(st["trial"], state=optuna.trial.TrialState.FAIL)
                else:
                    study.tell(st["trial"], v)
                    completed.append({"config": runs[0]["config"], "seeds": [r["seed"] for r in runs], "value": v})
            else:
                still.append(u)
                continue
            used += len(runs) * st["reached"]
            free += len(runs)
            ended += 1
        running = still
    return {"steps_used": used, "steps_full": full, "saved": 1 - used / full, "units_ended": ended,
            "units_pruned": pruned, "completed": completed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", required=True, help="a recording (scripts/ppo-grid), gzipped JSON lines")
    ap.add_argument("--config", required=True, help='JSON: {"orders": [[unit, …], …], "slots": 8, "quantum": 2500}')
    ap.add_argument("--pruner", required=True, choices=["median-rlzoo", "sha", "hyperband"])
    ap.add_argument("--grouped", action="store_true",
                    help="a trial per configuration (its seeds together, value the IQM over seeds)")
    args = ap.parse_args()
    try:
        import optuna
    except ImportError as e:
        fail(f"cannot import optuna ({e}); install it: apt-get install python3-optuna")
    optuna.logging.set_verbosity(optuna.logging.ERROR)

    env, total, seeds, configs = load_grid(args.grid)
    try:
        with open(args.config) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"--config {args.config}: {e}")
    units = configs if args.grouped else [[r] for runs in configs for r in runs]
    slots, quantum, orders = cfg.get("slots"), cfg.get("quantum"), cfg.get("orders")
    if not isinstance(slots, int) or slots < 1:
        fail(f"--config {args.config}: slots {slots!r}: want a positive integer (runs training at once, e.g. 8)")
    if not isinstance(quantum, int) or quantum < 1:
        fail(f"--config {args.config}: quantum {quantum!r}: want a positive integer (steps a tick, e.g. steps/200)")
    if not isinstance(orders, list) or not orders:
        fail(f"--config {args.config}: orders {orders!r}: want a list of arrival orders")
    for i, o in enumerate(orders):
        if not isinstance(o, list) or sorted(o) != list(range(len(units))):
            fail(f"--config {args.config}: orders[{i}]: want a permutation of the {len(units)} units 0…{len(units) - 1}"
                 f" ({'configurations' if args.grouped else 'runs'}; --grouped picks configurations)")
    evaluations = cfg.get("evaluations", max(1, total // RLZOO_STEPS_PER_EVALUATION))
    if not isinstance(evaluations, int) or not 1 <= evaluations <= total:
        fail(f"--config {args.config}: evaluations {evaluations!r}: want an integer from 1 to the budget ({total});"
             " leave it out for RL Zoo's max(1, steps // 100,000)")
    _, settings = make_pruner(optuna, args.pruner, evaluations)
    out = {"optuna": optuna.__version__, "env": env, "pruner": args.pruner, "settings": settings,
           "grouped": args.grouped, "evaluations": evaluations, "every": total // evaluations,
           "orders": [replay(optuna, args.pruner, units, total, o, slots, quantum, evaluations) for o in orders]}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
