package sweeps

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestEarlyTerminateValidate(t *testing.T) {
	const base = "name: t\ntrainer:\n  builtin: ppo\n  env: CartPole-v1\n  total_steps: 27000\n  segment_steps: 3000\nparameters:\n  lr: {values: [0.001, 0.0001]}\n"
	tests := []struct {
		name, yaml, want string // want "" means valid
	}{
		{"asha defaults", "early_terminate: {type: asha}\n", ""},
		{"median defaults", "early_terminate: {type: median}\n", ""},
		{"hyperband min_iter", "early_terminate: {type: hyperband, min_iter: 1}\n", ""},
		{"hyperband max_iter", "early_terminate: {type: hyperband, max_iter: 27, s: 2, strict: true}\n", ""},
		{"unknown type", "early_terminate: {type: pbt}\n", `t.yaml:9: early_terminate.type: got "pbt", want asha, median or hyperband`},
		{"eta 1", "early_terminate: {type: asha, eta: 1}\n", "t.yaml:9: early_terminate.eta: got 1, want an integer in [2, 100]"},
		{"eta not an int", "early_terminate: {type: asha, eta: fast}\n", "t.yaml:9: early_terminate.eta: got \"fast\", want an integer"},
		{"min_steps past max", "early_terminate: {type: asha, min_steps: 27000}\n", "t.yaml:9: early_terminate.min_steps: got 27000, want an integer in (0, 27000) (max_steps): the first rung"},
		{"max_steps past total", "early_terminate: {type: asha, max_steps: 30000}\n", "t.yaml:9: early_terminate.max_steps: got 30000, want an integer in (0, 27000] (total_steps)"},
		{"min_trials with asha", "early_terminate: {type: asha, min_trials: 3}\n", "t.yaml:9: early_terminate.min_trials: got a value with type asha, want no min_trials: it applies to type median"},
		{"median min_trials 0", "early_terminate: {type: median, min_trials: -1}\n", "t.yaml:9: early_terminate.min_trials: got -1, want an integer in [1, 100000]"},
		{"median without segments", "trainer:\n  segment_steps: 27000\nearly_terminate: {type: median}\n", "trainer.segment_steps: got 27000, want an integer below 27000 (total_steps) with early_terminate type median"},
		{"hyperband both iters: max_iter wins", "early_terminate: {type: hyperband, min_iter: 1, max_iter: 9, s: 2}\n", ""},
		{"hyperband no iters", "early_terminate: {type: hyperband}\n", "t.yaml:9: early_terminate.min_iter: got min_iter 0 and max_iter 0, want min_iter or max_iter, an integer > 0 (with both, max_iter wins, as in W&B)"},
		{"hyperband min_iter pause without segments", "trainer:\n  segment_steps: 27000\nearly_terminate: {type: hyperband, min_iter: 1}\n",
			"t.yaml:6: trainer.segment_steps: got 27000, want an integer below 27000 (total_steps) with early_terminate min_iter in pause mode: one iteration is one segment (or early_terminate.mode stop: an iteration is a logged value of the metric)"},
		{"hyperband min_iter stop without segments", "trainer:\n  segment_steps: 27000\nearly_terminate: {type: hyperband, min_iter: 1, mode: stop}\n", ""},
		{"hyperband min_iter past the logs cap", "trainer:\n  segment_steps: 27000\nearly_terminate: {type: hyperband, min_iter: 2000000, mode: stop}\n",
			"t.yaml:9: early_terminate.min_iter: got 2000000, want an integer in [1, 1000000] (logged values of the metric)"},
		{"median stop mode without segments", "trainer:\n  segment_steps: 27000\n  metrics: {source: csv}\nearly_terminate: {type: median}\n", ""},
		{"median stop mode too many points", "trainer:\n  segment_steps: 27000\n  metrics: {source: csv}\nearly_terminate: {type: median, min_steps: 10}\n",
			"t.yaml:10: early_terminate.min_steps: got 10, want at least 27 (total_steps / 1000) in stop mode: the median rule decides at its multiples, at most 1000 of them"},
		{"mode unknown", "early_terminate: {type: asha, mode: later}\n", `t.yaml:9: early_terminate.mode: got "later", want pause or stop (or no mode: pause with metrics.source jsonl, stop with the others)`},
		{"mode stop with jsonl", "early_terminate: {type: asha, mode: stop}\n", ""},
		{"mode pause with csv", "trainer:\n  segment_steps: 27000\n  metrics: {source: csv}\nearly_terminate: {type: asha, mode: pause}\n",
			`t.yaml:10: early_terminate.mode: got "pause", want stop with trainer.metrics.source csv, or source jsonl: in pause mode a trial resumes after each decision step from the checkpoint its trainer announces in a JSON-lines record, which only source jsonl carries`},
		{"hyperband max_iter without s", "early_terminate: {type: hyperband, max_iter: 9}\n", "t.yaml:9: early_terminate.s: got 0, want an integer in [1, 20] with max_iter"},
		{"stop_diverged_configs not a bool", "early_terminate: {type: asha, stop_diverged_configs: 2}\n", "t.yaml:9: early_terminate.stop_diverged_configs: got 2, want true or false"},
		{"unknown key", "early_terminate: {type: asha, grace: 1}\n", "t.yaml:9: early_terminate.grace: got an unknown key"},
		{"tensorboard source: stop mode", "trainer:\n  segment_steps: 27000\n  metrics: {source: tensorboard}\nearly_terminate: {type: asha}\n", ""},
		{"auto source: stop mode", "trainer:\n  segment_steps: 27000\n  metrics: {source: auto}\nearly_terminate: {type: hyperband, max_iter: 27, s: 3}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := base + tt.yaml
			if strings.HasPrefix(tt.yaml, "trainer:\n") { // replace the trainer's segment settings
				y = strings.Replace(base, "  segment_steps: 3000\n", strings.TrimPrefix(strings.SplitN(tt.yaml, "early_terminate", 2)[0], "trainer:\n"), 1) +
					"early_terminate" + strings.SplitN(tt.yaml, "early_terminate", 2)[1]
			}
			path := filepath.Join(t.TempDir(), "t.yaml")
			if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Load() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Load() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// Decision steps and the segment ends they add, per pruner.
func TestEarlyTerminateSteps(t *testing.T) {
	spec := func(seg int64, e EarlyTerminate) *Spec {
		s := defaults()
		s.Trainer.TotalSteps, s.Trainer.SegmentSteps = 100_000, seg
		s.EarlyTerminate = &e
		s.EarlyTerminate.fillDefaults(100_000)
		return s
	}
	tests := []struct {
		name       string
		s          *Spec
		steps, end []int64
	}{
		{"asha min 1000 eta 3", spec(100_000, EarlyTerminate{Type: PrunerASHA, MinSteps: 1000, Eta: 3}),
			[]int64{1000, 3000, 9000, 27000, 81000}, []int64{1000, 3000, 9000, 27000, 81000, 100_000}},
		{"asha default min_steps = max/eta³", spec(100_000, EarlyTerminate{Type: PrunerASHA, MaxSteps: 54_000, Eta: 3}),
			[]int64{2000, 6000, 18000}, []int64{2000, 6000, 18000, 100_000}},
		{"asha default eta 4", spec(100_000, EarlyTerminate{Type: PrunerASHA}),
			[]int64{1562, 6248, 24992, 99968}, []int64{1562, 6248, 24992, 99968, 100_000}},
		{"median default min_steps = total/10", spec(10_000, EarlyTerminate{Type: PrunerMedian}),
			[]int64{10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000}, []int64{10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000}},
		{"asha rungs merged with segments", spec(40_000, EarlyTerminate{Type: PrunerASHA, MinSteps: 10_000, Eta: 4}),
			[]int64{10_000, 40_000}, []int64{10_000, 40_000, 80_000, 100_000}},
		{"median: segment ends from min_steps", spec(20_000, EarlyTerminate{Type: PrunerMedian, MinSteps: 30_000}),
			[]int64{40_000, 60_000, 80_000}, []int64{20_000, 40_000, 60_000, 80_000, 100_000}},
		{"hyperband min_iter: one iter is one segment", spec(10_000, EarlyTerminate{Type: PrunerHyperband, MinIter: 1}),
			[]int64{10_000, 30_000, 90_000}, []int64{10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000}},
		{"hyperband max_iter: iter = total/max_iter, bands max_iter/eta^k", spec(100_000, EarlyTerminate{Type: PrunerHyperband, MaxIter: 81, S: 3}),
			[]int64{3 * 1234, 9 * 1234, 27 * 1234}, []int64{3 * 1234, 9 * 1234, 27 * 1234, 100_000}},
	}
	for _, tt := range tests {
		if got := tt.s.DecisionSteps(); !reflect.DeepEqual(got, tt.steps) {
			t.Errorf("%s: DecisionSteps() = %v, want %v", tt.name, got, tt.steps)
		}
		if got := tt.s.SegmentEnds(); !reflect.DeepEqual(got, tt.end) {
			t.Errorf("%s: SegmentEnds() = %v, want %v", tt.name, got, tt.end)
		}
	}
}

// PruneMode and RungUnit: the mode from early_terminate.mode or the source; logs only for hyperband in
// stop mode without segments.
func TestPruneModeRungUnit(t *testing.T) {
	spec := func(src, mode, typ string, seg int64) *Spec {
		s := defaults()
		s.Trainer.TotalSteps, s.Trainer.SegmentSteps = 100_000, seg
		s.Trainer.Metrics.Source = src
		if typ != "" {
			s.EarlyTerminate = &EarlyTerminate{Type: typ, Mode: mode}
		}
		return s
	}
	tests := []struct {
		name       string
		s          *Spec
		mode, unit string
	}{
		{"no early_terminate", spec("jsonl", "", "", 100_000), "", ""},
		{"jsonl: pause", spec("jsonl", "", PrunerASHA, 10_000), PrunePause, RungSteps},
		{"empty source is jsonl: pause", spec("", "", PrunerASHA, 10_000), PrunePause, RungSteps},
		{"tensorboard: stop", spec("tensorboard", "", PrunerASHA, 100_000), PruneStop, RungSteps},
		{"auto: stop, hyperband in logs", spec("auto", "", PrunerHyperband, 100_000), PruneStop, RungLogs},
		{"wandb: stop, median in steps", spec("wandb", "", PrunerMedian, 100_000), PruneStop, RungSteps},
		{"explicit stop with jsonl, hyperband without segments: logs", spec("jsonl", PruneStop, PrunerHyperband, 100_000), PruneStop, RungLogs},
		{"explicit stop with jsonl, hyperband with segments: steps", spec("jsonl", PruneStop, PrunerHyperband, 10_000), PruneStop, RungSteps},
		{"explicit pause", spec("jsonl", PrunePause, PrunerHyperband, 10_000), PrunePause, RungSteps},
		{"hyperband pause: steps", spec("jsonl", "", PrunerHyperband, 100_000), PrunePause, RungSteps},
	}
	for _, tt := range tests {
		if got := tt.s.PruneMode(); got != tt.mode {
			t.Errorf("%s: PruneMode() = %q, want %q", tt.name, got, tt.mode)
		}
		if got := tt.s.RungUnit(); got != tt.unit {
			t.Errorf("%s: RungUnit() = %q, want %q", tt.name, got, tt.unit)
		}
	}
}

// In stop mode: hyperband's decision points are W&B's bands in logged values, median's the multiples of
// min_steps, and no decision step becomes a segment end.
func TestStopModeSteps(t *testing.T) {
	spec := func(src string, seg int64, e EarlyTerminate) *Spec {
		s := defaults()
		s.Trainer.TotalSteps, s.Trainer.SegmentSteps = 100_000, seg
		s.Trainer.Metrics.Source = src
		s.EarlyTerminate = &e
		s.EarlyTerminate.fillDefaults(100_000)
		return s
	}
	tests := []struct {
		name       string
		s          *Spec
		steps, end []int64
	}{
		{"hyperband max_iter 81 s 3: ⌊81/3^k⌋", spec("auto", 100_000, EarlyTerminate{Type: PrunerHyperband, MaxIter: 81, S: 3}),
			[]int64{3, 9, 27}, []int64{100_000}},
		{"hyperband max_iter 18 s 2 (W&B's test)", spec("auto", 100_000, EarlyTerminate{Type: PrunerHyperband, MaxIter: 18, S: 2}),
			[]int64{2, 6}, []int64{100_000}},
		{"hyperband max_iter 10 s 5: stops below 1", spec("tensorboard", 100_000, EarlyTerminate{Type: PrunerHyperband, MaxIter: 10, S: 5}),
			[]int64{1, 3}, []int64{100_000}},
		{"hyperband min_iter 3: 3·3^k up to 1,000,000", spec("auto", 100_000, EarlyTerminate{Type: PrunerHyperband, MinIter: 3}),
			[]int64{3, 9, 27, 81, 243, 729, 2187, 6561, 19683, 59049, 177147, 531441}, []int64{100_000}},
		{"hyperband min_iter 1000000 eta 2: one band", spec("auto", 100_000, EarlyTerminate{Type: PrunerHyperband, MinIter: 1_000_000, Eta: 2}),
			[]int64{1_000_000}, []int64{100_000}},
		{"hyperband min_iter 1 eta 2, 5000 configurations: bands cut at 50,000 values", func() *Spec {
			s := spec("auto", 100_000, EarlyTerminate{Type: PrunerHyperband, MinIter: 1, Eta: 2})
			s.Method, s.Trials = MethodRandom, 5000
			return s
		}(), []int64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, []int64{100_000}},
		{"hyperband both: max_iter wins", spec("auto", 100_000, EarlyTerminate{Type: PrunerHyperband, MinIter: 1, MaxIter: 27, S: 2}),
			[]int64{3, 9}, []int64{100_000}},
		{"asha in stop mode: steps, segments unchanged", spec("csv", 100_000, EarlyTerminate{Type: PrunerASHA, MinSteps: 1000, Eta: 3}),
			[]int64{1000, 3000, 9000, 27000, 81000}, []int64{100_000}},
		{"median in stop mode: multiples of min_steps", spec("stdout", 100_000, EarlyTerminate{Type: PrunerMedian, MinSteps: 20_000}),
			[]int64{20_000, 40_000, 60_000, 80_000}, []int64{100_000}},
		{"median in stop mode: default min_steps total/10", spec("stdout", 100_000, EarlyTerminate{Type: PrunerMedian}),
			[]int64{10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000}, []int64{100_000}},
		{"explicit stop with jsonl segments: ends are segment multiples only", spec("jsonl", 40_000, EarlyTerminate{Type: PrunerASHA, MinSteps: 10_000, Eta: 4, Mode: PruneStop}),
			[]int64{10_000, 40_000}, []int64{40_000, 80_000, 100_000}},
		{"explicit stop, hyperband min_iter with segments: steps", spec("jsonl", 10_000, EarlyTerminate{Type: PrunerHyperband, MinIter: 1, Mode: PruneStop}),
			[]int64{10_000, 30_000, 90_000}, []int64{10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000}},
	}
	for _, tt := range tests {
		if got := tt.s.DecisionSteps(); !reflect.DeepEqual(got, tt.steps) {
			t.Errorf("%s: DecisionSteps() = %v, want %v", tt.name, got, tt.steps)
		}
		if got := tt.s.SegmentEnds(); !reflect.DeepEqual(got, tt.end) {
			t.Errorf("%s: SegmentEnds() = %v, want %v", tt.name, got, tt.end)
		}
	}
}

// A W&B config's hyperband section as it is, with no rlsweep block: stop mode, its bands in logged values.
func TestWandBHyperbandAsIs(t *testing.T) {
	y := "program: t.py\nmethod: random\nmetric: {name: val_loss}\nearly_terminate: {type: hyperband, min_iter: 3, max_iter: 27, s: 2}\nparameters:\n  lr: {min: 0.1, max: 0.2}\n"
	s, err := Decode(strings.NewReader(y), "sweep.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	if s.Trainer.Metrics.Source != "auto" || s.PruneMode() != PruneStop || s.RungUnit() != RungLogs {
		t.Errorf("source %q, mode %q, unit %q; want auto, stop, logs", s.Trainer.Metrics.Source, s.PruneMode(), s.RungUnit())
	}
	if got := s.DecisionSteps(); !reflect.DeepEqual(got, []int64{3, 9}) {
		t.Errorf("DecisionSteps() = %v, want [3 9] (max_iter wins)", got)
	}
	if got := s.SegmentEnds(); !reflect.DeepEqual(got, []int64{DefaultWandBTotalSteps}) {
		t.Errorf("SegmentEnds() = %v, want one segment", got)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"early_terminate: min_iter 3 and max_iter 27 are both set: max_iter wins and min_iter is ignored, as in W&B",
		"early_terminate: hyperband, stop mode: judged as the metric stream passes 3, 9 logged values of val_loss",
		"pruned trainers are stopped (SIGTERM",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Explain() =\n%s\nwant a line with %q", text, want)
		}
	}
}

// validate --explain in pause mode: the segment ends at the decision steps, in environment steps.
func TestExplainPauseMode(t *testing.T) {
	s, err := Load("../examples/asha.yaml")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	want := "early_terminate: asha, pause mode: segments end at environment steps 4000, 12000, 36000, where each trial checkpoints and resumes once its configuration is decided"
	if !slices.Contains(lines, want) {
		t.Errorf("Explain() =\n%s\nwant the line %q", strings.Join(lines, "\n"), want)
	}
}

// A W&B config's hyperband section maps onto asha rungs: with min_iter one iteration is one segment
// of its rlsweep block; s, as W&B does, is read only with max_iter.
func TestWandBHyperband(t *testing.T) {
	y := "program: t.py\nmethod: grid\nmetric: {name: loss, goal: minimize}\n" +
		"early_terminate: {type: hyperband, min_iter: 1, eta: 3, s: 2}\nparameters:\n  lr: {values: [0.1, 0.2]}\n" +
		"rlsweep: {metrics: {source: jsonl}, total_steps: 90000, segment_steps: 10000}\n"
	s, err := Decode(strings.NewReader(y), "sweep.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	e := s.EarlyTerminate
	if e.Type != PrunerHyperband || e.MinIter != 1 || e.Eta != 3 || !e.StopDivergedConfigs {
		t.Errorf("early_terminate = %+v, want hyperband, min_iter 1, eta 3, stop_diverged_configs", e)
	}
	if got := s.DecisionSteps(); !reflect.DeepEqual(got, []int64{10000, 30000}) {
		t.Errorf("decision steps %v, want 10000, 30000 (bands 1 and 3 segments; 9 is the whole budget)", got)
	}
}

// examples/asha.yaml stays valid, with the rungs its comments promise.
func TestASHAExample(t *testing.T) {
	s, err := Load("../examples/asha.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.SegmentEnds(); !reflect.DeepEqual(got, []int64{4000, 12000, 36000, 100000}) {
		t.Errorf("segment ends %v, want the rungs 4000, 12000, 36000, then 100000", got)
	}
}
