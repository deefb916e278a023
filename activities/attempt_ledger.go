package activities

// attemptLedger is what the attempts of one segment have come to while one of them runs: its number
// (from 1, as the server counts them), how many attempts the trainer failed (crashed, stalled, wrote
// unreadable metrics or none), whether this one is among them, the steps retries trained again, and
// the bounds on both kinds of failure. It decides from these alone; segmentRun keeps it and copies its
// counts into the heartbeat details (Heartbeat.TrainerFailures, .Retrained), through which they reach
// the next attempt.
type attemptLedger struct {
	attempt         int32
	trainerFailures int
	// failed: this attempt's trainer failed (trainerFailed); it is counted in trainerFailures.
	failed bool
	// retrained: the steps the segment's retries trained again (Heartbeat.Retrained).
	retrained int64
	// maxTrainerFailures is retries.max_attempts (SegmentInput.MaxTrainerFailures), maxInfraRetries
	// retries.max_infra_retries (SegmentInput.MaxInfraRetries); 0 bounds nothing.
	maxTrainerFailures, maxInfraRetries int
}

// newAttemptLedger is the ledger of attempt `attempt` of the segment in, with the counts of the
// attempts before it as their heartbeat details left them (prev).
func newAttemptLedger(in SegmentInput, attempt int32, prev Heartbeat) attemptLedger {
	return attemptLedger{attempt: attempt, trainerFailures: prev.TrainerFailures, retrained: prev.Retrained,
		maxTrainerFailures: in.MaxTrainerFailures, maxInfraRetries: in.MaxInfraRetries}
}

// retry says whether an earlier attempt of the segment ran before this one.
func (l attemptLedger) retry() bool { return l.attempt > 1 }

// ended is how many of the segment's attempts have ended: those before this one, and this one once
// its trainer failed.
func (l attemptLedger) ended() int {
	if l.failed {
		return int(l.attempt)
	}
	return int(l.attempt) - 1
}

// infraFaults is how many of the ended attempts were ended by faults outside the trainer (its worker
// died or was stopped, the Temporal server or the store was unreachable): those the trainer did not fail.
func (l attemptLedger) infraFaults() int {
	return max(0, l.ended()-l.trainerFailures)
}

// infraExhausted says whether more attempts were ended by faults outside the trainer than
// retries.max_infra_retries allows: the segment fails for good instead of running this attempt.
func (l attemptLedger) infraExhausted() bool {
	return l.maxInfraRetries > 0 && l.infraFaults() > l.maxInfraRetries
}

// trainerFailed is the ledger once this attempt's trainer failed, and whether that failure ends the
// segment for good: the trainer has failed retries.max_attempts times. A second call counts nothing more.
func (l attemptLedger) trainerFailed() (_ attemptLedger, final bool) {
	if !l.failed {
		l.failed = true
		l.trainerFailures++
	}
	return l, l.failureLimited() && l.trainerFailures >= l.maxTrainerFailures
}

// failureLimited says whether the trainer's failures are bounded (retries.max_attempts is set).
func (l attemptLedger) failureLimited() bool { return l.maxTrainerFailures > 0 }

// resumed is the ledger once this attempt resumes at step from where the previous attempt had
// reached step reached: a retry trains again what lies between.
func (l attemptLedger) resumed(from, reached int64) attemptLedger {
	if l.retry() && reached > from {
		l.retrained += reached - from
	}
	return l
}
