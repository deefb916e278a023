package scheduler_test

import (
	"fmt"
	"strings"

	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Pruning is one of rlsweep's own rules (early_terminate) under replay: the product's Pruner, configured
// from a spec as the Sweep workflow configures it, told of every seed of a configuration at each decision
// step with its windowed objective there. A seed that rlsweep's diagnostics stop ends diverged, which
// makes its configuration infeasible: its other seeds stop.
type Pruning struct {
	name    string
	pruner  *scheduler.Pruner
	steps   []int64
	reached map[int]int64 // unit → the steps it had reached at the last call
	// target: with several objectives, env_steps's target; each seed arrives with the first recorded
	// step its window reached it (runSummary's rule) as its Progress.
	target *float64
}

// NewPruning builds the rule of spec's early_terminate section (YAML, e.g. "{type: asha}") for runs of
// total steps in segments of a tenth of them (the median rule decides at segment ends).
func NewPruning(earlyTerminate string, total int64) (*Pruning, error) {
	return NewFrontPruning(earlyTerminate, total, "")
}

// NewFrontPruning is NewPruning for a sweep whose metric is as given ("": the built-in trainer's
// default): a list of objectives makes asha keep each rung's Pareto front. A diverged seed counts for
// seed_failure_rate.
func NewFrontPruning(earlyTerminate string, total int64, metric string) (*Pruning, error) {
	if metric != "" {
		metric = "metric: " + metric + "\n"
	}
	spec, err := sweeps.Decode(strings.NewReader(fmt.Sprintf(`name: replay
trainer: {builtin: ppo, env: CartPole-v1, total_steps: %d, segment_steps: %d}
parameters: {lr: {values: [0.001]}}
%searly_terminate: %s
`, total, total/10, metric, earlyTerminate)), "replay.yaml")
	if err == nil {
		err = spec.Validate()
	}
	if err != nil {
		return nil, err
	}
	cfg := scheduler.PrunerConfigOf(spec)
	p, err := scheduler.NewPruner(cfg, scheduler.PrunerState{})
	if err != nil {
		return nil, err
	}
	r := &Pruning{name: "rlsweep early_terminate " + earlyTerminate, pruner: p, steps: cfg.Steps, reached: map[int]int64{}}
	if spec.MultiObjective() {
		r.target = spec.StepsTarget()
		r.name += " with " + fmt.Sprint(len(spec.Objectives)) + " objectives"
	}
	return r, nil
}

// progress is a seed's Progress at step end: the first recorded step by then whose window reached the
// target.
func (r *Pruning) progress(run *Run, end int64) scheduler.Progress {
	var p scheduler.Progress
	if r.target == nil {
		return p
	}
	for _, s := range run.Steps {
		if s > end {
			break
		}
		if w, ok := run.Window(s); ok && w >= *r.target {
			p.TargetStep = s
			break
		}
	}
	return p
}

func (r *Pruning) Name() string                { return r.name }
func (r *Pruning) Seeds() bool                 { return true }
func (r *Pruning) Record(*Unit, int, int) bool { return false }

func (r *Pruning) Step(u *Unit, step int64) bool {
	prev, started := r.reached[u.ID]
	r.reached[u.ID] = step
	if !started {
		for _, run := range u.Runs {
			r.pruner.Started(u.Config, run.Seed)
		}
	}
	for _, run := range u.Runs {
		if run.Diverged(step) {
			r.pruner.Ended(u.Config, run.Seed, true)
			r.pruner.Failed(u.Config, run.Seed)
			return true // the diagnostics stopped the seed; its configuration is infeasible
		}
	}
	for k, s := range r.steps {
		// A segment that stops at s ends at the trainer's first record at or past s (its iteration
		// ends there): the configuration is decided once each of its seeds got there.
		end := int64(0)
		for _, run := range u.Runs {
			e, ok := run.SegmentEnd(s)
			if !ok {
				end = -1
				break
			}
			end = max(end, e)
		}
		if end < 0 || end <= prev || end > step || end >= u.Runs[0].Steps[len(u.Runs[0].Steps)-1] {
			continue
		}
		var v scheduler.Verdict
		for _, run := range u.Runs {
			e, _ := run.SegmentEnd(s)
			x, ok := run.Windowed(e)
			val := &x
			if !ok {
				val = nil
			}
			v = r.pruner.ArriveWith(u.Config, run.Seed, k, val, r.progress(run, e))
		}
		if v.Decided && !v.Continue {
			return true
		}
		if v.Decided {
			u.Promoted++
		}
	}
	return false
}

func (r *Pruning) Ended(u *Unit, completed bool) {
	for _, run := range u.Runs {
		r.pruner.Ended(u.Config, run.Seed, false)
	}
}
