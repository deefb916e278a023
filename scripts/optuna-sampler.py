#!/usr/bin/python3
"""Runs Optuna's own samplers, ask and tell, for a caller that owns the objective.

The caller (scheduler/tpe_peers_test.go) writes one JSON object a line to stdin and reads one from
stdout. A study starts with

    {"sampler": NAME, "seed": N, "trials": T, "space": [PARAM, ...]}

where PARAM is {"name": S, "low": X, "high": Y, "log": BOOL} (a float, optuna's suggest_float) or
{"name": S, "choices": [X, ...]} (a list of values, suggest_categorical, as RL Baselines3 Zoo declares
its grids). For each of the T trials the script asks the study for a trial (study.ask with those
distributions) and writes

    {"params": {S: X, ...}}

then reads {"value": V} (a number, minimized; study.tell(trial, V)) or {"value": null} (the trial
failed: study.tell(trial, state=FAIL), which Optuna's samplers leave out of their model). After the T
trials the next line starts another study; end of input ends the script.

A study with several objectives (scheduler/pareto_bench_test.go) names them in its first line:

    {"sampler": NAME, "seed": N, "trials": T, "space": [...], "directions": ["maximize", "minimize", ...],
     "options": {"n_startup_trials": K, "population_size": P, "constrained": BOOL}}

and each answer is {"values": [V, ...]} (study.tell(trial, values)) or {"values": null} (a failed
trial, as above). With "constrained", an answer may carry {"violation": X}: the sampler's
constraints_func reads it (0 or less: feasible; a trial told without one is feasible). After the T
trials the script writes the study's own Pareto front, {"best_trials": [TRIAL_NUMBER, ...]}
(study.best_trials).

Samplers (NAME), each seeded with N:
  tpe             TPESampler with Optuna's defaults (10 random start-up trials, univariate).
  tpe-multivariate TPESampler(multivariate=True), Optuna's multivariate TPE.
  random          RandomSampler.
  tpe-fixed, tpe-multivariate-fixed
                  the two TPE samplers with Optuna's own fix of its truncated normal density applied
                  (optuna/optuna#5110, released in Optuna 3.5): up to 3.4, _truncnorm.logpdf leaves out
                  the −log(scale) term, so a Parzen estimator's narrow kernels weigh less than its prior,
                  and the sampler explores more than the estimator it describes. The fix subtracts
                  log(scale), as the pull request does; the script applies it only to these two names.

Samplers of a study with several objectives (NAME), each seeded with N, n_startup_trials K for the
TPE samplers (Optuna's default 10 when not given), population_size P for NSGA-II (default 50), and
the constraints_func above with "constrained" (MOTPESampler and RandomSampler take none in 3.1):
  motpe           MOTPESampler.
  tpe             TPESampler, which Optuna 3.1 runs as MOTPE when the study has several directions.
  tpe-multivariate TPESampler(multivariate=True).
  nsga2           NSGAIISampler.
  random          RandomSampler.

Needs only the standard library and optuna (Debian: apt-get install python3-optuna).
"""

import json
import sys
import warnings


def fail(msg):
    print("optuna-sampler: " + msg, file=sys.stderr)
    sys.exit(2)


def use_truncnorm_fix(optuna, on):
    """Applies (or takes back) optuna/optuna#5110 on Optuna's own _truncnorm.logpdf."""
    from optuna.samplers._tpe import _truncnorm

    if not hasattr(_truncnorm, "_rlsweep_original_logpdf"):
        _truncnorm._rlsweep_original_logpdf = _truncnorm.logpdf
    original = _truncnorm._rlsweep_original_logpdf
    if not on:
        _truncnorm.logpdf = original
        return

    import numpy as np

    def fixed(x, a, b, loc=0, scale=1):
        return original(x, a, b, loc=loc, scale=scale) - np.log(scale)

    _truncnorm.logpdf = fixed


