package scheduler_test

import (
	"fmt"
	"math"

	"github.com/rlsweep/rlsweep/diagnostics"
	"sort"
)

// The peers' default pruning rules, re-implemented from their sources to replay on the same curves.
// Each judges one trial at a time (not a configuration's seeds together) on the value the trial last
// reported, at points counted in reports ("iterations"), not environment steps.

// RayASHA is Ray Tune's ASHAScheduler with its defaults (grace_period 1, reduction_factor 4, one bracket,
// time_attr training_iteration, mode max): rungs at 1, 4, 16, … reports (below max_t, the run's number of
// reports); a trial reaching a rung is stopped when its last reported value is below the
// (1 − 1/4)-quantile of the values recorded at that rung by the trials that reached it before it, and is
// recorded there either way (ray/tune/schedulers/async_hyperband.py, _Bracket.on_result and cutoff).
type RayASHA struct {
	GracePeriod, ReductionFactor int
	rungs                        map[int][]float64 // rung → values recorded
}

// NewRayASHA is Ray Tune's ASHA with its defaults.
func NewRayASHA() *RayASHA {
	return &RayASHA{GracePeriod: 1, ReductionFactor: 4, rungs: map[int][]float64{}}
}

func (r *RayASHA) Name() string {
	return "Ray Tune ASHA (grace_period 1, reduction_factor 4)"
}
func (r *RayASHA) Seeds() bool            { return false }
func (r *RayASHA) Step(*Unit, int64) bool { return false }
func (r *RayASHA) Ended(*Unit, bool)      {}
func (r *RayASHA) Record(u *Unit, _, rec int) bool {
	iter := rec + 1 // training_iteration counts reports from 1
	run := u.Runs[0]
	maxT := len(run.Steps)
	for m := r.GracePeriod; m < maxT; m *= r.ReductionFactor {
		if iter != m {
			continue
		}
		v := float64(run.Reward[rec])
		recorded := r.rungs[m]
		stop := false
		if len(recorded) > 0 && !math.IsNaN(v) {
			stop = v < nanPercentile(recorded, (1-1/float64(r.ReductionFactor))*100)
		}
		r.rungs[m] = append(recorded, v)
		if !stop {
			u.Promoted++
		}
		return stop
	}
	return false
}

// OptunaMedianRLZoo is Optuna's MedianPruner as RL Baselines3 Zoo sets it up (rl_zoo3/exp_manager.py):
// n_startup_trials 10 (train.py's --n-startup-trials default), n_warmup_steps n_evaluations // 3, with
// n_evaluations = max(1, n_timesteps // 100,000) evaluations evenly spread over the budget, each
// reporting the mean reward of the evaluation as Optuna step 1, 2, … (rl_zoo3/callbacks.py,
// TrialEvalCallback). A trial is pruned at an evaluation when, with at least 10 trials completed, at a
// step not below n_warmup_steps (for 5 evaluations: from the first), its best value reported so far is
// below the median of the completed trials' values at that step, and a trial that has reported only NaN
// is pruned (optuna/pruners/_percentile.py). The replay takes the windowed objective a worker reports at
// the evaluation's step (Run.Windowed) as the evaluation's mean reward, judged once the run has passed
// that step; TestPruneReplayOptuna checks it against Optuna's own MedianPruner.
type OptunaMedianRLZoo struct {
	Total     int64
	evals     int
	startup   int         // n_startup_trials
	warmup    int         // n_warmup_steps, in evaluations
	completed [][]float64 // per completed trial, its value at each evaluation
	values    map[int][]float64
}

// NewOptunaMedianRLZoo is the RL Zoo's MedianPruner for runs of total steps.
func NewOptunaMedianRLZoo(total int64) *OptunaMedianRLZoo {
	evals := int(max(1, total/100_000))
	return NewOptunaMedianWith(total, 10, evals/3)
}

