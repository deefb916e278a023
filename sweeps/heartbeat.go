package sweeps

import (
	"fmt"
	"time"
)

// DefaultHeartbeatTimeout is how long a silent segment attempt is trusted before the Temporal server
// retries it, e.g. on another worker (rlsweep submit --heartbeat-timeout). Two minutes: with the
// default grace period (30 s) a running segment heartbeats every 44 s (HeartbeatInterval), 82 recorded
// heartbeats a trial-hour.
const DefaultHeartbeatTimeout = 2 * time.Minute

// MaxHeartbeatInterval bounds HeartbeatInterval: the heartbeats carry the step and last checkpoint
// that `rlsweep status` shows.
const MaxHeartbeatInterval = time.Minute

// MinHeartbeatInterval is the shortest interval between a segment's heartbeats (the worker's
// heartbeat throttle).
const MinHeartbeatInterval = time.Second

// HeartbeatInterval is how often a running segment heartbeats: half the time it may go without a
// heartbeat the server took before it must stop its trainer (PartitionStop), between
// MinHeartbeatInterval and MaxHeartbeatInterval. Heartbeats are liveness only — a stop reaches the
// worker on its stop queue, not on a heartbeat's answer — so they are as rare as the partition rule
// allows: a server that stops answering is noticed at the next heartbeat, at least half of
// PartitionStop before the trainer must be stopped. heartbeat 0 means DefaultHeartbeatTimeout.
func HeartbeatInterval(heartbeat, grace time.Duration) time.Duration {
	return min(max(PartitionStop(heartbeat, grace)/2, MinHeartbeatInterval), MaxHeartbeatInterval)
}

// PartitionMargin is what a worker cut off from the Temporal server keeps between the end of its
// trainer's grace period and the heartbeat timeout: the storing of what the trainer wrote on SIGTERM,
// and the server's own timing of the attempt.
const PartitionMargin = 2 * time.Second

// PartitionStop is how long a worker goes on training while it cannot reach the Temporal server: the
// heartbeat timeout less the trainer's grace period and PartitionMargin. A trainer stopped then
// (SIGTERM, then up to the grace period) has exited before the server times the attempt out and
// retries the segment elsewhere, so a trial never trains on two hosts at once. heartbeat 0 means
// DefaultHeartbeatTimeout; not positive: the grace period does not fit (CheckGracePeriod).
func PartitionStop(heartbeat, grace time.Duration) time.Duration {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeatTimeout
	}
	return heartbeat - grace - PartitionMargin
}

// CheckGracePeriod refuses a trainer.grace_period that leaves no time before the heartbeat timeout
// (PartitionStop): a worker cut off from the server could not stop its trainer early enough for its
// grace period to end before the server retries the trial elsewhere. heartbeat 0 means
// DefaultHeartbeatTimeout.
func CheckGracePeriod(heartbeat, grace time.Duration) error {
	if PartitionStop(heartbeat, grace) > 0 {
		return nil
	}
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeatTimeout
	}
	return fmt.Errorf("trainer.grace_period: got %s with a heartbeat timeout of %s, want less than %s (the heartbeat timeout less %s): a worker cut off from the Temporal server stops its trainers so that their grace period ends before the server retries the trial elsewhere; shorten trainer.grace_period or raise --heartbeat-timeout above %s",
		grace, heartbeat, heartbeat-PartitionMargin, PartitionMargin, grace+PartitionMargin)
}
