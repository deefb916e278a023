// Package activities holds rlsweep's Temporal activities: planning a sweep, running one training
// segment of a trial as a child process, and recording results. Activities are methods on Activities,
// which a worker registers; workflows refer to them through a nil *Activities.
package activities

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/rlsweep/rlsweep/runner"
)

// Store is the part of the artifact store the activities use (artifacts.Store satisfies it).
type Store interface {
	Put(ctx context.Context, key string, r io.Reader) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	List(ctx context.Context, prefix string) ([]string, error)
	URL(key string) string
}

// Activities carries what the activities need from the worker that runs them.
type Activities struct {
	// Store receives every artifact.
	Store Store
	// WorkDir holds each running segment's scratch directory (metrics file, checkpoints, log).
	WorkDir string
	// Executable is the rlsweep binary that runs the built-in trainer (`rlsweep train`).
	Executable string
	// Slots hands each running segment a GPU slot; nil means no GPUs (CUDA_VISIBLE_DEVICES is left empty).
	Slots *Slots
	// TrialLimit, without Slots, bounds how many segments run at once across every trial queue of the
	// worker (--slots): the SDK's limit is per queue. A segment holds a place in the channel while it
	// runs; nil means no bound beyond the SDK's.
	TrialLimit chan struct{}
	// PollInterval is how often a running segment reads new metrics while records arrive; 0 means 20ms
	// (after 200ms without a record, every 100ms: pollEvery).
	PollInterval time.Duration
	// FlushInterval is how often new metrics records and what stdout.log gained are copied to the store while a segment
	// runs; 0 means 30s. They are always copied when the segment ends.
	FlushInterval time.Duration
	// StoreRetry is how long a segment retries a store operation it cannot do without while the store
	// is unreachable; 0 means 5 minutes.
	StoreRetry time.Duration
	// Trials looks up trial workflows for CheckTrials (the worker sets it from its Temporal client).
	Trials TrialLookup
	// HandOff releases a standby trial when the trainer whose place it waits for has exited
	// (SegmentInput.HandOffTo; the worker sets it from its Temporal client); nil: the sweep releases it
	// when it learns that trial ended.
	HandOff SlotHandOff
	// Rungs tells a sweep that a trial's metric stream passed a decision point inside a segment
	// (SegmentInput.Rungs; the worker sets it from its Temporal client); nil: no pass is reported, and
	// a trial is judged at its segment boundaries only.
	Rungs RungReporter
	// Places, by trial task queue: the queue's places are told when a segment's trainer has exited
	// (TrainerExited) and when that segment's activity ends (ActivityEnded), so the worker's activity
	// slots count trainers, not activities still storing what their trainer left (worker/ makes each
	// queue's SDK slot supplier of them). nil: the SDK's slots count activities.
	Places map[string]*Places
	// Secrets masks the worker's secrets in every trainer output that leaves the worker (failure
	// messages, the divergence dump, probe results); nil means the secrets of the worker's environment
	// (WorkerSecrets of os.Environ, read when a failure is reported).
	Secrets *runner.Masker
	// Attributes tells Plan which search attributes the namespace has (the worker sets it from its
	// Temporal client); nil means none beyond the ones rlsweep requires.
	Attributes SearchAttributeLookup
	// KeepScratch keeps each attempt's scratch directory after it ends (its log stored), for
	// debugging a trainer; by default it is removed.
	KeepScratch bool
	// AllowTrainers, when not nil, is the only programs a trial's or a probe's trainer may run
	// (`worker --allow-trainer`); any other fails the trial or probe at once (ErrTrainerNotAllowed).
	AllowTrainers *TrainerAllowList
	// Logger receives what the worker logs outside an activity (the background uploads of ended
	// attempts' logs); nil drops it. Inside an activity, activity.GetLogger's logger is used.
	Logger Logger

	// StopQueue is the task queue of this worker's stop channel (StopSegment); "" means none: a stop
	// reaches a running segment at its next heartbeat.
	StopQueue string
	// ServerHealth asks the Temporal server whether it answers (a health check, not a heartbeat); the
	// worker sets it from its Temporal client. nil: a segment takes the server to answer when no
	// heartbeat saw it go.
	ServerHealth func(context.Context) error
	// Announce tells a Trial workflow where its running segment takes a stop (SegmentStarted; the
	// worker sets it from its Temporal client).
	Announce SegmentAnnouncer
	// AnnounceAfter is how long a segment attempt runs before it announces itself (announceSegment):
	// 0 is DefaultAnnounceAfter, a negative value at once, before the trainer starts.
	AnnounceAfter time.Duration

	uploadsOnce sync.Once
	bg          *backgroundUploads
	running     sync.Map // segmentKey → *beats of the segment attempts running here
	parked      parkedSegs
}

// SlotHandOff releases a standby trial, by its sweep and trial IDs. An error is logged, never retried:
// the sweep releases the trial anyway when it learns the trainer's trial ended.
type SlotHandOff interface {
	HandOff(ctx context.Context, sweepID, trialID string) error
}

// ParamsSearchAttribute is the optional KeywordList search attribute that carries a trial's parameter
// values as "name=value" strings, so the Web UI can filter trials by parameter. A namespace that has
// not registered it still runs sweeps; its trials just do not carry it.
const ParamsSearchAttribute = "RlsweepParams"

// SearchAttributeLookup tells how a namespace has a search attribute registered: its type in
// Temporal's words ("Keyword", "KeywordList", ...), or "" when it is not registered or the namespace's
// attributes may not be listed (no permission). An error is worth retrying. worker/ implements it with
// the Temporal client.
type SearchAttributeLookup interface {
	SearchAttributeType(ctx context.Context, namespace, name string) (string, error)
}

func (a *Activities) pollInterval() time.Duration {
	if a.PollInterval > 0 {
		return a.PollInterval
	}
	return 20 * time.Millisecond
}

func (a *Activities) flushInterval() time.Duration {
	if a.FlushInterval > 0 {
		return a.FlushInterval
	}
	return 30 * time.Second
}
