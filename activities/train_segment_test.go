package activities_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

const sweepID = "sweep/unit/abc123"

// fixture is a store, a work directory and the Activities that use them.
type fixture struct {
	t     testing.TB
	store *artifacts.Local
	acts  *activities.Activities
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	store, err := artifacts.NewLocal(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: store, acts: &activities.Activities{Store: store, WorkDir: t.TempDir(),
		PollInterval: 5 * time.Millisecond, FlushInterval: 50 * time.Millisecond}}
}

// input is a segment of trial 0-s1 of the scripted trainer from step 0 to stop; the crash marker the
// trainer leaves lives in a temporary directory of this test only.
func (f *fixture) input(stop int64, params map[string]any) activities.SegmentInput {
	return activities.SegmentInput{
		SweepID: sweepID,
		Trial:   sweeps.Trial{ID: "0-s1", Config: 0, Seed: 1, Params: params},
		Trainer: sweeps.Trainer{Command: []string{scriptedTrainer}, TotalSteps: 100000,
			Metrics:      sweeps.MetricsSource{Source: metrics.SourceJSONL},
			StallTimeout: 10 * time.Second, GracePeriod: 2 * time.Second,
			Environment: map[string]string{"TMPDIR": f.t.TempDir()}},
		Diagnostics: sweeps.Diagnostics{Enabled: true, Patience: 5},
		Metric:      "reward", Goal: "maximize",
		StopAtStep: stop,
	}
}

// env is a fresh activity environment with TrainSegment registered; ctx is the context every activity
// runs under, so cancelling it cancels the activity.
func (f *fixture) env(ctx context.Context, heartbeat *activities.Heartbeat) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	if heartbeat != nil {
		env.SetHeartbeatDetails(*heartbeat)
	}
	env.SetTestTimeout(20 * time.Second)
	env.RegisterActivity(f.acts.TrainSegment)
	return env
}

func (f *fixture) run(in activities.SegmentInput) (*activities.SegmentResult, error) {
	return f.runIn(f.env(context.Background(), nil), in)
}

func (f *fixture) runIn(env *testsuite.TestActivityEnvironment, in activities.SegmentInput) (*activities.SegmentResult, error) {
	f.t.Helper()
	v, err := env.ExecuteActivity(f.acts.TrainSegment, in)
	if err != nil {
		return nil, err
	}
	var res activities.SegmentResult
	if err := v.Get(&res); err != nil {
		f.t.Fatalf("decode result: %v", err)
	}
	return &res, nil
}

