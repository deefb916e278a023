package sweeps

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Derived objectives: what rlsweep measures of every trial itself, so any sweep can name them in its
// metric list without the trainer logging them (docs/spec.md, "Several objectives").
const (
	// ObjectiveEnvSteps: environment steps a configuration trains; with a target, the steps until its
	// windowed objective (the first objective the trainer logs) first reaches the target, the
	// sample-efficiency measure of RL (time to threshold).
	ObjectiveEnvSteps = "env_steps"
	// ObjectiveWallSeconds: wall-clock seconds a configuration's trial trains.
	ObjectiveWallSeconds = "wall_seconds"
	// ObjectiveGPUSeconds: GPUs held × wall-clock seconds (resources.gpus × wall_seconds).
	ObjectiveGPUSeconds = "gpu_seconds"
	// ObjectiveSeedFailureRate: the share of a configuration's seeds that failed: diverged, collapsed
	// by the end of the run, failed or out of memory.
	ObjectiveSeedFailureRate = "seed_failure_rate"
)

// DerivedObjectives lists the derived objectives, in the order docs/spec.md describes them.
var DerivedObjectives = []string{ObjectiveEnvSteps, ObjectiveWallSeconds, ObjectiveGPUSeconds, ObjectiveSeedFailureRate}

// MaxObjectives bounds a metric list: the front's hypervolume is exact (WFG), exponential in the
// number of objectives.
const MaxObjectives = 4

// Objective is one objective of a sweep with several (Spec.Objectives): a metric the trainer logs, or
// a derived objective.
type Objective struct {
	Name string `json:"name"`
	Goal string `json:"goal"`
	// Target, on env_steps only: count the steps until the trial's windowed objective (Spec.Metric)
	// first reaches it, at or beyond in the metric's goal; a seed that never does counts as never.
	Target *float64 `json:"target,omitempty"`
	// Bounds is a logged objective's possible range, as Metric.Bounds.
	Bounds *[2]float64 `json:"bounds,omitempty"`
}

// Derived says whether the objective is one rlsweep measures itself.
func (o Objective) Derived() bool { return slices.Contains(DerivedObjectives, o.Name) }

// Label names the objective in tables and columns: its name, and for env_steps with a target
// "env_steps_to_target".
func (o Objective) Label() string {
	if o.Name == ObjectiveEnvSteps && o.Target != nil {
		return "env_steps_to_target"
	}
	return o.Name
}

// Describe says in words what the objective measures, for validate --explain and the report.
func (o Objective) Describe(metric string) string {
	var what string
	switch o.Name {
	case ObjectiveEnvSteps:
		what = "environment steps each seed trains"
		if o.Target != nil {
			what = fmt.Sprintf("environment steps until the windowed %s first reaches %s (a seed that never does counts as never)",
				metric, strconv.FormatFloat(*o.Target, 'g', -1, 64))
		}
	case ObjectiveWallSeconds:
		what = "wall-clock seconds each seed trains"
	case ObjectiveGPUSeconds:
		what = "GPUs held × wall-clock seconds of each seed"
	case ObjectiveSeedFailureRate:
		what = "share of the configuration's seeds that diverged, collapsed by the end, failed or ran out of memory"
	default:
		return fmt.Sprintf("%s %s, logged by the trainer (IQM over seeds of each seed's last value)", o.Goal, o.Name)
	}
	if o.Name == ObjectiveSeedFailureRate {
		return fmt.Sprintf("%s %s: %s", o.Goal, o.Label(), what)
	}
	return fmt.Sprintf("%s %s: %s (IQM over seeds)", o.Goal, o.Label(), what)
}

// StepsTarget is the target of the sweep's env_steps objective (the value of the logged objective
// whose first reaching each trial records as TrialSummary.TargetStep); nil when it has none.
func (s *Spec) StepsTarget() *float64 {
	for _, o := range s.Objectives {
		if o.Name == ObjectiveEnvSteps && o.Target != nil {
			return o.Target
		}
	}
	return nil
}

