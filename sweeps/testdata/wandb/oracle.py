#!/usr/bin/env python3
"""What W&B makes of each sweep config in the corpus folder, independently of rlsweep's Go code.

    python3 oracle.py CORPUS_DIR SCHEMA_JSON [FIRST_TRIALS_JSON]

CORPUS_DIR is the folder of real W&B sweep configs that TestWandBCorpus reads (wandbCorpusDir in
sweeps/wandb_corpus_test.go says where it is); the configs are not kept in this repository, and the
files below are written into that folder.

SCHEMA_JSON is W&B's own sweep-config JSON schema, src/sweeps/config/schema.json of the
github.com/wandb/sweeps repository (it is not copied here). The script reads every *.yaml and *.yml here
the way `wandb sweep` does (PyYAML's safe_load, so `1e-5` without a dot is a string; a file PyYAML cannot
parse is rejected) and writes, into CORPUS_DIR:

  verdicts.tsv     file, accept|reject, the first problem: W&B's schema violations (Draft 7 with the
                   schema's float/integer formats, as wandb/sweeps' config/schema.py and cfg.py check
                   them), plus min >= max (numbers only) and probabilities that are not one per value or do not sum
                   to 1. Deprecation notices (log_uniform with exponent bounds) are not rejections:
                   W&B still runs those sweeps.
  synthetic.tsv    accept|reject and a parameter (JSON, which is YAML too) for each combination of a
                   distribution with a set of keys, in a random sweep: how W&B's schema judges them.
  argv.golden.json with FIRST_TRIALS_JSON (rlsweep's first trial of each accepted file, written by
                   TestWandBCorpus with RLSWEEP_WANDB_FIRST_TRIALS=path): the argv W&B's agent runs
                   for that trial. The agent's rules (wandb/wandb_agent.py and
                   wandb/sdk/launch/sweeps/utils.py of github.com/wandb/wandb): each command element
                   is str() of its YAML value; an element that starts with "${" and ends with "}" is
                   replaced by the macro's list (an unknown macro by nothing); ${envvar:NAME} inside
                   any element becomes the variable's value, or NAME when unset (none is set here);
                   the flags are f"--{name}={value}" with Python's str() of each value, nested
                   parameters as one dict-valued flag, in the order W&B's server sends the run's
                   config: keys sorted, in nested mappings too (sorted_keys). ${args_json_file} stays "<args_json_file>":
                   its path is W&B's run directory, rlsweep writes the same JSON next to the trial.
"""
import json
import math
import os
import sys

import jsonschema
import yaml

CORPUS = ""


def violations(schema, config):
    fmt = jsonschema.FormatChecker()
    fmt.checks("float")(lambda v: isinstance(v, float))
    fmt.checks("integer")(lambda v: isinstance(v, int))
    out = [e.message for e in jsonschema.Draft7Validator(schema, format_checker=fmt).iter_errors(config)]
    if not isinstance(config, dict):
        return out or ["not a mapping"]
    if "parameters" not in config and not (config.get("scheduler") or {}).get("search_space"):
        out.append("`parameters` is required")
    for name, p in (config.get("parameters") or {}).items():
        if not isinstance(p, dict):
            out.append(f"invalid parameter {name}")
            continue
        if "min" in p and "max" in p and all(isinstance(p[k], (int, float)) for k in ("min", "max")):
            try:
                if p["min"] >= p["max"]:
                    out.append(f"{name}: min {p['min']} is not less than max {p['max']}")
            except TypeError:
                pass  # the schema reported the types
        if "values" in p and "probabilities" in p:
            if len(p["values"]) != len(p["probabilities"]) or not math.isclose(sum(p["probabilities"]), 1.0):
                out.append(f"{name}: probabilities do not match values")
    return out


def leaves(params, prefix=""):
    """(flat name, parameter) of every leaf, in file order; nested parameters as dotted names."""
    for name, p in params.items():
        if isinstance(p, dict) and "parameters" in p:
            yield from leaves(p["parameters"], prefix + name + ".")
        else:
            yield prefix + name, p


def value_of(p, chosen):
    if "values" in p:
        return p["values"][chosen["index"]]
    if "value" in p:
        return p["value"]
    return float(chosen["sampled"]) if chosen.get("float") else chosen["sampled"]


def run_config(params, chosen, prefix=""):
    cfg = {}
    for name, p in params.items():
        if isinstance(p, dict) and "parameters" in p:
            cfg[name] = run_config(p["parameters"], chosen, prefix + name + ".")
        else:
            cfg[name] = value_of(p, chosen[prefix + name])
    return cfg


