// Package workflows holds rlsweep's Temporal workflows: Sweep (plan, probes, a sliding window of
// trials, results) and Trial (training segments until the step budget is spent).
//
// Everything named in this file is wire format — workflow IDs, query, update and signal names, search
// attributes — and changes only with versioning.
package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Task queues.
const (
	// ControlQueue runs the workflows and the light activities: plan, probes, results.
	ControlQueue = "rlsweep"
	// DefaultTrialQueue runs TrainSegment unless a spec names another in resources.task_queue.
	DefaultTrialQueue = sweeps.DefaultTaskQueue
)

// Workflow type names, as the worker registers them.
const (
	WorkflowTypeSweep = "Sweep"
	WorkflowTypeTrial = "Trial"
)

// Query, update and signal names.
const (
	QueryStatus       = "status"
	UpdatePause       = "pause"
	UpdateResume      = "resume"
	UpdateConcurrency = "set-concurrency"
	SignalTrialDone   = "trial-done"
	// SignalReportToSweep asks a trial to report its end to the sweep by signal (SignalTrialDone): the
	// sweep sends it to its running trials when it continues-as-new, because the next run cannot follow
	// them by their futures.
	SignalReportToSweep = "report-to-sweep"
	// SignalSegmentEnd asks the sweep, at the end of a segment, whether the trial goes on
	// (scheduler.Boundary), when the scheduler asks at boundaries; SignalSegmentDecision is the answer
	// (scheduler.Decision).
	SignalSegmentEnd      = "segment-end"
	SignalSegmentDecision = "segment-decision"
	// SignalStopTrial stops a trial in the middle of a segment (scheduler.Decision, a stop): the
	// sweep sends it when its scheduler interrupts running trials (scheduler.Interrupter).
	SignalStopTrial = "stop-trial"
	// SignalRungPassed tells the sweep that a trial's metric stream passed a decision point inside a
	// segment (activities.RungPassed), sent by the worker that runs the trainer: early_terminate in
	// stop mode judges trials so, and stops them by SignalStopTrial.
	SignalRungPassed = "rung-passed"
	// SignalRelease starts a standby trial (Release): sent by the worker whose trainer held the place
	// the trial waits for, as that trainer exits, or by the sweep. SignalHold tells a standby trial
	// that only the sweep releases it from now on (the sweep was paused or its concurrency lowered).
	SignalRelease = "release"
	SignalHold    = "hold"
	// MaxConcurrency bounds set-concurrency as the spec's concurrency is bounded.
	MaxConcurrency     = sweeps.MaxConcurrency
	trialIDSeparator   = "/trial/"
	sweepIDPrefix      = "sweep/"
	defaultCANMaxEvent = 8000
)

// Regression wire names.
const (
	// WorkflowTypeRegression is the Regression workflow's type name, which schedules start.
	WorkflowTypeRegression = "Regression"
	// RegressionIDPrefix begins the ID of every scheduled regression run: regression/<name>.
	RegressionIDPrefix = "regression/"
)

// The sweep workflow's memo, set by submit; the server carries it over a continue-as-new.
const (
	MemoTrials    = "trials"    // how many trials the plan has; once the sweep has ended, how many it ran
	MemoSubmitted = "submitted" // when the sweep was submitted (a time.Time)
)

// The memo keys a sweep sets as it ends, which the Web UI shows beside the ones submit set
// (docs/webui.md). The sweep's result carries the same (SweepResult).
const (
	MemoOutcome = "outcome" // the sweep's final phase: completed, failed, cancelled, probe_failed
	MemoSummary = "summary" // one line: the outcome, the counts, the best configuration or the failure
	MemoBest    = "best"    // the best configuration and its objective (activities.BestConfig); absent when none scored
	MemoTook    = "took"    // how long the sweep ran, as "1h2m3s"
)

// ErrAllTrialsFailed is the failure type of a sweep whose every trial failed; never retried. Its details
// are the sweep's SweepResult (counts, last failure, where its results were written).
const ErrAllTrialsFailed = "AllTrialsFailed"

