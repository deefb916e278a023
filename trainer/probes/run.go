package probes

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Trainer is what the ladder asks of a trainer it runs in process: train on probe p (its
// environment is NewEnv(p), its discount Gamma, its budget Budget(p)) from seed, and report the
// Record of what it learnt. An error fails the probe with the error's message. The built-in PPO
// provides one (trainer/builtin); an external trainer speaks the probe protocol instead.
type Trainer func(ctx context.Context, p Probe, seed uint64) (Record, error)

// Options configure a run of the ladder.
type Options struct {
	// ActionSpace is "discrete" or "continuous"; it picks the ladder (1–5 or 1c–5c).
	ActionSpace string
	Seed        uint64
	// Parallel bounds how many probes train at once; 0 means GOMAXPROCS.
	Parallel int
}

// Budget is the environment steps a trainer gets on each probe.
func Budget(p Probe) int64 {
	if p.Continuous && p.Level >= 4 {
		return 20_000 // a Gaussian mean moves by noisy steps: the largest budget of the 5k–20k probe budgets
	}
	return 10_000
}

// RunOne trains t on p and judges what it reports.
func RunOne(ctx context.Context, t Trainer, p Probe, seed uint64) Result {
	start := time.Now()
	rec, err := t(ctx, p, seed)
	if err != nil {
		return Result{Probe: p.ID, Level: p.Level, Error: err.Error()}
	}
	res := Judge(p, rec)
	res.Seconds = time.Since(start).Seconds()
	return res
}

// Run trains t on every probe of opts.ActionSpace, up to opts.Parallel at a time, and returns the
// diagnosed report.
func Run(ctx context.Context, t Trainer, opts Options) (Report, error) {
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
			results[i] = RunOne(ctx, t, p, opts.Seed)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	return Diagnose(results), nil
}
