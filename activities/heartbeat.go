package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/rlsweep/rlsweep/sweeps"
)

// beats heartbeats a running activity from a goroutine of its own, so that nothing the activity waits
// on (an upload, a download, a trainer taking its grace period) delays a heartbeat, and so that a
// Temporal server that is slow or away does not stop the activity's work.
//
// The SDK cancels an activity's context when a heartbeat cannot be delivered within its throttle
// interval (at most a second here, so that a cancellation reaches a trainer within a second): a server
// frozen for two seconds, or restarting, would stop every running trainer and spend an attempt. beats
// runs the work under a context of its own, which ends only when the server really ends the attempt —
// it asked to cancel it, the attempt no longer exists (it timed out and was retried), it was paused or
// reset — or when the worker shuts down. When the SDK's context ends for any other reason (the server is
// unreachable), beats goes on heartbeating through the client directly; the first answer tells whether
// the attempt lives on or was cancelled meanwhile. An outage that lasts too long ends the work early
// enough that the trainer's grace period ends before the heartbeat timeout (sweeps.PartitionStop): then
// the server (for the workers that still reach it) times the attempt out and starts a retry elsewhere,
// and a trainer still running here would train the same trial twice at once.
type beats struct {
	sdk    context.Context // the activity's context as the SDK gives it
	cancel context.CancelCauseFunc
	every  time.Duration
	// timeout: the attempt's heartbeat timeout; giveUp: how long the server may go without a heartbeat
	// of this attempt before the work stops (sweeps.PartitionStop: the heartbeat timeout less the
	// trainer's grace period and a margin); 0: never.
	timeout, giveUp time.Duration
	send            func(context.Context, Heartbeat) error // one heartbeat through the client, past the SDK
	health          func(context.Context) error            // Activities.ServerHealth
	log             func(msg string, kv ...any)

	mu      sync.Mutex
	details Heartbeat
	direct  bool      // the SDK's context ended on a delivery failure: heartbeats go through send
	away    time.Time // when the server stopped answering; zero while it answers
	// heard: when the server last took a heartbeat of this attempt, as far as the worker can tell.
	heard time.Time
	// answered: when the server last answered a request of this attempt's that the worker saw answered
	// (a heartbeat sent past the SDK, a health check, the hand-off's signal); zero before any.
	answered time.Time
	// lastSent, prevSent: when the last two heartbeats went to the SDK (which sends each at once, or
	// at the end of its one-second throttle interval). When the SDK fails to deliver one, the server
	// took the one before, at the latest.
	lastSent, prevSent time.Time
	lastErr            error // the last failed delivery's
	// finishing: the work is done and the attempt waits for the server to take its result
	// (awaitServer): from then on an outage stops nothing.
	finishing bool
	outages   int
	awayFor   time.Duration

	done, exited chan struct{}
}

// startBeats starts heartbeating details every `every` and returns the context the activity's work
// runs under (see beats). Outside an activity (a CLI command calling an activity method) nothing is
// heartbeated and the work runs under ctx.
// grace is the trainer's grace period: a server unreachable for sweeps.PartitionStop(heartbeat timeout,
// grace) stops the work.
func startBeats(ctx context.Context, every time.Duration, details Heartbeat, grace time.Duration) (context.Context, *beats) {
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	b := &beats{sdk: ctx, cancel: cancel, every: every, details: details, heard: time.Now(),
		done: make(chan struct{}), exited: make(chan struct{})}
	if !activity.IsActivity(ctx) {
		close(b.exited)
		return ctx, b
	}
	b.log = activityLog(ctx).Warn
	info := activity.GetInfo(ctx)
	if ht := info.HeartbeatTimeout; ht > 0 {
		b.timeout = ht
		b.giveUp = max(0, sweeps.PartitionStop(ht, grace))
	}
	token := info.TaskToken
	b.send = func(c context.Context, h Heartbeat) error {
		cl := activity.GetClient(b.sdk)
		if cl == nil {
			return errors.New("no client to heartbeat through")
		}
		return cl.RecordActivityHeartbeat(c, token, h)
	}
	go b.loop(work)
	return work, b
}

// set makes h the details of the next heartbeats.
func (b *beats) set(h Heartbeat) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.details = h
	b.mu.Unlock()
}

