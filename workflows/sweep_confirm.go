package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
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
// as the sweep's ConfirmNote, which status and the sweep's summary show, none picked included.
func (s *sweepRun) pickConfirm(ctx workflow.Context) error {
	if err := s.flushResults(ctx); err != nil {
		return err
	}
	cf := s.in.Spec.Confirm
	var best []sweeps.Trial
	err := workflow.ExecuteActivity(s.lightOptions(ctx, "pick the configurations to confirm on "+strings.Join(cf.GPUClasses, ", ")),
		(*activities.Activities).PickConfirm, activities.PickConfirmInput{SweepID: s.in.SweepID, Top: cf.Top}).Get(ctx, &best)
	if err != nil {
		return err
	}
	trials := s.in.Spec.ConfirmTrials(best)
	s.sched.(scheduler.Confirmer).Confirm(trials)
	s.state.Lanes = nil
	s.state.ConfirmNote = confirmNote(best, cf)
	workflow.GetLogger(ctx).Info(s.state.ConfirmNote)
	return nil
}

// confirmNote says what the confirmation re-runs: "confirm: configurations 3, 0, 7 re-run on a100
// (6 trials)", or that none qualified.
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
