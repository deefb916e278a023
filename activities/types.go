package activities

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Error types of activity failures. They are wire format: workflows and retry policies match on them.
const (
	ErrTrialDiverged  = "TrialDiverged"  // a stop rule fired: never retried
	ErrTrialStalled   = "TrialStalled"   // no record for stall_timeout: retried
	ErrTrainerCrashed = "TrainerCrashed" // the trainer exited non-zero: retried
	// ErrMetricsUnreadable: the trainer's metrics could not be read (a reader error, not a malformed
	// line, which is skipped): retried like a crash.
	ErrMetricsUnreadable = "MetricsUnreadable"
	// ErrInfraRetries: more attempts of a segment than retries.max_infra_retries were ended by faults
	// outside the trainer. Never retried.
	ErrInfraRetries = "InfraRetriesExhausted"
	// ErrWorkerStopping: the worker was shut down (Ctrl-C, SIGTERM) and stopped the trainer, which kept
	// its grace period to write a checkpoint: retried, on any worker, from that checkpoint.
	ErrWorkerStopping = "WorkerStopping"
	ErrInvalidSpec    = "InvalidSpec" // the spec cannot run (bad template, unknown builtin): never retried
	// ErrSweepExists: the store already holds another sweep under this sweep ID; its files are never
	// overwritten. Never retried.
	ErrSweepExists = "SweepExists"
)

// Trial outcomes (docs/diagnostics.md): the report package's, which draws them, so the two never disagree.
const (
	OutcomeCompleted = report.OutcomeCompleted
	OutcomeDiverged  = report.OutcomeDiverged
	OutcomePruned    = report.OutcomePruned
	OutcomeFailed    = report.OutcomeFailed
	OutcomeCancelled = report.OutcomeCancelled
)

// Outcomes lists every trial outcome in display order.
var Outcomes = []string{OutcomeCompleted, OutcomeDiverged, OutcomePruned, OutcomeFailed, OutcomeCancelled}

// PlanInput asks to plan a sweep and store its spec and plan.
type PlanInput struct {
	SweepID  string
	Spec     sweeps.Spec
	SpecYAML string // the spec as the user wrote it, stored as spec.yaml
	// Submission identifies the submission that owns the sweep's files (owner.json), so a retried Plan
	// goes on and another submission under the same sweep ID is refused; empty: the sweep's run ID.
	Submission string `json:",omitempty"`
}

// PlanResult says where the plan was stored and how many trials it holds.
type PlanResult struct {
	PlanKey string
	Trials  int
	// ParamsAttribute: the namespace has ParamsSearchAttribute registered, so trials may carry it.
	ParamsAttribute bool `json:",omitempty"`
}

// SegmentInput asks to run one training segment of one trial: from StartStep to StopAtStep.
type SegmentInput struct {
	SweepID     string
	Trial       sweeps.Trial
	Trainer     sweeps.Trainer
	Diagnostics sweeps.Diagnostics
	Metric      string // the objective's metric name
	Goal        string // "maximize" or "minimize"
	Segment     int    // segment number, from 0
	StartStep   int64
	StopAtStep  int64
	ResumeFrom  string // artifact key of the checkpoint to resume from; "" starts fresh
	// ResumeStep is the step the previous segment ended at, where ResumeFrom was written; 0 when
	// unknown (workflows started before it existed). A trainer that finishes its iteration past its
	// stop step resumes beyond the next segment's start.
	ResumeStep int64 `json:",omitempty"`
	// GPUs is how many GPUs the segment holds on a worker with --gpus (the spec's resources.gpus);
	// nil (inputs recorded before the field existed) means one. A worker without --gpus ignores it.
	GPUs *int `json:",omitempty"`
	// MaxTrainerFailures is how many times the trainer may fail (crash, stall, unreadable metrics)
	// before the segment fails for good: retries.max_attempts. 0: no bound of the activity's own.
	MaxTrainerFailures int `json:",omitempty"`
	// MaxInfraRetries bounds the attempts ended by anything else — the worker died or was stopped, the
	// Temporal server or the store was unreachable — which do not count against MaxTrainerFailures:
	// retries.max_infra_retries. 0: no bound of the activity's own.
	MaxInfraRetries int `json:",omitempty"`
}

// gpuCount is how many GPUs the segment asks for.
func (in SegmentInput) gpuCount() int {
	if in.GPUs == nil {
		return 1
	}
	return *in.GPUs
}

