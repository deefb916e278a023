package sweeps

import (
	"os"
	"path/filepath"
	"reflect"
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
		{"hyperband both iters", "early_terminate: {type: hyperband, min_iter: 1, max_iter: 9, s: 2}\n", "t.yaml:9: early_terminate.min_iter: got min_iter 1 and max_iter 9, want exactly one of min_iter and max_iter"},
		{"hyperband max_iter without s", "early_terminate: {type: hyperband, max_iter: 9}\n", "t.yaml:9: early_terminate.s: got 0, want an integer in [1, 20] with max_iter"},
		{"stop_diverged_configs not a bool", "early_terminate: {type: asha, stop_diverged_configs: 2}\n", "t.yaml:9: early_terminate.stop_diverged_configs: got 2, want true or false"},
		{"unknown key", "early_terminate: {type: asha, grace: 1}\n", "t.yaml:9: early_terminate.grace: got an unknown key"},
		{"tensorboard source", "trainer:\n  segment_steps: 27000\n  metrics: {source: tensorboard}\nearly_terminate: {type: asha}\n", `trainer.metrics.source: got "tensorboard", want jsonl with early_terminate`},
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
		{"median default min_steps = total/4", spec(10_000, EarlyTerminate{Type: PrunerMedian}),
			[]int64{30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000}, []int64{10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000}},
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
