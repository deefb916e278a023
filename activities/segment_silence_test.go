package activities_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/metrics"
)

// wantNonRetryable asserts err is a non-retryable ApplicationError of type typ whose message holds
// every one of want, and returns the message.
func wantNonRetryable(t *testing.T, err error, typ string, want ...string) string {
	t.Helper()
	ae := appError(t, err, typ)
	if !ae.NonRetryable() {
		t.Errorf("%s is retryable, want non-retryable: %v", typ, err)
	}
	msg := ae.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}
	var hb activities.Heartbeat
	if err := ae.Details(&hb); err != nil || hb.TrainerFailures != 1 {
		t.Errorf("details: %+v, %v; want one trainer failure counted", hb, err)
	}
	return msg
}

// A trainer that exits 0 having written no record fails the trial for good, naming the source, the
// file it read, and how each way of logging reaches rlsweep — never a "completed" trial with nothing
// measured.
func TestTrainSegmentNoRecordsFails(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, nil)
	in.Trainer.Command = shellTrainer(`echo training quietly; exit 0`)
	_, err := f.run(in)
	msg := wantNonRetryable(t, err, activities.ErrNoMetrics,
		"trial 0-s1: the trainer exited 0 without writing a single metrics record, so the trial has no objective",
		"metrics source jsonl read RLSWEEP_METRICS_FILE (", "metrics.jsonl) and found nothing there",
		"`metrics: {source: wandb}`", "`source: auto`", "`metrics: {source: tensorboard}`", "$RLSWEEP_TB_DIR",
		"JSON lines go to $RLSWEEP_METRICS_FILE", "log tail:\ntraining quietly")
	if strings.Contains(msg, "signs of logging elsewhere") {
		t.Errorf("message reports signs where there are none:\n%s", msg)
	}
}

// The signs a trainer leaves of logging elsewhere are named: W&B's lines in its output, TensorBoard
// event files outside $RLSWEEP_TB_DIR, a metrics file under another name.
func TestTrainSegmentNoRecordsTellTales(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, nil)
	in.Trainer.Command = shellTrainer(`echo "wandb: Tracking run with wandb version 0.17.0"
mkdir -p runs/exp1 && : > runs/exp1/events.out.tfevents.1700000000.host
echo '{"step": 1, "reward": 1}' > my_metrics.jsonl
: > progress.csv
exit 0`)
	_, err := f.run(in)
	wantNonRetryable(t, err, activities.ErrNoMetrics,
		`its output has "wandb:" lines: it logs with wandb.log`,
		"it wrote TensorBoard event files while the source is jsonl: runs/exp1/events.out.tfevents.1700000000.host",
		"it wrote my_metrics.jsonl, progress.csv, not $RLSWEEP_METRICS_FILE (metrics.jsonl); SB3's progress.csv is read with `metrics: {source: csv}`")
}

// With source tensorboard the message names RLSWEEP_TB_DIR and the directory read, and event files
// written elsewhere.
func TestTrainSegmentNoRecordsTensorBoard(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, nil)
	in.Trainer.SegmentSteps = in.Trainer.TotalSteps
	in.Trainer.Metrics.Source, in.Trainer.Metrics.Preset = metrics.SourceTensorBoard, "cleanrl"
	in.Trainer.Command = shellTrainer(`mkdir -p runs && : > runs/events.out.tfevents.1.host; exit 0`)
	_, err := f.run(in)
	wantNonRetryable(t, err, activities.ErrNoMetrics,
		`metrics source tensorboard (preset "cleanrl") read the event files under RLSWEEP_TB_DIR (`,
		"TensorBoard event files outside $RLSWEEP_TB_DIR: runs/events.out.tfevents.1.host")
}

// metricsScript writes JSON lines at steps 500, 1000, ... up to last with the key charts/episodic_return
// (never the objective episodic_return), then runs rest.
func metricsScript(last int, rest string) []string {
	return shellTrainer(`s=500; while [ $s -le ` + strconv.Itoa(last) + ` ]; do
echo "{\"step\": $s, \"charts/episodic_return\": 1.5, \"losses/value_loss\": 0.1}" >> "$RLSWEEP_METRICS_FILE"; s=$((s+500)); done
` + rest)
}

// Records past the diagnostics warm-up, none carrying the objective, fail the trial while the trainer
// runs, with the keys seen and the nearest one; the trainer is stopped, not waited for.
func TestTrainSegmentObjectiveMissingPastWarmup(t *testing.T) {
	f := newFixture(t)
	in := f.input(10000, nil)
	in.Trainer.TotalSteps, in.Metric = 10000, "episodic_return" // warm-up: 10% of total_steps, 1000
	in.Trainer.Command = metricsScript(3000, "sleep 30")
	start := time.Now()
	_, err := f.run(in)
	wantNonRetryable(t, err, activities.ErrObjectiveMissing,
		`trial 0-s1: metric "episodic_return": no record of the trial carried the objective's metric by step`,
		"(the diagnostics warm-up ends at step 1000)", "its records carry charts/episodic_return, losses/value_loss",
		`did you mean "charts/episodic_return"?`, "fix: set metric.name")
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s: the trainer was waited for instead of stopped", d)
	}
}

