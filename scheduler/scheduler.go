// Package scheduler decides, for the Sweep workflow, which trial starts next and, at each segment
// boundary of a running trial, whether it goes on. It is pure and deterministic (no Temporal, no clock,
// no randomness but what the spec seeds): the workflow replays every decision it made, and carries the
// scheduler's small State across a continue-as-new.
//
// The planned scheduler runs the spec's grid, random or sobol plan (sweeps.Plan), trials started in
// plan order, every trial continued at every boundary; method bayes runs TPE (tpe_scheduler.go), which
// makes its next configuration from the results it was told of. Adaptive search plugs in here as
// another Scheduler: a pruner (median, ASHA) answers Stop at a boundary; population-based training
// answers Exploit (go on from another trial's checkpoint with perturbed parameters). The workflow does
// not grow for them.
package scheduler

import (
	"fmt"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Scheduler is what the Sweep workflow asks. Its methods are called from workflow code only, in the
// order the workflow's events happen, so a replay asks the same questions and gets the same answers.
type Scheduler interface {
	// Peek returns the trial to start now without taking it; false when none is ready (Done says
	// whether one ever will be: an adaptive scheduler may wait for results before it can say).
	Peek() (sweeps.Trial, bool)
	// Next takes the trial Peek returns: the workflow starts it.
	Next() (sweeps.Trial, bool)
	// Finished tells the scheduler a trial ended, with its summary.
	Finished(sum results.TrialSummary)
	// AtBoundary is asked when a running trial has ended a segment and before it starts the next one.
	AtBoundary(b Boundary) Decision
	// AsksAtBoundaries says whether AtBoundary can answer anything but Continue: when false, trials do
	// not stop at their segment ends to ask, and cost no events for it.
	AsksAtBoundaries() bool
	// Done says that no trial will ever be started again.
	Done() bool
	// Total is how many trials the sweep runs, for progress; an adaptive scheduler gives its budget.
	Total() int
	// State is what a continue-as-new carries to the next run, which resumes with New(spec, state).
	State() State
}

// PruningReporter is a Scheduler that prunes and can say how far configurations got, for status and
// watch.
type PruningReporter interface {
	Pruning() *PruningStatus
}

// PruningStatus is a pruner's progress: its rule and, per decision step, how many configurations
// reached it and how many it stopped there.
type PruningStatus struct {
	Rule  string
	Rungs []RungStatus
}

// RungStatus is one decision step's count.
type RungStatus struct {
	Step    int64
	Reached int
	Stopped int
}

// Replacer is a Scheduler that adds trials of its own as others end (pbt replaces a diverged member):
// Replacements returns those added since the last call, once each, for the decision log.
type Replacer interface {
	Replacements() []Replacement
}

// Replacement is a trial a Replacer added in place of one that ended: Member replaces Replaces,
// starting from Parent's checkpoint ResumeFrom at ResumeStep with Params (afresh, with Parent and
// ResumeFrom empty, when no member had one).
type Replacement struct {
	Member, Replaces, Parent string
	ResumeFrom               string
	ResumeStep               int64
	Params                   map[string]any
	Reason                   string
}

// Interrupter is a Scheduler that may stop running trials between their boundaries: a pruner stops
// the other seeds of a configuration one seed of which diverged. The workflow asks after each
// Finished and sends each trial returned its decision at once.
type Interrupter interface {
	// Interrupt returns the trials to stop now, each once, in a deterministic order.
	Interrupt() []Interruption
}

// Passer is a Scheduler that judges a trial as its metric stream passes a decision point inside a
// segment (early_terminate in stop mode, and a trainer that trains past its segment's stop step): the
// trial goes on meanwhile, and a configuration decided stopped has its running seeds stopped through
// Interrupt.
type Passer interface {
	Passed(p Pass)
}

// Pass is what a trial's segment tells its sweep as the trial's metric stream passes a decision
// point: the point (in the spec's rung unit: environment steps, or logged values of the objective),
// the step the records had reached, and the objective's windowed value there.
type Pass struct {
	TrialID  string
	Config   int
	Seed     int64
	Point    int64
	Step     int64
	Windowed *float64 `json:",omitempty"`
	// TargetStep and Seconds are what a sweep of several objectives judges the seed on besides
	// (Progress): the step its windowed objective first reached the env_steps target (0: not yet) and
	// its training wall seconds so far.
	TargetStep int64   `json:",omitempty"`
	Seconds    float64 `json:",omitempty"`
}

// Interruption is a running trial to stop now and the Stop decision it ends with.
type Interruption struct {
	TrialID  string
	Decision Decision
}

// State is a scheduler's whole memory across a continue-as-new: small, whatever the sweep's size.
type State struct {
	// Next is the plan index of the next trial to start.
	Next int `json:"next"`
	// TargetReached: a trial completed with its objective at or beyond the spec's metric.target, so no
	// new trial starts.
	TargetReached bool `json:"target_reached,omitempty"`
	// Pruner is early_terminate's memory (PrunerState); nil without it.
	Pruner *PrunerState `json:"pruner,omitempty"`
	// Bayes is method bayes's memory (BayesState); nil for the other methods.
	Bayes *BayesState `json:"bayes,omitempty"`
	// PBT is method pbt's memory (PBTState); nil for the other methods.
	PBT *PBTState `json:"pbt,omitempty"`
	// Confirm is the re-runs on other GPU classes of a sweep with confirm (ConfirmState); nil until
	// they are picked, and without confirm.
	Confirm *ConfirmState `json:"confirm,omitempty"`
}

// Boundary is what a trial tells its sweep at the end of a segment.
type Boundary struct {
	TrialID   string
	Config    int
	Seed      int64
	Segment   int      // the segment that ended, from 0
	Step      int64    // the step its records reached
	Objective *float64 // the objective's last value; nil when it has none
	// Windowed is the objective's mean over the trial's records in the last 10% of its steps so far
	// (activities.SegmentResult.Windowed), what pruners compare; nil when none carried it.
	Windowed *float64 `json:",omitempty"`
	// TargetStep and Seconds are what a sweep of several objectives judges the seed on besides
	// (Progress): the step its windowed objective first reached the env_steps target (0: not yet) and
	// its segments' wall seconds so far.
	TargetStep int64   `json:",omitempty"`
	Seconds    float64 `json:",omitempty"`
	// CheckpointKey is the checkpoint the next segment would resume from, which PBT's exploit hands to
	// another trial.
	CheckpointKey string
	// Warnings are the diagnostic rules that warned during the segment, sorted (PBT's health gate);
	// Params the parameters the trial trained the segment with.
	Warnings []string       `json:",omitempty"`
	Params   map[string]any `json:",omitempty"`
}

// Action is what a trial does at a boundary.
type Action string

const (
	// Continue: the trial trains its next segment.
	Continue Action = "continue"
	// Stop: the trial ends here, outcome pruned (a pruner's answer).
	Stop Action = "stop"
	// Exploit: the trial goes on from Decision.ResumeFrom with Decision.Params (PBT's answer).
	Exploit Action = "exploit"
	// Wait: no answer yet (a pruner waits for the configuration's other running seeds); the
	// workflow holds the question and asks again when another trial reaches a boundary or ends.
	// Never sent to a trial.
	Wait Action = "wait"
)

// Decision answers a Boundary.
type Decision struct {
	// Segment is the Boundary's: a trial that asked twice tells an answer to its question from a stale
	// one.
	Segment int
	Action  Action
	Reason  string // why, for the trial's summary and the report; "" for Continue
	// Outcome is a Stop's outcome: pruned when "" (results.OutcomePruned); diverged when a seed of
	// the trial's configuration diverged. Pruning is the decision's detail for the trial's summary.
	Outcome string           `json:",omitempty"`
	Pruning *results.Pruning `json:",omitempty"`
	// ResumeFrom, ResumeStep and Params are an Exploit's checkpoint, the step it was written at, and
	// the parameters to go on with.
	ResumeFrom string         `json:",omitempty"`
	ResumeStep int64          `json:",omitempty"`
	Params     map[string]any `json:",omitempty"`
	// Exploit records an Exploit for the trial's summary and the store.
	Exploit *results.Exploit `json:",omitempty"`
}

// New returns the scheduler of spec's method, resumed from state (the zero State for a new sweep);
// with confirm, wrapped in the re-runs on other GPU classes that follow the search (Confirmer).
func New(spec *sweeps.Spec, state State) (Scheduler, error) {
	s, err := newSearch(spec, state)
	if err != nil || spec.Confirm == nil {
		return s, err
	}
	return newConfirming(spec, s, state.Confirm), nil
}

func newSearch(spec *sweeps.Spec, state State) (Scheduler, error) {
	switch spec.Method {
	case sweeps.MethodGrid, sweeps.MethodRandom, sweeps.MethodSobol, "":
		p, err := newPlanned(spec, state)
		if err != nil {
			return nil, err
		}
		if spec.EarlyTerminate != nil {
			return newPruning(spec, p, state)
		}
		return p, nil
	case sweeps.MethodBayes:
		return newBayes(spec, state)
	case sweeps.MethodPBT:
		return newPBT(spec, state)
	}
	return nil, fmt.Errorf("method: got %q, want %s, %s, %s, %s or %s", spec.Method, sweeps.MethodGrid, sweeps.MethodRandom, sweeps.MethodSobol, sweeps.MethodBayes, sweeps.MethodPBT)
}

func newPlanned(spec *sweeps.Spec, state State) (*planned, error) {
	trials, err := sweeps.Plan(spec)
	if err != nil {
		return nil, err
	}
	if state.Next < 0 || state.Next > len(trials) {
		return nil, fmt.Errorf("scheduler state: next %d, want a plan index in [0, %d]", state.Next, len(trials))
	}
	if spec.RunCap > 0 && spec.RunCap < len(trials) {
		trials = trials[:spec.RunCap]
	}
	return &planned{trials: trials, next: state.Next, metric: spec.Metric, reached: state.TargetReached}, nil
}

// planned runs a fixed plan (grid, random, sobol) in plan order and continues every trial. It starts
// no new trial once one reached the objective's target (metric.target), as W&B does.
type planned struct {
	trials  []sweeps.Trial
	next    int
	metric  sweeps.Metric
	reached bool
}

func (p *planned) Peek() (sweeps.Trial, bool) {
	if p.reached || p.next >= len(p.trials) {
		return sweeps.Trial{}, false
	}
	return p.trials[p.next], true
}

func (p *planned) Next() (sweeps.Trial, bool) {
	t, ok := p.Peek()
	if ok {
		p.next++
	}
	return t, ok
}

func (p *planned) Finished(sum results.TrialSummary) {
	if t := p.metric.Target; t != nil && sum.Scored() {
		if v := *sum.Objective; p.metric.Goal == sweeps.GoalMinimize && v <= *t || p.metric.Goal != sweeps.GoalMinimize && v >= *t {
			p.reached = true
		}
	}
}

func (p *planned) AtBoundary(b Boundary) Decision {
	return Decision{Segment: b.Segment, Action: Continue}
}

func (p *planned) AsksAtBoundaries() bool { return false }

func (p *planned) Done() bool { return p.reached || p.next >= len(p.trials) }

func (p *planned) Total() int { return len(p.trials) }

func (p *planned) State() State { return State{Next: p.next, TargetReached: p.reached} }