func (f *fixture) read(key string) string {
	f.t.Helper()
	rc, err := f.store.Get(context.Background(), key)
	if err != nil {
		f.t.Fatalf("stored %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// log returns the stored log of an attempt of trial 0-s1 (its parts, in order).
func (f *fixture) log(segment int, attempt int32) string {
	f.t.Helper()
	var b strings.Builder
	if err := artifacts.ReadLog(context.Background(), f.store, sweepID, "0-s1", segment, attempt, &b); err != nil {
		f.t.Fatalf("stored log of segment %d attempt %d: %v", segment, attempt, err)
	}
	return b.String()
}

// metrics returns the trial's stored metrics stream (its merged parts) as JSON lines.
func (f *fixture) metrics() string {
	f.t.Helper()
	var b strings.Builder
	if err := artifacts.CopyMetrics(context.Background(), f.store, sweepID, "0-s1", metrics.LineStep, &b); err != nil {
		f.t.Fatalf("stored metrics: %v", err)
	}
	return b.String()
}

// storedSteps returns the steps of the stored metrics stream in order, failing on a malformed line.
func (f *fixture) storedSteps() []int64 {
	f.t.Helper()
	var steps []int64
	sc := bufio.NewScanner(strings.NewReader(f.metrics()))
	for sc.Scan() {
		rec, err := metrics.ParseJSONLine(sc.Bytes())
		if err != nil {
			f.t.Fatalf("stored metrics line %q: %v", sc.Text(), err)
		}
		steps = append(steps, rec.Step)
	}
	return steps
}

// stepsRange is from, from+by, ..., to.
func stepsRange(from, to, by int64) []int64 {
	var out []int64
	for s := from; s <= to; s += by {
		out = append(out, s)
	}
	return out
}

// appError asserts err is an ApplicationError of type typ and returns it.
func appError(t *testing.T, err error, typ string) *temporal.ApplicationError {
	t.Helper()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want an ApplicationError of type %s", err, typ)
	}
	if ae.Type() != typ {
		t.Fatalf("error type = %q (%v), want %q", ae.Type(), err, typ)
	}
	return ae
}

// watchPID waits, in the background, for the scripted trainer's pid file in dir and returns a function
// that gives the pid it saw (failing the test if there was none).
func watchPID(t *testing.T, dir string) func() int {
	t.Helper()
	got := make(chan int, 1)
	stop := make(chan struct{})
	go func() {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "0-s1.pid")); err == nil {
				if pid, err := strconv.Atoi(string(b)); err == nil && pid > 0 {
					got <- pid
					return
				}
			}
			select {
			case <-stop:
				got <- 0
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() int {
		t.Helper()
		close(stop)
		pid := <-got
		if pid == 0 {
			t.Fatal("the trainer never wrote its pid file")
		}
		return pid
	}
}

// alive reports whether the process exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func TestTrainSegmentHealthy(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(f.input(10000, map[string]any{"checkpoint_every": 4.0}))
	if err != nil {
		t.Fatalf("TrainSegment: %v", err)
	}
	if res.LastStep != 10000 || res.Records != 10 || res.Malformed != 0 {
		t.Errorf("LastStep, Records, Malformed = %d, %d, %d, want 10000, 10, 0", res.LastStep, res.Records, res.Malformed)
	}
	if res.Objective == nil || *res.Objective <= 0 || *res.Objective != res.Last["reward"] {
		t.Errorf("Objective = %v, want the last reward %v", res.Objective, res.Last["reward"])
	}
	if want := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-10000.json"); res.CheckpointKey != want {
		t.Errorf("CheckpointKey = %q, want %q", res.CheckpointKey, want)
	}
	if got := f.read(res.CheckpointKey); got != `{"Step":10000}` {
		t.Errorf("stored checkpoint = %q, want the trainer's file", got)
	}
	keys, err := f.store.List(context.Background(), artifacts.CheckpointKey(sweepID, "0-s1", ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 { // 4000, 8000, 10000
		t.Errorf("stored checkpoints = %q, want 3", keys)
	}
	if got, want := f.storedSteps(), stepsRange(1000, 10000, 1000); !slices.Equal(got, want) {
		t.Errorf("stored metrics steps = %v, want %v", got, want)
	}
	if res.MetricsKey != artifacts.MetricsDir(sweepID, "0-s1") {
		t.Errorf("MetricsKey = %q", res.MetricsKey)
	}
	if want := artifacts.LogDir(sweepID, "0-s1", 0, 1); res.LogKey != want {
		t.Errorf("LogKey = %q, want %q", res.LogKey, want)
	}
	if log := f.log(0, 1); !strings.Contains(log, "scripted-trainer 0-s1: from step 0 to 10000") {
		t.Errorf("stored log = %q, want the trainer's output", log)
	}
	if res.DumpKey != "" || res.ResumedFrom != "" {
		t.Errorf("DumpKey, ResumedFrom = %q, %q, want none", res.DumpKey, res.ResumedFrom)
	}
	if res.MetricMissing != nil {
		t.Errorf("MetricMissing = %q, want nil: every record carries reward", res.MetricMissing)
	}
	// The windowed objective: the mean reward of the records in the last tenth of the steps (9000
	// and 10000).
	var window []float64
	sc := bufio.NewScanner(strings.NewReader(f.metrics()))
	for sc.Scan() {
		if rec, err := metrics.ParseJSONLine(sc.Bytes()); err == nil && rec.Step >= 9000 {
			window = append(window, rec.Values["reward"])
		}
	}
	if len(window) != 2 || res.Windowed == nil || *res.Windowed != (window[0]+window[1])/2 {
		t.Errorf("Windowed = %v, want the mean of %v", res.Windowed, window)
	}
}

// A segment whose records never carry the objective's metric says so, with the names they carry.
func TestTrainSegmentMetricMissing(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, nil)
	in.Metric = "rewrd"
	res, err := f.run(in)
	if err != nil {
		t.Fatalf("TrainSegment: %v", err)
	}
	if res.Objective != nil || !slices.Contains(res.MetricMissing, "reward") || !slices.Contains(res.MetricMissing, "value_loss") ||
		!slices.IsSorted(res.MetricMissing) {
		t.Errorf("Objective, MetricMissing = %v, %q; want none and the sorted names the records carry, reward among them", res.Objective, res.MetricMissing)
	}
	w := results.MissingMetricWarning("rewrd", 0, res.MetricMissing)
	if !strings.Contains(w, `metric "rewrd": no record of segment 0 carries it`) || !strings.Contains(w, "reward, ") {
		t.Errorf("warning = %q, want the metric, the segment and the names written", w)
	}
}

// echo is what testdata/argv-echo writes.
type echo struct {
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	WandBConfig string            `json:"wandb_config"`
}

// A trial of a W&B sweep config finds its run config where W&B's agent puts it, so wandb.config
// holds its parameters: WANDB_SWEEP_PARAM_PATH names the file (as sweeps.WandBConfigYAML writes it),
// WANDB_DIR is the attempt's scratch directory, and without W&B credentials WANDB_MODE is offline;
// with WANDB_API_KEY in the worker's environment it is left to W&B. An rlsweep spec gets none of it.
func TestTrainSegmentWandBRunConfig(t *testing.T) {
	for _, c := range []struct {
		name, apiKey, mode string
		wandb              bool
	}{{"no credentials", "", "offline", true}, {"API key", "k", "", true}, {"rlsweep spec", "", "", false}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			out := filepath.Join(t.TempDir(), "argv.json")
			in := f.input(7000, map[string]any{"argv_file": out, "lr": 1e-5, "opt.name": "adam"})
			in.Trainer.Command = []string{argvEcho}
			if c.wandb {
				in.Trainer.WandBConfig = []string{"argv_file", "lr", "opt/name"}
			}
			if c.apiKey != "" {
				t.Setenv("WANDB_API_KEY", c.apiKey)
			}
			f.acts.Slots = nil
			if _, err := f.run(in); err != nil {
				t.Fatalf("TrainSegment: %v", err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var e echo
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatal(err)
			}
			if !c.wandb {
				if len(e.Env["WANDB_SWEEP_PARAM_PATH"]+e.Env["WANDB_MODE"]+e.WandBConfig) > 0 {
					t.Errorf("an rlsweep spec's trainer got W&B's run config: %+v", e)
				}
				return
			}
			want := "wandb_version: 1\n\n\"argv_file\": {value: " + strconv.Quote(out) + "}\n\"lr\": {value: 1.0e-05}\n\"opt\": {value: {\"name\": \"adam\"}}\n"
			if e.WandBConfig != want {
				t.Errorf("run config =\n%s\nwant\n%s", e.WandBConfig, want)
			}
			if p := e.Env["WANDB_SWEEP_PARAM_PATH"]; !strings.HasPrefix(p, f.acts.WorkDir) || filepath.Dir(p) != e.Env["WANDB_DIR"] {
				t.Errorf("WANDB_SWEEP_PARAM_PATH %q, WANDB_DIR %q: want the attempt's scratch directory", p, e.Env["WANDB_DIR"])
			}
			if e.Env["WANDB_MODE"] != c.mode {
				t.Errorf("WANDB_MODE = %q, want %q", e.Env["WANDB_MODE"], c.mode)
			}
		})
	}
}