// diagnostics.warmup_steps sets the warm-up; a trainer that exits 0 past it fails the same way.
func TestTrainSegmentObjectiveMissingAtExit(t *testing.T) {
	f := newFixture(t)
	in := f.input(10000, nil)
	in.Trainer.TotalSteps, in.Metric = 100000, "episodic_return"
	in.Diagnostics.WarmupSteps = 2000
	in.Trainer.Command = metricsScript(2500, "exit 0")
	_, err := f.run(in)
	wantNonRetryable(t, err, activities.ErrObjectiveMissing, "by step 2500 (the diagnostics warm-up ends at step 2000)",
		`did you mean "charts/episodic_return"?`)
}

// Before the warm-up a segment only reports the metric missing (the Trial workflow warns); once an
// earlier segment or attempt carried the objective, a segment without it is no failure either.
func TestTrainSegmentObjectiveMissingBeforeWarmupOrSeen(t *testing.T) {
	f := newFixture(t)
	in := f.input(1500, nil)
	in.Trainer.TotalSteps, in.Metric = 100000, "episodic_return" // warm-up 10000
	in.Trainer.Command = metricsScript(1500, "exit 0")
	res, err := f.run(in)
	// The keys: the tags as logged, and the canonical names the CleanRL preset told from them adds.
	if err != nil || !slices.Contains(res.MetricMissing, "charts/episodic_return") || !slices.Contains(res.MetricMissing, "losses/value_loss") {
		t.Fatalf("before the warm-up: %v, MetricMissing %v; want no error and the keys", err, res)
	}

	f = newFixture(t)
	in = f.input(20000, nil)
	in.Trainer.TotalSteps, in.Metric, in.ObjectiveSeen = 100000, "episodic_return", true
	in.Trainer.Command = metricsScript(20000, "exit 0")
	if _, err := f.run(in); err != nil {
		t.Fatalf("objective seen in an earlier segment: %v", err)
	}

	f = newFixture(t)
	in.ObjectiveSeen = false
	if _, err := f.runIn(f.env(t.Context(), &activities.Heartbeat{ObjectiveSeen: true}), in); err != nil {
		t.Fatalf("objective seen by an earlier attempt: %v", err)
	}
}

// The trial's last segment is its last chance: a trainer that stops before the warm-up without the
// objective fails rather than complete with none.
func TestTrainSegmentObjectiveMissingLastSegment(t *testing.T) {
	f := newFixture(t)
	in := f.input(100000, nil)
	in.Trainer.TotalSteps, in.Metric = 100000, "episodic_return"
	in.Trainer.Command = metricsScript(1000, "exit 0")
	_, err := f.run(in)
	wantNonRetryable(t, err, activities.ErrObjectiveMissing, "by the end of its last segment (step 1000)")
}

func TestNearestMetric(t *testing.T) {
	keys := []string{"charts/episodic_return", "losses/value_loss", "charts/SPS"}
	for _, c := range []struct{ metric, want string }{
		{"episodic_return", "charts/episodic_return"},
		{"Episodic_Return", "charts/episodic_return"},
		{"value_loss", "losses/value_loss"},
		{"episodic_retrun", "charts/episodic_return"},
		{"sps", "charts/SPS"},
		{"reward", ""},
		{"", ""},
	} {
		if got := activities.NearestMetric(c.metric, keys); got != c.want {
			t.Errorf("NearestMetric(%q) = %q, want %q", c.metric, got, c.want)
		}
	}
	if got := activities.NearestMetric("rewrd", []string{"reward", "value_loss"}); got != "reward" {
		t.Errorf("NearestMetric(rewrd) = %q, want reward", got)
	}
}

// With source auto (a W&B sweep config's default) the message names both places read: the W&B run
// file under WANDB_DIR and the TensorBoard directory.
func TestTrainSegmentNoRecordsAuto(t *testing.T) {
	f := newFixture(t)
	in := f.input(5000, nil)
	in.Trainer.SegmentSteps = in.Trainer.TotalSteps
	in.Trainer.Metrics.Source = metrics.SourceAuto
	in.Trainer.Command = shellTrainer(`echo nothing logged; exit 0`)
	_, err := f.run(in)
	wantNonRetryable(t, err, activities.ErrNoMetrics,
		"metrics source auto read the W&B run file under WANDB_DIR (", "and the event files under RLSWEEP_TB_DIR (",
		"found no record in either (0 malformed)", "`metrics: {source: wandb}`")
}
