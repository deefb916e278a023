package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// runSegments trains the trial in segments, one TrainSegment activity each, from its segment ends
// (segmentEnds), asking its sweep at each boundary when the scheduler asks; sum gathers what they
// reached. A segment the sweep stops ends the trial pruned (*prunedError).
func runSegments(ctx workflow.Context, in TrialInput, sum *results.TrialSummary, parked *parkedSegment) error {
	opts := segmentOptions(in)
	// A cancelled segment is waited for: it answers once its trainer is stopped and its records are
	// stored, with the step they reached, which becomes the cancelled trial's steps.
	opts.WaitForCancellation = true
	ctx = workflow.WithActivityOptions(ctx, opts)
	ends := segmentEnds(in)
	resume, resumeStep := "", int64(0)
	if in.Trial.ResumeFrom != "" {
		// A member that starts from another's checkpoint (pbt): its own copy, and the segments past it.
		resume, resumeStep = startFromCheckpoint(ctx, in, sum), in.Trial.ResumeStep
	}
	first, start := firstSegment(ends, resumeStep)
	base := segmentBase(ctx, in)
	segWarning := "" // the first segment-protocol warning, once per trial
	// A record of the trial carried the objective (a pbt member's source trial had, to get this far).
	objectiveSeen := in.Trial.ResumeFrom != ""
	trained := 0.0 // the segments' wall seconds so far
	for seg, from := first, start; seg < len(ends); seg, from = seg+1, ends[seg] {
		stop := ends[seg]
		workflow.SetCurrentDetails(ctx, segmentDetails(seg, from, stop, sum.Steps, segWarning))
		var res activities.SegmentResult
		actx, cancelSegment := workflow.WithCancel(ctx)
		si := base
		si.Trial, si.Segment, si.StartStep, si.StopAtStep, si.ResumeFrom, si.ResumeStep = in.Trial, seg, from, stop, resume, resumeStep
		si.HandOffTo, si.ObjectiveSeen = handOffTo(in, seg, len(ends)), objectiveSeen
		si.TargetStepBefore, si.SecondsBefore = sum.TargetStep, trained
		var stopped *prunedError
		var err error
		if parked != nil && seg == first {
			res, err, parked = parked.res, parked.err, nil // trained while parked (waitParked)
		} else {
			f := workflow.ExecuteActivity(actx, (*activities.Activities).TrainSegment, si)
			stopped = waitOrStop(ctx, in, f, cancelSegment)
			err = f.Get(ctx, &res)
		}
		cancelSegment()
		sum.Segments = seg + 1
		if err != nil {
			addCancelledPart(sum, err)
			if stopped != nil && temporal.IsCanceledError(err) && ctx.Err() == nil {
				return stopped.at(sum.Steps)
			}
			addFailedCounts(sum, err)
			return err
		}
		addSegment(sum, in.Metric.Name, seg, res)
		trained += res.WallSeconds
		objectiveSeen = objectiveSeen || res.Objective != nil || res.Records > 0 && res.MetricMissing == nil
		if stopped != nil {
			return stopped.at(sum.Steps) // the segment ended before the stop reached it
		}
		if res.CheckpointKey != "" {
			resume, resumeStep = res.CheckpointKey, res.LastStep
		}
		segWarning = noteSegmentWarning(ctx, sum, segWarning, res.SegmentWarning)
		if res.LastStep >= in.Trainer.TotalSteps && stop < in.Trainer.TotalSteps {
			// The trainer ran its whole budget, ignoring RLSWEEP_STOP_AT_STEP: another segment would
			// only train it all again.
			break
		}
		if in.AskAtBoundaries && stop < in.Trainer.TotalSteps {
			if err := atBoundary(ctx, &in, sum, seg, res, trained, &resume, &resumeStep); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstSegment is the first segment of ends to train, and the step it starts from, for a trial that
// resumes at resumeStep (0: from the start): the first that ends past it, or else the last.
func firstSegment(ends []int64, resumeStep int64) (first int, start int64) {
	for first < len(ends)-1 && ends[first] <= resumeStep {
		start = ends[first]
		first++
	}
	return first, start
}

// segmentBase is what every segment of the trial is started with but its place in the trial (the
// trial's parameters change with an exploit).
func segmentBase(ctx workflow.Context, in TrialInput) activities.SegmentInput {
	return activities.SegmentInput{SweepID: in.SweepID, Trainer: in.Trainer, Diagnostics: in.Diagnostics,
		Metric: in.Metric.Name, Goal: in.Metric.Goal, StepsTarget: in.StepsTarget, GPUs: in.GPUs,
		MaxTrainerFailures: maxAttempts(in), MaxInfraRetries: maxInfraRetries(in),
		Rungs: in.Rungs, RungUnit: in.RungUnit, ReportTo: reportTo(ctx, in)}
}

// segmentDetails is the trial's details line while segment seg trains steps from to stop, with the
// trainer's segment-protocol warning when it has one.
func segmentDetails(seg int, from, stop, last int64, warning string) string {
	d := fmt.Sprintf("segment %d: steps %d–%d; last step %d", seg, from, stop, last)
	if warning != "" {
		d += "; warning: " + warning
	}
	return d
}

// noteSegmentWarning keeps and logs a segment's warning that the trainer does not follow the segment
// protocol, once per trial (every later segment of such a trainer says the same): it returns the
// trial's warning, kept the first time one comes.
func noteSegmentWarning(ctx workflow.Context, sum *results.TrialSummary, kept, warning string) string {
	if warning == "" || kept != "" {
		return kept
	}
	sum.Warnings = append(sum.Warnings, warning)
	workflow.GetLogger(ctx).Warn("trainer does not follow the segment protocol", "warning", warning)
	return warning
}

// addSegment adds finished segment seg's result to the trial's summary: the step, objective and last
// records it reached, its counts, the warning of a metric missing from its records (noteMissingMetric),
// and the end-of-run verdict with its warning.
func addSegment(sum *results.TrialSummary, metric string, seg int, res activities.SegmentResult) {
	sum.Steps, sum.Objective, sum.Last = res.LastStep, res.Objective, res.Last
	sum.HandedOff = sum.HandedOff || res.HandedOff
	if sum.TargetStep == 0 && res.TargetStep > 0 {
		sum.TargetStep = res.TargetStep
	}
	sum.Malformed += res.Malformed
	if res.MetricsSource != "" {
		sum.MetricsSource = res.MetricsSource
	}
	sum.TrainerFailures += res.TrainerFailures
	sum.InfraRetries += res.InfraRetries
	sum.RetrainedSteps += res.RetrainedSteps
	sum.ServerOutages += res.ServerOutages
	if res.Hardware != nil {
		sum.Hardware = res.Hardware
	}
	noteMissingMetric(sum, metric, seg, res)
	if v := res.EndVerdict; v != nil {
		sum.End = v
		sum.Warnings = append(sum.Warnings, v.Warning())
	}
}

// addCancelledPart adds to the trial's summary what a cancelled segment reached before it stopped
// (the SegmentResult in the cancellation's details), when it got further than the summary.
func addCancelledPart(sum *results.TrialSummary, err error) {
	var cancelled *temporal.CanceledError
	var part activities.SegmentResult
	if !errors.As(err, &cancelled) || !cancelled.HasDetails() || cancelled.Details(&part) != nil || part.LastStep <= sum.Steps {
		return
	}
	sum.Steps = part.LastStep
	if len(part.Last) > 0 {
		sum.Last = part.Last
	}
	sum.Malformed += part.Malformed
	if part.MetricsSource != "" {
		sum.MetricsSource = part.MetricsSource
	}
}

// addFailedCounts adds to a trial's counts those of a segment that failed for good: its attempts the
// trainer failed, those faults outside it ended, the steps re-trained and the step it reached, from the
// failure's details (activities.Heartbeat), or from the last heartbeat of a segment that timed out;
// and where it ran, from those details or a divergence's (activities.DivergedDetails).
func addFailedCounts(sum *results.TrialSummary, err error) {
	var hb activities.Heartbeat
	var app *temporal.ApplicationError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &app) && app.HasDetails() && app.Type() == activities.ErrTrialDiverged:
		var d activities.DivergedDetails
		if app.Details(&d) == nil && d.Hardware != nil {
			sum.Hardware = d.Hardware
		}
		return
	case errors.As(err, &app) && app.HasDetails():
		switch app.Type() {
		case activities.ErrTrainerCrashed, activities.ErrTrialStalled, activities.ErrMetricsUnreadable,
			activities.ErrNoMetrics, activities.ErrObjectiveMissing, activities.ErrInfraRetries,
			activities.ErrCheckpointUnreadable, activities.ErrTrainerOOM:
		default:
			return
		}
		if app.Details(&hb) != nil {
			return
		}
	case errors.As(err, &timeout) && timeout.HasLastHeartbeatDetails():
		// The segment's worker went silent (killed, cut off): its last heartbeat says how far it got.
		if timeout.LastHeartbeatDetails(&hb) != nil {
			return
		}
	default:
		return
	}
	sum.TrainerFailures += hb.TrainerFailures
	sum.InfraRetries += hb.InfraRetries
	sum.RetrainedSteps += hb.Retrained
	sum.Steps = max(sum.Steps, hb.Step) // the step its records reached before it failed
	if hb.Hardware != nil {
		sum.Hardware = hb.Hardware
	}
}

// reportTo is the workflow ID of the sweep a segment tells of the decision points it passes: the
// trial's parent, when the trial has rungs to report.
func reportTo(ctx workflow.Context, in TrialInput) string {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if len(in.Rungs) == 0 || parent == nil {
		return ""
	}
	return parent.ID
}

// handOffTo is the standby trial that segment seg of ends segments releases as its trainer exits: the
// trial's successor, from its last segment. A trial that asks at boundaries may end earlier (the sweep
// releases its successor then).
func handOffTo(in TrialInput, seg, segments int) string {
	if seg != segments-1 {
		return ""
	}
	return in.Successor
}

// waitOrStop waits for a segment to end, and cancels it (cancelSegment) when the sweep stops the
// trial meanwhile (SignalStopTrial, only for a trial that asks at boundaries): it returns the stop as a
// *prunedError, or nil when none came before the segment ended. A segment cancelled — by that stop or
// because the trial itself is cancelled — is also sent StopSegment on the stop queue its attempt
// announced (activities.SignalSegmentStarted), which brings the cancellation to the worker at once
// rather than at the attempt's next heartbeat; an attempt announced after the cancellation is sent one
// as its announcement arrives.
func waitOrStop(ctx workflow.Context, in TrialInput, f workflow.Future, cancelSegment workflow.CancelFunc) *prunedError {
	var stop *prunedError
	var attempt *activities.SegmentStarted // the last attempt announced
	cancelled, nudged := false, ""
	announced := workflow.GetSignalChannel(ctx, activities.SignalSegmentStarted)
	stopCh := workflow.GetSignalChannel(ctx, SignalStopTrial)
	for !f.IsReady() {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(f, func(workflow.Future) {})
		sel.AddReceive(announced, func(c workflow.ReceiveChannel, _ bool) {
			var s activities.SegmentStarted
			c.Receive(ctx, &s)
			attempt = &s
		})
		if in.AskAtBoundaries && stop == nil {
			sel.AddReceive(stopCh, func(c workflow.ReceiveChannel, _ bool) {
				var d scheduler.Decision
				c.Receive(ctx, &d)
				pr := d.Pruning
				if pr == nil {
					pr = &results.Pruning{Rung: -1}
				}
				stop = &prunedError{reason: "stopped by the sweep's scheduler during a segment: " + d.Reason, outcome: d.Outcome, pruning: pr}
				cancelSegment()
				cancelled = true
			})
		}
		if !cancelled {
			sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		}
		sel.Select(ctx)
		if cancelled && attempt != nil && attempt.Attempt != nudged {
			sendStop(ctx, *attempt, false)
			nudged = attempt.Attempt
		}
	}
	return stop
}

// sendStop sends StopSegment for a cancelled segment attempt to its worker's stop queue, and does not
// wait for it: a stop queue nobody serves (the worker died) leaves the cancellation to the attempt's
// next heartbeat, or to its heartbeat timeout.
func sendStop(ctx workflow.Context, s activities.SegmentStarted, parkedOnly bool) {
	if s.StopQueue == "" {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx) // a cancelled trial's context schedules nothing
	dctx = workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		TaskQueue:              s.StopQueue,
		ScheduleToCloseTimeout: activities.StopSegmentTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:                "stop",
	})
	workflow.ExecuteActivity(dctx, (*activities.Activities).StopSegment, activities.StopSegmentRequest{Attempt: s.Attempt, ParkedOnly: parkedOnly})
}

