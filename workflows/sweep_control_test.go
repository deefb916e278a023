package workflows_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/workflows"
)

func TestSweepUpdates(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Ten trials of ten minutes each, two at a time.
	fakes := newFakeTrials(func(int) time.Duration { return 10 * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 10)

	// Each update at its own minute, so that each validator sees the state the previous one left.
	calls := []struct {
		at time.Duration
		u  *updateCall
	}{
		{1 * time.Minute, &updateCall{name: workflows.UpdateConcurrency, args: []any{0}, wantErr: "concurrency: got 0, want 1 to 2000"}},
		{2 * time.Minute, &updateCall{name: workflows.UpdateConcurrency, args: []any{2001}, wantErr: "concurrency: got 2001, want 1 to 2000"}},
		{3 * time.Minute, &updateCall{name: workflows.UpdateResume, wantErr: "resume: sweep is not paused"}},
		{4 * time.Minute, &updateCall{name: workflows.UpdatePause}},
		{5 * time.Minute, &updateCall{name: workflows.UpdatePause, wantErr: "pause: sweep is already paused"}},
		{31 * time.Minute, &updateCall{name: workflows.UpdateConcurrency, args: []any{4}}},
		{31*time.Minute + time.Second, &updateCall{name: workflows.UpdateResume}},
		{31*time.Minute + 2*time.Second, &updateCall{name: workflows.UpdateResume, wantErr: "resume: sweep is not paused"}},
	}
	for _, c := range calls {
		env.RegisterDelayedCallback(func() { c.u.send(env) }, c.at)
	}
	var paused, whilePaused, resumed workflows.SweepStatus
	env.RegisterDelayedCallback(func() { paused = queryStatus(t, env) }, 6*time.Minute)
	// Trials 0 and 1 end at 10m; paused, the sweep starts none in their place.
	env.RegisterDelayedCallback(func() { whilePaused = queryStatus(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { resumed = queryStatus(t, env) }, 32*time.Minute)

	env.ExecuteWorkflow(workflows.Sweep, sweepInput(sweepSpec(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, "maximize")))

	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		c.u.check(t)
	}
	if st := calls[3].u.status; st == nil || !st.Paused {
		t.Errorf("pause returned %+v, want a paused status", st)
	}
	if st := calls[5].u.status; st == nil || st.Concurrency != 4 {
		t.Errorf("set-concurrency 4 returned %+v, want concurrency 4", st)
	}
	if !paused.Paused || paused.Started != 2 {
		t.Errorf("after pause: %+v, want paused with 2 started", paused)
	}
	if !whilePaused.Paused || whilePaused.Started != 2 || len(whilePaused.Running) != 0 || whilePaused.Counts["completed"] != 2 {
		t.Errorf("while paused: %+v, want 2 started, 2 completed, none running", whilePaused)
	}
	if resumed.Paused || resumed.Concurrency != 4 || resumed.Started != 6 || len(resumed.Running) != 4 {
		t.Errorf("after resume: %+v, want concurrency 4 with 4 more trials running", resumed)
	}
	if fakes.maxAtOnce != 4 {
		t.Errorf("at most %d trials ran at once, want 4 (the new concurrency)", fakes.maxAtOnce)
	}
}

func TestSweepContinueAsNewCarriesState(t *testing.T) {
	qs := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// Trial i runs i+1 minutes; with concurrency 3, trials 0, 1 and 2 start with 3, 4 and 5 waiting as
	// standby trials behind them, and 6 and 7 wait behind those whose starts landed first (7 behind 6
	// when 6 landed before the others).
	// By 3m30s trials 0, 1 and 2 have ended (at 1, 2 and 3 minutes), handing their places to 3, 4 and
	// 5, which run; 6 and 7 still wait. Which two of 3, 4 and 5 they wait behind follows the order in
	// which the test environment lands the starts, which varies.
	fakes := newFakeTrials(func(c int) time.Duration { return time.Duration(c+1) * time.Minute })
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, len(qs))
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 3*time.Minute+30*time.Second)

	in := sweepInput(sweepSpec(t, qs, 3, "maximize"))
	in.ResultsFlushInterval = 1000 * time.Hour // only the store before the continue-as-new
	env.ExecuteWorkflow(workflows.Sweep, in)

	next := continuedInput(t, env)
	st := next.State
	if st == nil {
		t.Fatal("continued-as-new input has no State")
	}
	byID, _ := res.recorded()
	var recorded []string
	for id := range byID {
		recorded = append(recorded, id)
	}
	sort.Strings(recorded)
	if st.Scheduler.Next != 8 || fmt.Sprint(st.Running) != "[3-s1 4-s1 5-s1 6-s1 7-s1]" || fmt.Sprint(st.Counts) != "map[completed:3]" ||
		len(st.Pending) != 0 || st.Part != 1 || st.Runs != 1 || st.Phase != workflows.PhaseRunning ||
		st.Leader == nil || st.Leader.TrialID != "2-s1" || st.Concurrency != 3 {
		t.Errorf("carried state = %+v, want scheduler next 8, Running [3-s1 4-s1 5-s1 6-s1 7-s1], 3 completed, Pending flushed as part 0, leader 2-s1", st)
	}
	l := st.Lanes
	if l == nil {
		t.Fatal("carried state has no lanes")
	}
	// 6-s1 and 7-s1 each wait behind a running trial or behind the other.
	heads, behind := slices.Sorted(maps.Keys(l.Successor)), slices.Sorted(maps.Values(l.Successor))
	if len(heads) != 2 || !slices.Contains([]string{"3-s1", "4-s1", "5-s1"}, heads[0]) || heads[1] == "7-s1" ||
		fmt.Sprint(behind) != "[6-s1 7-s1]" || fmt.Sprint(l.Standby) != "map[6-s1:false 7-s1:false]" || len(l.Queue) != 0 || len(l.Waiting) != 0 {
		t.Fatalf("carried lanes = %+v, want 6-s1 and 7-s1 standby behind 3-s1, 4-s1, 5-s1 or each other", l)
	}
	fakes.mu.Lock()
	// Trials 0, 1 and 2 start at the same moment, and the test environment runs their bodies in any
	// order; the trials after them take their places one by one, in order.
	first := slices.Clone(fakes.released[:min(3, len(fakes.released))])
	slices.Sort(first)
	took := append(first, fakes.released[len(first):]...)
	if len(took) == 8 {
		slices.Sort(took[6:]) // 6-s1 and 7-s1 take places in the order of the trials they wait behind
	}
	asked, released := fmt.Sprint(fakes.asked), fmt.Sprint(took)
	fakes.mu.Unlock()
	if asked != "map[3-s1:true 4-s1:true 5-s1:true 6-s1:true 7-s1:true]" {
		t.Errorf("trials asked to report by signal: %s, want the five running or standby at the continue-as-new", asked)
	}
	// The abandoned children go on after the continue-as-new: 6-s1 and 7-s1 take the places of the
	// trials they wait behind when those end.
	if released != "[0-s1 1-s1 2-s1 3-s1 4-s1 5-s1 6-s1 7-s1]" {
		t.Errorf("trials in the order they took a place: %s, want 0-s1 to 7-s1", released)
	}
	if fakes.maxAtOnce != 3 {
		t.Errorf("%d trials trained at once, want at most the concurrency, 3", fakes.maxAtOnce)
	}
	if fmt.Sprint(recorded) != "[0-s1 1-s1 2-s1]" || len(res.parts) != 1 {
		t.Errorf("recorded before continue-as-new: %v in %d parts, want [0-s1 1-s1 2-s1] in one", recorded, len(res.parts))
	}
	if next.SpecYAML != "" || next.SweepID != in.SweepID || next.Spec.Name != "unit" {
		t.Errorf("carried input: SweepID %q, SpecYAML %q, spec %q; want the same sweep, spec.yaml dropped", next.SweepID, next.SpecYAML, next.Spec.Name)
	}

	// The next run: the trials still running report to it, the two with standby trials behind them
	// having handed their places over, and it starts none.
	t.Run("next run", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
		fakes.register(env)
		var res2 resultsRecorder
		res2.mock(env, len(qs))
		for i, id := range st.Running {
			q := float64(3 + i)
			_, handsOff := l.Successor[id]
			sum := results.TrialSummary{TrialID: id, Outcome: results.OutcomeCompleted, Objective: &q, HandedOff: handsOff}
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalTrialDone, sum) }, time.Duration(i+1)*time.Minute)
		}
		env.ExecuteWorkflow(workflows.Sweep, next)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if starts := fakes.startCounts(); len(starts) != 0 {
			t.Errorf("the next run started %v, want none", starts)
		}
		if res2.plans != 0 {
			t.Errorf("the next run planned again (%d Plan calls), want none", res2.plans)
		}
		byID, _ := res2.recorded()
		var out workflows.SweepResult
		if err := env.GetWorkflowResult(&out); err != nil {
			t.Fatal(err)
		}
		if len(byID) != 5 || out.Counts["completed"] != 8 || len(res2.parts) == 0 || res2.parts[0].Part != 1 {
			t.Errorf("next run recorded %d trials from part %v, result %+v; want the 5 remaining from part 1, 8 completed in all",
				len(byID), res2.parts, out)
		}
		if final := queryStatus(t, env); final.Runs != 2 || final.Leader == nil || final.Leader.TrialID != "7-s1" {
			t.Errorf("final status %+v, want run 2 with leader 7-s1", final)
		}
	})

	// A carried trial that ends without having handed its place over: the next run releases the
	// standby trial behind it itself.
	head, successor := heads[0], l.Successor[heads[0]]
	var stillRunning []string
	for _, id := range []string{"3-s1", "4-s1", "5-s1", successor} {
		if id != head {
			stillRunning = append(stillRunning, id)
		}
	}
	slices.Sort(stillRunning)
	otherStandby := l.Successor[heads[1]]
	t.Run("next run releases", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		newFakeTrials(func(int) time.Duration { return time.Minute }).register(env)
		var res2 resultsRecorder
		res2.mock(env, len(qs))
		var mu sync.Mutex
		var releases []string
		env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, workflows.SignalRelease, mock.Anything).Return(
			func(_, id, _, _ string, arg any) error {
				mu.Lock()
				defer mu.Unlock()
				if r, ok := arg.(workflows.Release); !ok || !r.FromSweep {
					return fmt.Errorf("release %+v, want one from the sweep", arg)
				}
				releases = append(releases, id)
				return nil
			})
		q := 3.0
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(workflows.SignalTrialDone, results.TrialSummary{TrialID: head, Outcome: results.OutcomeCompleted, Objective: &q})
		}, time.Minute)
		env.RegisterDelayedCallback(func() {
			mu.Lock()
			defer mu.Unlock()
			if want := "[" + workflows.TrialWorkflowID("sweep/unit/abc", successor) + "]"; fmt.Sprint(releases) != want {
				t.Errorf("released %v after %s ended, want %s", releases, head, want)
			}
			if st := queryStatus(t, env); !slices.Equal(st.Running, stillRunning) || fmt.Sprint(st.Standby) != "["+otherStandby+"]" {
				t.Errorf("status running %v standby %v, want %v running and %s standby", st.Running, st.Standby, stillRunning, otherStandby)
			}
			env.CancelWorkflow()
		}, 2*time.Minute)
		env.OnRequestCancelExternalWorkflow(mock.Anything, mock.Anything, mock.Anything).Return(nil)
		env.OnActivity(acts.CheckTrials, mock.Anything, mock.Anything).Return(&activities.CheckTrialsResult{}, nil)
		env.ExecuteWorkflow(workflows.Sweep, next)
		mu.Lock()
		defer mu.Unlock()
		if len(releases) != 1 {
			t.Errorf("released %v, want %s once", releases, successor)
		}
	})
}

