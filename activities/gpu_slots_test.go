package activities_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
)

// gpuRun is one trial's record from gpuRecorder.
type gpuRun struct {
	trial, gpu string
	start, end int64
}

// With --gpus 0,1 (two slots) and five trials started at once, no two trials run on one GPU at the same
// time, each sees exactly one GPU in CUDA_VISIBLE_DEVICES, and both GPUs are used.
func TestTrainSegmentGPUSlotsExclusive(t *testing.T) {
	_, runs := runGPUTrials(t, []string{"0", "1"}, make([]*float64, 5))
	byGPU := map[string][]gpuRun{}
	for _, r := range runs {
		if r.gpu != "0" && r.gpu != "1" {
			t.Errorf("trial %s: CUDA_VISIBLE_DEVICES = %q, want one slot's GPU, 0 or 1", r.trial, r.gpu)
		}
		byGPU[r.gpu] = append(byGPU[r.gpu], r)
	}
	for gpu, rs := range byGPU {
		sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
		for k := 1; k < len(rs); k++ {
			if rs[k].start < rs[k-1].end {
				t.Errorf("GPU %s: trial %s started at %d, before trial %s ended at %d",
					gpu, rs[k].trial, rs[k].start, rs[k-1].trial, rs[k-1].end)
			}
		}
	}
	if len(byGPU["0"]) == 0 || len(byGPU["1"]) == 0 {
		t.Errorf("trials per GPU: 0: %d, 1: %d; want both GPUs used", len(byGPU["0"]), len(byGPU["1"]))
	}
}

// runGPUTrials runs one segment per entry of gpusOf at once (each asking for that many GPUs, nil: the
// default of one) on a worker with the given GPUs, under gpuRecorder, and returns the fixture (its
// worker keeps the pool) and what the trials recorded.
func runGPUTrials(t *testing.T, gpus []string, gpusOf []*float64) (*fixture, []gpuRun) {
	t.Helper()
	f := newFixture(t)
	slots, err := activities.NewSlots(gpus, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.acts.Slots = slots
	dir := t.TempDir()
	errs := make([]error, len(gpusOf))
	var wg sync.WaitGroup
	for i, n := range gpusOf {
		in := f.input(1000, nil)
		in.Trial.ID = fmt.Sprintf("%d-s1", i)
		in.Trial.Config = i
		in.GPUs = n
		in.Trainer.Command = shellTrainer(gpuRecorder)
		in.Trainer.Environment["GPU_TEST_DIR"] = dir
		env := f.env(context.Background(), nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = env.ExecuteActivity(f.acts.TrainSegment, in)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("trial %d-s1: %v", i, err)
		}
	}
	runs := readGPURuns(t, filepath.Join(dir, "runs"))
	if len(runs) != len(gpusOf) {
		t.Fatalf("%d trials recorded a run, want %d: %+v", len(runs), len(gpusOf), runs)
	}
	return f, runs
}

func readGPURuns(t *testing.T, path string) []gpuRun {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var runs []gpuRun
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 4 {
			t.Fatalf("runs: line %q, want: trial gpu start end", line)
		}
		start, err1 := strconv.ParseInt(fs[2], 10, 64)
		end, err2 := strconv.ParseInt(fs[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("runs: line %q: times are not integers", line)
		}
		runs = append(runs, gpuRun{trial: fs[0], gpu: fs[1], start: start, end: end})
	}
	return runs
}

// gpuRecorder is a trainer that claims each GPU listed in CUDA_VISIBLE_DEVICES with mkdir (which fails
// if another trial holds the same GPU at that moment, and then the trainer exits 9), sleeps so that
// trials overlap in time, and appends "trial gpus start-ns end-ns" to $GPU_TEST_DIR/runs ("none" for no
// GPU).
const gpuRecorder = `d="$GPU_TEST_DIR"; gs="$CUDA_VISIBLE_DEVICES"
for g in $(echo "$gs" | tr ',' ' '); do mkdir "$d/busy-$g" || { echo "GPU $g already busy" >&2; exit 9; }; done
start=$(date +%s%N); sleep 0.3; end=$(date +%s%N)
for g in $(echo "$gs" | tr ',' ' '); do rmdir "$d/busy-$g"; done
echo "$RLSWEEP_TRIAL_ID ${gs:-none} $start $end" >> "$d/runs"
printf '{"step":%s,"reward":1}\n' "$RLSWEEP_STOP_AT_STEP" >> "$RLSWEEP_METRICS_FILE"`

// resources.gpus: with --gpus 0,1,2 and trials asking for two GPUs each, every trial sees two distinct
// GPUs, trials that overlap in time share none; a trial asking for none sees no GPU and does not wait
// for one; a trial asking for more GPUs than the worker has fails at once, without retries.
func TestTrainSegmentSeveralGPUsPerTrial(t *testing.T) {
	two, none := 2.0, 0.0
	f, runs := runGPUTrials(t, []string{"0", "1", "2"}, []*float64{&two, &two, &two, &two, &none})
	for _, r := range runs {
		if r.trial == "4-s1" {
			if r.gpu != "none" {
				t.Errorf("trial 4-s1 asked for no GPU and saw CUDA_VISIBLE_DEVICES=%q, want empty", r.gpu)
			}
			continue
		}
		gs := strings.Split(r.gpu, ",")
		if len(gs) != 2 || gs[0] == gs[1] {
			t.Errorf("trial %s: CUDA_VISIBLE_DEVICES = %q, want two distinct GPUs", r.trial, r.gpu)
		}
	}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.start < b.end && b.start < a.end && a.gpu != "none" && b.gpu != "none" {
				for _, g := range strings.Split(a.gpu, ",") {
					if strings.Contains(","+b.gpu+",", ","+g+",") {
						t.Errorf("trials %s (%s) and %s (%s) held GPU %s at the same time", a.trial, a.gpu, b.trial, b.gpu, g)
					}
				}
			}
		}
	}

	in := f.input(1000, nil)
	four := 4.0
	in.GPUs = &four
	_, err := f.env(context.Background(), nil).ExecuteActivity(f.acts.TrainSegment, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || !strings.Contains(err.Error(), "resources.gpus: the trial asks for 4 GPUs, this worker has 3") {
		t.Errorf("a trial asking for 4 GPUs on a 3-GPU worker: %v, want a non-retryable error naming resources.gpus", err)
	}
}