func TestTrainSegmentArgvAndEnvironment(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "argv.json")
	hostile := `a b; rm -rf / && echo "x" $(id) 'q'`
	in := f.input(7000, map[string]any{"argv_file": out, "x": hostile, "lr": 3e-4, "n": int64(4)})
	in.Trainer.Command = []string{argvEcho, "--x={{.Params.x}}", "{{.Params.x}}", "--lr", "{{.Params.lr}}",
		"--n={{.Params.n}}", "{{.TrialID}}", "{{.StopAtStep}}"}
	t.Setenv("RLSWEEP_TRIAL_ID", "leaked-from-worker")
	t.Setenv("RLSWEEP_STRAY", "leaked")
	t.Setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
	t.Setenv("TEMPORAL_API_KEY", "worker-credential") // the worker's, never a trainer's
	t.Setenv("TEMPORAL_TLS_CLIENT_KEY_DATA", "worker-credential")
	f.acts.Slots = nil
	res, err := f.run(in)
	if err != nil {
		t.Fatalf("TrainSegment: %v", err)
	}
	if res.LastStep != 7000 || res.Records != 1 {
		t.Errorf("LastStep, Records = %d, %d, want 7000, 1", res.LastStep, res.Records)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	want := []string{argvEcho, "--x=" + hostile, hostile, "--lr", "0.0003", "--n=4", "0-s1", "7000"}
	if !slices.Equal(e.Args, want) {
		t.Errorf("argv = %q, want %q", e.Args, want)
	}
	var params map[string]any
	if err := json.Unmarshal([]byte(e.Env["RLSWEEP_PARAMS"]), &params); err != nil {
		t.Fatalf("RLSWEEP_PARAMS %q: %v", e.Env["RLSWEEP_PARAMS"], err)
	}
	if params["x"] != hostile || params["lr"] != 3e-4 || params["n"] != 4.0 || params["argv_file"] != out {
		t.Errorf("RLSWEEP_PARAMS = %v, want the trial's parameters", params)
	}
	for k, v := range map[string]string{"RLSWEEP_SWEEP_ID": sweepID, "RLSWEEP_TRIAL_ID": "0-s1",
		"RLSWEEP_SEED": "1", "RLSWEEP_STOP_AT_STEP": "7000", "RLSWEEP_TOTAL_STEPS": "100000",
		"CUDA_VISIBLE_DEVICES": ""} {
		if got, ok := e.Env[k]; !ok || got != v {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	for _, k := range []string{"RLSWEEP_STRAY", "RLSWEEP_RESUME_FROM", "TEMPORAL_API_KEY", "TEMPORAL_TLS_CLIENT_KEY_DATA"} {
		if v, ok := e.Env[k]; ok {
			t.Errorf("%s = %q reached the trainer, want it unset", k, v)
		}
	}
	for _, k := range []string{"RLSWEEP_METRICS_FILE", "RLSWEEP_CHECKPOINT_DIR", "RLSWEEP_TB_DIR"} {
		if !filepath.IsAbs(e.Env[k]) || !strings.HasPrefix(e.Env[k], f.acts.WorkDir) {
			t.Errorf("%s = %q, want a path in the work directory %s", k, e.Env[k], f.acts.WorkDir)
		}
	}
}

func TestTrainSegmentGPUSlot(t *testing.T) {
	f := newFixture(t)
	slots, err := activities.NewSlots([]string{"7"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.acts.Slots = slots
	out := filepath.Join(t.TempDir(), "argv.json")
	in := f.input(1000, map[string]any{"argv_file": out})
	in.Trainer.Command = []string{argvEcho}
	for i := 0; i < 2; i++ { // the second run needs the slot the first gave back
		if _, err := f.run(in); err != nil {
			t.Fatalf("TrainSegment %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if got := e.Env["CUDA_VISIBLE_DEVICES"]; got != "7" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want the slot's GPU 7", got)
	}
}

func TestTrainSegmentBadTemplate(t *testing.T) {
	f := newFixture(t)
	in := f.input(1000, nil)
	in.Trainer.Command = []string{scriptedTrainer, "{{.Params.missing}}"}
	_, err := f.run(in)
	if ae := appError(t, err, activities.ErrInvalidSpec); !ae.NonRetryable() {
		t.Errorf("InvalidSpec error is retryable, want non-retryable")
	}
}

func TestTrainSegmentCrash(t *testing.T) {
	f := newFixture(t)
	_, err := f.run(f.input(10000, map[string]any{"crash_at": 3000.0}))
	ae := appError(t, err, activities.ErrTrainerCrashed)
	if ae.NonRetryable() {
		t.Errorf("a crash is non-retryable, want it retried")
	}
	for _, want := range []string{"crashing on purpose at step 3000", "status 3"} {
		if !strings.Contains(ae.Error(), want) {
			t.Errorf("crash error %q lacks %q (the log tail)", ae.Error(), want)
		}
	}
	if got, want := f.storedSteps(), []int64{1000, 2000}; !slices.Equal(got, want) {
		t.Errorf("stored metrics steps after the crash = %v, want %v", got, want)
	}
}

func TestTrainSegmentDiverged(t *testing.T) {
	tests := []struct {
		name  string
		fault float64
		rule  string
		value func(float64) bool
	}{
		{"nan", 1, diagnostics.RuleNonFinite, func(v float64) bool { return v != v }},
		{"grad", 3, diagnostics.RuleGradExplosion, func(v float64) bool { return v == 1e5 }},
		{"std", 2, diagnostics.RuleStdNonPositive, func(v float64) bool { return v == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			pidDir := t.TempDir()
			pid := watchPID(t, pidDir)
			in := f.input(200000, map[string]any{"fault": tt.fault, "fault_at": 5000.0, "checkpoint_every": 2.0,
				"sleep_ms": 10.0, "pid_dir": pidDir})
			in.Trainer.GracePeriod = 500 * time.Millisecond
			start := time.Now()
			_, err := f.run(in)
			ae := appError(t, err, activities.ErrTrialDiverged)
			if !ae.NonRetryable() {
				t.Errorf("TrialDiverged is retryable, want non-retryable")
			}
			if p := pid(); alive(p) {
				t.Errorf("trainer %d still runs after the divergence", p)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("segment took %s, want it stopped at step 5000 of 200000", d)
			}
			var det activities.DivergedDetails
			if err := ae.Details(&det); err != nil {
				t.Fatalf("DivergedDetails: %v", err)
			}
			if det.Rule != tt.rule || det.Verdict.Step != 5000 || !tt.value(det.Verdict.Value) {
				t.Errorf("details = rule %q step %d value %v, want %q at step 5000", det.Rule, det.Verdict.Step, det.Verdict.Value, tt.rule)
			}
			if want := artifacts.DivergenceKey(sweepID, "0-s1"); det.DumpKey != want {
				t.Errorf("DumpKey = %q, want %q", det.DumpKey, want)
			}
			var dump sweepstore.Divergence
			if err := json.Unmarshal([]byte(f.read(det.DumpKey)), &dump); err != nil {
				t.Fatalf("divergence.json: %v", err)
			}
			if dump.Verdict.Rule != tt.rule || dump.Verdict.Step != 5000 || dump.TrialID != "0-s1" || dump.SweepID != sweepID {
				t.Errorf("dump verdict = %+v, want %s at 5000 for %s", dump.Verdict, tt.rule, sweepID)
			}
			var steps []int64
			for _, raw := range dump.Records {
				var line string
				if err := json.Unmarshal(raw, &line); err != nil {
					t.Fatalf("dump record %s: %v", raw, err)
				}
				rec, err := metrics.ParseJSONLine([]byte(line))
				if err != nil {
					t.Fatalf("dump record %q: %v", line, err)
				}
				steps = append(steps, rec.Step)
			}
			if want := stepsRange(1000, 5000, 1000); !slices.Equal(steps, want) {
				t.Errorf("dump records at steps %v, want %v", steps, want)
			}
			if !strings.Contains(dump.LogTail, "scripted-trainer 0-s1") {
				t.Errorf("dump log tail = %q, want the trainer's output", dump.LogTail)
			}
			if want := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-4000.json"); dump.LastHealthyCkpt != want || dump.LastHealthyStep != 4000 {
				t.Errorf("last healthy checkpoint = %q at %d, want %q at 4000", dump.LastHealthyCkpt, dump.LastHealthyStep, want)
			}
			if got := f.storedSteps(); !slices.Equal(got, stepsRange(1000, 5000, 1000)) {
				t.Errorf("stored metrics steps = %v, want 1000..5000", got)
			}
		})
	}
}

func TestTrainSegmentStalled(t *testing.T) {
	f := newFixture(t)
	pidDir := t.TempDir()
	pid := watchPID(t, pidDir)
	in := f.input(100000, map[string]any{"hang_at": 3000.0, "pid_dir": pidDir})
	in.Trainer.StallTimeout = time.Second
	in.Trainer.GracePeriod = 200 * time.Millisecond
	start := time.Now()
	_, err := f.run(in)
	ae := appError(t, err, activities.ErrTrialStalled)
	if ae.NonRetryable() {
		t.Errorf("TrialStalled is non-retryable, want it retried")
	}
	if d := time.Since(start); d < time.Second || d > 6*time.Second {
		t.Errorf("stall detected after %s, want about the 1s stall timeout", d)
	}
	if !strings.Contains(ae.Error(), "hanging on purpose at step 3000") {
		t.Errorf("stall error %q lacks the log tail", ae.Error())
	}
	if p := pid(); alive(p) {
		t.Errorf("stalled trainer %d still runs", p)
	}
	if got := f.storedSteps(); !slices.Equal(got, []int64{1000, 2000}) {
		t.Errorf("stored metrics steps = %v, want 1000, 2000", got)
	}
}

// The stalled rule set to off disables the stall timeout.
func TestTrainSegmentStallRuleOff(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, map[string]any{"sleep_ms": 150.0})
	in.Trainer.StallTimeout = 50 * time.Millisecond
	in.Diagnostics.Rules = map[string]sweeps.RuleOverride{diagnostics.RuleStalled: {Level: "off"}}
	if _, err := f.run(in); err != nil {
		t.Fatalf("TrainSegment with the stalled rule off: %v", err)
	}
	in.Diagnostics.Rules = nil
	_, err := f.run(in)
	appError(t, err, activities.ErrTrialStalled)
}

// Cancelling the activity stops a trainer that ignores SIGTERM: SIGKILL after the grace period.
func TestTrainSegmentCancelIgnoringSIGTERM(t *testing.T) {
	f := newFixture(t)
	pidDir := t.TempDir()
	pid := watchPID(t, pidDir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := f.env(ctx, nil)
	in := f.input(10000000, map[string]any{"ignore_term": 1.0, "pid_dir": pidDir, "sleep_ms": 5.0})
	const grace = 300 * time.Millisecond
	in.Trainer.GracePeriod = grace
	cancelledAt := make(chan time.Time, 1)
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(pidDir, "0-s1.pid")); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cancelledAt <- time.Now()
		cancel()
	}()
	_, err := f.runIn(env, in)
	took := time.Since(<-cancelledAt)
	if err == nil {
		t.Fatal("cancelled TrainSegment returned no error")
	}
	// The test environment reports the activity's ctx.Err() as a plain failure, not a server cancel.
	var ce *temporal.CanceledError
	if !errors.As(err, &ce) && !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("error = %v, want a cancellation", err)
	}
	// SIGKILL is delivered asynchronously: the killed trainer may take a moment to be gone.
	p := pid()
	for deadline := time.Now().Add(2 * time.Second); alive(p) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(p) {
		t.Errorf("trainer %d ignoring SIGTERM still runs 2 s after the activity returned", p)
	}
	if took < grace || took > grace+3*time.Second {
		t.Errorf("activity returned %s after cancel, want just after the %s grace period", took, grace)
	}
	if steps := f.storedSteps(); len(steps) == 0 {
		t.Errorf("no metrics stored on cancellation, want the records so far")
	}
}

// A second segment resumes from a stored checkpoint and reports again steps already stored: the stored
// metrics hold every step once, in order.
func TestTrainSegmentResumeIsIdempotent(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(f.input(10000, map[string]any{"checkpoint_every": 3.0}))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.storedSteps(); !slices.Equal(got, stepsRange(1000, 10000, 1000)) {
		t.Fatalf("first segment stored steps %v", got)
	}
	ckpt := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-6000.json")
	if f.read(ckpt) == "" {
		t.Fatalf("no checkpoint at 6000 (last %s)", res.CheckpointKey)
	}
	in := f.input(15000, map[string]any{"checkpoint_every": 3.0})
	in.Segment, in.StartStep, in.ResumeFrom = 1, 6000, ckpt
	res, err = f.run(in)
	if err != nil {
		t.Fatalf("resumed segment: %v", err)
	}
	if res.ResumedFrom != ckpt || res.LastStep != 15000 || res.Records != 9 {
		t.Errorf("ResumedFrom, LastStep, Records = %q, %d, %d, want %q, 15000, 9", res.ResumedFrom, res.LastStep, res.Records, ckpt)
	}
	if got, want := f.storedSteps(), stepsRange(1000, 15000, 1000); !slices.Equal(got, want) {
		t.Errorf("stored steps after resuming = %v, want %v", got, want)
	}
	if log := f.log(1, 1); !strings.Contains(log, "from step 6000 to 15000") {
		t.Errorf("segment 1 log = %q, want the resumed trainer's", log)
	}
}

// A crashed attempt is retried with its last heartbeat: it resumes from the last uploaded checkpoint,
// and the stored metrics hold every step once.
func TestTrainSegmentRetryResumesFromHeartbeat(t *testing.T) {
	f := newFixture(t)
	in := f.input(10000, map[string]any{"crash_at": 6000.0, "checkpoint_every": 2.0})
	_, err := f.run(in)
	hb := crashHeartbeat(t, err)
	want := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-4000.json")
	if hb.CheckpointKey != want || hb.CheckpointStep != 4000 || hb.Step != 5000 {
		t.Errorf("heartbeat = %+v, want checkpoint %s at 4000, step 5000", hb, want)
	}
	res, err := f.runIn(f.env(context.Background(), &hb), in) // crash_at fires once per trial
	if err != nil {
		t.Fatalf("retried attempt: %v", err)
	}
	if res.ResumedFrom != want {
		t.Errorf("ResumedFrom = %q, want %q", res.ResumedFrom, want)
	}
	if got, want := f.storedSteps(), stepsRange(1000, 10000, 1000); !slices.Equal(got, want) {
		t.Errorf("stored steps after the retry = %v, want %v", got, want)
	}
}

// crashHeartbeat checks that err is a trainer crash and returns the heartbeat it carries, which the
// retry resumes with.
func crashHeartbeat(t *testing.T, err error) activities.Heartbeat {
	t.Helper()
	var hb activities.Heartbeat
	if err := appError(t, err, activities.ErrTrainerCrashed).Details(&hb); err != nil {
		t.Fatalf("crash details: %v", err)
	}
	return hb
}

// shellTrainer is a trainer command: a /bin/sh script run in the segment's directory, with the
// contract's variables in its environment.
func shellTrainer(script string) []string { return []string{"/bin/sh", "-c", script} }

// The log tail in a crash message is valid UTF-8 (a protobuf string) even when the cut falls inside a
// character and the trainer printed raw bytes.
func TestTrainSegmentCrashLogTailIsUTF8(t *testing.T) {
	f := newFixture(t)
	in := f.input(1000, nil)
	// 1500 two-byte characters, a raw 0xff, then "x": the 2048-byte tail starts inside a character.
	in.Trainer.Command = shellTrainer(`i=0; while [ $i -lt 1500 ]; do printf '\303\251'; i=$((i+1)); done; printf '\377x'; exit 3`)
	_, err := f.run(in)
	ae := appError(t, err, activities.ErrTrainerCrashed)
	if !utf8.ValidString(ae.Error()) {
		t.Errorf("crash message is not valid UTF-8: %q", ae.Error()[:80])
	}
	if !strings.Contains(ae.Error(), "é\uFFFDx") {
		t.Errorf("crash message lacks the log tail")
	}
}

// A custom metric whose name holds a DEL byte must not keep the divergence dump from being written: the
// trial still ends TrialDiverged, never as a retryable encoding error.
func TestTrainSegmentDivergedOddMetricName(t *testing.T) {
	f := newFixture(t)
	in := f.input(2000, nil)
	in.Trainer.Command = shellTrainer(`printf '{"step":1000,"reward":1,"a\177b":1}\n{"step":2000,"value_loss":NaN,"a\177b":2}\n' >> "$RLSWEEP_METRICS_FILE"`)
	_, err := f.run(in)
	ae := appError(t, err, activities.ErrTrialDiverged)
	var det activities.DivergedDetails
	if err := ae.Details(&det); err != nil || det.Rule != diagnostics.RuleNonFinite {
		t.Fatalf("details = %+v, %v, want non_finite", det, err)
	}
	var dump sweepstore.Divergence
	if err := json.Unmarshal([]byte(f.read(det.DumpKey)), &dump); err != nil {
		t.Fatalf("divergence.json: %v", err)
	}
	if len(dump.Records) != 2 {
		t.Errorf("dump holds %d records, want 2", len(dump.Records))
	}
}

// The checkpoint a trainer writes on SIGTERM when its segment is cancelled is uploaded, so a later
// attempt can resume from it.
func TestTrainSegmentCancelKeepsFinalCheckpoint(t *testing.T) {
	f := newFixture(t)
	pidDir := t.TempDir()
	pid := watchPID(t, pidDir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := f.input(10000000, map[string]any{"checkpoint_every": 0.0, "pid_dir": pidDir, "sleep_ms": 5.0})
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(pidDir, "0-s1.pid")); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	if _, err := f.runIn(f.env(ctx, nil), in); err == nil {
		t.Fatal("cancelled TrainSegment returned no error")
	}
	if p := pid(); alive(p) {
		t.Errorf("trainer %d still runs", p)
	}
	steps := f.storedSteps()
	if len(steps) == 0 {
		t.Fatal("no metrics stored on cancellation")
	}
	last := steps[len(steps)-1]
	keys, err := f.store.List(context.Background(), artifacts.CheckpointKey(sweepID, "0-s1", ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !strings.HasSuffix(keys[0], "/ckpt-"+strconv.FormatInt(last, 10)+".json") {
		t.Errorf("stored checkpoints = %q, want the one written on SIGTERM at step %d", keys, last)
	}
}

// A trainer that exits, normally or by crashing, leaves nothing running: whatever it started in its
// process group (a data loader, a stray subprocess holding the GPU) is killed when it exits.
func TestTrainSegmentKillsWhatTheTrainerLeftBehind(t *testing.T) {
	for _, exit := range []int{0, 3} {
		t.Run(fmt.Sprint("exit ", exit), func(t *testing.T) {
			f := newFixture(t)
			in := f.input(1000, nil)
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			// The child writes its PID as seen from outside the trainer's PID namespace ($! is the PID
			// inside; the builtin read opens /proc/self in the subshell itself, which then becomes sleep).
			in.Trainer.Command = shellTrainer(fmt.Sprintf(`(read -r p _ < /proc/self/stat; echo $p > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 300) &
while [ ! -e %[1]s ]; do sleep 0.01; done
printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"; exit %[2]d`, pidFile, exit))
			_, _ = f.run(in)
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("the trainer's child %d outlived the segment", pid)
			}
		})
	}
}

// listFails is a store whose listings under prefix fail (an S3 outage, say); everything else works.
type listFails struct {
	artifacts.Store
	prefix string
}

func (s listFails) List(ctx context.Context, prefix string) ([]string, error) {
	if strings.HasPrefix(prefix, s.prefix) {
		return nil, errors.New("store unavailable")
	}
	return s.Store.List(ctx, prefix)
}

// A segment that cannot read the trial's stored metrics, which its diagnostics must judge its records
// against, fails to be retried; it does not pass for a segment whose records were never judged. The
// trainer exits before the next poll, as most do, so the records are taken in on the exit path.
func TestTrainSegmentUnreadableStoredMetricsFailsTheAttempt(t *testing.T) {
	f := newFixture(t)
	f.acts.PollInterval = time.Hour // only the exit path reads the metrics
	dir := artifacts.MetricsDir(sweepID, "0-s1")
	f.acts.Store = listFails{f.store, dir}
	in := f.input(1000, nil)
	in.Trainer.Command = shellTrainer(`printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`)
	res, err := f.run(in)
	var app *temporal.ApplicationError
	if err == nil || (errors.As(err, &app) && app.NonRetryable()) {
		t.Fatalf("TrainSegment = %+v, %v; want a retryable error", res, err)
	}
	if keys, err := f.store.List(context.Background(), dir); err != nil || len(keys) > 0 {
		t.Errorf("metrics stored (%q, %v) from an attempt that could not read the stored lines", keys, err)
	}
}

// While a trainer takes its grace period to stop, the segment keeps heartbeating, so a grace period as
// long as the heartbeat timeout cannot make the server time the attempt out and retry a diverged trial.
func TestTrainSegmentHeartbeatsWhileTheTrainerStops(t *testing.T) {
	f := newFixture(t)
	in := f.input(2000, nil)
	in.Trainer.GracePeriod = 3 * time.Second
	// Ignores SIGTERM, writes a NaN at once (non_finite stops at the first poll), then waits.
	in.Trainer.Command = shellTrainer(`trap '' TERM; printf '{"step":1000,"value_loss":NaN}\n' >> "$RLSWEEP_METRICS_FILE"; sleep 30`)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(f.acts.TrainSegment)
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		// Heartbeats every second (sweeps.HeartbeatInterval of 7 s and 3 s).
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			HeartbeatTimeout: 7 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, f.acts.TrainSegment, in).Get(ctx, nil)
	})
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != activities.ErrTrialDiverged {
		t.Fatalf("segment ended with %v, want %s", err, activities.ErrTrialDiverged)
	}
	// The stop took the 3 s grace period; the verdict came before any periodic heartbeat.
	if n := beats.Load(); n < 2 {
		t.Errorf("%d heartbeats while the trainer took its 3 s grace period to stop, want at least 2", n)
	}
}

