package workflows_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// numEnvs are the values of oomSpec's num_envs, configuration i having numEnvs[i].
var numEnvs = []int{256, 512, 1024, 2048, 4096}

// oomSpec is a grid over num_envs × 2 seeds at concurrency 1: trials 0-s1, 0-s2, 1-s1, … in order.
func oomSpec(t *testing.T) sweeps.Spec {
	t.Helper()
	spec, err := sweeps.Decode(strings.NewReader(`name: unit
trainer: {command: [train], total_steps: 1000}
metric: {name: reward, goal: maximize}
method: grid
seeds: [1, 2]
parameters:
  num_envs: {values: [256, 512, 1024, 2048, 4096]}
probes: {enabled: false}
concurrency: 1
`), "unit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return *spec
}

// Once a trial runs out of memory, no trial whose num_envs is at or above its value trains on the
// same queue: the standby trials already started behind it end untrained, those not started are not
// started, and every trial is recorded once, the skipped ones oom with the advice.
func TestSweepSkipsConfigurationsAboveAnOOM(t *testing.T) {
	for _, tc := range []struct {
		oomFrom int    // the first configuration that runs out of memory; all above it do too
		next    string // the next smaller num_envs in the space
	}{
		{3, "1024"}, // 2048 runs out: 3-s2, 4-s1 and 4-s2 wait as standby trials behind 3-s1
		{2, "512"},  // 1024 runs out: 4-s1 and 4-s2 are not started yet either
	} {
		for _, handOff := range []bool{true, false} {
			t.Run(fmt.Sprintf("oom from %d hand-off %v", numEnvs[tc.oomFrom], handOff), func(t *testing.T) {
				var s testsuite.WorkflowTestSuite
				env := s.NewTestWorkflowEnvironment()
				fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
				fakes.noHandOff = !handOff
				fakes.outcome = func(c int) string {
					if c >= tc.oomFrom {
						return results.OutcomeOOM
					}
					return ""
				}
				fakes.register(env)
				var res resultsRecorder
				res.mock(env, 10)
				env.ExecuteWorkflow(workflows.Sweep, sweepInput(oomSpec(t)))
				if err := env.GetWorkflowError(); err != nil {
					t.Fatal(err)
				}
				oomID := fmt.Sprintf("%d-s1", tc.oomFrom)
				fakes.mu.Lock()
				trained := fmt.Sprint(fakes.released)
				fakes.mu.Unlock()
				var want []string
				for c := 0; c < tc.oomFrom; c++ {
					want = append(want, fmt.Sprintf("%d-s1", c), fmt.Sprintf("%d-s2", c))
				}
				want = append(want, oomID)
				if trained != fmt.Sprint(want) {
					t.Errorf("trials trained: %s, want %v: none at or above num_envs %d after %s ran out of memory",
						trained, want, numEnvs[tc.oomFrom], oomID)
				}
				for id, n := range fakes.startCounts() {
					var c int
					fmt.Sscanf(id, "%d-", &c)
					if n != 1 {
						t.Errorf("trial %s started %d times, want at most once", id, n)
					}
					if tc.oomFrom == 2 && c == 4 {
						t.Errorf("trial %s (num_envs 4096) started, want it never started", id)
					}
				}
				byID, times := res.recorded()
				if len(times) != 10 {
					t.Errorf("%d trials recorded, want 10", len(times))
				}
				for id, n := range times {
					if n != 1 {
						t.Errorf("trial %s recorded %d times, want once", id, n)
					}
				}
				first := byID[oomID]
				wantFix := "fix: the next smaller num_envs in the space is " + tc.next + "; or lower num_envs"
				if first.Outcome != results.OutcomeOOM || !strings.Contains(first.Error, wantFix) {
					t.Errorf("%s: %s %q, want oom with %q", oomID, first.Outcome, first.Error, wantFix)
				}
				for c := tc.oomFrom; c < len(numEnvs); c++ {
					for _, seed := range []int{1, 2} {
						id := fmt.Sprintf("%d-s%d", c, seed)
						if id == oomID {
							continue
						}
						sum := byID[id]
						wantErr := fmt.Sprintf("trial %s: not started: num_envs %d ≥ %d, which ran out of memory on NVIDIA H100 80GB HBM3 "+
							"(trial %s) on queue rlsweep-gpu; the next smaller num_envs in the space is %s", id, numEnvs[c], numEnvs[tc.oomFrom], oomID, tc.next)
						if sum.Outcome != results.OutcomeOOM || sum.Error != wantErr || sum.Steps != 0 {
							t.Errorf("%s: %s, %d steps, %q; want oom, 0 steps, %q", id, sum.Outcome, sum.Steps, sum.Error, wantErr)
						}
					}
				}
				var out workflows.SweepResult
				if err := env.GetWorkflowResult(&out); err != nil {
					t.Fatal(err)
				}
				if wantOOM := 2 * (len(numEnvs) - tc.oomFrom); out.Counts[results.OutcomeOOM] != wantOOM || out.Counts[results.OutcomeCompleted] != 10-wantOOM {
					t.Errorf("counts %v, want %d oom, the rest completed", out.Counts, wantOOM)
				}
			})
		}
	}
}

// The bound survives a continue-as-new, in SweepState.OOMBounds; a sweep without an oom trial
// carries none (nothing in its state's JSON).
func TestSweepContinueAsNewKeepsTheOOMBound(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	fakes := newFakeTrials(func(int) time.Duration { return time.Minute })
	spec := oomSpec(t)
	spec.Parameters[0].Values = []any{int64(2048), int64(256), int64(4096), int64(512)}
	fakes.outcome = func(c int) string {
		if v := spec.Parameters[0].Values[c].(int64); v >= 2048 {
			return results.OutcomeOOM
		}
		return ""
	}
	fakes.register(env)
	var res resultsRecorder
	res.mock(env, 8)
	// 0-s1 (num_envs 2048) runs out of memory at 1 minute; 1-s1 (256) trains from then on.
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 90*time.Second)
	env.ExecuteWorkflow(workflows.Sweep, sweepInput(spec))
	st := continuedInput(t, env).State
	if st == nil {
		t.Fatal("continued-as-new input has no State")
	}
	b, ok := st.OOMBounds["rlsweep-gpu"]
	if !ok || b.Param != "num_envs" || b.Value != 2048 || b.Trial != "0-s1" || b.GPU != "NVIDIA H100 80GB HBM3" {
		t.Errorf("carried OOM bounds %+v, want rlsweep-gpu: num_envs 2048 from 0-s1 on NVIDIA H100 80GB HBM3", st.OOMBounds)
	}
	byID, _ := res.recorded()
	want := "trial 0-s2: not started: num_envs 2048 ≥ 2048, which ran out of memory on NVIDIA H100 80GB HBM3 (trial 0-s1) " +
		"on queue rlsweep-gpu; the next smaller num_envs in the space is 512"
	if got := byID["0-s2"]; got.Outcome != results.OutcomeOOM || got.Error != want {
		t.Errorf("0-s2: %s %q, want oom %q", got.Outcome, got.Error, want)
	}
	fakes.mu.Lock()
	trained := fmt.Sprint(fakes.released)
	fakes.mu.Unlock()
	if !strings.HasPrefix(trained, "[0-s1 1-s1") || strings.Contains(trained, "0-s2") || strings.Contains(trained, "2-s") {
		t.Errorf("trials trained %s, want 0-s1, 1-s1 and none of num_envs 2048 or 4096", trained)
	}

	// A run resuming from the carried state at trial 2-s1 (num_envs 4096; its other trials left out)
	// starts neither seed of it.
	var s2 testsuite.WorkflowTestSuite
	env2 := s2.NewTestWorkflowEnvironment()
	fakes2 := newFakeTrials(func(int) time.Duration { return time.Minute })
	fakes2.register(env2)
	var res2 resultsRecorder
	res2.mock(env2, 8)
	next := continuedInput(t, env)
	next.State.Running, next.State.Lanes, next.State.Scheduler.Next = nil, nil, 4
	env2.ExecuteWorkflow(workflows.Sweep, next)
	if err := env2.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	fakes2.mu.Lock()
	trained2 := fmt.Sprint(fakes2.released)
	fakes2.mu.Unlock()
	if trained2 != "[3-s1 3-s2]" {
		t.Errorf("the next run trained %s, want [3-s1 3-s2]: 2-s1 and 2-s2 (num_envs 4096) skipped", trained2)
	}
	byID2, _ := res2.recorded()
	for _, id := range []string{"2-s1", "2-s2"} {
		if got := byID2[id]; got.Outcome != results.OutcomeOOM || !strings.Contains(got.Error, "not started: num_envs 4096 ≥ 2048") {
			t.Errorf("next run: %s: %s %q, want oom, not started", id, got.Outcome, got.Error)
		}
	}

	var none workflows.SweepState
	js, _ := json.Marshal(none)
	if strings.Contains(string(js), "OOMBounds") {
		t.Errorf("a state without a bound carries %s, want no OOMBounds", js)
	}
}
