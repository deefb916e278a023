package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/scheduler"
)

// registerHandlers installs the status query and the pause, resume and set-concurrency updates.
func (s *sweepRun) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryStatus, s.status); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePause, func(uctx workflow.Context) (*SweepStatus, error) {
		s.state.Paused = true
		s.holdStandby(uctx)
		return s.status()
	}, workflow.UpdateHandlerOptions{Validator: func() error {
		return s.state.validateChange("pause", s.state.Paused, "already paused")
	}}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateResume, func(workflow.Context) (*SweepStatus, error) {
		s.state.Paused = false
		return s.status()
	}, workflow.UpdateHandlerOptions{Validator: func() error {
		return s.state.validateChange("resume", !s.state.Paused, "not paused")
	}}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateConcurrency, func(uctx workflow.Context, n int) (*SweepStatus, error) {
		if n < s.state.Concurrency {
			s.holdStandby(uctx)
		}
		s.state.Concurrency = n
		return s.status()
	}, workflow.UpdateHandlerOptions{Validator: func(n int) error {
		if n < 1 || n > MaxConcurrency {
			return fmt.Errorf("concurrency: got %d, want 1 to %d", n, MaxConcurrency)
		}
		return s.state.validateChange("set-concurrency", false, "")
	}})
}

func (s *sweepRun) status() (*SweepStatus, error) {
	var running, standby []string
	for _, id := range s.book.runningIDs() {
		if _, ok := s.state.Lanes.standby(id); ok {
			standby = append(standby, id)
			continue
		}
		running = append(running, id)
	}
	started := len(running) + s.state.finished() // every trial started is running or finished
	st := &SweepStatus{
		SweepID: s.in.SweepID, Name: s.in.Spec.Name, Phase: s.state.Phase, Total: s.sched.Total(),
		Started: started, Running: running, Counts: s.state.Counts, Paused: s.state.Paused,
		Concurrency: s.state.Concurrency, Leader: s.state.Leader, Metric: s.in.Spec.Metric,
		Runs: s.state.Runs, Since: s.state.Started, LastFailure: s.state.LastFailure, Standby: standby,
		Confirm: s.state.ConfirmNote,
	}
	if p, ok := s.sched.(scheduler.PruningReporter); ok {
		st.Pruning = p.Pruning()
	}
	if p, ok := s.sched.(scheduler.PBTReporter); ok {
		st.PBT = p.PBT()
	}
	return st, nil
}
