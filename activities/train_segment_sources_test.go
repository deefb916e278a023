package activities_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/metrics/metricstest"
	"github.com/rlsweep/rlsweep/sweeps"
)

// rslrlBlockSh is a printf that prints one block of rsl_rl's console table, ANSI codes included.
func rslrlBlockSh(it int, valueLoss string, total int) string {
	return `printf '################################################################################\n` +
		`                      \033[1m Learning iteration ` + itoa(it) + `/100 \033[0m                       \n\n` +
		`                       Computation: 51234 steps/s (collection: 0.412s, learning 0.061s)\n` +
		`               Value function loss: ` + valueLoss + `\n` +
		`                    Surrogate loss: -0.0042\n` +
		`             Mean action noise std: 0.95\n` +
		`                       Mean reward: 1.50\n` +
		`--------------------------------------------------------------------------------\n` +
		`                   Total timesteps: ` + itoa(total) + `\n` +
		`                    Iteration time: 0.47s\n` +
		`                               ETA: 30.1s\n\n'; `
}

func itoa(n int) string { return strconv.Itoa(n) }

// A trainer that prints rsl_rl's console table and writes nothing else: its stdout is the metrics
// source, the records reach the stored metrics under canonical names, and an infinite value loss stops it.
func TestTrainSegmentStdoutSource(t *testing.T) {
	f := newFixture(t)
	in := f.input(100000, nil)
	in.Trainer.Metrics = sweeps.MetricsSource{Source: "stdout", Preset: "rsl_rl"}
	in.Trainer.GracePeriod = 500 * time.Millisecond
	in.Trainer.Command = shellTrainer(rslrlBlockSh(0, "0.0213", 1000) + rslrlBlockSh(1, "0.0200", 2000) +
		"sleep 0.2; " + rslrlBlockSh(2, "inf", 3000) + "sleep 30")
	start := time.Now()
	_, err := f.run(in)
	ae := appError(t, err, activities.ErrTrialDiverged)
	var det activities.DivergedDetails
	if err := ae.Details(&det); err != nil || det.Rule != diagnostics.RuleNonFinite || det.Verdict.Step != 3000 {
		t.Fatalf("details = %+v, %v; want non_finite at step 3000", det, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s: the trainer was not stopped at the infinite value loss", d)
	}
	if got := f.storedSteps(); !slices.Equal(got, []int64{1000, 2000, 3000}) {
		t.Errorf("stored steps = %v, want [1000 2000 3000]", got)
	}
	stored := f.metrics()
	for _, want := range []string{`"value_loss":0.0213`, `"action_std":0.95`, `"reward":1.5`, `"fps":51234`} {
		if !strings.Contains(stored, want) {
			t.Errorf("metrics.jsonl lacks %s:\n%s", want, stored)
		}
	}
}

// Source csv: RLSWEEP_METRICS_FILE names progress.csv in the trainer's working directory, where SB3's
// logger writes it; its rows become records.
func TestTrainSegmentCSVSource(t *testing.T) {
	f := newFixture(t)
	in := f.input(4096, nil)
	in.Trainer.Metrics = sweeps.MetricsSource{Source: "csv", Preset: "sb3"}
	in.Trainer.Command = shellTrainer(`case "$RLSWEEP_METRICS_FILE" in "$PWD/progress.csv") ;; *) echo "metrics file $RLSWEEP_METRICS_FILE"; exit 4;; esac; ` +
		`printf 'rollout/ep_rew_mean,time/total_timesteps,train/value_loss\n10.5,2048,\n12.5,4096,0.25\n' > progress.csv`)
	res, err := f.run(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.storedSteps(); !slices.Equal(got, []int64{2048, 4096}) {
		t.Errorf("stored steps = %v, want [2048 4096]", got)
	}
	if res.Last[metrics.ValueLoss] != 0.25 || res.Last[metrics.Reward] != 12.5 {
		t.Errorf("last values = %v", res.Last)
	}
}

// The same progress.csv with no trainer.metrics.preset: the preset is told from its tags, so the
// objective "reward" is found and a NaN value loss stops the trial by non_finite; the result says the
// preset was told.
func TestTrainSegmentCSVSourceTellsThePreset(t *testing.T) {
	f := newFixture(t)
	in := f.input(8192, nil)
	in.Trainer.Metrics = sweeps.MetricsSource{Source: "csv"}
	in.Trainer.Command = shellTrainer(`printf 'rollout/ep_rew_mean,time/total_timesteps,time/iterations,train/value_loss\n10.5,2048,1,0.5\n12.5,4096,2,0.25\n' > progress.csv; ` +
		`printf '13,6144,3,nan\n' >> progress.csv`)
	_, err := f.run(in)
	ae := appError(t, err, activities.ErrTrialDiverged)
	if !strings.Contains(ae.Error(), "non_finite") || !strings.Contains(ae.Error(), metrics.ValueLoss) {
		t.Errorf("stopped by %v, want non_finite on %s", ae, metrics.ValueLoss)
	}
	in.Trainer.Command = shellTrainer(`printf 'rollout/ep_rew_mean,time/total_timesteps,time/iterations,train/value_loss\n10.5,2048,1,0.5\n12.5,4096,2,0.25\n' > progress.csv`)
	in.StopAtStep = 4096
	f2 := newFixture(t)
	res, err := f2.run(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Objective == nil || *res.Objective != 12.5 || !strings.Contains(res.MetricsSource, "preset sb3, told from its tags") {
		t.Errorf("result objective %v, metrics source %q; want 12.5 and the preset told", res.Objective, res.MetricsSource)
	}
}

// A trainer that logs with wandb.log (an rlsweep spec with source wandb): it finds WANDB_DIR set to
// the attempt's scratch directory, and the rows of the run file it writes there are the segment's
// records, on the step of the logged key step_key names; the result says which file was read.
func TestTrainSegmentWandbSource(t *testing.T) {
	// The run file a CleanRL script writes with --track: five rows on global_step, and a video.
	fixture := filepath.Join(t.TempDir(), "run-test.wandb")
	var run bytes.Buffer
	w, _ := metricstest.NewWandbWriter(&run)
	w.Record(metricstest.Run("test"))
	for i := range 5 {
		w.Record(metricstest.History(metricstest.Float("_step", float64(i)), metricstest.Float("global_step", float64(1000*(i+1))),
			metricstest.Float("charts/episodic_return", float64(10+i))))
	}
	w.Record(metricstest.History(metricstest.Float("_step", 5), metricstest.Item{Key: "videos", ValueJSON: `{"_type": "videos"}`}))
	w.Record(metricstest.Exit(0))
	if err := os.WriteFile(fixture, run.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	in := f.input(100000, nil)
	in.Trainer.Metrics = sweeps.MetricsSource{Source: "wandb", Preset: "cleanrl", StepKey: "global_step"}
	in.Trainer.GracePeriod = 500 * time.Millisecond
	in.Trainer.Command = shellTrainer(`run="$WANDB_DIR/wandb/offline-run-20240101_000000-test"; mkdir -p "$run" && ` +
		`cp ` + strconv.Quote(fixture) + ` "$run/run-test.wandb"`)
	res, err := f.run(in)
	if err != nil {
		t.Fatalf("TrainSegment: %v", err)
	}
	if got := f.storedSteps(); !slices.Equal(got, []int64{1000, 2000, 3000, 4000, 5000}) {
		t.Errorf("stored steps = %v, want [1000 … 5000] (global_step)", got)
	}
	if res.Objective == nil || res.Malformed != 0 || !strings.Contains(res.MetricsSource, "offline-run-20240101_000000-test") {
		t.Errorf("result = %+v, want the reward objective, no malformed, the run file named", res)
	}
	if !strings.Contains(f.metrics(), `"reward":14`) {
		t.Errorf("stored metrics lack the last reward:\n%s", f.metrics())
	}
}