// final records h as the attempt's last details before it fails, so that the next attempt reads them:
// through the SDK, which delivers its last buffered heartbeat before it reports the failure, or, with
// the SDK's context ended, directly.
func (b *beats) final(h Heartbeat) {
	if b == nil {
		return
	}
	b.set(h)
	if b.send == nil {
		return
	}
	b.mu.Lock()
	direct := b.direct
	b.mu.Unlock()
	if !direct {
		activity.RecordHeartbeat(b.sdk, h)
		return
	}
	_ = b.sendNow(h)
}

// sendNow records heartbeat h directly through the client, past the SDK, waiting at most 5 s.
func (b *beats) sendNow(h Heartbeat) error {
	c, cancel := context.WithTimeout(context.WithoutCancel(b.sdk), 5*time.Second)
	defer cancel()
	return b.send(c, h)
}

// nudge heartbeats now, outside the interval, so that the answer brings a cancellation the server
// holds for the attempt (StopSegment). Through the SDK the heartbeat goes out at once unless one went
// out within its throttle interval (a second); when the SDK's context has ended on a delivery failure,
// it goes directly.
func (b *beats) nudge() {
	if b == nil || b.send == nil {
		return
	}
	b.mu.Lock()
	h, direct := b.details, b.direct
	b.mu.Unlock()
	if !direct {
		b.viaSDK(h)
		return
	}
	go func() {
		if err := b.sendNow(h); err != nil && endingError(err) {
			b.cancel(err)
		}
	}()
}

// viaSDK records heartbeat h through the SDK, noting when.
func (b *beats) viaSDK(h Heartbeat) {
	b.mu.Lock()
	b.prevSent, b.lastSent = b.lastSent, time.Now()
	b.mu.Unlock()
	activity.RecordHeartbeat(b.sdk, h)
}

// stop ends the heartbeats; it returns once the last one has returned.
func (b *beats) stop() {
	select {
	case <-b.done:
	default:
		close(b.done)
	}
	<-b.exited
}

// Outage is what a segment attempt saw of the Temporal server being away.
type Outage struct {
	Count   int     // times the server stopped answering heartbeats and came back
	Seconds float64 // for how long in all
}

