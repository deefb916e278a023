package sweeps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustDecode(t testing.TB, src string) *Spec {
	t.Helper()
	s, err := Decode(strings.NewReader(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const planBase = "name: t\ntrainer:\n  command: [python, train.py]\n  env: CartPole-v1\n  total_steps: 1000\n"

func TestPlanGridOrder(t *testing.T) {
	s := mustDecode(t, planBase+`seeds: [5, 6]
parameters:
  lr: {values: [0.1, 0.2]}
  gamma: {value: 0.99}
  n: {values: [1, 2, 3]}
`)
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range trials {
		got = append(got, fmt.Sprintf("%s lr=%v n=%v gamma=%v", tr.ID, tr.Params["lr"], tr.Params["n"], tr.Params["gamma"]))
	}
	// The first parameter varies slowest, every configuration runs once per seed in spec order.
	want := []string{
		"0-s5 lr=0.1 n=1 gamma=0.99", "0-s6 lr=0.1 n=1 gamma=0.99",
		"1-s5 lr=0.1 n=2 gamma=0.99", "1-s6 lr=0.1 n=2 gamma=0.99",
		"2-s5 lr=0.1 n=3 gamma=0.99", "2-s6 lr=0.1 n=3 gamma=0.99",
		"3-s5 lr=0.2 n=1 gamma=0.99", "3-s6 lr=0.2 n=1 gamma=0.99",
		"4-s5 lr=0.2 n=2 gamma=0.99", "4-s6 lr=0.2 n=2 gamma=0.99",
		"5-s5 lr=0.2 n=3 gamma=0.99", "5-s6 lr=0.2 n=3 gamma=0.99",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plan =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := trials[0].Params["n"].(int64); !ok {
		t.Errorf("n = %T, want int64", trials[0].Params["n"])
	}
	if got, _ := s.trialCount(); got != len(trials) {
		t.Errorf("trialCount() = %d, want %d", got, len(trials))
	}
	trials[0].Params["lr"] = 99.0
	if trials[1].Params["lr"] == 99.0 {
		t.Errorf("trials of one configuration share their Params map")
	}
}

func TestPlanNoParameters(t *testing.T) {
	trials, err := Plan(mustDecode(t, planBase+"seeds: [1, 2, 3]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 3 || trials[2].ID != "0-s3" || len(trials[2].Params) != 0 {
		t.Errorf("Plan = %+v, want 3 trials 0-s1..0-s3 without parameters", trials)
	}
}

func TestPlanInvalid(t *testing.T) {
	s := mustDecode(t, planBase+"parameters:\n  lr: {values: [-1]}\n")
	if _, err := Plan(s); err == nil || !strings.Contains(err.Error(), "t.yaml:7: parameters.lr.values[0]") {
		t.Errorf("Plan(invalid) = %v, want the validation error", err)
	}
}

const sampledParams = `seeds: [1, 2]
parameters:
  lr: {min: 1.0e-5, max: 1.0e-2, distribution: log_uniform}
  ent: {min: -0.5, max: 0.5}
  n: {min: 2, max: 5}
  act: {values: [tanh, relu, elu]}
  one: {values: [7]}
  c: {value: hello}
`

// TestPlanSampled checks random and sobol: deterministic, in range, with the right types, covering
// every category and both int bounds, and different for another sampler_seed.
func TestPlanSampled(t *testing.T) {
	for _, method := range []string{MethodRandom, MethodSobol} {
		t.Run(method, func(t *testing.T) {
			src := planBase + "method: " + method + "\ntrials: 2000\n" + sampledParams
			a, err := Plan(mustDecode(t, src))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := Plan(mustDecode(t, src))
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Errorf("two plans of the same spec differ")
			}
			other, _ := Plan(mustDecode(t, src+"sampler_seed: 9\n"))
			jo, _ := json.Marshal(other)
			if bytes.Equal(ja, jo) {
				t.Errorf("sampler_seed 9 gives the same plan as sampler_seed 0")
			}
			if len(a) != 4000 {
				t.Fatalf("len(Plan) = %d, want 2000 trials × 2 seeds", len(a))
			}
			cats, ints := map[string]int{}, map[int64]int{}
			var logSum float64
			for _, tr := range a {
				lr := tr.Params["lr"].(float64)
				ent := tr.Params["ent"].(float64)
				n := tr.Params["n"].(int64)
				if lr < 1e-5 || lr > 1e-2 || ent < -0.5 || ent >= 0.5 || n < 2 || n > 5 {
					t.Fatalf("trial %s out of range: %v", tr.ID, tr.Params)
				}
				if tr.Params["one"] != int64(7) || tr.Params["c"] != "hello" {
					t.Fatalf("trial %s constants = %v", tr.ID, tr.Params)
				}
				cats[tr.Params["act"].(string)]++
				ints[n]++
				logSum += math.Log10(lr)
			}
			if len(cats) != 3 || len(ints) != 4 {
				t.Errorf("categories %v, integers %v: want all of tanh/relu/elu and 2..5", cats, ints)
			}
			// log_uniform on [1e-5, 1e-2]: log10 is uniform on [-5, -2], mean -3.5; 4000 draws of
			// sd 0.87/sqrt(4000) = 0.014, so 0.1 is more than 7 standard errors.
			if mean := logSum / float64(len(a)); math.Abs(mean+3.5) > 0.1 {
				t.Errorf("mean log10(lr) = %.3f, want -3.5 ± 0.1", mean)
			}
		})
	}
}

// TestPlanSobolPoints checks that sobol maps the published Sobol points (see TestSobolFirstPoints)
// onto the parameters in spec order, skipping the all-zero point 0.
func TestPlanSobolPoints(t *testing.T) {
	s := mustDecode(t, planBase+`method: sobol
trials: 3
parameters:
  x: {min: 0.0, max: 8.0}
  k: {value: 1}
  cat: {values: [a, b, c, d]}
  n: {min: 0, max: 3}
`)
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	// Points 1..3 in dimensions 1..3: (0.5, 0.5, 0.5), (0.75, 0.25, 0.25), (0.25, 0.75, 0.75).
	want := []map[string]any{
		{"x": 4.0, "k": int64(1), "cat": "c", "n": int64(2)},
		{"x": 6.0, "k": int64(1), "cat": "b", "n": int64(1)},
		{"x": 2.0, "k": int64(1), "cat": "d", "n": int64(3)},
	}
	for i, tr := range trials {
		if !reflect.DeepEqual(tr.Params, want[i]) {
			t.Errorf("trial %d params = %v, want %v", i, tr.Params, want[i])
		}
	}
}

func TestPlanJSONRoundTrip(t *testing.T) {
	s, err := Load("testdata/good/command.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want, _ := Plan(s)
	got, err := Plan(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plan after a JSON round trip differs")
	}
	jt, _ := json.Marshal(want)
	var trials []Trial
	if err := json.Unmarshal(jt, &trials); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(trials, want) {
		t.Errorf("trials after a JSON round trip = %v, want %v", trials[0], want[0])
	}
}

func TestSegmentEnds(t *testing.T) {
	tests := []struct {
		total, seg int64
		want       []int64
	}{
		{1000, 1000, []int64{1000}},
		{1000, 300, []int64{300, 600, 900, 1000}},
		{1000, 500, []int64{500, 1000}},
		{1000, 0, []int64{1000}},
		{0, 0, nil},
	}
	for _, tt := range tests {
		s := &Spec{Trainer: Trainer{TotalSteps: tt.total, SegmentSteps: tt.seg}}
		if got := s.SegmentEnds(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SegmentEnds(%d, %d) = %v, want %v", tt.total, tt.seg, got, tt.want)
		}
	}
}

func benchSpec(b *testing.B, params string) *Spec {
	return mustDecode(b, planBase+params)
}

func BenchmarkPlanGrid10k(b *testing.B) {
	s := benchSpec(b, "parameters:\n"+
		"  a: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n  b: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n"+
		"  c: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n  d: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n")
	for b.Loop() {
		if _, err := Plan(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanSobol10k(b *testing.B) {
	s := benchSpec(b, "method: sobol\ntrials: 10000\n"+sampledParams)
	for b.Loop() {
		if _, err := Plan(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanRandom10k(b *testing.B) {
	s := benchSpec(b, "method: random\ntrials: 10000\n"+sampledParams)
	for b.Loop() {
		if _, err := Plan(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load("testdata/good/command.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateManyProblems: a spec with 20,000 repeated seeds (about 120 KB, well under the 1 MiB
// limit) has 19,999 problems; each is checked against the ones already found in constant time.
func BenchmarkValidateManyProblems(b *testing.B) {
	y := "name: dup\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}\nseeds: [" +
		strings.TrimSuffix(strings.Repeat("1, ", 20000), ", ") + "]\n"
	for b.Loop() {
		s, err := Decode(strings.NewReader(y), "dup.yaml")
		if err != nil {
			b.Fatal(err)
		}
		var errs Errors
		if !errors.As(s.Validate(), &errs) || len(errs) != 19999 {
			b.Fatalf("got %d problems (%v), want 19,999", len(errs), err != nil)
		}
	}
}

// TestPlanGridStartOrder: a grid with early_terminate starts its configurations in an order drawn from
// sampler_seed (each keeping its number and its seeds together); without early_terminate, or with
// order listed, in the grid's order.
func TestPlanGridStartOrder(t *testing.T) {
	const base = `
name: order
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 64000}
method: grid
seeds: [1, 2]
parameters:
  lr: {values: [0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003]}
  clip: {values: [0.1, 0.2]}
`
	const et = "early_terminate: {type: asha}\n"
	plan := func(t *testing.T, yaml string) (*Spec, []Trial) {
		t.Helper()
		s, err := Decode(strings.NewReader(yaml), "order.yaml")
		if err != nil {
			t.Fatal(err)
		}
		trials, err := Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		return s, trials
	}
	configs := func(trials []Trial) []int {
		var out []int
		for i, tr := range trials {
			if tr.ID != TrialID(tr.Config, tr.Seed) {
				t.Errorf("trial %d: ID %s for configuration %d seed %d", i, tr.ID, tr.Config, tr.Seed)
			}
			if i%2 == 0 {
				out = append(out, tr.Config)
			} else if trials[i-1].Config != tr.Config || trials[i-1].Seed != 1 || tr.Seed != 2 {
				t.Errorf("trials %d and %d: %s, %s; want one configuration's seeds 1 and 2 in a row", i-1, i, trials[i-1].ID, tr.ID)
			}
		}
		return out
	}
	listed := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

	s, trials := plan(t, base)
	if s.Order != "" || !slices.Equal(configs(trials), listed) {
		t.Errorf("grid without early_terminate: order %q, configurations %v; want listed", s.Order, configs(trials))
	}
	_, listedPlan := plan(t, base)
	s, trials = plan(t, base+et)
	got := configs(trials)
	if s.Order != OrderShuffled || slices.Equal(got, listed) {
		t.Errorf("grid with early_terminate: order %q, configurations %v; want shuffled", s.Order, got)
	}
	if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, listed) {
		t.Errorf("shuffled configurations %v are not a permutation of 0..11", got)
	}
	for _, tr := range trials { // each configuration keeps its parameters
		want := listedPlan[2*tr.Config].Params
		if !maps.Equal(tr.Params, want) {
			t.Errorf("%s: params %v, want %v", tr.ID, tr.Params, want)
		}
	}
	if _, again := plan(t, base+et); !slices.Equal(configs(again), got) {
		t.Errorf("the same spec planned twice: %v, then %v", got, configs(again))
	}
	if _, other := plan(t, base+et+"sampler_seed: 7\n"); slices.Equal(configs(other), got) {
		t.Errorf("sampler_seed 7 gives the same order as 0: %v", got)
	}
	if s, trials = plan(t, base+et+"order: listed\n"); s.Order != OrderListed || !slices.Equal(configs(trials), listed) {
		t.Errorf("order listed with early_terminate: order %q, configurations %v; want listed", s.Order, configs(trials))
	}
	if _, trials = plan(t, base+"order: shuffled\n"); !slices.Equal(configs(trials), got) {
		t.Errorf("order shuffled without early_terminate: configurations %v; want %v", configs(trials), got)
	}

	for _, c := range []struct{ yaml, want string }{
		{base + "order: random\n", `order: got "random", want listed or shuffled (shuffled is the default with early_terminate)`},
		{strings.Replace(base, "method: grid", "method: random\ntrials: 4", 1) + "order: shuffled\n",
			`order: got "shuffled", want no order for method random: only a grid's configurations have a listed order (remove order)`},
	} {
		s, err := Decode(strings.NewReader(c.yaml), "order.yaml")
		if err == nil {
			err = s.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load = %v, want it to contain %q", err, c.want)
		}
	}
}

// FirstListed: a shuffled grid's probes still run configuration 0, the first written.
func TestFirstListed(t *testing.T) {
	s, err := Decode(strings.NewReader(`name: f
trainer: {builtin: ppo, env: CartPole-v1, total_steps: 64000}
method: grid
seeds: [3, 4]
parameters:
  lr: {values: [0.003, 1.0e-7, 0.001]}
  clip: {value: 0.2}
early_terminate: {type: asha}
`), "f.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, first := range trials {
		got := FirstListed(s, first)
		want := Trial{ID: "0-s3", Config: 0, Seed: 3, Params: map[string]any{"lr": 0.003, "clip": 0.2}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FirstListed(%s) = %+v, want %+v", first.ID, got, want)
		}
	}
	s.Method = MethodRandom
	if got := FirstListed(s, trials[len(trials)-1]); got.ID != trials[len(trials)-1].ID {
		t.Errorf("FirstListed of a random sweep = %s, want the trial it was given", got.ID)
	}
}

// A W&B grid with hyperband starts shuffled; its rlsweep block's order: listed keeps W&B's order.
func TestWandBGridOrder(t *testing.T) {
	const cfg = "program: t.py\nmethod: grid\nmetric: {name: loss, goal: minimize}\n" +
		"early_terminate: {type: hyperband, min_iter: 1, eta: 3}\nparameters:\n  lr: {values: [0.1, 0.2, 0.3, 0.4]}\n" +
		"rlsweep: {metrics: {source: jsonl}, total_steps: 90000, segment_steps: 10000%s}\n"
	for _, c := range []struct{ extra, want string }{{"", OrderShuffled}, {", order: listed", OrderListed}} {
		s, err := Decode(strings.NewReader(fmt.Sprintf(cfg, c.extra)), "sweep.yaml")
		if err == nil {
			err = s.Validate()
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.Order != c.want {
			t.Errorf("rlsweep block %q: order %q, want %q", c.extra, s.Order, c.want)
		}
	}
}