// A segment waiting for a GPU another trial holds keeps heartbeating, with the details of the attempt
// before it: silent, it would be timed out and retried while it waits (spending max_attempts), and the
// stale attempt would start a trainer beside the retry once the GPU freed.
func TestTrainSegmentHeartbeatsWhileWaitingForAGPU(t *testing.T) {
	f := newFixture(t)
	slots, err := activities.NewSlots([]string{"0"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.acts.Slots = slots
	held, err := slots.AcquireN(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	waitsHeartbeating(t, f, func() { slots.Release(held) })
}

// Likewise for a place under --slots on a worker of several trial queues (TrialLimit): without it,
// --slots 1 ran one trial per queue at once.
func TestTrainSegmentHeartbeatsWhileWaitingForATrialSlot(t *testing.T) {
	f := newFixture(t)
	f.acts.TrialLimit = make(chan struct{}, 1)
	f.acts.TrialLimit <- struct{}{} // another queue's trial holds the one place
	waitsHeartbeating(t, f, func() { <-f.acts.TrialLimit })
}

// waitsHeartbeating runs a segment that must wait for a place, frees the place with release after five
// heartbeats (past the heartbeat timeout of 4 s), and checks that the segment then completes.
func waitsHeartbeating(t *testing.T, f *fixture, release func()) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(20 * time.Second)
	env.RegisterActivity(f.acts.TrainSegment)
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, _ converter.EncodedValues) {
		if beats.Add(1) == 5 {
			release()
		}
	})
	in := f.input(1000, nil)
	in.Trainer.GracePeriod = time.Second // fits in the heartbeat timeout (sweeps.CheckGracePeriod)
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			HeartbeatTimeout: 4 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, f.acts.TrainSegment, in).Get(ctx, nil)
	})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("segment: %v", err)
	}
	if n := beats.Load(); n < 5 {
		t.Errorf("%d heartbeats while waiting for a place, want at least 5", n)
	}
}

// shareRecorder is a trainer that sleeps so that trials overlap in time and appends "trial gpus
// memory-fraction xla-fraction start-ns end-ns" to $GPU_TEST_DIR/runs ("-" for an unset variable).
const shareRecorder = `d="$GPU_TEST_DIR"
start=$(date +%s%N); sleep 0.5; end=$(date +%s%N)
echo "$RLSWEEP_TRIAL_ID ${CUDA_VISIBLE_DEVICES:--} ${RLSWEEP_GPU_MEMORY_FRACTION:--} ${XLA_PYTHON_CLIENT_MEM_FRACTION:--} $start $end" >> "$d/runs"
printf '{"step":%s,"reward":1}\n' "$RLSWEEP_STOP_AT_STEP" >> "$RLSWEEP_METRICS_FILE"`

type shareRun struct {
	trial, gpu, memory, xla string
	start, end              int64
}

