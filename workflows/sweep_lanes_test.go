package workflows_test

import (
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/workflows"
)

// With standby trials behind the running ones, every trial still runs once, never more than the
// concurrency at once, whether the trials hand their places over or the sweep releases the standby
// trials itself (a worker that could not signal).
func TestSweepStandbyTrialsKeepTheWindow(t *testing.T) {
	for _, handOff := range []bool{true, false} {
		t.Run(fmt.Sprintf("hand-off %v", handOff), func(t *testing.T) {
			qs := make([]float64, 20)
			for i := range qs {
				qs[i] = float64(i)
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c%3+1) * time.Minute })
			fakes.noHandOff = !handOff
			fakes.register(env)
			var res resultsRecorder
			res.mock(env, len(qs))
			var mid workflows.SweepStatus
			env.RegisterDelayedCallback(func() { mid = queryStatus(t, env) }, 90*time.Second)
			env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 4, "maximize")))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if fakes.maxAtOnce != 4 {
				t.Errorf("at most %d trials trained at once, want the concurrency, 4", fakes.maxAtOnce)
			}
			for id, n := range fakes.startCounts() {
				if n != 1 {
					t.Errorf("trial %s started %d times, want once", id, n)
				}
			}
			if len(fakes.released) != len(qs) {
				t.Errorf("%d trials trained, want %d", len(fakes.released), len(qs))
			}
			_, times := res.recorded()
			if len(times) != len(qs) {
				t.Errorf("%d trials recorded, want %d", len(times), len(qs))
			}
			if len(mid.Running) != 4 || len(mid.Standby) != 12 {
				t.Errorf("status at 90s: running %v, standby %v; want 4 running, three standby behind each", mid.Running, mid.Standby)
			}
		})
	}
}

// Lowering the concurrency holds the standby trials: the trials that end no longer hand their places
// over, and the window shrinks to the new concurrency.
func TestSweepLowerConcurrencyShrinksTheWindow(t *testing.T) {
	qs := make([]float64, 12)
	for i := range qs {
		qs[i] = float64(i)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return 10 * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, len(qs))
	lower := &updateCall{name: workflows.UpdateConcurrency, args: []any{2}}
	env.RegisterDelayedCallback(func() { lower.send(env) }, 5*time.Minute)
	var after workflows.SweepStatus
	var trainingAfter int
	env.RegisterDelayedCallback(func() {
		after = queryStatus(t, env)
		fakes.mu.Lock()
		trainingAfter = len(fakes.running)
		fakes.mu.Unlock()
	}, 15*time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, qs, 4, "maximize")))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	lower.check(t)
	if trainingAfter != 2 || len(after.Running) != 2 {
		t.Errorf("after lowering the concurrency to 2: %d trials training, status running %v; want 2", trainingAfter, after.Running)
	}
	if _, times := res.recorded(); len(times) != len(qs) {
		t.Errorf("%d trials recorded, want %d", len(times), len(qs))
	}
}

// Past maxStartsInFlight (200) trials to start at once, with the run's open trial workflows bounded
// below what three standby trials behind each running one would take (as Temporal's 2,000 pending
// children bound a sweep at concurrency 2,000: a workflow task that would pass it fails and the sweep
// stalls), every place is still taken, the bound holds, and every trial runs once.
func TestSweepStaysUnderPendingChildren(t *testing.T) {
	const conc, pending = 300, 500
	qs := make([]float64, 2*conc)
	for i := range qs {
		qs[i] = float64(i)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c%3+1) * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, len(qs))
	in := sweepInput(sweepSpec(t, qs, conc, "maximize"))
	in.PendingChildren = pending
	env.ExecuteWorkflow(workflows.Sweep, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if fakes.maxAtOnce != conc {
		t.Errorf("at most %d trials trained at once, want the concurrency, %d", fakes.maxAtOnce, conc)
	}
	if fakes.maxAlive > pending || fakes.maxAlive <= conc {
		t.Errorf("%d trial workflows open at once, want standby ones beside the %d running, at most %d in all", fakes.maxAlive, conc, pending)
	}
	for id, n := range fakes.startCounts() {
		if n != 1 {
			t.Errorf("trial %s started %d times, want once", id, n)
		}
	}
	if _, times := res.recorded(); len(times) != len(qs) {
		t.Errorf("%d trials recorded, want %d", len(times), len(qs))
	}
}