// NewOptunaMedianWith is RL Zoo's setup of Optuna's MedianPruner with other n_startup_trials and
// n_warmup_steps (in evaluations).
func NewOptunaMedianWith(total int64, startup, warmup int) *OptunaMedianRLZoo {
	return &OptunaMedianRLZoo{Total: total, evals: int(max(1, total/100_000)), startup: startup, warmup: warmup, values: map[int][]float64{}}
}

func (o *OptunaMedianRLZoo) Name() string {
	if o.startup != 10 || o.warmup != o.evals/3 {
		return fmt.Sprintf("Optuna MedianPruner as RL Zoo sets it, n_startup_trials %d, n_warmup_steps %d", o.startup, o.warmup)
	}
	return "Optuna MedianPruner as RL Zoo sets it (10 startup trials, warm-up n_evaluations/3)"
}
func (o *OptunaMedianRLZoo) Seeds() bool                 { return false }
func (o *OptunaMedianRLZoo) Record(*Unit, int, int) bool { return false }
func (o *OptunaMedianRLZoo) Step(u *Unit, step int64) bool {
	every := o.Total / int64(o.evals)
	// Evaluation e (Optuna's step: RL Zoo's TrialEvalCallback counts from 1) comes at e·every steps.
	for e := len(o.values[u.ID]) + 1; e <= o.evals && int64(e)*every <= step; e++ {
		if o.evaluate(u, e, int64(e)*every) {
			return true
		}
	}
	return false
}

// evaluate reports the unit's run's windowed value at step as evaluation e and says whether
// MedianPruner prunes it there (optuna/pruners/_percentile.py, PercentilePruner.prune).
func (o *OptunaMedianRLZoo) evaluate(u *Unit, e int, step int64) bool {
	v, ok := u.Runs[0].Windowed(step)
	if !ok {
		v = math.NaN()
	}
	o.values[u.ID] = append(o.values[u.ID], v)
	if len(o.completed) < o.startup || e < o.warmup {
		u.Promoted++
		return false
	}
	best := math.NaN()
	for _, x := range o.values[u.ID] {
		if !math.IsNaN(x) && !(x <= best) {
			best = x
		}
	}
	if math.IsNaN(best) {
		return true // no value reported yet: Optuna prunes
	}
	var at []float64
	for _, c := range o.completed {
		if e <= len(c) {
			at = append(at, c[e-1])
		}
	}
	if m := nanPercentile(at, 50); len(at) > 0 && best < m {
		return true
	}
	u.Promoted++
	return false
}

func (o *OptunaMedianRLZoo) Ended(u *Unit, completed bool) {
	if completed {
		o.completed = append(o.completed, o.values[u.ID])
	}
}

// WandBHyperband is W&B's hyperband early termination with eta 3 and min_iter 3
// (wandb/sweeps src/sweeps/hyperband_stopping.py): bands at 3, 9, 27, … logged iterations (a run's
// history[band], from 0); the threshold of a band is the value at position ⌊n/eta⌋, best first, of the n
// values at that band of every run that got there, running or ended; the controller judges each running
// run again and again against the band it passed last, and stops it once its value there is worse than
// that band's threshold. The replay judges at every record a run reports.
type WandBHyperband struct {
	MinIter, Eta int
	bands        map[int][]float64       // band → values of every run that reached it
	at           map[int]map[int]float64 // unit → band → its value there
}

// NewWandBHyperband is W&B's hyperband with eta 3 and min_iter 3.
func NewWandBHyperband() *WandBHyperband {
	return &WandBHyperband{MinIter: 3, Eta: 3, bands: map[int][]float64{}, at: map[int]map[int]float64{}}
}