// With --gpus 0 and four trials of resources.gpus 0.25 started at once, all four train at the same
// time on GPU 0, each told its share (RLSWEEP_GPU_MEMORY_FRACTION=0.25, and JAX's
// XLA_PYTHON_CLIENT_MEM_FRACTION=0.225); a whole-GPU trial is told 1 and JAX's default stays.
func TestTrainSegmentPacksFractionalTrials(t *testing.T) {
	quarter, whole := 0.25, 1.0
	runs := runShareTrials(t, []string{"0"}, []*float64{&quarter, &quarter, &quarter, &quarter})
	for _, r := range runs {
		if r.gpu != "0" || r.memory != "0.25" || r.xla != "0.225" {
			t.Errorf("trial %s: CUDA_VISIBLE_DEVICES=%s RLSWEEP_GPU_MEMORY_FRACTION=%s XLA_PYTHON_CLIENT_MEM_FRACTION=%s, want 0, 0.25, 0.225",
				r.trial, r.gpu, r.memory, r.xla)
		}
	}
	latestStart, earliestEnd := runs[0].start, runs[0].end
	for _, r := range runs {
		latestStart, earliestEnd = max(latestStart, r.start), min(earliestEnd, r.end)
	}
	if latestStart >= earliestEnd {
		t.Errorf("the four 0.25 trials did not all train at once on the one GPU: %+v", runs)
	}
	runs = runShareTrials(t, []string{"0"}, []*float64{&whole})
	if r := runs[0]; r.gpu != "0" || r.memory != "1" || r.xla != "-" {
		t.Errorf("a whole-GPU trial: CUDA_VISIBLE_DEVICES=%s RLSWEEP_GPU_MEMORY_FRACTION=%s XLA_PYTHON_CLIENT_MEM_FRACTION=%s, want 0, 1, unset",
			r.gpu, r.memory, r.xla)
	}
}

// runShareTrials runs one segment per entry of gpusOf at once on a worker with the given GPUs, under
// shareRecorder, and returns what the trials recorded.
func runShareTrials(t *testing.T, gpus []string, gpusOf []*float64) []shareRun {
	t.Helper()
	f := newFixture(t)
	slots, err := activities.NewSlots(gpus, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.acts.Slots = slots
	dir := t.TempDir()
	errs := make([]error, len(gpusOf))
	var wg sync.WaitGroup
	for i, n := range gpusOf {
		in := f.input(1000, nil)
		in.Trial.ID = fmt.Sprintf("%d-s1", i)
		in.Trial.Config = i
		in.GPUs = n
		in.Trainer.Command = shellTrainer(shareRecorder)
		in.Trainer.Environment["GPU_TEST_DIR"] = dir
		env := f.env(context.Background(), nil)
		wg.Go(func() { _, errs[i] = env.ExecuteActivity(f.acts.TrainSegment, in) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("trial %d-s1: %v", i, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []shareRun
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 6 {
			t.Fatalf("runs: line %q, want: trial gpu memory xla start end", line)
		}
		start, err1 := strconv.ParseInt(fs[4], 10, 64)
		end, err2 := strconv.ParseInt(fs[5], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("runs: line %q: times are not integers", line)
		}
		runs = append(runs, shareRun{trial: fs[0], gpu: fs[1], memory: fs[2], xla: fs[3], start: start, end: end})
	}
	if len(runs) != len(gpusOf) {
		t.Fatalf("%d trials recorded a run, want %d: %+v", len(runs), len(gpusOf), runs)
	}
	return runs
}

// The worker's or the spec's XLA_PYTHON_CLIENT_MEM_FRACTION wins over the one rlsweep sets for a share.
func TestXLAMemoryFractionYields(t *testing.T) {
	slots, err := activities.NewSlots([]string{"0"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := slots.Acquire(context.Background(), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got := activities.XLAMemoryEnv(l, nil); len(got) != 1 || got[0] != "XLA_PYTHON_CLIENT_MEM_FRACTION=0.45" {
		t.Errorf("0.5 of a GPU: %q, want XLA_PYTHON_CLIENT_MEM_FRACTION=0.45", got)
	}
	if got := activities.XLAMemoryEnv(l, map[string]string{"XLA_PYTHON_CLIENT_MEM_FRACTION": ".3"}); len(got) != 0 {
		t.Errorf("with trainer.environment setting it: %q, want nothing", got)
	}
	t.Setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", ".2")
	if got := activities.XLAMemoryEnv(l, nil); len(got) != 0 {
		t.Errorf("with the worker's environment setting it: %q, want nothing", got)
	}
}
