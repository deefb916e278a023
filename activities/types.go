package activities

import (
	"math"

	"github.com/rlsweep/rlsweep/results"
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
	// ErrCheckpointUnreadable: the trainer announced a checkpoint that cannot be stored as it is on disk
	// (missing, unreadable, neither a regular file nor a directory of them, or out of its checkpoint
	// directory): failed at once, never retried as a store outage; retried like a crash.
	ErrCheckpointUnreadable = "CheckpointUnreadable"
	// ErrInfraRetries: more attempts of a segment than retries.max_infra_retries were ended by faults
	// outside the trainer. Never retried.
	ErrInfraRetries = "InfraRetriesExhausted"
	// ErrWorkerStopping: the worker was shut down (Ctrl-C, SIGTERM) and stopped the trainer, which kept
	// its grace period to write a checkpoint: retried, on any worker, from that checkpoint.
	ErrWorkerStopping = "WorkerStopping"
	ErrInvalidSpec    = "InvalidSpec" // the spec cannot run (bad template, unknown builtin): never retried
	// ErrNoMetrics: the trainer exited 0 without a single metrics record where its source reads.
	// ErrObjectiveMissing: the trial's records went past the diagnostics warm-up (or to the end of its
	// last segment) and none carried the objective's metric. Both are trainer failures never retried:
	// the trainer's logging code decides where its records go and which keys they carry, the same on
	// every run, so a retry would spend the segment's compute again to learn nothing new.
	ErrNoMetrics        = "NoMetrics"
	ErrObjectiveMissing = "ObjectiveMissing"
	// ErrTrainerOOM: the trainer died out of memory — a framework's out-of-memory error in its log tail
	// (runner.DetectOOM), or the host's OOM killer (runner.HostOOM). A resource outcome, not a trainer
	// failure: never retried (the configuration runs out again on the same GPU class) and not counted
	// against retries.max_attempts. The trial ends "oom".
	ErrTrainerOOM = "TrainerOOM"
	// ErrSweepExists: the store already holds another sweep under this sweep ID; its files are never
	// overwritten. Never retried.
	ErrSweepExists = "SweepExists"
)

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
	// StepsTarget is the target of the sweep's env_steps objective (sweeps.Spec.StepsTarget): the
	// segment reports the first step its windowed objective reached it (SegmentResult.TargetStep);
	// nil: none.
	StepsTarget *float64 `json:",omitempty"`
	// TargetStepBefore and SecondsBefore are the trial's target step (0: not reached) and training
	// wall seconds from its segments before this one, which a decision point passed inside the segment
	// reports with its own (RungPassed).
	TargetStepBefore int64   `json:",omitempty"`
	SecondsBefore    float64 `json:",omitempty"`
	Segment          int     // segment number, from 0
	StartStep        int64
	StopAtStep       int64
	ResumeFrom       string // artifact key of the checkpoint to resume from; "" starts fresh
	// ResumeStep is the step the previous segment ended at, where ResumeFrom was written; 0 when
	// ResumeFrom is "". A trainer that finishes its iteration past its stop step resumes beyond the
	// next segment's start.
	ResumeStep int64 `json:",omitempty"`
	// GPUs is how much GPU the segment holds on a worker with --gpus (the spec's resources.gpus): a
	// whole number of GPUs, or a fraction of one (0.25) that Slots packs beside others; nil means one.
	// A worker without --gpus ignores it. A float64, so that the inputs of histories written while it
	// was an integer ("GPUs":2) decode to the same number.
	GPUs *float64 `json:",omitempty"`
	// MaxTrainerFailures is how many times the trainer may fail (crash, stall, unreadable metrics)
	// before the segment fails for good: retries.max_attempts. 0: no bound of the activity's own.
	MaxTrainerFailures int `json:",omitempty"`
	// MaxInfraRetries bounds the attempts ended by anything else — the worker died or was stopped, the
	// Temporal server or the store was unreachable — which do not count against MaxTrainerFailures:
	// retries.max_infra_retries. 0: no bound of the activity's own.
	MaxInfraRetries int `json:",omitempty"`
	// HandOffTo is the trial that waits for this one's place (a standby trial, see docs/architecture.md
	// "Slot hand-off"): once this segment's trainer has exited cleanly at its last step, the worker
	// releases that trial at once (SlotHandOff), before storing what the trainer left. Set on a trial's
	// last segment only; "" when nobody waits.
	HandOffTo string `json:",omitempty"`
	// Parked: a standby trial's first segment, which waits in the worker until the trial ahead hands
	// it its place (activities/parked.go); one that is not handed a place ends without training
	// (SegmentResult.Unhanded).
	Parked bool `json:",omitempty"`
	// Rungs are the trial's early_terminate decision points (sweeps.Spec.DecisionSteps), in RungUnit;
	// ReportTo the sweep's workflow ID. As the trainer's records pass a point inside the segment (stop
	// mode, or a trainer training past StopAtStep), the segment tells the sweep (RungPassed), which
	// cancels the segment when it prunes the trial. Empty: nothing is reported.
	Rungs    []int64 `json:",omitempty"`
	RungUnit string  `json:",omitempty"`
	ReportTo string  `json:",omitempty"`
	// ObjectiveSeen: a record of an earlier segment of the trial carried the objective's metric. Without
	// it, a segment whose records pass the diagnostics warm-up with none carrying it fails the trial
	// (ErrObjectiveMissing).
	ObjectiveSeen bool `json:",omitempty"`
}