// SegmentResult is the small summary a segment returns; the metrics themselves are in the store.
type SegmentResult struct {
	LastStep      int64
	Records       int
	Malformed     int
	Last          Values // the last value of each canonical metric
	Objective     *float64
	CheckpointKey string // the last checkpoint uploaded, "" if none
	MetricsKey    string // the trial's metrics folder (artifacts.MetricsDir)
	LogKey        string // the attempt's log folder (artifacts.LogDir), its parts in order (artifacts.ReadLog)
	WallSeconds   float64
	ResumedFrom   string
	Warnings      map[string]int // diagnostic warnings by rule
	DumpKey       string         // divergence.json, when a stop rule fired
	// SegmentWarning says that the trainer does not follow the segment protocol (it ran past
	// RLSWEEP_STOP_AT_STEP, or stopped without a checkpoint to resume from), so later segments re-run
	// what it trained; the Trial workflow shows the first one of a trial.
	SegmentWarning string `json:",omitempty"`
	// MetricMissing: the segment read records and none carried the objective's metric; these are
	// the names they carried instead, sorted (at most maxSeenKeys), empty when they carried none.
	// Nil when the metric was there or there was no record.
	MetricMissing []string
	// TrainerFailures: this segment's attempts that the trainer failed (crashed, stalled, wrote
	// unreadable metrics); InfraRetries: those ended by a fault outside the trainer (its worker died or
	// was stopped, the server or the store was unreachable).
	TrainerFailures int `json:",omitempty"`
	InfraRetries    int `json:",omitempty"`
	// RetrainedSteps: steps that earlier attempts trained past the checkpoint a later attempt resumed
	// from, and so were trained again.
	RetrainedSteps int64 `json:",omitempty"`
	// ServerOutages and ServerOutageSeconds: the times the Temporal server did not take the last
	// attempt's heartbeats while its trainer kept training, and for how long in all.
	ServerOutages       int     `json:",omitempty"`
	ServerOutageSeconds float64 `json:",omitempty"`
}

// MissingMetricWarning is the warning of a trial whose records do not carry the objective's metric:
// without it the trial has no objective and no statistic counts it.
func MissingMetricWarning(metric string, segment int, carried []string) string {
	wrote := "no metric at all"
	if len(carried) > 0 {
		wrote = strings.Join(carried, ", ")
	}
	return fmt.Sprintf("metric %q: no record of segment %d carries it, so the trial has no objective and only the at-once diagnostics rules (non_finite, std_nonpositive, grad_explosion) can stop it; its records carry %s (set metric.name to one of them, or map a tag to it with trainer.metrics)",
		metric, segment, wrote)
}

// Heartbeat is what a running segment records with each heartbeat; a retried attempt resumes from
// its CheckpointKey.
type Heartbeat struct {
	Step           int64
	CheckpointKey  string
	CheckpointStep int64
	// TrainerFailures counts the segment's attempts so far that the trainer failed; the others ended by
	// faults outside it. Retrained counts the steps earlier attempts trained past the checkpoint the
	// next one resumed from.
	TrainerFailures int   `json:",omitempty"`
	Retrained       int64 `json:",omitempty"`
}

// TrialSummary is one trial's result as results.json, results.csv and the Sweep workflow record it.
type TrialSummary struct {
	TrialID     string         `json:"trial_id"`
	Config      int            `json:"config"`
	Seed        int64          `json:"seed"`
	Params      map[string]any `json:"params"`
	Outcome     string         `json:"outcome"`
	Objective   *float64       `json:"objective"`
	Steps       int64          `json:"steps"`
	StopRule    string         `json:"stop_rule,omitempty"`
	Error       string         `json:"error,omitempty"`
	WallSeconds float64        `json:"wall_seconds"`
	Segments    int            `json:"segments"`
	Last        Values         `json:"last,omitempty"`
	// Warnings are problems the trial ran despite, each once: the trainer ignored RLSWEEP_STOP_AT_STEP,
	// an objective metric no record carries. Shown by `rlsweep status` and the report.
	Warnings []string `json:"warnings,omitempty"`
	// Malformed counts the metric lines (or records) its segments' readers dropped as malformed:
	// unparsable, too long, failed CRC, step going backwards (docs/diagnostics.md).
	Malformed int `json:"malformed,omitempty"`
	// TrainerFailures: attempts of its segments that the trainer failed (crashed, stalled, unreadable
	// metrics), which retries.max_attempts bounds; InfraRetries: attempts ended by faults outside the
	// trainer (worker lost or stopped, Temporal server or store unreachable), which
	// retries.max_infra_retries bounds; RetrainedSteps: steps trained again after those.
	TrainerFailures int   `json:"trainer_failures,omitempty"`
	InfraRetries    int   `json:"infra_retries,omitempty"`
	RetrainedSteps  int64 `json:"retrained_steps,omitempty"`
	// ServerOutages: times the Temporal server was away while a trainer of this trial kept training.
	ServerOutages int `json:"server_outages,omitempty"`
}

// Values maps metric names to numbers and survives JSON with NaN and ±Inf in it: non-finite numbers are
// written as the strings "NaN", "+Inf" and "-Inf" (encoding/json rejects them as numbers).
type Values map[string]float64

// MarshalJSON writes finite values as numbers and non-finite ones as strings (diagnostics.Float).
func (v Values) MarshalJSON() ([]byte, error) {
	m := make(map[string]diagnostics.Float, len(v))
	for k, x := range v {
		m[k] = diagnostics.Float(x)
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Values) UnmarshalJSON(b []byte) error {
	var m map[string]diagnostics.Float
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*v = make(Values, len(m))
	for k, x := range m {
		(*v)[k] = float64(x)
	}
	return nil
}

// finite returns a pointer to x, or nil when x is NaN or ±Inf.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
