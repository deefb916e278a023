package activities_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
)

// retried runs TrainSegment as a workflow's activity with server-side retries far above the segment's
// own bounds, so only the activity decides which failure is retried, as in a real sweep.
func (f *fixture) retried(in activities.SegmentInput) (*activities.SegmentResult, error) {
	f.t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(f.acts.TrainSegment)
	env.SetTestTimeout(time.Minute)
	var res activities.SegmentResult
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			HeartbeatTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Millisecond,
				MaximumInterval: time.Millisecond, MaximumAttempts: 10}})
		return workflow.ExecuteActivity(ctx, f.acts.TrainSegment, in).Get(ctx, &res)
	})
	if err := env.GetWorkflowError(); err != nil {
		return nil, err
	}
	return &res, nil
}

// runs counts the trainer's starts: the script appends a line to the file per start.
func runs(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A trainer that always crashes is started retries.max_attempts times and no more, and the last
// failure says so, although the server would retry it further.
func TestTrainSegmentTrainerFailuresBoundedByMaxAttempts(t *testing.T) {
	f := newFixture(t)
	in := f.input(1000, nil)
	in.MaxTrainerFailures, in.MaxInfraRetries = 2, 5
	count := filepath.Join(t.TempDir(), "runs")
	in.Trainer.Command = shellTrainer(`echo run >> ` + count + `; printf '{"step":10,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"; exit 3`)
	_, err := f.retried(in)
	if err == nil || !strings.Contains(err.Error(), "trainer failure 2 of at most 2") {
		t.Fatalf("segment ended with %v, want the trainer's second failure, not retried", err)
	}
	if n := runs(t, count); n != 2 {
		t.Errorf("trainer started %d times, want 2 (retries.max_attempts)", n)
	}
}

// flakyStore fails every Put while down is set, as an unreachable store does.
type flakyStore struct {
	*artifacts.Local
	down  atomic.Bool
	fails atomic.Int32
}

func (s *flakyStore) Put(ctx context.Context, key string, r io.Reader) error {
	if s.down.Load() {
		s.fails.Add(1)
		return errors.New("dial tcp 127.0.0.1:9000: connect: connection refused")
	}
	return s.Local.Put(ctx, key, r)
}

// An attempt ended by the store (unreachable past the retry budget) is retried without counting
// against retries.max_attempts: with max_attempts 1 the segment still completes on its second
// attempt, which says that one attempt was lost to the infrastructure and none to the trainer.
func TestTrainSegmentStoreFaultsDoNotCountAsTrainerFailures(t *testing.T) {
	f := newFixture(t)
	store := &flakyStore{Local: f.store}
	f.acts.Store, f.acts.StoreRetry = store, 300*time.Millisecond
	in := f.input(3000, nil)
	in.MaxTrainerFailures, in.MaxInfraRetries = 1, 5
	count := filepath.Join(t.TempDir(), "runs")
	// The first start takes the store down before it writes its last record; the second finds it up.
	// The first start writes its last record only once the store is down (isDown), however slow the
	// machine: whatever the runner stored before, that record meets a store that refuses it.
	marker, isDown := filepath.Join(t.TempDir(), "down"), filepath.Join(t.TempDir(), "is-down")
	in.Trainer.Command = shellTrainer(`echo run >> ` + count + `
for s in 1000 2000; do printf '{"step":%d,"reward":%d}\n' $s $((s/1000)) >> "$RLSWEEP_METRICS_FILE"; done
if [ ! -e ` + marker + ` ]; then touch ` + marker + `; while [ ! -e ` + isDown + ` ]; do sleep 0.01; done; fi
printf '{"step":3000,"reward":3}\n' >> "$RLSWEEP_METRICS_FILE"`)
	go func() { // down from the marker until the trainer's second start
		for {
			if _, err := os.Stat(marker); err == nil {
				store.down.Store(true)
				if err := os.WriteFile(isDown, nil, 0o644); err != nil {
					t.Error(err)
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		for runs(t, count) < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		store.down.Store(false)
	}()
	res, err := f.retried(in)
	if err != nil {
		t.Fatalf("segment failed: %v (store Puts refused: %d)", err, store.fails.Load())
	}
	if store.fails.Load() == 0 {
		t.Fatal("the store never refused a Put: the test did not take it down")
	}
	if res.TrainerFailures != 0 || res.InfraRetries != 1 || res.LastStep != 3000 {
		t.Errorf("result = %d trainer failures, %d infra retries, step %d; want 0, 1, 3000", res.TrainerFailures, res.InfraRetries, res.LastStep)
	}
	if n := runs(t, count); n != 2 {
		t.Errorf("trainer started %d times, want 2", n)
	}
	if res.RetrainedSteps != 3000 {
		t.Errorf("RetrainedSteps = %d, want 3000 (the first attempt reached 3000 and left no checkpoint)", res.RetrainedSteps)
	}
}

// More attempts ended by infrastructure faults than retries.max_infra_retries fail the segment for
// good, naming the bound.
func TestTrainSegmentInfraRetriesBounded(t *testing.T) {
	f := newFixture(t)
	store := &flakyStore{Local: f.store}
	store.down.Store(true)
	f.acts.Store, f.acts.StoreRetry = store, 50*time.Millisecond
	in := f.input(1000, nil)
	in.MaxTrainerFailures, in.MaxInfraRetries = 3, 2
	count := filepath.Join(t.TempDir(), "runs")
	in.Trainer.Command = shellTrainer(`echo run >> ` + count + `; printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`)
	_, err := f.retried(in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrInfraRetries || !strings.Contains(err.Error(), "retries.max_infra_retries (2)") {
		t.Fatalf("segment ended with %v, want %s naming retries.max_infra_retries", err, activities.ErrInfraRetries)
	}
	if n := runs(t, count); n != 3 {
		t.Errorf("trainer started %d times, want 3 (the first attempt and 2 infrastructure retries)", n)
	}
}

// When an attempt's completion is lost after it stored a checkpoint past its stop step (trainers finish
// the iteration that crosses it) and the heartbeat naming it never reached the server, the retry
// resumes from the stored resume point instead of training the segment again, and starts no trainer.
func TestTrainSegmentRetryResumesFromAResumePointPastTheStopStep(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ckpt := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-4096.json")
	stored := "{\"step\":2048,\"reward\":1}\n{\"step\":4096,\"reward\":2}\n"
	for key, body := range map[string]string{
		ckpt: "ckpt",
		artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0): stored,
		artifacts.ResumePointKey(sweepID, "0-s1"):          `{"segment":0,"step":4096,"key":"` + ckpt + `"}`,
	} {
		if err := f.store.Put(ctx, key, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	in := f.input(4000, nil)
	in.MaxTrainerFailures, in.MaxInfraRetries = 3, 5
	count := filepath.Join(t.TempDir(), "runs")
	// Its first start dies at once, as if the worker had (no heartbeat names the checkpoint); a second
	// would train the segment from scratch.
	in.Trainer.Command = shellTrainer(`echo run >> ` + count + `
[ "$(wc -l < ` + count + `)" -eq 1 ] && exit 3
for s in 2048 4096; do printf '{"step":%d,"reward":9}\n' $s >> "$RLSWEEP_METRICS_FILE"; done`)
	res, err := f.retried(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedFrom != ckpt || res.CheckpointKey != ckpt || res.LastStep != 4096 || res.Objective == nil || *res.Objective != 2 {
		t.Errorf("result = resumed from %q, checkpoint %q, step %d, objective %v; want %s, %s, 4096, 2",
			res.ResumedFrom, res.CheckpointKey, res.LastStep, res.Objective, ckpt, ckpt)
	}
	if n := runs(t, count); n != 1 {
		t.Errorf("trainer started %d times, want 1 (the retry has nothing left to train)", n)
	}
	if got := f.metrics(); got != stored {
		t.Errorf("stored metrics = %q, want them unchanged %q", got, stored)
	}
}
