package builtin

import (
	"context"

	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// ProbeTrainer is the built-in PPO as a probe trainer, with bug injected (ppo.BugNone for none). The
// trainer's metrics are not passed to the diagnostics rules: collapsing entropy is the goal on probes 4
// and 5, and explained variance is NaN on probe 1 (constant returns), so the collapse rules would stop
// a sound run.
func ProbeTrainer(bug ppo.Bug) probes.Trainer {
	return func(ctx context.Context, p probes.Probe, seed uint64) (probes.Record, error) {
		newEnv := func() envs.Env { return probes.NewEnv(p) }
		tr, err := ppo.New(probeConfig(p, bug), newEnv, seed)
		if err != nil {
			return probes.Record{}, err
		}
		if err := tr.Run(ctx, probes.Budget(p), nil); err != nil {
			return probes.Record{}, err
		}
		return probeRecord(tr, p), nil
	}
}

// probeConfig is the built-in PPO configuration for a probe: the trainer's defaults for the action
// space with γ = probes.Gamma, no reward normalisation (it would rescale the values being judged), a
// constant learning rate of 1e-3 (annealing to 0 over so short a budget wastes half of it) and small
// batches (4 envs × 64 steps), so each probe has many updates within its budget.
func probeConfig(p probes.Probe, bug ppo.Bug) ppo.Config {
	cfg := ppo.Defaults(probes.NewEnv(p).Spec())
	cfg.Gamma, cfg.NormReward, cfg.AnnealLR, cfg.LR = probes.Gamma, false, false, 1e-3
	cfg.NumEnvs, cfg.NumSteps, cfg.Minibatches = 4, 64, 4
	cfg.TotalSteps = probes.Budget(p)
	cfg.Bug = bug
	return cfg
}

// probeRecord reads the trainer's value and policy at the probe's observations.
func probeRecord(tr *ppo.Trainer, p probes.Probe) probes.Record {
	rec := probes.Record{Probe: p.ID, Gamma: tr.Config().Gamma, Steps: tr.Steps()}
	for _, o := range p.Obs {
		obs := []float64{o}
		v := tr.Value(obs)
		rec.Evals = append(rec.Evals, probes.Eval{Obs: obs, Value: &v, Probs: ptrs(tr.ActionProbs(obs)), Mean: ptrs(tr.ActionMean(obs))})
	}
	return rec
}

func ptrs(xs []float64) []*float64 {
	if xs == nil {
		return nil
	}
	out := make([]*float64, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

// BugParam is the sweep parameter that breaks the built-in trainer on purpose (a test aid, as
// `rlsweep train --inject-bug`); the probe stage honours it too.
const BugParam = ppo.BugParam

// Probe runs the built-in PPO on probe p, on env's action space: a probe of the other action space is
// skipped. params may carry BugParam. An error is bad input (an unknown env or bug) or ctx's end.
func Probe(ctx context.Context, env string, params map[string]any, p probes.Probe, seed int64) (probes.Result, error) {
	newEnv, err := envs.Make(env)
	if err != nil {
		return probes.Result{}, err
	}
	if newEnv().Spec().Discrete() == p.Continuous {
		return probes.Result{Probe: p.ID, Level: p.Level, Skipped: true}, nil
	}
	name, _ := params[BugParam].(string)
	bug, err := ppo.ParseBug(name)
	if err != nil {
		return probes.Result{}, err
	}
	r := probes.RunOne(ctx, ProbeTrainer(bug), p, uint64(seed))
	return r, ctx.Err()
}
