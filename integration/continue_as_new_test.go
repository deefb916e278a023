//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// A sweep that continues-as-new many times while trials run across each boundary: the trials that
// outlive a run report to the next one, and the sweep completes with every trial recorded once.
func TestContinueAsNewWithRunningTrials(t *testing.T) {
	e := newEnv(t)
	e.startWorker("a", "--slots", "6")
	path := e.spec("canew", `
  total_steps: 3000
seeds: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30]
parameters:
  sleep_ms: {value: 100}
  checkpoint_every: {value: 0}
probes: {enabled: false}
concurrency: 6
`)
	spec, err := sweeps.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	sweepID := workflows.SweepWorkflowID(spec.Name, "can1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := e.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: sweepID, TaskQueue: workflows.ControlQueue},
		workflows.Sweep, workflows.SweepInput{SweepID: sweepID, Spec: *spec, SpecYAML: string(raw), ContinueAsNewAfter: 60})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.SweepResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if res.Counts["completed"] != 30 {
		t.Errorf("sweep counts %v, want 30 completed", res.Counts)
	}
	if got := len(e.results(sweepID).Trials); got != 30 {
		t.Errorf("results.json has %d trials, want 30", got)
	}
	resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowId = %q", sweepID)})
	if err != nil {
		t.Fatal(err)
	}
	cans := 0
	for _, ex := range resp.Executions {
		if ex.Status == enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			cans++
		}
	}
	t.Logf("sweep ran as %d runs", cans+1)
	if cans < 2 {
		t.Errorf("sweep continued-as-new %d times, want at least 2 to exercise trials outliving a run", cans)
	}
}
