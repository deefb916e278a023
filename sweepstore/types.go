package sweepstore

import (
	"encoding/json"
	"time"

	"github.com/rlsweep/rlsweep/diagnostics"
)

// Divergence is divergence.json: everything needed to see why a stop rule stopped a trial, kept even
// though the run ended (unlike a NaN guard that writes nothing).
type Divergence struct {
	SweepID           string                `json:"sweep_id"`
	TrialID           string                `json:"trial_id"`
	Verdict           diagnostics.Verdict   `json:"verdict"`
	Warnings          []diagnostics.Verdict `json:"warnings,omitempty"`
	LastHealthyCkpt   string                `json:"last_healthy_checkpoint,omitempty"`
	LastHealthyStep   int64                 `json:"last_healthy_checkpoint_step,omitempty"`
	Records           []json.RawMessage     `json:"records"` // the last records, as JSON lines with bare NaN
	LogTail           string                `json:"log_tail"`
	DetectedAt        time.Time             `json:"detected_at"` // the stop verdict was reached
	KilledAt          time.Time             `json:"killed_at"`   // the trainer process had exited
	DetectionToKillMS float64               `json:"detection_to_kill_ms"`
}

// ResumePoint is resume.json, beside a trial's checkpoints: the last checkpoint a segment uploaded. The
// Temporal SDK sends heartbeats at most once a second, so a worker that dies within a second of an
// upload takes the heartbeat naming it along; the store keeps it, and the retry resumes from it.
type ResumePoint struct {
	Segment int    `json:"segment"`
	Step    int64  `json:"step"`
	Key     string `json:"key"`
}
