package scheduler_test

import (
	"fmt"
	"strings"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// StopOutcome is what a ReplayStop cost and decided: an Outcome (its units are trials, one seed of one
// configuration each), and where the spent steps went.
type StopOutcome struct {
	Outcome
	// Overshoot: environment steps the stopped seeds trained past the record at which they passed the
	// decision step that stopped their configuration (they went on while their siblings caught up).
	Overshoot int64
	// Late: seeds that started after their configuration had been stopped (or found infeasible);
	// LateSteps the steps they trained: each is stopped where its configuration was decided (at its
	// first pass, for an infeasible one).
	Late      int
	LateSteps int64
	// DivergedAfter: infeasible configurations (a recorded seed diverges) with a seed that completed its
	// whole budget before any seed of it had diverged in the replay. They count as infeasible
	// configurations trained to the end (Outcome.Infeasible), but no rule could have stopped that seed:
	// when it completed, nothing had diverged yet (the diverging seed started later, and may even have
	// been pruned before it reached its divergence).
	DivergedAfter int
}

// stopTrial is one seed of one configuration in a ReplayStop.
type stopTrial struct {
	id      string
	plan    int // the configuration's index in the sweep's plan
	seed    int64
	run     *Run
	reached int64
	rec     int     // index of the run's next record to report
	point   int     // index of the next decision step to pass
	passed  []int64 // per decision step passed: the record step it was passed at
	late    bool
	ended   bool
}

// ReplayStop replays early_terminate in stop mode (a trainer that never checkpoints: its segments do
// not end at the decision steps) on the grid, driving the product's pruning scheduler (scheduler.New
// on a spec with earlyTerminate, hence the product's Pruner) as the Sweep workflow drives it:
//
//   - trials start in plan order, configuration by configuration in the given order (a permutation of
//     the grid's configurations, see Order) and each configuration's seeds in turn, one slot a trial,
//     at most slots at once; every running trial trains at the same rate, quantum steps a tick;
//   - as a trial's records pass a decision step (its first record at or past it) it reports its
//     windowed value there (Run.Windowed: what a worker reports) through Passed, and trains on;
//   - when that, or a trial's end, stops its configuration (Interrupt), each running seed of it stops
//     at the step it has reached: what it trained past its pass is the overshoot, and it is not resumed;
//   - a trial that reaches the budget completes, one that rlsweep's diagnostics stop ends diverged, and
//     either end is told to the scheduler (Finished: the pruner's Ended and Settle).
func ReplayStop(g *Grid, earlyTerminate string, order []int, slots int, quantum int64) (StopOutcome, error) {
	spec, err := stopSpec(g, earlyTerminate, slots, "order: listed")
	if err != nil {
		return StopOutcome{}, err
	}
	return replayStop(g, spec, earlyTerminate, order, slots, quantum)
}

// ReplayStopPlanned is ReplayStop of a spec that lists the grid's configurations in the given order
// and leaves their start order to the product's plan (early_terminate's default, order shuffled, drawn
// from samplerSeed).
func ReplayStopPlanned(g *Grid, earlyTerminate string, listed []int, samplerSeed int64, slots int, quantum int64) (StopOutcome, error) {
	spec, err := stopSpec(g, earlyTerminate, slots, fmt.Sprintf("sampler_seed: %d", samplerSeed))
	if err != nil {
		return StopOutcome{}, err
	}
	return replayStop(g, spec, earlyTerminate, listed, slots, quantum)
}

func replayStop(g *Grid, spec *sweeps.Spec, earlyTerminate string, order []int, slots int, quantum int64) (StopOutcome, error) {
	sched, err := scheduler.New(spec, scheduler.State{})
	if err != nil {
		return StopOutcome{}, err
	}
	passer, ok1 := sched.(scheduler.Passer)
	inter, ok2 := sched.(scheduler.Interrupter)
	if !ok1 || !ok2 {
		return StopOutcome{}, fmt.Errorf("replay: the scheduler of early_terminate %s takes no passes", earlyTerminate)
	}
	steps := scheduler.PrunerConfigOf(spec).Steps
	out := StopOutcome{Outcome: Outcome{Rule: "rlsweep " + ruleName(earlyTerminate) + " (stop)"}}
	out.StepsFull = int64(len(g.Configs)*len(g.Seeds)) * g.Steps
	stopped := map[int]bool{} // plan configurations stopped or found infeasible
	byID := map[string]*stopTrial{}
	var running []*stopTrial
	done := map[int][]*Run{}         // grid configuration → its completed runs
	divergedSeen := map[int]bool{}   // grid configurations with a seed that diverged in the replay
	completedFirst := map[int]bool{} // grid configurations with a seed completed before any diverged
	finish := func(t *stopTrial, outcome string, pr *results.Pruning) {
		t.ended = true
		out.StepsUsed += t.reached
		if t.late {
			out.LateSteps += t.reached
		}
		sched.Finished(results.TrialSummary{TrialID: t.id, Config: t.plan, Seed: t.seed, Outcome: outcome, Pruning: pr})
	}
	// interrupt stops the trials the scheduler has decided to stop, until it has none left.
	interrupt := func() {
		for {
			its := inter.Interrupt()
			if len(its) == 0 {
				return
			}
			for _, it := range its {
				t := byID[it.TrialID]
				if t == nil || t.ended {
					continue
				}
				stopped[t.plan] = true
				d := it.Decision
				if pr := d.Pruning; pr != nil && pr.Rung >= 0 && pr.Rung < len(t.passed) {
					out.Overshoot += t.reached - t.passed[pr.Rung]
				}
				outcome := d.Outcome
				if outcome == "" {
					outcome = results.OutcomePruned
				}
				finish(t, outcome, d.Pruning)
			}
		}
	}
	for {
		for len(running) < slots {
			tr, ok := sched.Next()
			if !ok {
				break
			}
			c := order[tr.Config]
			var run *Run
			for _, r := range g.Configs[c] {
				if r.Seed == tr.Seed {
					run = r
				}
			}
			if run == nil {
				return StopOutcome{}, fmt.Errorf("replay: configuration %d has no run of seed %d", c, tr.Seed)
			}
			t := &stopTrial{id: tr.ID, plan: tr.Config, seed: tr.Seed, run: run, late: stopped[tr.Config]}
			if t.late {
				out.Late++
			}
			byID[t.id] = t
			running = append(running, t)
		}
		if len(running) == 0 {
			break
		}
		for _, t := range running {
			t.reached = min(t.reached+quantum, g.Steps)
		}
		for _, t := range running {
			if t.ended {
				continue
			}
			r := t.run
			for t.rec < len(r.Steps) && r.Steps[t.rec] <= t.reached && !t.ended && !r.Diverged(r.Steps[t.rec]) {
				at := r.Steps[t.rec]
				for t.point < len(steps) && at >= steps[t.point] && !t.ended {
					p := scheduler.Pass{TrialID: t.id, Config: t.plan, Seed: t.seed, Point: steps[t.point], Step: at}
					if v, ok := r.Windowed(at); ok {
						p.Windowed = &v
					}
					t.passed = append(t.passed, at)
					t.point++
					passer.Passed(p)
					interrupt()
				}
				t.rec++
			}
			switch {
			case t.ended:
			case r.Diverged(t.reached):
				divergedSeen[order[t.plan]] = true
				stopped[t.plan] = true
				finish(t, results.OutcomeDiverged, nil)
				interrupt()
			case t.reached >= g.Steps:
				if !divergedSeen[order[t.plan]] {
					completedFirst[order[t.plan]] = true
				}
				done[order[t.plan]] = append(done[order[t.plan]], r)
				finish(t, results.OutcomeCompleted, nil)
				interrupt()
			}
		}
		still := running[:0]
		for _, t := range running {
			if !t.ended {
				still = append(still, t)
			} else if t.reached < g.Steps || t.run.Diverged(t.reached) {
				out.UnitsPruned++
			}
		}
		out.UnitsEnded += len(running) - len(still)
		running = still
	}
	out.Saved = 1 - float64(out.StepsUsed)/float64(out.StepsFull)
	out.judge(g, done)
	for c := range completedFirst {
		if _, ok := Score(g.Configs[c], g.Steps); !ok {
			out.DivergedAfter++
		}
	}
	return out, nil
}

// stopSpec is the sweep a ReplayStop runs: one configuration per grid configuration (a parameter
// naming its index in the plan), the grid's seeds, its budget in segments of a tenth, earlyTerminate,
// and extra (top-level keys: order, sampler_seed).
func stopSpec(g *Grid, earlyTerminate string, slots int, extra string) (*sweeps.Spec, error) {
	idx := make([]string, len(g.Configs))
	for i := range idx {
		idx[i] = fmt.Sprint(i)
	}
	seeds := make([]string, len(g.Seeds))
	for i, s := range g.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	spec, err := sweeps.Decode(strings.NewReader(fmt.Sprintf(`name: replay
trainer: {command: [train], total_steps: %d, segment_steps: %d}
metric: {name: reward, goal: maximize}
seeds: [%s]
concurrency: %d
parameters: {grid_config: {values: [%s]}}
early_terminate: %s
%s
`, g.Steps, g.Steps/10, strings.Join(seeds, ", "), slots, strings.Join(idx, ", "), earlyTerminate, extra)), "replay.yaml")
	if err == nil {
		err = spec.Validate()
	}
	return spec, err
}

// ruleName is an early_terminate section's type ("{type: asha}" → asha).
func ruleName(earlyTerminate string) string {
	s := strings.Trim(earlyTerminate, "{} ")
	s = strings.TrimPrefix(s, "type:")
	s, _, _ = strings.Cut(strings.TrimSpace(s), ",")
	return s
}
