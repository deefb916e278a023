package workflows

import (
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// SetScheduler makes the Sweep workflow run with the scheduler f makes until restore is called.
func SetScheduler(f func(*sweeps.Spec, scheduler.State) (scheduler.Scheduler, error)) (restore func()) {
	old := newScheduler
	newScheduler = f
	return func() { newScheduler = old }
}

// WaitForPlace is what a standby Trial waits with (waitForPlace), for the tests' stand-in trials.
var WaitForPlace = waitForPlace

// EndSummary is a finished sweep's summary line (endSummary).
var EndSummary = endSummary