def sorted_keys(v):
    """The run config as W&B's server hands it to the agent: every mapping's keys sorted (its backend
    is Go, whose encoding/json sorts map keys; agent logs since 2022 show flags and nested dicts in that
    order, e.g. gladstoneai/POWERplay's README)."""
    if isinstance(v, dict):
        return {k: sorted_keys(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [sorted_keys(x) for x in v]
    return v


def envvars(chunk):
    import re
    return re.sub(r"\$\{envvar\:([A-Z0-9_]*)\}", lambda m: os.environ.get(m.group(1), m.group(1)), chunk)


def argv(config, args):
    flags, no_hyphens, no_bool, no_equals = [], [], [], []
    for param, value in args.items():
        flag = f"{param}={value}"
        flags.append("--" + flag)
        no_hyphens.append(flag)
        no_equals += [f"--{param}", str(value)]
        if isinstance(value, bool):
            if value:
                no_bool.append("--" + param)
        else:
            no_bool.append("--" + flag)
    macros = {
        "args": flags, "args_no_hyphens": no_hyphens, "args_no_boolean_flags": no_bool,
        "args_no_equals": no_equals, "args_json": [json.dumps(args)],
        "args_append_hydra": ["+" + f for f in no_hyphens], "args_override_hydra": ["++" + f for f in no_hyphens],
        "interpreter": ["python"], "program": [config.get("program")], "args_json_file": ["<args_json_file>"],
        "env": ["/usr/bin/env"],
    }
    out = []
    for c in config.get("command") or ["${env}", "${interpreter}", "${program}", "${args}"]:
        c = envvars(str(c))
        if c.startswith("${") and c.endswith("}"):
            out += macros.get(c[2:-1]) or []
        else:
            out.append(c)
    return out


DISTS = [None, "constant", "categorical", "categorical_w_probabilities", "int_uniform", "uniform", "q_uniform",
         "log_uniform", "log_uniform_values", "inv_log_uniform", "inv_log_uniform_values", "q_log_uniform",
         "q_log_uniform_values", "normal", "q_normal", "log_normal", "q_log_normal", "beta", "q_beta"]
KEYSETS = [{}, {"values": [1, 2]}, {"value": 3}, {"min": 1, "max": 10}, {"min": 0.5, "max": 2.0},
           {"min": -3.0, "max": -1.0}, {"min": 1, "max": 10, "q": 2}, {"min": 0.1, "max": 1.0, "q": 0.1},
           {"mu": 1.0, "sigma": 2.0}, {"mu": 0, "sigma": 1, "q": 1}, {"a": 2, "b": 3}, {"a": 2, "b": 3, "q": 0.1},
           {"values": ["x", "y"], "probabilities": [0.3, 0.7]}, {"values": ["x", "y"], "probabilities": [0.3, 0.6]},
           {"min": 10, "max": 1}, {"min": 0, "max": 1.0}, {"sigma": -1}, {"q": 0}, {"min": 1}, {"values": []},
           {"min": 1, "max": 2, "mu": 1}, {"value": [64, 64]}, {"values": [[64, 64], [32]]}, {"value": None},
           {"values": [None, 1]}]


def synthetic(schema):
    rows = []
    for d in DISTS:
        for keys in KEYSETS:
            p = dict(keys)
            if d:
                p["distribution"] = d
            v = violations(schema, {"program": "t.py", "method": "random", "parameters": {"x": p}})
            rows.append(f"{'reject' if v else 'accept'}\t{json.dumps(p)}")
    with open(os.path.join(CORPUS, "synthetic.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")


def main():
    global CORPUS
    if len(sys.argv) < 3:
        sys.exit("usage: oracle.py CORPUS_DIR SCHEMA_JSON [FIRST_TRIALS_JSON]")
    CORPUS = sys.argv[1]
    with open(sys.argv[2]) as f:
        schema = json.load(f)
    first = {}
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            first = json.load(f)
    synthetic(schema)
    verdicts, golden = [], {}
    for name in sorted(os.listdir(CORPUS)):
        if not name.endswith((".yaml", ".yml")):
            continue
        with open(os.path.join(CORPUS, name)) as f:
            try:
                config = yaml.safe_load(f)
            except yaml.YAMLError as e:  # `wandb sweep` stops at the parse error
                config, v = None, [f"not YAML: {str(e).splitlines()[0]}"]
        if config is not None:
            v = violations(schema, config)
        verdicts.append(f"{name}\t{'reject' if v else 'accept'}\t{sorted(v)[0] if v else ''}".replace("\n", " "))
        if not v and name in first:
            golden[name] = argv(config, sorted_keys(run_config(config["parameters"], first[name])))
    with open(os.path.join(CORPUS, "verdicts.tsv"), "w") as f:
        f.write("\n".join(verdicts) + "\n")
    if first:
        with open(os.path.join(CORPUS, "argv.golden.json"), "w") as f:
            json.dump(golden, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