def sampler_of(optuna, name, seed):
    fixed = name.endswith("-fixed")
    use_truncnorm_fix(optuna, fixed)
    if fixed:
        name = name[: -len("-fixed")]
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "tpe-multivariate":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # multivariate is marked experimental in Optuna 3.1
            return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    fail(f'sampler {name!r}: want tpe, tpe-multivariate, random, tpe-fixed or tpe-multivariate-fixed')


def violation_of(trial):
    return [trial.user_attrs.get("violation", 0.0)]


def multi_objective_sampler_of(optuna, name, seed, options):
    use_truncnorm_fix(optuna, False)
    kwargs = {"seed": seed}
    if options.get("constrained"):
        if name in ("random", "motpe"):
            fail(f"sampler {name!r} takes no constraints_func in Optuna 3.1")
        kwargs["constraints_func"] = violation_of
    tpe = {}
    if "n_startup_trials" in options:
        tpe["n_startup_trials"] = int(options["n_startup_trials"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # experimental and deprecated options in Optuna 3.1
        if name == "motpe":
            return optuna.samplers.MOTPESampler(**kwargs, **tpe)
        if name == "tpe":
            return optuna.samplers.TPESampler(**kwargs, **tpe)
        if name == "tpe-multivariate":
            return optuna.samplers.TPESampler(multivariate=True, **kwargs, **tpe)
        if name == "nsga2":
            if "population_size" in options:
                kwargs["population_size"] = int(options["population_size"])
            return optuna.samplers.NSGAIISampler(**kwargs)
        if name == "random":
            return optuna.samplers.RandomSampler(**kwargs)
    fail(f"sampler {name!r} with several objectives: want motpe, tpe, tpe-multivariate, nsga2 or random")


def multi_objective_study(optuna, head, dists, n):
    options = head.get("options") or {}
    sampler = multi_objective_sampler_of(optuna, head["sampler"], int(head["seed"]), options)
    study = optuna.create_study(directions=head["directions"], sampler=sampler)
    for _ in range(int(head["trials"])):
        trial = study.ask(dists)
        print(json.dumps({"params": trial.params}), flush=True)
        n += 1
        told = read(n)
        if told is None or "values" not in told:
            fail(f"input line {n}: want {{\"values\": [V, ...]}} for trial {trial.number}")
        if told["values"] is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        if "violation" in told:
            trial.set_user_attr("violation", float(told["violation"]))
        study.tell(trial, [float(v) for v in told["values"]])
    print(json.dumps({"best_trials": [t.number for t in study.best_trials]}), flush=True)
    return n


def distributions_of(optuna, space):
    out = {}
    for p in space:
        name = p.get("name")
        if not isinstance(name, str) or not name:
            fail(f"space: parameter {p!r} has no name")
        if "choices" in p:
            out[name] = optuna.distributions.CategoricalDistribution(p["choices"])
        elif "low" in p and "high" in p:
            out[name] = optuna.distributions.FloatDistribution(p["low"], p["high"], log=bool(p.get("log")))
        else:
            fail(f"space: parameter {name!r} needs choices, or low and high")
    return out


def read(line_no):
    line = sys.stdin.readline()
    if not line:
        return None
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        fail(f"input line {line_no}: {e}")


def main():
    try:
        import optuna
    except ImportError as e:
        fail(f"{e}: install it with apt-get install python3-optuna")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")
    n = 0
    while True:
        n += 1
        head = read(n)
        if head is None:
            return
        for key in ("sampler", "seed", "trials", "space"):
            if key not in head:
                fail(f"input line {n}: a study needs {key!r}")
        dists = distributions_of(optuna, head["space"])
        if head.get("directions"):
            n = multi_objective_study(optuna, head, dists, n)
            continue
        study = optuna.create_study(direction="minimize", sampler=sampler_of(optuna, head["sampler"], int(head["seed"])))
        for _ in range(int(head["trials"])):
            trial = study.ask(dists)
            print(json.dumps({"params": trial.params}), flush=True)
            n += 1
            told = read(n)
            if told is None or "value" not in told:
                fail(f"input line {n}: want {{\"value\": V}} for trial {trial.number}")
            if told["value"] is None:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(trial, float(told["value"]))


if __name__ == "__main__":
    main()