// segmentEnds is the step each segment of the trial stops at: in.SegmentEnds, which the sweep hands
// every trial. A trial whose input names none gets those of its trainer alone (sweeps.Spec.SegmentEnds
// without early_terminate or pbt: multiples of segment_steps, the last total_steps): the trials that
// TestReplayRecordedHistories replays from testdata/ were started without them, and a replay takes the
// path they took.
func segmentEnds(in TrialInput) []int64 {
	if len(in.SegmentEnds) > 0 {
		return in.SegmentEnds
	}
	return (&sweeps.Spec{Trainer: in.Trainer}).SegmentEnds()
}

// noteMissingMetric warns, as soon as a segment ends, that no record of it carried the objective's
// metric (naming those they did carry), and drops the warning once a later segment's records carry it.
func noteMissingMetric(sum *results.TrialSummary, metric string, seg int, res activities.SegmentResult) {
	prefix := fmt.Sprintf("metric %q: ", metric)
	i := slices.IndexFunc(sum.Warnings, func(w string) bool { return strings.HasPrefix(w, prefix) })
	switch {
	case res.MetricMissing == nil && res.Records > 0 && i >= 0:
		sum.Warnings = slices.Delete(sum.Warnings, i, i+1)
	case res.MetricMissing != nil && i < 0:
		sum.Warnings = append(sum.Warnings, results.MissingMetricWarning(metric, seg, res.MetricMissing))
	}
}