// MultiObjective says whether the sweep has several objectives (metric written as a list).
func (s *Spec) MultiObjective() bool { return len(s.Objectives) > 1 }

// objectivesFromList sets Metric from a metric list: the first objective the trainer logs is the one
// diagnostics, pruning and the leaderboard use.
func (s *Spec) objectivesFromList() {
	for _, o := range s.Objectives {
		if !o.Derived() {
			s.Metric = Metric{Name: o.Name, Goal: o.Goal, Bounds: o.Bounds}
			return
		}
	}
}

// objectives checks a metric list: one to MaxObjectives objectives, each named once with a goal,
// exactly one logged by the trainer, and targets and bounds where they mean something.
func (c *checker) objectives() {
	s := c.s
	if s.Objectives == nil {
		return
	}
	if len(s.Objectives) == 0 || len(s.Objectives) > MaxObjectives {
		c.add("metric", fmt.Sprintf("a list of %d objectives", len(s.Objectives)),
			fmt.Sprintf("1 to %d objectives, each {name, goal}", MaxObjectives))
		return
	}
	logged := 0
	seen := map[string]bool{}
	for i, o := range s.Objectives {
		p := fmt.Sprintf("metric[%d]", i)
		name := strings.TrimSpace(o.Name)
		switch {
		case name == "":
			c.add(p+".name", quote(o.Name), "a metric the trainer logs (such as reward) or one of "+strings.Join(DerivedObjectives, ", "))
		case seen[o.Label()]:
			c.add(p+".name", quote(o.Name), "each objective once (remove the repeated one)")
		}
		seen[o.Label()] = true
		c.choice(p+".goal", o.Goal, Goals, "")
		if !o.Derived() && name != "" {
			logged++
			if logged == 2 {
				c.add(p+".name", quote(o.Name),
					"one objective the trainer logs ("+s.Objectives[firstLogged(s.Objectives)].Name+"); the others derived: "+strings.Join(DerivedObjectives, ", "))
			}
		}
		if o.Target != nil && o.Name != ObjectiveEnvSteps {
			c.add(p+".target", num(*o.Target), "no target here: a target belongs to env_steps (the steps until the logged objective reaches it)")
		}
		if o.Bounds != nil && o.Derived() {
			c.add(p+".bounds", formatFloats(o.Bounds[:]), "no bounds on a derived objective (bounds give a logged metric's range)")
		}
		if b := o.Bounds; b != nil && !o.Derived() && !(b[0] < b[1]) {
			c.add(p+".bounds", formatFloats(b[:]), boundsWant)
		}
		if o.Name == ObjectiveGPUSeconds && s.Resources.GPUs == 0 {
			c.add(p+".name", quote(o.Name), "gpu_seconds with resources.gpus set (a CPU sweep holds no GPU: use wall_seconds)")
		}
		if o.Derived() && o.Goal == GoalMaximize {
			c.add(p+".goal", quote(o.Goal), "minimize for "+o.Name+" (a cost or a failure share: less is better)")
		}
	}
	if logged == 0 {
		c.add("metric", "no objective the trainer logs",
			"one objective the trainer logs (such as reward), first or anywhere in the list: diagnostics judge it")
	}
	if s.MultiObjective() {
		switch s.Method {
		case MethodPBT:
			c.add("method", quote(s.Method), "grid, random, sobol or bayes with several objectives (pbt exploits by one value)")
		}
		if s.EarlyTerminate != nil && s.EarlyTerminate.Type == PrunerMedian {
			c.add("early_terminate.type", quote(s.EarlyTerminate.Type)+" with "+strconv.Itoa(len(s.Objectives))+" objectives",
				"asha or hyperband with several objectives (they keep each rung's Pareto front; a median of objective vectors is not defined): type: asha, or write metric as one objective")
		}
		if s.Regression != nil {
			c.add("regression", "a regression section", "none with several objectives (a nightly regression judges one objective)")
		}
	}
}

// firstLogged is the index of the first objective the trainer logs.
func firstLogged(objs []Objective) int {
	for i, o := range objs {
		if !o.Derived() {
			return i
		}
	}
	return 0
}
