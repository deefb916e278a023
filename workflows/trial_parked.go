package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
)

// parkedSegment is a standby trial's first segment that was handed its place while parked, as it ended.
type parkedSegment struct {
	res activities.SegmentResult
	err error
}

// canPark says whether the standby trial parks its first segment: one that starts from another
// trial's checkpoint (pbt) never waits as a standby trial.
func canPark(in TrialInput) bool { return in.Trial.ResumeFrom == "" }

// parkedInput is the standby trial's first segment as runSegments would start it, parked.
func parkedInput(ctx workflow.Context, in TrialInput) activities.SegmentInput {
	ends := segmentEnds(in)
	si := segmentBase(ctx, in)
	si.Trial, si.Segment, si.StartStep, si.StopAtStep = in.Trial, 0, 0, ends[0]
	si.HandOffTo = handOffTo(in, 0, len(ends))
	si.Parked = true
	return si
}

// waitParked is waitForPlace for a standby trial whose first segment waits in a worker (docs/
// architecture.md, "Slot hand-off"): the segment is scheduled on the trial queue's parked queue at
// once, and the trainer whose place it waits for, ending on that worker, hands it over there: the
// segment then trains, and its end comes back here (parked, with released true). Otherwise the trial is
// released by signal as waitForPlace is, and the parked segment is disarmed (StopSegment, ParkedOnly,
// on the stop queue its attempt announced):
//
//   - released by the worker of the trainer ahead (its trainer exited elsewhere, or a retry of it): no
//     hand-over can come any more; the trial goes on at once and the parked segment is disarmed
//     behind it;
//   - held (SignalHold): disarmed, so that no hand-over starts it; a hand-over that came first has
//     started it, as a release that came before a hold does;
//   - released by the sweep: disarmed and waited for, since the trainer ahead may still be running on
//     the parked segment's worker; a segment handed its place meanwhile is the trial's first;
//   - cancelled: the parked segment is stopped (disarmed, or cancelled if it trains) and waited for.
//
// A parked attempt that dies without a heartbeat (its worker killed) is retried after the heartbeat
// timeout; the retry ends lost (SegmentResult.Lost), and the trial trains its first segment itself.
//
// A parked segment that gives up on its own (its worker stopping, or parkLimit) ends unhanded, and the
// trial waits for its release without one.
func waitParked(ctx workflow.Context, in TrialInput) (released bool, skip string, parked *parkedSegment) {
	workflow.SetCurrentDetails(ctx, "standby: waiting for a place")
	opts := segmentOptions(in)
	opts.TaskQueue = activities.ParkedQueue(opts.TaskQueue)
	opts.WaitForCancellation = true
	opts.Summary = "train (parked)"
	pctx, cancelParked := workflow.WithCancel(workflow.WithActivityOptions(ctx, opts))
	pf := workflow.ExecuteActivity(pctx, (*activities.Activities).TrainSegment, parkedInput(ctx, in))
	release := workflow.GetSignalChannel(ctx, SignalRelease)
	hold := workflow.GetSignalChannel(ctx, SignalHold)
	announced := workflow.GetSignalChannel(ctx, activities.SignalSegmentStarted)
	var at *activities.SegmentStarted // where the parked attempt takes its disarm
	waiting := true                   // the parked segment has not ended
	held, cancelled := false, false
	var disarm *bool       // a disarm wanted (true: ParkedOnly), sent once at is known
	var byRelease *Release // the sweep's release, waiting for the parked segment to be disarmed
	want := func(parkedOnly bool) {
		if disarm != nil && (*disarm == parkedOnly || !*disarm) {
			return
		}
		disarm = &parkedOnly
		if at != nil {
			sendStop(ctx, *at, parkedOnly)
		}
	}
	for {
		sel := workflow.NewSelector(ctx)
		if waiting {
			sel.AddFuture(pf, func(f workflow.Future) {
				waiting = false
				var res activities.SegmentResult
				err := f.Get(ctx, &res)
				switch {
				case trainedWhileParked(res, err):
					released, parked = true, &parkedSegment{res: res, err: err}
				case res.Lost && !cancelled:
					// Its attempt died without a heartbeat, perhaps just handed its place (the trainer
					// ahead's trial then counts it as holding that place): the trial trains its first
					// segment itself, at worst one trainer over the concurrency for a while, as when
					// a worker dies after a hand-off by signal.
					released = true
				}
			})
			sel.AddReceive(announced, func(c workflow.ReceiveChannel, _ bool) {
				var s activities.SegmentStarted
				c.Receive(ctx, &s)
				if at == nil {
					at = &s
					if disarm != nil {
						sendStop(ctx, s, *disarm)
					}
				}
			})
		}
		if !cancelled {
			sel.AddReceive(hold, func(c workflow.ReceiveChannel, _ bool) {
				c.Receive(ctx, nil)
				held = true
				if waiting {
					want(true)
				}
			})
			sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) {
				var r Release
				c.Receive(ctx, &r)
				switch {
				case !r.FromSweep && held:
					// A worker's hand-off after the sweep held the trial: ignored, as in waitForPlace.
				case !waiting:
					released, skip = true, r.Skip
				case !r.FromSweep:
					// The trainer ahead exited on another worker: no hand-over can come now.
					released, skip = true, r.Skip
					cancelParked()
					want(true)
				default:
					byRelease = &r
					want(true)
				}
			})
			sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
				cancelled = true
				if waiting {
					cancelParked()
					want(false)
				}
			})
		}
		sel.Select(ctx)
		switch {
		case parked != nil:
			return true, "", parked
		case cancelled && !waiting:
			return false, "", nil
		case released:
			return true, skip, nil
		case byRelease != nil && !waiting:
			return true, byRelease.Skip, nil
		}
	}
}

// trainedWhileParked says whether a parked segment's end is that of a segment handed its place (it
// trained, whatever came of it) rather than one that gave up waiting or was cancelled before it
// started.
func trainedWhileParked(res activities.SegmentResult, err error) bool {
	if err == nil {
		return !res.Unhanded
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return canceled.HasDetails() // a segment stopped as it trained answers with how far it got
	}
	return true
}
