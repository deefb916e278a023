package workflows_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/workflows"
)

// Histories written while resources.gpus was a whole number hold "GPUs":2 in a trial's input and its
// segments' inputs: they decode to the same number, and a whole number encodes as it did.
func TestGPUsInputsDecodeFromIntegerHistories(t *testing.T) {
	var trial workflows.TrialInput
	if err := json.Unmarshal([]byte(`{"TaskQueue":"rlsweep-gpu","GPUs":2}`), &trial); err != nil || trial.GPUs == nil || *trial.GPUs != 2 {
		t.Errorf("TrialInput with GPUs 2: %v, %v; want 2", trial.GPUs, err)
	}
	var seg activities.SegmentInput
	if err := json.Unmarshal([]byte(`{"GPUs":1}`), &seg); err != nil || seg.GPUs == nil || *seg.GPUs != 1 {
		t.Errorf("SegmentInput with GPUs 1: %v, %v; want 1", seg.GPUs, err)
	}
	two, quarter := 2.0, 0.25
	for _, c := range []struct {
		gpus *float64
		want string
	}{{&two, `"GPUs":2`}, {&quarter, `"GPUs":0.25`}} {
		b, err := json.Marshal(activities.SegmentInput{GPUs: c.gpus})
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("SegmentInput with GPUs %g encodes as %s (%v), want %s", *c.gpus, b, err, c.want)
		}
	}
}