// outage reports the server outages the attempt rode out so far (one still going counts until now).
func (b *beats) outage() Outage {
	if b == nil {
		return Outage{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o := Outage{Count: b.outages, Seconds: b.awayFor.Seconds()}
	if !b.away.IsZero() {
		o.Count++
		o.Seconds += time.Since(b.away).Seconds()
	}
	return o
}

func (b *beats) loop(work context.Context) {
	defer close(b.exited)
	t := time.NewTicker(b.every)
	defer t.Stop()
	sdkDone := b.sdk.Done()
	var giveUp <-chan time.Time // fires once the server has gone b.giveUp without a heartbeat
	for {
		select {
		case <-b.done:
			return
		case <-sdkDone:
			sdkDone = nil
			if endsAttempt(b.sdk) {
				b.cancel(context.Cause(b.sdk))
				return
			}
			b.mu.Lock()
			if !b.direct {
				b.direct = true
				// The server took the heartbeat before the one the SDK could not deliver (none: the
				// attempt's start, as the server counts).
				b.heard = later(b.heard, b.prevSent)
			}
			b.wentAway()
			b.lastErr = context.Cause(b.sdk)
			b.mu.Unlock()
			t.Reset(b.retryEvery())
			giveUp = b.giveUpTimer()
			b.log("Temporal server did not take a heartbeat; the trainer keeps running and heartbeats go on directly",
				"cause", context.Cause(b.sdk), "stops_after", b.giveUp.String())
		case <-giveUp:
			giveUp = nil
			if b.stopAway() {
				return
			}
		case <-t.C:
			b.mu.Lock()
			h, direct, heard := b.details, b.direct, b.heard
			b.mu.Unlock()
			if !direct {
				b.viaSDK(h)
				continue
			}
			// A delivery waits no longer than the time left before the work stops.
			wait := 2 * b.retryEvery()
			if b.giveUp > 0 {
				wait = min(wait, max(time.Until(heard.Add(b.giveUp)), 10*time.Millisecond))
			}
			c, cancel := context.WithTimeout(work, wait)
			err := b.send(c, h)
			cancel()
			if work.Err() != nil {
				return
			}
			if err == nil {
				b.cameBack()
				t.Reset(b.every)
				giveUp = nil
				continue
			}
			if endingError(err) {
				b.log("the attempt was ended by the server while it was unreachable; stopping the trainer", "cause", err)
				b.cancel(err)
				return
			}
			b.mu.Lock()
			first := b.away.IsZero()
			b.wentAway()
			b.lastErr = err
			b.mu.Unlock()
			if first { // the server answered since the timer was last set: count from its last answer
				giveUp = b.giveUpTimer()
				t.Reset(b.retryEvery())
			}
		}
	}
}

// outageRetry is how often heartbeats are tried while the server is away, so that its return is seen
// within a second whatever the heartbeat interval.
const outageRetry = time.Second

func (b *beats) retryEvery() time.Duration { return min(b.every, outageRetry) }

// giveUpTimer fires when the server will have gone b.giveUp without a heartbeat; nil: never.
func (b *beats) giveUpTimer() <-chan time.Time {
	if b.giveUp <= 0 {
		return nil
	}
	b.mu.Lock()
	heard := b.heard
	b.mu.Unlock()
	return time.After(time.Until(heard.Add(b.giveUp)))
}

// stopAway ends the work of an attempt whose server has gone b.giveUp without a heartbeat, so that its
// trainer, stopped now, is gone (its grace period over) before the heartbeat timeout, when the server
// retries the attempt elsewhere. It reports whether it did: not once the server answered again, nor
// while the finished work waits to hand in its result (awaitServer).
func (b *beats) stopAway() bool {
	b.mu.Lock()
	away, heard, finishing, cause := !b.away.IsZero(), b.heard, b.finishing, b.lastErr
	b.mu.Unlock()
	if !away || finishing {
		return false
	}
	silent := time.Since(heard).Round(100 * time.Millisecond)
	b.log("stopping the trainer: the Temporal server has not taken a heartbeat for too long; its grace period must end before the heartbeat timeout, when the server retries the attempt elsewhere",
		"silent", silent.String(), "heartbeat_timeout", b.timeout.String())
	b.cancel(fmt.Errorf("the Temporal server took no heartbeat for %s, so the trainer was stopped before the heartbeat timeout (%s), when the server retries the attempt elsewhere: %w",
		silent, b.timeout, cause))
	return true
}

// awaitServer holds back the end of an attempt (its result or its failure) while the Temporal server
// is away, heartbeating until it answers again, so that the SDK hands the result in at once, rather
// than give up on it during a long outage and leave the server to time the attempt out and retry it
// (a trial idle for the heartbeat timeout). It waits at most until the heartbeat timeout since the
// server last took a heartbeat, and not at all when the attempt's work was ended (cancelled, or
// stopped by an outage). Heartbeats are up to a heartbeat interval apart, so when none saw the server
// go, a health check (not a billed heartbeat) asks it before the result is handed in, and again every
// second while it does not answer; unless the server answered a request of the attempt's within the
// last freshAnswer (the hand-off's signal, as the trainer exited), which tells as much.
func (b *beats) awaitServer(work context.Context) {
	if b == nil || b.send == nil || work.Err() != nil {
		return
	}
	b.mu.Lock()
	away, fresh := !b.away.IsZero(), time.Since(b.answered) < freshAnswer
	b.mu.Unlock()
	checking := false // the outage was seen by a health check, not by a heartbeat
	if !away {
		// The server answered the last heartbeat, which may be a heartbeat interval ago: ask it now (a
		// health check, not a heartbeat) before the SDK hands the result in, retrying for a minute.
		if fresh || b.answers() {
			return
		}
		checking = true
		b.mu.Lock()
		b.heard = later(b.heard, b.lastSent)
		b.wentAway()
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.finishing = true
	deadline := b.heard.Add(b.timeout)
	b.mu.Unlock()
	start := time.Now()
	b.log("the segment ended while the Temporal server is away; waiting for it to hand in the result", "until", deadline.Format(time.RFC3339))
	for {
		b.mu.Lock()
		away := !b.away.IsZero()
		b.mu.Unlock()
		if !away {
			b.log("Temporal server answers again; handing in the segment's result", "waited", time.Since(start).Round(time.Millisecond).String())
			return
		}
		wait := 100 * time.Millisecond
		if checking {
			wait = outageRetry
		}
		select {
		case <-b.exited: // the server ended the attempt
			return
		case <-activity.GetWorkerStopChannel(b.sdk): // the worker stops: nothing to wait for
			return
		case <-work.Done():
			return
		case <-time.After(min(wait, max(time.Until(deadline), 0))):
		}
		if !time.Now().Before(deadline) {
			return
		}
		if checking && b.answers() {
			b.back()
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// wentAway notes the start of an outage; b.mu is held.
func (b *beats) wentAway() {
	if b.away.IsZero() {
		b.away = time.Now()
	}
}

// answeredNow notes that the server answered a request of the attempt's other than a heartbeat.
func (b *beats) answeredNow() {
	b.mu.Lock()
	b.answered = time.Now()
	b.mu.Unlock()
}

func (b *beats) cameBack() {
	if d, was := b.back(); was {
		b.log("Temporal server answers heartbeats again; the trainer kept running", "away", d.Round(time.Millisecond).String())
	}
}

// back notes that the server answers: it returns how long it was away, and whether it was.
func (b *beats) back() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heard = time.Now()
	b.answered = b.heard
	if b.away.IsZero() {
		return 0, false
	}
	d := time.Since(b.away)
	b.outages++
	b.awayFor += d
	b.away = time.Time{}
	return d, true
}

// freshAnswer is how recent an answer of the server's spares the health check before a result
// (awaitServer): a check is itself only as good as the moment it was asked.
const freshAnswer = time.Second

// answers tells whether the Temporal server answers a health check within 2 s (true with nothing to
// ask it with: Activities.ServerHealth nil).
func (b *beats) answers() bool {
	if b.health == nil {
		return true
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(b.sdk), 2*time.Second)
	defer cancel()
	return b.health(c) == nil
}

// endsAttempt tells whether the SDK ended the activity's context because the attempt is over — the
// server asked to cancel it or no longer knows it, it was paused or reset, its deadline passed, the
// worker shut down — rather than because a heartbeat could not be delivered.
func endsAttempt(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	cause := context.Cause(ctx)
	return cause == nil || cause == context.Canceled || endingError(cause) || errors.Is(cause, worker.ErrWorkerShutdown)
}

// endingError tells whether a heartbeat's error means the attempt is over.
func endingError(err error) bool {
	var canceled *temporal.CanceledError
	var notFound *serviceerror.NotFound
	var nsInactive *serviceerror.NamespaceNotActive
	var nsMissing *serviceerror.NamespaceNotFound
	return errors.As(err, &canceled) || errors.As(err, &notFound) || errors.As(err, &nsInactive) ||
		errors.As(err, &nsMissing) || errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset)
}

// graceFits refuses, for good, a segment whose trainer's grace period does not fit in its heartbeat
// timeout (sweeps.CheckGracePeriod): cut off from the server, the worker could not stop the trainer
// before the server retries the segment elsewhere. rlsweep submit refuses such a sweep already; this
// covers one started otherwise.
func graceFits(ctx context.Context, in SegmentInput) error {
	if !activity.IsActivity(ctx) {
		return nil
	}
	if err := sweeps.CheckGracePeriod(activity.GetInfo(ctx).HeartbeatTimeout, in.Trainer.GracePeriod); err != nil {
		msg := fmt.Sprintf("trial %s: %v", in.Trial.ID, err)
		return temporal.NewNonRetryableApplicationError(msg, ErrInvalidSpec, err)
	}
	return nil
}

// storeRetryBudget is how long a segment retries a store operation it cannot do without (a resume
// checkpoint, a checkpoint's upload, the segment's last metrics) while the store is unreachable.
const storeRetryBudget = 5 * time.Minute

// retryStore runs op until it succeeds, ctx ends, it fails for a reason a retry cannot change
// (localFault), or the store stays unreachable past Activities.StoreRetry (storeRetryBudget
// when 0), waiting 1 s, 2 s, 4 s … up to 15 s between tries. The heartbeats go on meanwhile (beats).
func retryStore[T any](ctx context.Context, a *Activities, what string, op func() (T, error)) (T, error) {
	budget := a.StoreRetry
	if budget <= 0 {
		budget = storeRetryBudget
	}
	start, wait, warned := time.Now(), time.Second, false
	for {
		v, err := op()
		if err == nil {
			if warned {
				activityLog(ctx).Warn("the store answers again", "operation", what, "after", time.Since(start).Round(time.Second).String())
			}
			return v, nil
		}
		left := budget - time.Since(start)
		if ctx.Err() != nil || localFault(err) || left <= 0 {
			return v, err
		}
		if !warned {
			activityLog(ctx).Warn("store operation failed; retrying", "operation", what, "error", err, "budget", budget.String())
			warned = true
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(min(wait, left)):
		}
		wait = min(2*wait, 15*time.Second)
	}
}