// A retry that resumes from the checkpoint an earlier attempt uploaded at the segment's end (the
// trainer then crashed on its way out, or its worker died) writes no record: its result still names
// that checkpoint, its step and the last stored objective, so the next segment resumes from there and
// the trial does not end with 0 steps and no objective.
func TestTrainSegmentRetryAtTheSegmentsEnd(t *testing.T) {
	f := newFixture(t)
	in := f.input(4000, nil)
	// Records 1000–4000, a checkpoint at 4000, then a crash on the way out.
	in.Trainer.Command = shellTrainer(`for s in 1000 2000 3000; do printf '{"step":%d,"reward":%d}\n' $s $((s/1000)) >> "$RLSWEEP_METRICS_FILE"; done
echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-4000.json"
printf '{"step":4000,"reward":4.5,"checkpoint":"ckpt-4000.json"}\n' >> "$RLSWEEP_METRICS_FILE"; exit 3`)
	_, err := f.run(in)
	hb := crashHeartbeat(t, err)
	want := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-4000.json")
	if hb.CheckpointKey != want || hb.CheckpointStep != 4000 {
		t.Fatalf("heartbeat = %+v, want checkpoint %s at 4000", hb, want)
	}
	stored := f.metrics()
	last, err := metrics.ParseJSONLine([]byte(stored[strings.LastIndex(strings.TrimSuffix(stored, "\n"), "\n")+1:]))
	if err != nil || last.Step != 4000 {
		t.Fatalf("last stored line = %+v, %v; want step 4000", last, err)
	}
	in.Trainer.Command = shellTrainer(`exit 0`) // resumes at StopAtStep: nothing left to train
	res, err := f.runIn(f.env(context.Background(), &hb), in)
	if err != nil {
		t.Fatalf("retried attempt: %v", err)
	}
	if res.CheckpointKey != want || res.LastStep != 4000 || res.Records != 0 {
		t.Errorf("result = checkpoint %q, step %d, %d records; want %s, 4000, 0", res.CheckpointKey, res.LastStep, res.Records, want)
	}
	if res.Objective == nil || *res.Objective != last.Values["reward"] || res.Last["reward"] != last.Values["reward"] {
		t.Errorf("objective %v, last %v; want the stored reward at 4000, %g", res.Objective, res.Last, last.Values["reward"])
	}
	if got, want := f.storedSteps(), stepsRange(1000, 4000, 1000); !slices.Equal(got, want) {
		t.Errorf("stored steps after the retry = %v, want %v", got, want)
	}
}

