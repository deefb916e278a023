package workflows_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// Replaying the recorded bayes sweep makes every suggestion again: each Trial it starts has the
// parameters the recorded run started it with. (The replayer compares commands, not their inputs, so a
// TPE whose suggestions changed would replay without this check.)
func TestReplayBayesSuggestions(t *testing.T) {
	const file = "testdata/sweep-bayes.json"
	hist := readHistory(t, file)
	recorded := map[string]map[string]any{}
	var order []string
	for _, ev := range hist.Events {
		if ev.GetEventType() != enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED {
			continue
		}
		var in workflows.TrialInput
		if err := converter.GetDefaultDataConverter().FromPayloads(ev.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetInput(), &in); err != nil {
			t.Fatal(err)
		}
		recorded[in.Trial.ID] = in.Trial.Params
		order = append(order, in.Trial.ID)
	}
	if len(order) != 26 {
		t.Fatalf("%s starts %d trials, want 26", file, len(order))
	}
	rec := replayRecording(t, file)
	for _, id := range order {
		got, ok := rec.params[id]
		if !ok {
			t.Errorf("trial %s: not started on replay", id)
			continue
		}
		if sweeps.ConfigKey(got) != sweeps.ConfigKey(recorded[id]) {
			t.Errorf("trial %s: replay starts it with %v, the recorded run with %v", id, got, recorded[id])
		}
	}
}

// readHistory reads a recorded history file (JSON, as the Temporal CLI exports it), gzipped when its
// name ends in .gz.
func readHistory(tb testing.TB, file string) *historypb.History {
	tb.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	if strings.HasSuffix(file, ".gz") {
		z, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			raw, err = io.ReadAll(z)
		}
		if err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
	}
	var hist historypb.History
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &hist); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	return &hist
}

// replayRecording replays the recorded history file through the Sweep and Trial workflows and returns
// what the replay started: each Trial's parameters and whole input.
func replayRecording(t *testing.T, file string) *childRecorder {
	t.Helper()
	rec := &childRecorder{params: map[string]map[string]any{}, inputs: map[string]workflows.TrialInput{}}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{rec}})
	if err != nil {
		t.Fatal(err)
	}
	r.RegisterWorkflowWithOptions(workflows.Sweep, workflow.RegisterOptions{Name: "Sweep"})
	r.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: "Trial"})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
		t.Fatalf("replay %s: %v", file, err)
	}
	return rec
}

// childRecorder records the parameters of every Trial a workflow starts and, when inputs is set, its
// whole input.
type childRecorder struct {
	interceptor.WorkerInterceptorBase
	params map[string]map[string]any
	inputs map[string]workflows.TrialInput
}

func (c *childRecorder) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &childInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, rec: c}
}

type childInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	rec *childRecorder
}

func (i *childInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&childOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, rec: i.rec})
}

type childOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	rec *childRecorder
}

func (o *childOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	if len(args) == 1 {
		if in, ok := args[0].(workflows.TrialInput); ok {
			o.rec.params[in.Trial.ID] = in.Trial.Params
			if o.rec.inputs != nil {
				o.rec.inputs[in.Trial.ID] = in
			}
		}
	}
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}
