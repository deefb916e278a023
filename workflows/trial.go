package workflows

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// TrialInput asks to run one trial of a sweep.
type TrialInput struct {
	SweepID     string
	Trial       sweeps.Trial
	Trainer     sweeps.Trainer
	Diagnostics sweeps.Diagnostics
	Metric      sweeps.Metric
	// StepsTarget is the target of the sweep's env_steps objective (sweeps.Spec.StepsTarget); nil: none.
	StepsTarget *float64 `json:",omitempty"`
	TaskQueue   string
	// GPUs is how much GPU each segment holds on a GPU worker (resources.gpus): whole GPUs, or a
	// fraction of one; nil means one. A float64, so that histories written while it was an integer
	// ("GPUs":2) decode to the same number, and the activity input it becomes encodes as before.
	GPUs *float64 `json:",omitempty"`
	// MaxAttempts bounds the attempts of a segment that its trainer fails (retries.max_attempts);
	// MaxInfraRetries those ended by faults outside the trainer (retries.max_infra_retries). The
	// TrainSegment activity counts them; 0 means the default.
	MaxAttempts     int
	MaxInfraRetries int `json:",omitempty"`
	// HeartbeatTimeout is how long a silent TrainSegment attempt is trusted before it is retried
	// elsewhere (its worker is presumed dead); 0 means sweeps.DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// AskAtBoundaries: the sweep's scheduler decides at each segment end whether the trial goes on
	// (askAtBoundary); false: it always does, and the trial does not ask.
	AskAtBoundaries bool `json:",omitempty"`
	// SegmentEnds is the step each segment stops at, the last total_steps, as the sweep computes them
	// once for all its trials (sweeps.Spec.SegmentEnds: multiples of trainer.segment_steps, with every
	// early_terminate decision step or pbt ready step added); a trial given none trains in
	// trainer.segment_steps (segmentEnds).
	SegmentEnds []int64 `json:",omitempty"`
	// Standby: the trial waits for a place before it trains (SignalRelease; docs/architecture.md
	// "Slot hand-off"). Successor: the standby trial that waits for this one's place, released by the
	// worker as this trial's last trainer exits (activities.SegmentInput.HandOffTo).
	Standby   bool   `json:",omitempty"`
	Successor string `json:",omitempty"`
	// Rungs are the early_terminate decision points in RungUnit (sweeps.Spec.DecisionSteps) that each
	// segment reports as the trial's records pass them (activities.SegmentInput.Rungs), so that a
	// trial is judged where no segment ends; empty: none.
	Rungs    []int64 `json:",omitempty"`
	RungUnit string  `json:",omitempty"`
}

// Trial runs a trial's training in segments, one TrainSegment activity per segment, each resuming from
// the checkpoint the previous one left. Query QueryStatus returns its TrialStatus (segments, steps,
// warnings so far). It returns its summary, which the Sweep that started it learns from its future; it
// also reports it to the Sweep by signal when the Sweep asked (SignalReportToSweep, before a
// continue-as-new: the next run has no future for it) or when it was cancelled (a cancelled trial's
// result does not reach the future).
func Trial(ctx workflow.Context, in TrialInput) (*results.TrialSummary, error) {
	defer drainLateSignals(ctx)
	reportCh := workflow.GetSignalChannel(ctx, SignalReportToSweep)
	sum := results.TrialSummary{TrialID: in.Trial.ID, Config: in.Trial.Config, Seed: in.Trial.Seed, Precision: in.Trial.Precision, GPUClass: in.Trial.GPUClass,
		Params: in.Trial.Params, Outcome: results.OutcomeCompleted}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (*TrialStatus, error) {
		return &TrialStatus{TrialID: sum.TrialID, Segments: sum.Segments, Steps: sum.Steps, Warnings: sum.Warnings, Malformed: sum.Malformed}, nil
	}); err != nil {
		return nil, err
	}
	var skip string
	var parked *parkedSegment
	if in.Standby {
		var released bool
		if canPark(in) {
			released, skip, parked = waitParked(ctx, in)
		} else {
			released, skip = waitForPlace(ctx)
		}
		if !released {
			// Cancelled before it was released: it never trained.
			sum.Outcome, sum.Unstarted = results.OutcomeCancelled, true
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			upsertTrialAttributes(dctx, sum)
			reportToParent(dctx, sum)
			return &sum, temporal.NewCanceledError()
		}
	}
	var err error
	if skip == "" {
		start := workflow.Now(ctx) // a standby trial's wait is not its wall time
		if parked != nil {
			start = start.Add(-time.Duration(parked.res.WallSeconds * float64(time.Second)))
		}
		err = runSegments(ctx, in, &sum, parked)
		sum.WallSeconds = workflow.Now(ctx).Sub(start).Seconds()
	}
	var pruned *prunedError
	switch {
	case skip != "":
		// Released with the sweep's reason not to train: its configuration ran out of memory on this
		// GPU class already (Release.Skip).
		sum.Outcome, sum.Unstarted, sum.Error = results.OutcomeOOM, true, skip
	case temporal.IsCanceledError(err) && ctx.Err() != nil:
		// Cancelled: the trial was asked to stop. A segment that ended as cancelled while nobody asked
		// (its attempt was ended by the server) is a failure like any other, below.
		sum.Outcome = results.OutcomeCancelled
	case errors.As(err, &pruned):
		// Stopped by the scheduler: its objective so far stays, as a cancelled trial's does; one
		// stopped because another seed of its configuration diverged ends diverged, with none.
		sum.Outcome, sum.Error, sum.Pruning, err = results.OutcomePruned, pruned.reason, pruned.pruning, nil
		if pruned.outcome == results.OutcomeDiverged {
			sum.Outcome, sum.Objective = results.OutcomeDiverged, nil
		}
	case err != nil:
		sum.Outcome, sum.StopRule, sum.Error, sum.Stop = classify(err)
		if sum.Stop != nil {
			sum.Steps = max(sum.Steps, sum.Stop.Step) // a stop inside a segment: the step the rule fired at
		}
		// An earlier segment's objective is not this trial's: a diverged or failed trial has none, so
		// no statistic (the leaderboard, a regression's scored seeds) counts it.
		sum.Objective = nil
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	upsertTrialAttributes(dctx, sum)
	var asked any
	if requested := reportCh.ReceiveAsync(&asked); requested || sum.Outcome == results.OutcomeCancelled {
		reportToParent(dctx, sum)
	}
	if sum.Outcome == results.OutcomeCancelled {
		return &sum, err
	}
	return &sum, nil
}

