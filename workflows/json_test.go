package workflows_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// A sweep's and a trial's input carry their durations as Go duration strings, which the Web UI shows as
// written, and read back to the same values.
func TestInputDurationsJSON(t *testing.T) {
	in := workflows.SweepInput{SweepID: "sweep/x/1", HeartbeatTimeout: 90 * time.Second, TrialCheckInterval: 2 * time.Minute,
		Spec: sweeps.Spec{Name: "x", Trainer: sweeps.Trainer{Command: []string{"t"}, StallTimeout: 10 * time.Minute, GracePeriod: 30 * time.Second}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"HeartbeatTimeout":"1m30s"`, `"TrialCheckInterval":"2m0s"`, `"stall_timeout":"10m0s"`, `"grace_period":"30s"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("SweepInput JSON lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "ResultsFlushInterval") {
		t.Errorf("a zero ResultsFlushInterval is written (it is omitempty): %s", b)
	}
	var back workflows.SweepInput
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, in) {
		t.Errorf("SweepInput round trip: %+v, %v; want %+v", back, err, in)
	}
	// The integer nanoseconds of a recorded history read as the same durations.
	var old workflows.SweepInput
	if err := json.Unmarshal([]byte(`{"SweepID":"sweep/x/1","HeartbeatTimeout":90000000000,"TrialCheckInterval":120000000000,`+
		`"Spec":{"name":"x","trainer":{"command":["t"],"stall_timeout":600000000000,"grace_period":30000000000}}}`), &old); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(old, in) {
		t.Errorf("SweepInput from nanoseconds: %+v, want %+v", old, in)
	}
	tin := workflows.TrialInput{SweepID: "sweep/x/1", HeartbeatTimeout: time.Minute, Trainer: in.Spec.Trainer}
	b, err = json.Marshal(tin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"HeartbeatTimeout":"1m0s"`) || !strings.Contains(string(b), `"stall_timeout":"10m0s"`) {
		t.Errorf("TrialInput JSON: %s", b)
	}
	var tback workflows.TrialInput
	if err := json.Unmarshal(b, &tback); err != nil || !reflect.DeepEqual(tback, tin) {
		t.Errorf("TrialInput round trip: %+v, %v; want %+v", tback, err, tin)
	}
	var told workflows.TrialInput
	if err := json.Unmarshal([]byte(`{"SweepID":"sweep/x/1","HeartbeatTimeout":60000000000,"Trainer":{"command":["t"],"stall_timeout":600000000000,"grace_period":30000000000}}`), &told); err != nil ||
		!reflect.DeepEqual(told, tin) {
		t.Errorf("TrialInput from nanoseconds: %+v, %v; want %+v", told, err, tin)
	}
}

// A recorded sweep history holds its durations as integer nanoseconds: replayed, the sweep reads them
// as they were and starts each Trial with the heartbeat timeout, stall timeout and grace period the
// recorded run started it with.
func TestReplayReadsRecordedDurations(t *testing.T) {
	const file = "testdata/sweep-asha.json" // recorded when durations were integer nanoseconds
	hist := readHistory(t, file)
	dc := converter.GetDefaultDataConverter()
	started := hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput()
	if payload := string(started.GetPayloads()[0].GetData()); !strings.Contains(payload, `"stall_timeout":600000000000`) {
		t.Fatalf("%s's input does not hold its stall timeout as nanoseconds: the test reads nothing old", file)
	}
	var in workflows.SweepInput
	if err := dc.FromPayloads(started, &in); err != nil {
		t.Fatal(err)
	}
	if in.Spec.Trainer.StallTimeout != 10*time.Minute || in.Spec.Trainer.GracePeriod != 30*time.Second {
		t.Errorf("recorded input reads stall_timeout %s, grace_period %s; want 10m0s and 30s", in.Spec.Trainer.StallTimeout, in.Spec.Trainer.GracePeriod)
	}
	recorded := map[string]workflows.TrialInput{}
	for _, ev := range hist.Events {
		if ev.GetEventType() != enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED {
			continue
		}
		var tin workflows.TrialInput
		if err := dc.FromPayloads(ev.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetInput(), &tin); err != nil {
			t.Fatal(err)
		}
		recorded[tin.Trial.ID] = tin
	}
	if len(recorded) == 0 {
		t.Fatalf("%s starts no trial", file)
	}
	rec := replayRecording(t, file)
	for id, want := range recorded {
		got, ok := rec.inputs[id]
		switch {
		case !ok:
			t.Errorf("trial %s: not started on replay", id)
		case got.HeartbeatTimeout != want.HeartbeatTimeout || got.Trainer.StallTimeout != want.Trainer.StallTimeout ||
			got.Trainer.GracePeriod != want.Trainer.GracePeriod || want.Trainer.StallTimeout != 10*time.Minute:
			t.Errorf("trial %s: replay starts it with heartbeat %s, stall %s, grace %s; the recorded run with %s, %s, %s",
				id, got.HeartbeatTimeout, got.Trainer.StallTimeout, got.Trainer.GracePeriod,
				want.HeartbeatTimeout, want.Trainer.StallTimeout, want.Trainer.GracePeriod)
		}
	}
}