func maxAttempts(in TrialInput) int {
	if in.MaxAttempts <= 0 {
		return sweeps.DefaultMaxAttempts
	}
	return in.MaxAttempts
}

func maxInfraRetries(in TrialInput) int {
	if in.MaxInfraRetries <= 0 {
		return sweeps.DefaultMaxInfraRetries
	}
	return in.MaxInfraRetries
}

// segmentOptions are TrainSegment's options. The activity decides which of its failures are retried
// (it counts trainer failures and infrastructure faults apart, in its heartbeat details); the server's
// MaximumAttempts is only a backstop above both bounds together.
func segmentOptions(in TrialInput) workflow.ActivityOptions {
	hb := in.HeartbeatTimeout
	if hb <= 0 {
		hb = sweeps.DefaultHeartbeatTimeout
	}
	attempts := maxAttempts(in) + maxInfraRetries(in) + 1
	queue := in.TaskQueue
	if queue == "" {
		queue = DefaultTrialQueue
	}
	return workflow.ActivityOptions{
		TaskQueue: queue,
		// A segment may train for days; liveness is the heartbeat's job, progress the stall timeout's.
		StartToCloseTimeout: 30 * 24 * time.Hour,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        int32(attempts),
			NonRetryableErrorTypes: []string{activities.ErrTrialDiverged, activities.ErrInvalidSpec, activities.ErrInfraRetries, activities.ErrTrainerOOM},
		},
		Summary: "train",
	}
}