// drainLateSignals takes the signals that came too late to matter as the trial ends, so that they are
// not reported as unhandled (the SDK warns of each): a stop (SignalStopTrial) the sweep sent as the
// segment it meant to stop ended, a segment attempt's announcement (activities.SignalSegmentStarted)
// that arrived as its segment ended, a release (SignalRelease, SignalHold) from a worker's hand-off after
// the sweep had released the trial, a second request to report. None asks for anything once the
// trial has ended.
func drainLateSignals(ctx workflow.Context) {
	for _, name := range []string{SignalStopTrial, SignalRelease, SignalHold, SignalReportToSweep, activities.SignalSegmentStarted} {
		ch := workflow.GetSignalChannel(ctx, name)
		for ch.ReceiveAsync(nil) {
		}
	}
}

// waitForPlace waits until the standby trial is released (SignalRelease): by the worker whose trainer
// held its place, unless the sweep has held it (SignalHold), or by the sweep. False: cancelled first.
// skip: the sweep's reason not to train it (Release.Skip).
func waitForPlace(ctx workflow.Context) (released bool, skip string) {
	workflow.SetCurrentDetails(ctx, "standby: waiting for a place")
	release := workflow.GetSignalChannel(ctx, SignalRelease)
	hold := workflow.GetSignalChannel(ctx, SignalHold)
	held := false
	for !released {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(hold, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			held = true
		})
		sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) {
			var r Release
			c.Receive(ctx, &r)
			released = r.FromSweep || !held
			skip = r.Skip
		})
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		if ctx.Err() != nil {
			return false, ""
		}
	}
	return true, skip
}

// TrialStatus is what a trial's status query returns while it runs: how far it got and its warnings.
type TrialStatus struct {
	TrialID  string
	Segments int   // segments finished
	Steps    int64 // the step the last finished segment reached
	Warnings []string
	// Malformed: metric lines the finished segments' readers dropped as malformed.
	Malformed int `json:",omitempty"`
}

// classify maps a failed trial's error to its outcome (diverged, oom for a trainer that died out of
// memory, else failed), stop rule, message and, for a divergence, the
// stop verdict (the step the rule fired at, what it measured, the advice).
func classify(err error) (outcome, rule, msg string, stop *results.Verdict) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ErrTrialDiverged {
		var d activities.DivergedDetails
		if app.HasDetails() {
			_ = app.Details(&d)
		}
		v := d.Verdict
		detail := fmt.Sprintf("%s = %g (threshold %g)", v.Metric, v.Value, v.Threshold)
		if v.Objective != "" && !math.IsNaN(v.ObjectiveValue) {
			detail += fmt.Sprintf(", %s %.4g where the run stood", v.Objective, v.ObjectiveValue)
		}
		return results.OutcomeDiverged, d.Rule, app.Message(), &results.Verdict{Rule: d.Rule, Step: v.Step, Detail: detail, Advice: v.Advice}
	}
	if errors.As(err, &app) && app.Type() == activities.ErrTrainerOOM {
		return results.OutcomeOOM, "", app.Message(), nil
	}
	if errors.As(err, &app) {
		return results.OutcomeFailed, "", app.Message(), nil
	}
	return results.OutcomeFailed, "", err.Error(), nil
}

func upsertTrialAttributes(ctx workflow.Context, sum results.TrialSummary) {
	ups := []temporal.SearchAttributeUpdate{AttrOutcome.ValueSet(sum.Outcome)}
	if sum.StopRule != "" {
		ups = append(ups, AttrStopRule.ValueSet(sum.StopRule))
	}
	if sum.Objective != nil {
		ups = append(ups, AttrObjective.ValueSet(*sum.Objective))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, ups...); err != nil {
		workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
	}
}

// reportToParent signals the Sweep that started this trial, and waits for the signal's delivery before
// the trial may complete: the server drops a signal whose sender has closed before it was delivered, and
// a trial that outlived its sweep's continue-as-new has no other way to report. A trial started by hand
// has no parent.
func reportToParent(ctx workflow.Context, sum results.TrialSummary) {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if parent == nil {
		return
	}
	if err := workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalTrialDone, sum).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("parent sweep not told of this trial's end", "error", err)
	}
}