func (w *WandBHyperband) Name() string           { return "W&B hyperband (eta 3, min_iter 3)" }
func (w *WandBHyperband) Seeds() bool            { return false }
func (w *WandBHyperband) Step(*Unit, int64) bool { return false }
func (w *WandBHyperband) Ended(*Unit, bool)      {}
func (w *WandBHyperband) Record(u *Unit, _, rec int) bool {
	v := float64(u.Runs[0].Reward[rec])
	last := -1
	for b := w.MinIter; b <= rec; b *= w.Eta {
		last = b
	}
	if last < 0 {
		return false
	}
	if w.at[u.ID] == nil {
		w.at[u.ID] = map[int]float64{}
	}
	if last == rec {
		if math.IsNaN(v) {
			return true // an invalid value is dropped from a run's history: no value at the band is the worst
		}
		w.bands[last] = append(w.bands[last], v)
		w.at[u.ID][last] = v
	}
	mine, ok := w.at[u.ID][last]
	if !ok {
		return false
	}
	sorted := append([]float64(nil), w.bands[last]...)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	if mine < sorted[int(float64(len(sorted))/float64(w.Eta))] {
		return true
	}
	if last == rec {
		u.Promoted++
	}
	return false
}

// nanPercentile is numpy's nanpercentile with linear interpolation.
func nanPercentile(xs []float64, p float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	pos := p / 100 * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (pos-float64(lo))*(v[hi]-v[lo])
}

// RayASHAAtRungs is Ray Tune's ASHA rule (the first to reach a rung goes on; a later one stops when its
// value is below the (1 − 1/rf) percentile of the values recorded at that rung before it) judging each
// run on its own, at rlsweep's decision steps instead of Ray's training iterations, on what a worker
// reports there (the run's windowed value at the first record at or past the step): the rule alone,
// without Ray's grace period of one report.
type RayASHAAtRungs struct {
	ReductionFactor int
	// Grouped: a configuration's seeds are judged as one, on the IQM of their windowed values (as
	// rlsweep's pruner aggregates them), once every seed has reached the step.
	Grouped bool
	steps   []int64
	judged  map[int]int // unit → decision steps judged
	rungs   map[int][]float64
}

// NewRayASHAAtRungs returns Ray's rule at the decision steps of earlyTerminate (rlsweep's asha rungs)
// with reduction factor eta.
func NewRayASHAAtRungs(earlyTerminate string, total int64, eta int, grouped bool) (*RayASHAAtRungs, error) {
	p, err := NewPruning(earlyTerminate, total)
	if err != nil {
		return nil, err
	}
	return &RayASHAAtRungs{ReductionFactor: eta, Grouped: grouped, steps: p.steps, judged: map[int]int{}, rungs: map[int][]float64{}}, nil
}

func (r *RayASHAAtRungs) Name() string {
	if r.Grouped {
		return fmt.Sprintf("Ray Tune ASHA rule at rlsweep's rungs (rf %d, seeds grouped)", r.ReductionFactor)
	}
	return fmt.Sprintf("Ray Tune ASHA rule at rlsweep's rungs (rf %d, per run)", r.ReductionFactor)
}
func (r *RayASHAAtRungs) Seeds() bool                 { return r.Grouped }
func (r *RayASHAAtRungs) Record(*Unit, int, int) bool { return false }
func (r *RayASHAAtRungs) Ended(*Unit, bool)           {}
func (r *RayASHAAtRungs) Step(u *Unit, step int64) bool {
	for _, run := range u.Runs {
		if run.Diverged(step) {
			return true // rlsweep's diagnostics stop it, whatever the rule
		}
	}
	for k := r.judged[u.ID]; k < len(r.steps); k = r.judged[u.ID] {
		var vals []float64
		for _, run := range u.Runs {
			end, ok := run.SegmentEnd(r.steps[k])
			if !ok || end > step || end >= run.Steps[len(run.Steps)-1] {
				return false
			}
			if v, ok := run.Windowed(end); ok {
				vals = append(vals, v)
			}
		}
		r.judged[u.ID]++
		v := math.NaN()
		if len(vals) > 0 {
			v = diagnostics.IQM(vals)
		}
		recorded := r.rungs[k]
		stop := len(recorded) > 0 && v < nanPercentile(recorded, (1-1/float64(r.ReductionFactor))*100) // NaN goes on, as in Ray
		r.rungs[k] = append(recorded, v)
		if stop {
			return true
		}
		u.Promoted++
	}
	return false
}