// A resumed trainer that re-announces the checkpoint it resumed from, in a record with no metrics,
// leaves the stored line of that step as it was instead of replacing it with an empty one.
func TestTrainSegmentResumedReannouncedCheckpointKeepsTheStoredStep(t *testing.T) {
	f := newFixture(t)
	in := f.input(4000, nil)
	in.Trainer.Command = shellTrainer(`for s in 1000 2000; do printf '{"step":%d,"reward":%d}\n' $s $((s/1000)) >> "$RLSWEEP_METRICS_FILE"; done
echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-2000.json"
printf '{"step":2000,"checkpoint":"ckpt-2000.json"}\n' >> "$RLSWEEP_METRICS_FILE"; exit 3`)
	_, err := f.run(in)
	hb := crashHeartbeat(t, err)
	if hb.CheckpointStep != 2000 {
		t.Fatalf("crash details %+v; want a checkpoint at 2000", hb)
	}
	// The retry announces its resume checkpoint again, without metrics, then trains on.
	in.Trainer.Command = shellTrainer(`echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-2000.json"
printf '{"step":2000,"checkpoint":"ckpt-2000.json"}\n{"step":3000,"reward":3}\n{"step":4000,"reward":4}\n' >> "$RLSWEEP_METRICS_FILE"`)
	if _, err := f.runIn(f.env(context.Background(), &hb), in); err != nil {
		t.Fatalf("retried attempt: %v", err)
	}
	stored := f.metrics()
	for i, line := range strings.Split(strings.TrimSuffix(stored, "\n"), "\n") {
		rec, err := metrics.ParseJSONLine([]byte(line))
		if err != nil || rec.Step != int64(1000*(i+1)) || rec.Values["reward"] != float64(i+1) {
			t.Errorf("stored line %d = %q, want step %d with reward %d", i, line, 1000*(i+1), i+1)
		}
	}
}