// gpuCount is how much GPU the segment asks for (resources.gpus).
func (in SegmentInput) gpuCount() float64 {
	if in.GPUs == nil {
		return 1
	}
	return *in.GPUs
}

// SegmentResult is the small summary a segment returns; the metrics themselves are in the store.
type SegmentResult struct {
	// Unhanded: a parked segment (SegmentInput.Parked) that was never handed a place; it trained nothing
	// and the rest of the result is empty.
	Unhanded bool `json:",omitempty"`
	// Lost: an unhanded retry of a parked segment whose attempt before it died without a heartbeat,
	// parked or just handed its place (nobody can tell which): its trial trains the segment itself.
	Lost      bool `json:",omitempty"`
	LastStep  int64
	Records   int
	Malformed int
	Last      results.Values // the last value of each canonical metric
	Objective *float64
	// Windowed is the objective's mean over the segment's records in the last tenth of the trial's
	// steps so far (diagnostics.ObjectiveWindow), what early_terminate compares; nil without one.
	Windowed *float64 `json:",omitempty"`
	// TargetStep is the first step at which the windowed objective reached SegmentInput.StepsTarget; 0
	// when it did not (or there is none).
	TargetStep    int64  `json:",omitempty"`
	CheckpointKey string // the last checkpoint uploaded, "" if none
	MetricsKey    string // the trial's metrics folder (artifacts.MetricsDir)
	LogKey        string // the attempt's log folder (artifacts.LogDir), its parts in order (artifacts.ReadLog)
	WallSeconds   float64
	ResumedFrom   string
	Warnings      map[string]int // diagnostic warnings by rule
	DumpKey       string         // divergence.json, when a stop rule fired
	// EndVerdict is the verdict of the rules that judge a trial once it is over (diagnostics.Engine.Finish:
	// collapsed_at_end), given by the trial's last segment when its trainer ended on its own; nil when
	// none fired.
	EndVerdict *results.Verdict `json:",omitempty"`
	// HandedOff: the standby trial named by SegmentInput.HandOffTo was released when the trainer exited.
	HandedOff bool `json:",omitempty"`
	// SegmentWarning says that the trainer does not follow the segment protocol (it ran past
	// RLSWEEP_STOP_AT_STEP, or stopped without a checkpoint to resume from), so later segments re-run
	// what it trained; the Trial workflow shows the first one of a trial.
	SegmentWarning string `json:",omitempty"`
	// MetricsSource is the metrics source an auto or wandb reader read, with its path
	// (metrics.ReaderStats.Source); "" for the other sources.
	MetricsSource string `json:",omitempty"`
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
	// Hardware is where the attempt ran (results.Hardware).
	Hardware *results.Hardware `json:",omitempty"`
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
	// InfraRetries is set in the details of a failure that ends the segment for good (the trainer failed
	// retries.max_attempts times, retries.max_infra_retries ran out): the attempts so far that faults
	// outside the trainer ended, so that the failed trial reports them.
	InfraRetries int `json:",omitempty"`
	// ObjectiveSeen: a record of an attempt of the segment so far carried the objective's metric.
	ObjectiveSeen bool `json:",omitempty"`
	// Hardware is set in the details of a failure (never in a heartbeat): where the failed attempt ran.
	Hardware *results.Hardware `json:",omitempty"`
	// For the live view (rlsweep watch): the trial's step budget, its objective's windowed mean at the
	// last record (nil before one), and Trend, at most TrendPoints windowed means spread over the
	// segment's records so far, oldest first.
	TotalSteps int64     `json:",omitempty"`
	Windowed   *float64  `json:",omitempty"`
	Trend      []float64 `json:",omitempty"`
}

// TrendPoints bounds Heartbeat.Trend: once full, every other point is dropped and points are taken half
// as often, so the trend spans the whole segment in at most TrendPoints values.
const TrendPoints = 24

// addTrend adds a windowed mean to the heartbeat's trend; every is how many records each point stands
// for, and n counts the records seen.
func (h *Heartbeat) addTrend(v float64, n int, every *int) {
	if *every < 1 {
		*every = 1
	}
	if n%*every != 0 {
		return
	}
	h.Trend = append(h.Trend, v)
	if len(h.Trend) >= TrendPoints {
		kept := h.Trend[:0]
		for i := 0; i < len(h.Trend); i += 2 {
			kept = append(kept, h.Trend[i])
		}
		h.Trend = kept
		*every *= 2
	}
}

// finite returns a pointer to x, or nil when x is NaN or ±Inf.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
