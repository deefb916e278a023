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
// the attempt lives on or was cancelled meanwhile. An outage that lasts almost the heartbeat timeout ends
// the work: by then the server (for the workers that still reach it) times the attempt out and starts a
// retry elsewhere, and a trainer that went on here would train the same trial twice at once.
type beats struct {
	sdk    context.Context // the activity's context as the SDK gives it
	cancel context.CancelCauseFunc
	every  time.Duration
	// giveUp: how long the server may be unreachable before the work stops (the heartbeat timeout less
	// two seconds: the server heard last from the attempt up to that much before the outage was seen);
	// 0: never.
	giveUp time.Duration
	send   func(context.Context, Heartbeat) error // one heartbeat through the client, past the SDK
	log    func(msg string, kv ...any)

	mu      sync.Mutex
	details Heartbeat
	direct  bool      // the SDK's context ended on a delivery failure: heartbeats go through send
	away    time.Time // when the server stopped answering; zero while it answers
	outages int
	awayFor time.Duration

	done, exited chan struct{}
}

// startBeats starts heartbeating details every `every` and returns the context the activity's work
// runs under (see beats). Outside an activity (a CLI command calling an activity method) nothing is
// heartbeated and the work runs under ctx.
func startBeats(ctx context.Context, every time.Duration, details Heartbeat) (context.Context, *beats) {
	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	b := &beats{sdk: ctx, cancel: cancel, every: every, details: details,
		done: make(chan struct{}), exited: make(chan struct{})}
	if !activity.IsActivity(ctx) {
		close(b.exited)
		return ctx, b
	}
	b.log = activityLog(ctx).Warn
	info := activity.GetInfo(ctx)
	if ht := info.HeartbeatTimeout; ht > 2*time.Second {
		b.giveUp = ht - 2*time.Second
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
	c, cancel := context.WithTimeout(context.WithoutCancel(b.sdk), 5*time.Second)
	defer cancel()
	_ = b.send(c, h)
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
			b.direct = true
			b.wentAway()
			b.mu.Unlock()
			b.log("Temporal server did not take a heartbeat; the trainer keeps running and heartbeats go on directly",
				"cause", context.Cause(b.sdk))
		case <-t.C:
			b.mu.Lock()
			h, direct := b.details, b.direct
			b.mu.Unlock()
			if !direct {
				activity.RecordHeartbeat(b.sdk, h)
				continue
			}
			c, cancel := context.WithTimeout(work, 2*b.every)
			err := b.send(c, h)
			cancel()
			if work.Err() != nil {
				return
			}
			if err == nil {
				b.cameBack()
				continue
			}
			if endingError(err) {
				b.log("the attempt was ended by the server while it was unreachable; stopping the trainer", "cause", err)
				b.cancel(err)
				return
			}
			b.mu.Lock()
			b.wentAway()
			away := time.Since(b.away)
			b.mu.Unlock()
			if b.giveUp > 0 && away >= b.giveUp {
				b.log("stopping the trainer: the Temporal server has been unreachable for about the heartbeat timeout, so the attempt is retried elsewhere",
					"away", away.Round(time.Second).String())
				b.cancel(fmt.Errorf("the Temporal server was unreachable for %s, about the heartbeat timeout: %w", away.Round(time.Second), err))
				return
			}
		}
	}
}

// wentAway notes the start of an outage; b.mu is held.
func (b *beats) wentAway() {
	if b.away.IsZero() {
		b.away = time.Now()
	}
}

func (b *beats) cameBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.away.IsZero() {
		return
	}
	d := time.Since(b.away)
	b.outages++
	b.awayFor += d
	b.away = time.Time{}
	b.log("Temporal server answers heartbeats again; the trainer kept running", "away", d.Round(time.Millisecond).String())
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
