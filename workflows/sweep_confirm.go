package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// confirmDue says a sweep with confirm has ended its search — every trial of it ended — and its
// re-runs on other GPU classes are still to be picked.
func (s *sweepRun) confirmDue() bool {
	c, ok := s.sched.(scheduler.Confirmer)
	return ok && c.SearchDone() && !c.Picked() && s.book.count() == 0 && !s.state.Lanes.queued()
}

// confirming says the sweep runs its confirm re-runs: they were picked.
func (s *sweepRun) confirming() bool {
	c, ok := s.sched.(scheduler.Confirmer)
	return ok && c.Picked()
}

// pickConfirm stores the search's results, picks its best configurations from them
// (activities.PickConfirm) and hands their re-runs to the scheduler. The re-runs train on other
// queues, so no slot hand-off goes on (Lanes off: nothing runs, so none is held). The pick is recorded
// as the sweep's ConfirmNote, which status and the sweep's summary show, none picked included. A pick
// that fails for good (its retries spent) confirms nothing and the sweep ends on the search's results,
// its note saying why; only a cancel ends it otherwise.
func (s *sweepRun) pickConfirm(ctx workflow.Context) error {
	if err := s.flushResults(ctx); err != nil {
		return err
	}
	cf := s.in.Spec.Confirm
	var best []sweeps.Trial
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "pick the configurations to confirm on "+strings.Join(cf.GPUClasses, ", ")),
		(*activities.Activities).PickConfirm, activities.PickConfirmInput{SweepID: s.in.SweepID, Top: cf.Top}).Get(ctx, &best)
	switch {
	case temporal.IsCanceledError(err):
		return err
	case err != nil:
		// The search's results stand: the sweep ends as without confirm, and says why.
		s.state.ConfirmNote = "confirm: not run: picking the best configurations failed: " + firstLine(err)
		best = nil
	default:
		s.state.ConfirmNote = confirmNote(best, cf)
	}
	s.sched.(scheduler.Confirmer).Confirm(s.in.Spec.ConfirmTrials(best))
	s.state.Lanes = nil
	workflow.GetLogger(ctx).Info(s.state.ConfirmNote)
	return nil
}

// fillRerun gives a confirm re-run recorded without its summary (it never started, or ended without
// reporting) its configuration, seed, parameters, precision and class, as results.Merge does for the
// search's trials from the plan: without them it would count as the search's.
func (s *sweepRun) fillRerun(sum *results.TrialSummary) {
	if sum.Params != nil {
		return
	}
	c, ok := s.sched.(scheduler.Confirmer)
	if !ok {
		return
	}
	if t, ok := c.Rerun(sum.TrialID); ok {
		sum.Config, sum.Seed, sum.Params, sum.Precision, sum.GPUClass = t.Config, t.Seed, t.Params, t.Precision, t.GPUClass
	}
}

// confirmNote says what the confirmation re-runs: "confirm: configurations 3, 0, 7 re-run on a100",
// or that none qualified.
func confirmNote(best []sweeps.Trial, cf *sweeps.Confirm) string {
	if len(best) == 0 {
		return fmt.Sprintf("confirm: no configuration to re-run on %s: none completed a seed with none diverged, failed or out of memory",
			strings.Join(cf.GPUClasses, ", "))
	}
	configs := make([]string, len(best))
	for i, b := range best {
		configs[i] = fmt.Sprint(b.Config)
	}
	return fmt.Sprintf("confirm: configurations %s re-run on %s", strings.Join(configs, ", "), strings.Join(cf.GPUClasses, ", "))
}
