package workflows

import (
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
)

// askAgainAfter is how long a trial waits for its sweep's answer at a segment boundary before it asks
// again: a question that reached a run as it continued-as-new may go unanswered.
const askAgainAfter = time.Minute

// prunedError ends a trial its sweep's scheduler stopped at a segment boundary: outcome pruned, or
// diverged when another seed of its configuration diverged.
type prunedError struct {
	reason  string
	outcome string
	pruning *results.Pruning
}

func (e *prunedError) Error() string { return e.reason }

// at says the trial stopped at step.
func (e *prunedError) at(step int64) *prunedError {
	e.pruning.Step = step
	e.reason = fmt.Sprintf("%s (at step %d)", e.reason, step)
	return e
}

// atBoundary asks the sweep whether the trial goes on after segment seg, and applies the answer:
// continue; stop (a *prunedError, the trial ends pruned); or exploit (the next segment resumes from
// the decision's checkpoint with its parameters).
func atBoundary(ctx workflow.Context, in *TrialInput, sum *results.TrialSummary, seg int, res activities.SegmentResult, trained float64, resume *string, resumeStep *int64) error {
	d, err := askAtBoundary(ctx, scheduler.Boundary{TrialID: in.Trial.ID, Config: in.Trial.Config, Seed: in.Trial.Seed, Segment: seg,
		Step: sum.Steps, Objective: sum.Objective, Windowed: res.Windowed, TargetStep: sum.TargetStep, Seconds: trained, CheckpointKey: *resume,
		Warnings: warnedRules(res.Warnings), Params: in.Trial.Params})
	if err != nil {
		return err
	}
	switch d.Action {
	case scheduler.Stop:
		return &prunedError{reason: fmt.Sprintf("stopped by the sweep's scheduler after segment %d at step %d: %s", seg, sum.Steps, d.Reason),
			outcome: d.Outcome, pruning: d.Pruning}
	case scheduler.Exploit:
		rec := results.Exploit{Member: in.Trial.ID, Step: sum.Steps, FromStep: d.ResumeStep, Source: d.ResumeFrom,
			Old: in.Trial.Params, New: d.Params, Reason: d.Reason}
		if d.Exploit != nil {
			rec = *d.Exploit
			rec.Reason = d.Reason
		}
		*resume, *resumeStep = adoptCheckpoint(ctx, in, sum, rec), d.ResumeStep
		in.Trial.Params = maps.Clone(d.Params)
		sum.Params = in.Trial.Params
		workflow.GetLogger(ctx).Info("exploit", "from", d.ResumeFrom, "reason", d.Reason)
	}
	return nil
}

// adoptCheckpoint copies an exploit's checkpoint into the trial's own folder and stores the exploit's
// record (AdoptCheckpoint), records the exploit in the trial's summary, and returns the key to resume
// from: the copy, or the source itself, with a warning, when it could not be copied.
func adoptCheckpoint(ctx workflow.Context, in *TrialInput, sum *results.TrialSummary, rec results.Exploit) string {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ControlQueue,
		StartToCloseTimeout: 30 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{activities.ErrInvalidSpec, activities.ErrCheckpointMissing}},
		Summary: "copy the exploited checkpoint",
	})
	var key string
	err := workflow.ExecuteActivity(actx, (*activities.Activities).AdoptCheckpoint,
		activities.AdoptInput{SweepID: in.SweepID, TrialID: in.Trial.ID, Exploit: rec}).Get(ctx, &key)
	if err != nil {
		key = rec.Source
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("exploit at step %d: the checkpoint %s was not copied (%v); resumed from it in place", rec.Step, rec.Source, err))
	}
	rec.Checkpoint = key
	sum.Exploits = append(sum.Exploits, rec)
	return key
}

// startFromCheckpoint is adoptCheckpoint for a member that starts from another's checkpoint.
func startFromCheckpoint(ctx workflow.Context, in TrialInput, sum *results.TrialSummary) string {
	t := in.Trial
	sum.Parent, sum.StartStep, sum.Steps = t.Parent, t.ResumeStep, t.ResumeStep
	return adoptCheckpoint(ctx, &in, sum, results.Exploit{Member: t.ID, From: t.Parent, Step: t.ResumeStep, FromStep: t.ResumeStep,
		Source: t.ResumeFrom, New: t.Params, Reason: "replaces a diverged member: starts from " + t.Parent + "'s checkpoint"})
}

// askAtBoundary signals the boundary to the sweep that started the trial and waits for its decision,
// asking again every askAgainAfter; answers to an earlier segment's question are dropped. A trial
// without a parent, or whose parent cannot be signalled, goes on.
func askAtBoundary(ctx workflow.Context, b scheduler.Boundary) (scheduler.Decision, error) {
	goOn := scheduler.Decision{Segment: b.Segment, Action: scheduler.Continue}
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if parent == nil {
		return goOn, nil
	}
	answers := workflow.GetSignalChannel(ctx, SignalSegmentDecision)
	for {
		if err := workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalSegmentEnd, b).Get(ctx, nil); err != nil {
			if ctx.Err() != nil {
				return goOn, ctx.Err()
			}
			workflow.GetLogger(ctx).Warn("sweep not asked at a segment boundary: the trial goes on", "error", err)
			return goOn, nil
		}
		tctx, cancelTimer := workflow.WithCancel(ctx)
		timer := workflow.NewTimer(tctx, askAgainAfter)
		var d scheduler.Decision
		answered := false
		for !answered {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(answers, func(c workflow.ReceiveChannel, _ bool) {
				c.Receive(ctx, &d)
				answered = d.Segment == b.Segment
			})
			timedOut := false
			sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
			sel.Select(ctx)
			if ctx.Err() != nil {
				cancelTimer()
				return goOn, ctx.Err()
			}
			if timedOut {
				break
			}
		}
		cancelTimer()
		if answered {
			return d, nil
		}
	}
}

// warnedRules are the rules that warned, sorted; nil when none did.
func warnedRules(w map[string]int) []string {
	if len(w) == 0 {
		return nil
	}
	return sortedKeys(w)
}
