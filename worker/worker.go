// Package worker is the one place that registers rlsweep's workflows and activities on task queues.
package worker

import (
	"crypto/rand"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// Options says which queues a worker serves and with what.
type Options struct {
	// Control serves the control queue: the workflows and the plan and results activities.
	Control bool
	// TrialQueues lists the trial task queues this worker takes TrainSegment from.
	TrialQueues []string
	// Slots is how many segments run at once when Activities.Slots is nil (CPU trials).
	Slots int
	// Activities is what the activities run with.
	Activities *activities.Activities
	// StopTimeout is how long Stop waits for running segments: at shutdown each stops its trainer,
	// which has its grace period to write a checkpoint, and stores what it wrote. 0 waits for nothing
	// (the trainers are killed with the process).
	StopTimeout time.Duration
	// WorkflowCache is how many workflow runs the process keeps in memory between their workflow tasks
	// (the SDK's sticky cache, one per process); a run not kept replays its whole history at its next
	// task. 0 keeps none; nil: DefaultWorkflowCache.
	WorkflowCache *int
}

// DefaultWorkflowCache is the Temporal SDK's own default size of the workflow cache.
const DefaultWorkflowCache = 10000

// Workers is every Temporal worker one process runs.
type Workers struct {
	ws []sdkworker.Worker
}

// New creates the workers for opts on client c; Start them to begin polling.
func New(c client.Client, opts Options) (*Workers, error) {
	if !opts.Control && len(opts.TrialQueues) == 0 {
		return nil, fmt.Errorf("worker: got no task queue, want --control, a trial queue, or both")
	}
	if n := opts.WorkflowCache; n != nil {
		if *n < 0 {
			return nil, fmt.Errorf("worker: got a workflow cache of %d runs, want 0 or more", *n)
		}
		sdkworker.SetStickyWorkflowCacheSize(*n) // before the first worker: the process's cache is made once
	}
	var out Workers
	if opts.Activities.Trials == nil {
		opts.Activities.Trials = clientLookup{c}
	}
	if opts.Activities.Attributes == nil {
		opts.Activities.Attributes = clientLookup{c}
	}
	if opts.Control {
		w := sdkworker.New(c, workflows.ControlQueue, sdkworker.Options{
			MaxHeartbeatThrottleInterval: time.Second,
			// A sweep keeps many trials' workflow tasks in flight at once; two pollers (the default)
			// leave them queued on the server.
			MaxConcurrentWorkflowTaskPollers: 8,
			MaxConcurrentActivityTaskPollers: 4,
			// A bayes sweep that continues as new remakes its suggestions in workflow code without
			// yielding (scheduler.BenchmarkBayesResume: 1.1 s for 1,000 configurations with one
			// objective, 0.5 s for 300 with three, on 2 shared cores), past the SDK's default of 1 s.
			DeadlockDetectionTimeout: 20 * time.Second,
		})
		RegisterControl(w, opts.Activities)
		out.ws = append(out.ws, w)
	}
	slots := opts.Slots
	if opts.Activities.Slots != nil {
		slots = opts.Activities.Slots.Len()
	}
	if slots < 1 {
		slots = 1
	}
	if opts.Activities.Slots == nil && len(opts.TrialQueues) > 1 {
		// The SDK bounds each queue's worker on its own; --slots bounds them all.
		opts.Activities.TrialLimit = make(chan struct{}, slots)
	}
	if opts.Activities.Rungs == nil {
		opts.Activities.Rungs = clientLookup{c}
	}
	if opts.Activities.HandOff == nil {
		opts.Activities.HandOff = clientLookup{c}
	}
	if len(opts.TrialQueues) > 0 && opts.Activities.Places == nil {
		opts.Activities.Places = map[string]*activities.Places{}
	}
	if len(opts.TrialQueues) > 0 {
		// The stop channel: the workflows send StopSegment for this worker's running segments here.
		if opts.Activities.StopQueue == "" {
			opts.Activities.StopQueue = StopQueueName()
		}
		if opts.Activities.Announce == nil {
			opts.Activities.Announce = clientLookup{c}
		}
		if opts.Activities.ServerHealth == nil {
			opts.Activities.ServerHealth = clientLookup{c}.ServerHealth
		}
		w := sdkworker.New(c, opts.Activities.StopQueue, sdkworker.Options{
			DisableWorkflowWorker:            true,
			MaxConcurrentActivityTaskPollers: 2,
		})
		w.RegisterActivityWithOptions(opts.Activities.StopSegment, activity.RegisterOptions{Name: "StopSegment"})
		out.ws = append(out.ws, w)
	}
	for _, q := range opts.TrialQueues {
		places := trialPlaces(opts.Activities.Slots, slots)
		opts.Activities.Places[q] = places
		tuner, err := placeTuner(places)
		if err != nil {
			return nil, err
		}
		w := sdkworker.New(c, q, sdkworker.Options{
			Tuner:                            tuner,
			MaxConcurrentActivityTaskPollers: min(max(2, slots/2), 8),
			// A running segment heartbeats every sweeps.HeartbeatInterval, and at once when StopSegment
			// asks (its answer carries the cancellation): the throttle must not hold that one back.
			MaxHeartbeatThrottleInterval: time.Second,
			DisableWorkflowWorker:        true,
			WorkerStopTimeout:            opts.StopTimeout,
		})
		RegisterTrial(w, opts.Activities)
		out.ws = append(out.ws, w)
		// The queue's parked segments (activities/parked.go): they hold no place while they wait, so
		// their worker has no places of its own; a standby trial parks one at a time.
		p := sdkworker.New(c, activities.ParkedQueue(q), sdkworker.Options{
			MaxConcurrentActivityExecutionSize: maxParked,
			MaxConcurrentActivityTaskPollers:   2,
			MaxHeartbeatThrottleInterval:       time.Second,
			DisableWorkflowWorker:              true,
			WorkerStopTimeout:                  opts.StopTimeout,
		})
		RegisterTrial(p, opts.Activities)
		out.ws = append(out.ws, p)
	}
	return &out, nil
}

// maxParked bounds the segments parked on one worker for one trial queue: every standby trial of
// sweeps at the largest concurrency (sweeps.MaxConcurrency, three standby trials each).
const maxParked = 3 * sweeps.MaxConcurrency

// trialPlaces are the places of one trial queue's worker, of which its tuner makes its activity slots.
// Each queue's worker has places of its own, as the SDK's slots would be: with several queues,
// TrialLimit bounds them all without GPUs (slots, --slots), and the GPU pool they share with GPUs
// (activities.NewGPUPlaces: each queue's worker polls while the GPUs have room for another trial,
// holding at most one segment it has not placed, so fractional trials pack).
func trialPlaces(gpus *activities.Slots, slots int) *activities.Places {
	if gpus != nil {
		return activities.NewGPUPlaces(gpus)
	}
	return activities.NewPlaces(slots)
}

// StopQueueName is a task queue name of this process alone: host name, process ID and a random part,
// so that a restarted worker never takes the stops meant for the one before it.
func StopQueueName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("rlsweep-stop/%s/%d/%x", host, os.Getpid(), r)
}

