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
}

// NewPruning builds the rule of spec's early_terminate section (YAML, e.g. "{type: asha}") for runs of
// total steps in segments of a tenth of them (the median rule decides at segment ends).
func NewPruning(earlyTerminate string, total int64) (*Pruning, error) {
	spec, err := sweeps.Decode(strings.NewReader(fmt.Sprintf(`name: replay
trainer: {builtin: ppo, env: CartPole-v1, total_steps: %d, segment_steps: %d}
parameters: {lr: {values: [0.001]}}
early_terminate: %s
`, total, total/10, earlyTerminate)), "replay.yaml")
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
	return &Pruning{name: "rlsweep early_terminate " + earlyTerminate, pruner: p, steps: cfg.Steps, reached: map[int]int64{}}, nil
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
			v = r.pruner.Arrive(u.Config, run.Seed, k, val)
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
