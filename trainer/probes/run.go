package probes

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
)

// Options configure a built-in probe run.
type Options struct {
	// ActionSpace is "discrete" or "continuous"; it picks the ladder (1–5 or 1c–5c).
	ActionSpace string
	// Bug injects a trainer defect (tests, `rlsweep probe --inject-bug`).
	Bug  ppo.Bug
	Seed uint64
	// Parallel bounds how many probes train at once; 0 means GOMAXPROCS.
	Parallel int
}

// Budget is the environment steps the built-in trainer gets on each probe.
func Budget(p Probe) int64 {
	if p.Continuous && p.Level >= 4 {
		return 20_000 // a Gaussian mean moves by noisy steps: the largest budget of the 5k–20k probe budgets
	}
	return 10_000
}

// Config is the built-in PPO configuration for a probe: the trainer's defaults for the action space
// with γ = Gamma, no reward normalisation (it would rescale the values being judged), a constant
// learning rate of 1e-3 (annealing to 0 over so short a budget wastes half of it) and small batches
// (4 envs × 64 steps), so each probe has many updates within its budget.
func Config(p Probe, bug ppo.Bug) ppo.Config {
	cfg := ppo.Defaults(NewEnv(p).Spec())
	cfg.Gamma, cfg.NormReward, cfg.AnnealLR, cfg.LR = Gamma, false, false, 1e-3
	cfg.NumEnvs, cfg.NumSteps, cfg.Minibatches = 4, 64, 4
	cfg.TotalSteps = Budget(p)
	cfg.Bug = bug
	return cfg
}

// RunOne trains the built-in PPO on p and judges it. The trainer's metrics are not passed to the
// diagnostics rules: collapsing entropy is the goal on probes 4 and 5, and explained variance is NaN
// on probe 1 (constant returns), so the collapse rules would stop a sound run.
func RunOne(ctx context.Context, p Probe, bug ppo.Bug, seed uint64) Result {
	start := time.Now()
	newEnv := func() envs.Env { return NewEnv(p) }
	tr, err := ppo.New(Config(p, bug), newEnv, seed)
	if err != nil {
		return Result{Probe: p.ID, Level: p.Level, Error: err.Error()}
	}
	if err := tr.Run(ctx, Budget(p), nil); err != nil {
		return Result{Probe: p.ID, Level: p.Level, Error: err.Error()}
	}
	res := Judge(p, Evaluate(tr, p))
	res.Seconds = time.Since(start).Seconds()
	return res
}

// Evaluate reads the trainer's value and policy at the probe's observations.
func Evaluate(tr *ppo.Trainer, p Probe) Record {
	rec := Record{Probe: p.ID, Gamma: tr.Config().Gamma, Steps: tr.Steps()}
	for _, o := range p.Obs {
		obs := []float64{o}
		v := tr.Value(obs)
		rec.Evals = append(rec.Evals, Eval{Obs: obs, Value: &v, Probs: ptrs(tr.ActionProbs(obs)), Mean: ptrs(tr.ActionMean(obs))})
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

// Run trains the built-in PPO on every probe of opts.ActionSpace, up to opts.Parallel at a time, and
// returns the diagnosed report.
func Run(ctx context.Context, opts Options) (Report, error) {
	all, err := All(opts.ActionSpace)
	if err != nil {
		return Report{}, err
	}
	par := opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	results := make([]Result, len(all))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = RunOne(ctx, p, opts.Bug, opts.Seed)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	return Diagnose(results), nil
}