// RegisterControl registers the workflows and the light activities.
func RegisterControl(r sdkworker.Registry, a *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.Sweep, workflow.RegisterOptions{Name: workflows.WorkflowTypeSweep})
	r.RegisterWorkflowWithOptions(workflows.Trial, workflow.RegisterOptions{Name: workflows.WorkflowTypeTrial})
	r.RegisterActivityWithOptions(a.Plan, activity.RegisterOptions{Name: "Plan"})
	r.RegisterActivityWithOptions(a.RecordResults, activity.RegisterOptions{Name: "RecordResults"})
	r.RegisterActivityWithOptions(a.WriteResults, activity.RegisterOptions{Name: "WriteResults"})
	r.RegisterActivityWithOptions(a.RunProbe, activity.RegisterOptions{Name: "RunProbe"})
	r.RegisterActivityWithOptions(a.RecordProbes, activity.RegisterOptions{Name: "RecordProbes"})
	r.RegisterActivityWithOptions(a.CheckTrials, activity.RegisterOptions{Name: "CheckTrials"})
	r.RegisterActivityWithOptions(a.AdoptCheckpoint, activity.RegisterOptions{Name: "AdoptCheckpoint"})
	r.RegisterActivityWithOptions(a.PickConfirm, activity.RegisterOptions{Name: "PickConfirm"})
	r.RegisterWorkflowWithOptions(workflows.Regression, workflow.RegisterOptions{Name: workflows.WorkflowTypeRegression})
	r.RegisterActivityWithOptions(a.LoadSpec, activity.RegisterOptions{Name: "LoadSpec"})
	r.RegisterActivityWithOptions(a.CompareBaseline, activity.RegisterOptions{Name: "CompareBaseline"})
	r.RegisterActivityWithOptions(a.DrawReport, activity.RegisterOptions{Name: "DrawReport"})
}

// RegisterTrial registers the training activity.
func RegisterTrial(r sdkworker.Registry, a *activities.Activities) {
	r.RegisterActivityWithOptions(a.TrainSegment, activity.RegisterOptions{Name: "TrainSegment"})
}

// Start starts every worker; on an error the ones already started are stopped.
func (w *Workers) Start() error {
	for i, x := range w.ws {
		if err := x.Start(); err != nil {
			for _, y := range w.ws[:i] {
				y.Stop()
			}
			return fmt.Errorf("start worker: %w", err)
		}
	}
	return nil
}

// Stop stops every worker at once and returns when all have stopped: a trial queue's worker waits up
// to Options.StopTimeout for its segments to stop their trainers, then cancels what is left.
func (w *Workers) Stop() {
	var wg sync.WaitGroup
	for _, x := range w.ws {
		wg.Go(x.Stop)
	}
	wg.Wait()
}