// Search attributes, registered on the namespace (rlsweep dev does it; see docs/webui.md).
var (
	AttrSweepID   = temporal.NewSearchAttributeKeyKeyword("RlsweepSweepId")
	AttrSweepName = temporal.NewSearchAttributeKeyKeyword("RlsweepSweepName")
	AttrKind      = temporal.NewSearchAttributeKeyKeyword("RlsweepKind") // "sweep" or "trial"
	AttrOutcome   = temporal.NewSearchAttributeKeyKeyword("RlsweepOutcome")
	AttrStopRule  = temporal.NewSearchAttributeKeyKeyword("RlsweepStopRule")
	AttrObjective = temporal.NewSearchAttributeKeyFloat64("RlsweepObjective")
	// AttrVerdict is a regression's verdict: pass, regressed, improved, or failed.
	AttrVerdict = temporal.NewSearchAttributeKeyKeyword("RlsweepVerdict")
	// AttrParams is a trial's parameter values, "name=value" each; optional: set only where the
	// namespace has it registered (activities.PlanResult.ParamsAttribute).
	AttrParams = temporal.NewSearchAttributeKeyKeywordList(activities.ParamsSearchAttribute)
)

// SearchAttributes lists every search attribute rlsweep sets, for registration: the required ones
// and the optional ones.
func SearchAttributes() temporal.SearchAttributes {
	return temporal.NewSearchAttributes(append(requiredAttributes(), optionalAttributes()...)...)
}

// RequiredSearchAttributes are the attributes without which sweeps cannot start.
func RequiredSearchAttributes() temporal.SearchAttributes {
	return temporal.NewSearchAttributes(requiredAttributes()...)
}

// OptionalSearchAttributes are the attributes sweeps set only where the namespace has them.
func OptionalSearchAttributes() temporal.SearchAttributes {
	return temporal.NewSearchAttributes(optionalAttributes()...)
}

func requiredAttributes() []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		AttrSweepID.ValueSet(""), AttrSweepName.ValueSet(""), AttrKind.ValueSet(""),
		AttrOutcome.ValueSet(""), AttrStopRule.ValueSet(""), AttrObjective.ValueSet(0),
		AttrVerdict.ValueSet(""),
	}
}

func optionalAttributes() []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{AttrParams.ValueSet(nil)}
}

// Sweep phases, as the status query reports them.
const (
	PhasePlanning  = "planning"
	PhaseProbing   = "probing"
	PhaseRunning   = "running"
	PhaseReporting = "reporting"
	// PhaseCancelling: cancelled, its trials being stopped and their reports awaited.
	PhaseCancelling = "cancelling"
	PhaseCompleted  = "completed"
	PhaseCancelled  = "cancelled"
	PhaseFailed     = "failed"
	// PhaseProbeFailed: a probe check failed, so no trial was started (the failure names the probe,
	// its measured and expected values and the diagnosis).
	PhaseProbeFailed = "probe_failed"
)

// SweepWorkflowID is the Web UI-readable ID of a sweep: sweep/<name>/<short-id>.
func SweepWorkflowID(name, shortID string) string {
	return sweepIDPrefix + name + "/" + shortID
}

// TrialWorkflowID is the ID of a trial's workflow: sweep/<name>/<short-id>/trial/<n>-s<seed>.
func TrialWorkflowID(sweepID, trialID string) string {
	return sweepID + trialIDSeparator + trialID
}

// ParseSweepRef accepts what users type for a sweep — the full ID or "<name>/<short-id>" — and returns
// the sweep's workflow ID, and the trial ID if the reference names one ("<sweep>/<trial-id>" or
// "<sweep>/trial/<trial-id>").
func ParseSweepRef(given string) (sweepID, trialID string, err error) {
	ref := strings.TrimPrefix(strings.TrimSpace(given), sweepIDPrefix)
	if i := strings.Index(ref, trialIDSeparator); i >= 0 {
		ref = ref[:i] + "/" + ref[i+len(trialIDSeparator):]
	}
	parts := strings.Split(ref, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] == "") {
		return "", "", fmt.Errorf("sweep: got %q, want sweep/<name>/<id>, <name>/<id>, or either followed by /<trial-id>", given)
	}
	sweepID = SweepWorkflowID(parts[0], parts[1])
	if len(parts) == 3 {
		trialID = parts[2]
	}
	return sweepID, trialID, nil
}

// Release is SignalRelease's payload.
type Release struct {
	// FromSweep: the sweep releases the trial; otherwise the worker of the trial it waited for does,
	// which a held trial ignores.
	FromSweep bool `json:",omitempty"`
	// Skip: the sweep's reason not to train the trial (its configuration cannot fit in memory, docs/
	// architecture.md "Out of memory is a resource outcome"): it ends oom at once, without training.
	Skip string `json:",omitempty"`
}