// A trainer that finishes its iteration past its stop step leaves the next segment a checkpoint beyond
// that segment's end: the segment trains nothing (the trainer only re-announces the checkpoint), and its
// result still carries the step, the checkpoint and the objective stored for that step, which the
// re-announcement must not blank.
func TestTrainSegmentResumePastTheSegmentsEnd(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ckpt := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-3000.json")
	metrics := artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0)
	stored := "{\"step\":1000,\"reward\":1}\n{\"step\":2000,\"reward\":2}\n{\"step\":3000,\"reward\":3}\n"
	for key, body := range map[string]string{ckpt: "ckpt", metrics: stored} {
		if err := f.store.Put(ctx, key, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	// Segment 1 stopped at 2500 but ended its iteration at 3000; segment 2 is 2500–2800.
	in := f.input(2800, nil)
	in.Segment, in.StartStep, in.ResumeFrom, in.ResumeStep = 1, 2500, ckpt, 3000
	in.Trainer.Command = shellTrainer(`cp "$RLSWEEP_RESUME_FROM" "$RLSWEEP_CHECKPOINT_DIR/ckpt-3000.json"
printf '{"step":3000,"checkpoint":"ckpt-3000.json"}\n' >> "$RLSWEEP_METRICS_FILE"`)
	res, err := f.run(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.LastStep != 3000 || res.CheckpointKey != ckpt || res.Objective == nil || *res.Objective != 3 {
		t.Errorf("result = step %d, checkpoint %q, objective %v; want 3000, %s, 3", res.LastStep, res.CheckpointKey, res.Objective, ckpt)
	}
	if got := f.read(metrics); got != stored {
		t.Errorf("stored metrics = %q, want them unchanged %q", got, stored)
	}
}

// At worker shutdown (Ctrl-C on `rlsweep worker` or `dev`) the trainer is stopped with SIGTERM and
// keeps its grace period: the checkpoint it writes on the way out is stored and named in the error,
// a retryable WorkerStopping, so the next attempt resumes from it. Before, the process exited at
// once and its trainers were killed mid-checkpoint.
func TestTrainSegmentWorkerShutdownLetsTheTrainerCheckpoint(t *testing.T) {
	f := newFixture(t)
	in := f.input(100000, nil)
	done := filepath.Join(t.TempDir(), "checkpointed")
	in.Trainer.Environment["DONE"] = done
	in.Trainer.Command = shellTrainer(`trap 'sleep 1; echo ckpt > "$RLSWEEP_CHECKPOINT_DIR/ckpt-2000.json"
printf "{\"step\":2000,\"reward\":2,\"checkpoint\":\"ckpt-2000.json\"}\n" >> "$RLSWEEP_METRICS_FILE"; touch "$DONE"; exit 0' TERM
printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"
while :; do sleep 0.1; done`)
	env := f.env(context.Background(), nil)
	stop := make(chan struct{})
	env.SetWorkerStopChannel(stop)
	go func() {
		time.Sleep(700 * time.Millisecond)
		close(stop)
	}()
	_, err := env.ExecuteActivity(f.acts.TrainSegment, in)
	var hb activities.Heartbeat
	if err := appError(t, err, activities.ErrWorkerStopping).Details(&hb); err != nil {
		t.Fatalf("details: %v", err)
	}
	if _, err := os.Stat(done); err != nil {
		t.Errorf("the trainer did not finish its checkpoint within its grace period: %v", err)
	}
	if want := artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-2000.json"); hb.CheckpointKey != want || hb.CheckpointStep != 2000 {
		t.Errorf("details name checkpoint %q at %d, want %q at 2000", hb.CheckpointKey, hb.CheckpointStep, want)
	}
	if steps := f.storedSteps(); len(steps) != 2 || steps[1] != 2000 {
		t.Errorf("stored metrics steps %v, want [1000 2000]", steps)
	}
}

// TestTrainSegmentWarnsOnIgnoredStopStep runs segments other than a trial's last with real trainers
// that do not follow the segment protocol: one that ignores RLSWEEP_STOP_AT_STEP and trains its whole
// budget without a checkpoint (the scripted trainer's ignore_stop), one that runs past the stop step
// without a checkpoint, one that stops without a checkpoint. Each result says so, for the Trial
// workflow to show (and, for the first, to end the trial); a trainer that follows the protocol gets
// no warning.
func TestTrainSegmentWarnsOnIgnoredStopStep(t *testing.T) {
	const total = 10000
	record := func(steps ...string) []string {
		script := ""
		for _, s := range steps {
			script += `echo '{"step": ` + s + `, "reward": 1}' >> "$RLSWEEP_METRICS_FILE"; `
		}
		return []string{"sh", "-c", script}
	}
	cases := []struct {
		name    string
		command []string // nil: the scripted trainer
		params  map[string]any
		want    string // "" for no warning
	}{
		{"whole budget", nil, map[string]any{"ignore_stop": 1.0},
			"segment 0: the trainer ran past RLSWEEP_STOP_AT_STEP=2000 to step 10000, its whole total_steps (10000): it ignores the stop step, so the trial ends here"},
		{"past the stop, no checkpoint", record("1000", "2000", "3000", "4000"), nil,
			"segment 0: the trainer ran past RLSWEEP_STOP_AT_STEP=2000 to step 4000 and wrote no checkpoint: the next segment re-runs it from the start"},
		{"at the stop, no checkpoint", record("1000", "2000"), nil,
			"segment 0: the trainer stopped at step 2000 without writing a checkpoint: the next segment re-runs it from the start"},
		{"follows the protocol", nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			in := f.input(2000, c.params)
			in.Trainer.TotalSteps = total
			if c.command != nil {
				in.Trainer.Command = c.command
			}
			res, err := f.run(in)
			if err != nil {
				t.Fatalf("TrainSegment: %v", err)
			}
			if c.want == "" && res.SegmentWarning != "" || !strings.HasPrefix(res.SegmentWarning, c.want) {
				t.Errorf("SegmentWarning = %q, want %q", res.SegmentWarning, c.want)
			}
			if c.want != "" && !strings.Contains(res.SegmentWarning, "docs/trainer-contract.md") {
				t.Errorf("SegmentWarning = %q, want it to point to docs/trainer-contract.md", res.SegmentWarning)
			}
		})
	}
	// The trial's last segment may end anywhere at or past its stop step, checkpoint or not.
	f := newFixture(t)
	in := f.input(total, map[string]any{"ignore_stop": 1.0})
	in.Trainer.TotalSteps, in.Segment, in.StartStep = total, 4, 8000
	res, err := f.run(in)
	if err != nil {
		t.Fatalf("last segment: %v", err)
	}
	if res.SegmentWarning != "" {
		t.Errorf("last segment: warning %q, want none", res.SegmentWarning)
	}
}

