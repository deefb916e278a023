package activities

import (
	"strings"
	"testing"
)

func TestSegmentEnd(t *testing.T) {
	for _, c := range []struct {
		name      string
		end       segmentEnd
		trialLast bool
		warning   string // a part of the warning; "" for none
	}{
		{name: "whole trial in one segment", end: segmentEnd{total: 1000, stop: 1000, last: 1000}, trialLast: true},
		{name: "last segment without checkpoint", end: segmentEnd{total: 1000, stop: 1000, last: 990}, trialLast: true},
		{name: "stopped at the stop step with a checkpoint", end: segmentEnd{total: 1000, stop: 500, last: 500, checkpointed: true}},
		{name: "crossed the stop step within an iteration, checkpointed", end: segmentEnd{total: 1000, stop: 500, last: 512, checkpointed: true}},
		{name: "ran to total_steps", end: segmentEnd{segment: 1, total: 1000, stop: 500, last: 1000, checkpointed: true},
			trialLast: true, warning: "segment 1: the trainer ran past RLSWEEP_STOP_AT_STEP=500 to step 1000, its whole total_steps (1000): it ignores the stop step"},
		{name: "ran past the stop step without a checkpoint", end: segmentEnd{total: 1000, stop: 500, last: 700},
			warning: "ran past RLSWEEP_STOP_AT_STEP=500 to step 700 and wrote no checkpoint: the next segment re-runs it from the start"},
		{name: "ran past the stop step without a checkpoint, resumed", end: segmentEnd{total: 1000, stop: 500, last: 700, resumeFrom: "ck/250"},
			warning: "wrote no checkpoint: the next segment re-runs it from ck/250"},
		{name: "stopped without a checkpoint", end: segmentEnd{segment: 2, total: 1000, stop: 500, last: 500},
			warning: "segment 2: the trainer stopped at step 500 without writing a checkpoint: the next segment re-runs it from the start"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.end.trialsLast(); got != c.trialLast {
				t.Errorf("trialsLast() = %v, want %v", got, c.trialLast)
			}
			w := c.end.warning()
			if c.warning == "" && w != "" || !strings.Contains(w, c.warning) {
				t.Errorf("warning() = %q, want one with %q", w, c.warning)
			}
			if w != "" && !strings.Contains(w, "docs/trainer-contract.md") {
				t.Errorf("warning() = %q names no fix", w)
			}
		})
	}
}
