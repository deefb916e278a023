// Command pbt-eval evaluates the final policies of one or more finished sweeps of the built-in PPO:
// for each trial it loads the checkpoint its last segment committed (resume.json) from a local
// artifact store, runs -episodes evaluation episodes with the policy's mean action (a categorical
// policy's most likely action) on fresh environments, and prints the IQM of their returns; then, per
// sweep, the best trial's (by the sweep's objective) evaluation IQM and the median over its trials.
// It is how the population-based training comparison (pbt against fixed random configurations at
// equal env-steps) is measured.
//
//	go run ./scripts/pbt-eval -store ~/.rlsweep/artifacts -env Pendulum-v1 SWEEP-ID...
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
)

func main() {
	store := flag.String("store", filepath.Join(os.Getenv("HOME"), ".rlsweep", "artifacts"), "local artifact store directory")
	env := flag.String("env", "Pendulum-v1", "environment")
	episodes := flag.Int("episodes", 20, "evaluation episodes per trial")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: pbt-eval [-store DIR] [-env NAME] [-episodes N] SWEEP-ID...")
		os.Exit(2)
	}
	newEnv, err := envs.Make(*env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, sweep := range flag.Args() {
		if err := evalSweep(*store, sweep, newEnv, *episodes); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", sweep, err)
			os.Exit(1)
		}
	}
}

func evalSweep(store, sweep string, newEnv func() envs.Env, episodes int) error {
	local, err := artifacts.NewLocal(store)
	if err != nil {
		return err
	}
	ss, ctx := sweepstore.New(local), context.Background()
	res, err := ss.ReadResults(ctx, sweep)
	if err != nil {
		return err
	}
	fmt.Printf("sweep %s (%s)\n", sweep, res.Name)
	type row struct {
		id        string
		objective float64
		iqm       float64
	}
	var rows []row
	for _, t := range res.Trials {
		rp, err := ss.ReadResumePoint(ctx, sweep, t.TrialID)
		if err != nil || rp.Key == "" {
			fmt.Printf("  %-6s %-9s no checkpoint\n", t.TrialID, t.Outcome)
			continue
		}
		iqm, err := evalCheckpoint(filepath.Join(store, rp.Key), t.Params, newEnv, episodes)
		if err != nil {
			return fmt.Errorf("%s: %w", t.TrialID, err)
		}
		obj := math.NaN()
		if t.Objective != nil {
			obj = *t.Objective
		}
		fmt.Printf("  %-6s %-9s steps %7d  objective %8.1f  eval IQM %8.1f  exploits %d  params %v\n",
			t.TrialID, t.Outcome, t.Steps, obj, iqm, len(t.Exploits), t.Params)
		if t.Outcome == results.OutcomeCompleted {
			rows = append(rows, row{t.TrialID, obj, iqm})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	best := slices.MaxFunc(rows, func(a, b row) int {
		if a.objective < b.objective {
			return -1
		}
		if a.objective > b.objective {
			return 1
		}
		return 0
	})
	iqms := make([]float64, len(rows))
	for i, r := range rows {
		iqms[i] = r.iqm
	}
	sort.Float64s(iqms)
	med := iqms[len(iqms)/2]
	if len(iqms)%2 == 0 {
		med = (iqms[len(iqms)/2-1] + iqms[len(iqms)/2]) / 2
	}
	fmt.Printf("  best by objective: %s, eval IQM %.1f; best eval IQM %.1f; median eval IQM %.1f over %d completed trials\n",
		best.id, best.iqm, iqms[len(iqms)-1], med, len(rows))
	return nil
}

// evalCheckpoint returns the IQM of the returns of episodes deterministic episodes.
func evalCheckpoint(path string, params map[string]any, newEnv func() envs.Env, episodes int) (float64, error) {
	cfg := ppo.Defaults(newEnv().Spec())
	p := map[string]any{}
	for k, v := range params {
		if k != ppo.BugParam {
			p[k] = v
		}
	}
	if err := cfg.SetAll(p); err != nil {
		return 0, err
	}
	cfg.TotalSteps = 1 << 40
	tr, err := ppo.New(cfg, newEnv, 1)
	if err != nil {
		return 0, err
	}
	if err := tr.RestoreFile(path); err != nil {
		return 0, err
	}
	spec := newEnv().Spec()
	returns := make([]float64, episodes)
	for ep := range episodes {
		env := newEnv()
		rng := rand.New(rand.NewPCG(uint64(ep), 0x6576616c)) // "eval"
		obs := make([]float64, spec.ObsDim)
		env.Reset(rng, obs)
		limit := spec.MaxEpisodeSteps
		if limit == 0 {
			limit = 1000
		}
		for range limit {
			var action []float64
			if spec.Discrete() {
				probs := tr.ActionProbs(obs)
				action = []float64{float64(slices.Index(probs, slices.Max(probs)))}
			} else {
				action = tr.ActionMean(obs)
			}
			r, done := env.Step(action, obs)
			returns[ep] += r
			if done {
				break
			}
		}
	}
	return diagnostics.IQM(returns), nil
}