// handOffs records the standby trials a worker released, and whether the segment's GPU was free then.
type handOffs struct {
	mu      sync.Mutex
	slots   *activities.Slots
	trials  []string
	gpuFree []bool
	err     error
}

func (h *handOffs) HandOff(ctx context.Context, sweep, trial string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	gpus, err := h.slots.AcquireN(ctx, 1)
	if err == nil {
		h.slots.Release(gpus)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.trials = append(h.trials, sweep+" "+trial)
	h.gpuFree = append(h.gpuFree, err == nil)
	return h.err
}

// A trial's last segment releases the standby trial waiting for its place once its trainer exited
// cleanly, with the GPU already given back; a crash releases nobody (the attempt is retried).
func TestTrainSegmentHandsItsPlaceOver(t *testing.T) {
	f := newFixture(t)
	slots, err := activities.NewSlots([]string{"0"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := &handOffs{slots: slots}
	f.acts.Slots, f.acts.HandOff = slots, h
	in := f.input(3000, nil)
	in.HandOffTo = "7-s1"
	res, err := f.run(in)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HandedOff || fmt.Sprint(h.trials) != "["+sweepID+" 7-s1]" || fmt.Sprint(h.gpuFree) != "[true]" {
		t.Errorf("handed off %v (GPU free %v), result says %v; want 7-s1 released once, the GPU free", h.trials, h.gpuFree, res.HandedOff)
	}

	h.err = errors.New("signal: workflow not found")
	if res, err := f.run(in); err != nil || res.HandedOff {
		t.Errorf("a failed hand-off: result %+v, %v; want the segment completed, not handed off", res, err)
	}
	h.err = nil
	crash := f.input(10000, map[string]any{"crash_at": 2000.0})
	crash.HandOffTo = "8-s1"
	if _, err := f.run(crash); err == nil {
		t.Fatal("crashing trainer: got no error")
	}
	if len(h.trials) != 2 {
		t.Errorf("released %v, want no release for the crash", h.trials)
	}
}

// diagnostics.actions reaches the rules engine: a categorical policy whose return sits at −200 while its
// entropy stays at log(3) is stopped by never_learned_entropy when the sweep says it has 3 actions, and
// not when it says 16 (log 16 = 2.77: an entropy of 1.1 is far from its maximum).
func TestTrainSegmentJudgesEntropyAgainstTheSweepsActionCount(t *testing.T) {
	for _, tt := range []struct {
		actions int
		stop    bool
	}{{3, true}, {16, false}} {
		t.Run(fmt.Sprint(tt.actions, " actions"), func(t *testing.T) {
			f := newFixture(t)
			in := f.input(100000, nil)
			in.Diagnostics.Actions = tt.actions
			in.Trainer.Command = shellTrainer(`i=1; while [ $i -le 100 ]; do printf '{"step":%d,"reward":-200,"entropy":1.0986}\n' $((i*1000)); i=$((i+1)); done >> "$RLSWEEP_METRICS_FILE"`)
			res, err := f.run(in)
			if !tt.stop {
				if err != nil {
					t.Fatalf("TrainSegment = %+v, %v; want no stop with log(16) as the entropy's maximum", res, err)
				}
				return
			}
			ae := appError(t, err, activities.ErrTrialDiverged)
			if !strings.Contains(ae.Error(), diagnostics.RuleNeverLearnedEntropy) {
				t.Errorf("stopped by %v, want %s", ae, diagnostics.RuleNeverLearnedEntropy)
			}
		})
	}
}

// A trial whose reward collapses in the last eighth of its run to a level above its start — too late and
// too high for a stop rule — ends with
// the end-of-run verdict on its last segment; a healthy one, and a segment that is not the trial's last,
// with none.
func TestTrainSegmentCollapsedAtEnd(t *testing.T) {
	f := newFixture(t)
	in := f.input(100000, map[string]any{"collapse_at": 88000.0, "collapse_to": 0.3, "quality": 100.0, "noise": 1.0, "sleep_ms": 1.0, "checkpoint_every": 0.0})
	res, err := f.run(in)
	if err != nil {
		t.Fatalf("TrainSegment: %v", err)
	}
	v := res.EndVerdict
	if v == nil || v.Rule != diagnostics.RuleCollapsedAtEnd || v.Step != 100000 || !strings.Contains(v.Detail, "of the gain lost") || v.Advice == "" {
		t.Fatalf("EndVerdict = %+v, want collapsed_at_end at step 100000 with what it measured and the advice", v)
	}
	if res.Warnings[diagnostics.RuleCollapsedAtEnd] != 1 {
		t.Errorf("Warnings = %v, want collapsed_at_end once", res.Warnings)
	}
	f = newFixture(t)
	if res, err := f.run(f.input(100000, map[string]any{"quality": 100.0, "noise": 1.0, "sleep_ms": 1.0, "checkpoint_every": 0.0})); err != nil || res.EndVerdict != nil {
		t.Errorf("healthy trial: EndVerdict, err = %+v, %v; want none", res.EndVerdict, err)
	}
	f = newFixture(t)
	in = f.input(100000, map[string]any{"collapse_at": 88000.0, "collapse_to": 0.3, "quality": 100.0, "noise": 1.0, "sleep_ms": 1.0, "checkpoint_every": 0.0})
	in.Trainer.TotalSteps = 200000
	if res, err := f.run(in); err != nil || res.EndVerdict != nil {
		t.Errorf("a segment that is not the trial's last: EndVerdict, err = %+v, %v; want none", res.EndVerdict, err)
	}
}