// The safety net for trials carried over from an earlier run: one that reports is recorded from its
// report; one that never reports (terminated by hand) is found closed by CheckTrials and recorded as
// failed, so the sweep ends instead of waiting forever.
func TestSweepCarriedOverTrialsAreChecked(t *testing.T) {
	qs := []float64{0, 1, 2, 3, 4}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	newFakeTrials(func(int) time.Duration { return time.Minute }).register(env)
	var res resultsRecorder
	res.mock(env, len(qs))
	var mu sync.Mutex
	var checks [][]string
	env.OnActivity(acts.CheckTrials, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CheckTrialsInput) (*activities.CheckTrialsResult, error) {
			mu.Lock()
			defer mu.Unlock()
			var ids []string
			out := &activities.CheckTrialsResult{}
			for _, r := range in.Trials {
				ids = append(ids, r.TrialID)
				if r.TrialID == "4-s1" {
					out.Ended = append(out.Ended, results.TrialSummary{TrialID: r.TrialID, Outcome: results.OutcomeFailed,
						Error: "trial workflow ended without reporting: terminated"})
				}
			}
			checks = append(checks, ids)
			return out, nil
		})
	in := sweepInput(sweepSpec(t, qs, 2, "maximize"))
	in.SpecYAML, in.TrialCheckInterval = "", 90*time.Second
	in.State = &workflows.SweepState{Phase: workflows.PhaseRunning, Scheduler: scheduler.State{Next: len(qs)},
		Running: []string{"3-s1", "4-s1"}, Counts: map[string]int{"completed": 3}, Part: 1, Concurrency: 2, Runs: 1}
	q := 3.0
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalTrialDone, results.TrialSummary{TrialID: "3-s1", Outcome: results.OutcomeCompleted, Objective: &q})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.Sweep, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out workflows.SweepResult
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	byID, times := res.recorded()
	if out.Counts["completed"] != 4 || out.Counts["failed"] != 1 || byID["4-s1"].Outcome != results.OutcomeFailed ||
		times["3-s1"] != 1 || times["4-s1"] != 1 {
		t.Errorf("counts %v, recorded %v; want 3-s1 completed and 4-s1 failed, each recorded once", out.Counts, times)
	}
	// One check, 5 s into the run, of both; 4-s1 is found closed then, 3-s1 reports at 1 minute, and no
	// carried trial is left for a check at 95 s.
	if fmt.Sprint(checks) != "[[3-s1 4-s1]]" {
		t.Errorf("CheckTrials calls %v, want one, for [3-s1 4-s1]", checks)
	}
}

// A carried-over trial whose end the previous run missed while it was closing is found seconds into
// the new run, not after the two-minute check interval: in a 1,000-trial benchmark that race cost 120
// of 195 seconds.
func TestSweepCarriedTrialThatReportedUnheardIsFoundAtOnce(t *testing.T) {
	env, res, in := closedCarriedTrial(t)
	in.TrialCheckInterval = 0 // the default two minutes
	start := env.Now()
	env.ExecuteWorkflow(workflows.Sweep, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	byID, _ := res.recorded()
	if got := byID["4-s1"]; got.Outcome != results.OutcomeCompleted || got.Objective == nil || *got.Objective != 4 {
		t.Errorf("carried trial 4-s1 stored as %+v, want completed with objective 4", got)
	}
	if took := env.Now().Sub(start); took > 10*time.Second {
		t.Errorf("the sweep took %v of workflow time to find its closed carried trial, want seconds", took)
	}
}
