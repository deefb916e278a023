package sweeps

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const pbtBase = "name: t\ntrainer:\n  builtin: ppo\n  env: CartPole-v1\n  total_steps: 40000\n  segment_steps: 40000\nmethod: pbt\nseeds: [1, 2]\nsampler_seed: 7\n" +
	"parameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\n  gamma: {min: 0.9, max: 0.999}\n  num_envs: {values: [4, 8]}\n  ent_coef: {values: [0, 0.01]}\n"

func loadYAML(t *testing.T, y string) (*Spec, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

func TestPBTValidate(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"defaults", "", ""},
		{"full", "pbt: {population: 4, ready_steps: 5000, quantile: 0.5, resample_probability: 0, perturb: [0.5, 2], mutable: [lr, num_envs]}\n", ""},
		{"population 1", "pbt: {population: 1}\n", "t.yaml:15: pbt.population: got 1, want an integer in [2, 1000]"},
		{"quantile", "pbt: {quantile: 0.7}\n", "t.yaml:15: pbt.quantile: got 0.7, want a number in (0, 0.5]"},
		{"resample", "pbt: {resample_probability: 2}\n", "t.yaml:15: pbt.resample_probability: got 2, want a number in [0, 1]"},
		{"perturb factor", "pbt: {perturb: [0.8, -1]}\n", "pbt.perturb[1]: got -1, want a finite number > 0"},
		{"perturb empty", "pbt: {perturb: []}\n", "pbt.perturb: got an empty list, want at least one factor > 0"},
		{"mutable unknown", "pbt: {mutable: [lr, clip]}\n", `pbt.mutable[1]: got "clip", want one of the spec's parameters`},
		{"ready past total", "pbt: {ready_steps: 40000}\n", "pbt.ready_steps: got 40000, want an integer in (0, 40000) (total_steps)"},
		{"too many points", "pbt: {ready_steps: 40}\n", "pbt.ready_steps: got population 8 × 999 ready steps, want at most 4000 points"},
		{"too many segments", "pbt: {ready_steps: 10}\n", "pbt.ready_steps: got 4000 segments, want at most 1000 segments"},
		{"schedule", "pbt: {schedule: [{step: 0, params: {lr: 0.001}}, {step: 8000, params: {lr: 0.002}}]}\n", ""},
		{"schedule first step", "pbt: {schedule: [{step: 4000, params: {lr: 0.001}}]}\n", "pbt.schedule[0].step: got 4000, want 0: the first entry is the start"},
		{"schedule not ready", "pbt: {schedule: [{step: 0, params: {lr: 0.001}}, {step: 5000, params: {lr: 0.002}}]}\n", "pbt.schedule[1].step: got 5000, want a multiple of ready_steps (4000) below total_steps (40000)"},
		{"schedule order", "pbt: {schedule: [{step: 0, params: {lr: 0.001}}, {step: 8000, params: {}}, {step: 4000, params: {}}]}\n", "pbt.schedule[2].step: got 4000, want a step after 8000"},
		{"schedule param", "pbt: {schedule: [{step: 0, params: {lrr: 0.001}}]}\n", `pbt.schedule[0].params.lrr: got "lrr", want one of the spec's parameters`},
		{"schedule population", "pbt: {population: 8, schedule: [{step: 0, params: {lr: 0.001}}]}\n", "pbt.population: got 8, want 2 (one member per seed) with a schedule"},
		{"trials", "trials: 3\n", "trials: got 3, want no trials for method pbt"},
		{"pbt with random", "pbt: {population: 4}\nmethod: random\ntrials: 2\n", `pbt: got a pbt section with method "random", want method pbt`},
		{"early_terminate", "early_terminate: {type: median}\n", "early_terminate: got a section with method pbt, want no early_terminate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := pbtBase + tt.yaml
			if strings.Contains(tt.yaml, "method: random") {
				y = strings.Replace(y, "method: pbt\n", "", 1)
			}
			_, err := loadYAML(t, y)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Load() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Load() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestPBTDefaultsAndPlan(t *testing.T) {
	s, err := loadYAML(t, pbtBase)
	if err != nil {
		t.Fatal(err)
	}
	want := PBT{Population: 8, ReadySteps: 4000, Quantile: 0.25, ResampleProbability: 0.25, Perturb: []float64{0.8, 1.2},
		Mutable: []string{"lr", "gamma", "ent_coef"}}
	if !reflect.DeepEqual(*s.PBT, want) {
		t.Errorf("pbt = %+v, want %+v", *s.PBT, want)
	}
	if ends := s.SegmentEnds(); len(ends) != 10 || ends[0] != 4000 || ends[9] != 40000 {
		t.Errorf("SegmentEnds() = %v, want multiples of 4000 to 40000", ends)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 8 {
		t.Fatalf("Plan() = %d trials, want 8 (one per member)", len(trials))
	}
	for i, tr := range trials {
		if tr.Config != i || tr.Seed != s.Seeds[i%2] || tr.ID != TrialID(i, tr.Seed) {
			t.Errorf("member %d = %+v, want config %d seed %d", i, tr, i, s.Seeds[i%2])
		}
	}
	again, _ := Plan(s)
	if !reflect.DeepEqual(trials, again) {
		t.Error("Plan() differs between two calls")
	}
}

// Explore keeps every value within its bounds, perturbs γ through 1 − x, rounds integers and moves
// along a list of values.
func TestPBTExplore(t *testing.T) {
	s, err := loadYAML(t, pbtBase+"pbt: {resample_probability: 0, mutable: [lr, gamma, num_envs]}\n")
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"lr": 0.001, "gamma": 0.99, "num_envs": int64(4), "ent_coef": 0.01}
	rng := rand.New(rand.NewPCG(1, 2))
	up, down := 0, 0
	for range 200 {
		out, changes := s.Explore(params, rng)
		if len(changes) != 3 || out["ent_coef"] != 0.01 {
			t.Fatalf("Explore() = %v %v, want lr, gamma and num_envs changed, ent_coef kept", out, changes)
		}
		f := changes[0].Factor
		if math.Abs(out["lr"].(float64)-0.001*f) > 1e-12 {
			t.Errorf("lr = %v, want 0.001 × %v", out["lr"], f)
		}
		g := changes[1].Factor
		wantG := math.Min(0.999, 1-(1-0.99)*g)
		if math.Abs(out["gamma"].(float64)-wantG) > 1e-12 {
			t.Errorf("gamma = %v with factor %v, want 1 − 0.01 × %v = %v", out["gamma"], g, g, wantG)
		}
		n := out["num_envs"].(int64)
		if changes[2].Factor > 1 && n != 8 || changes[2].Factor <= 1 && n != 4 {
			t.Errorf("num_envs = %d with factor %v, want the next value up (8) or the first (4)", n, changes[2].Factor)
		}
		if f > 1 {
			up++
		} else {
			down++
		}
	}
	if up == 0 || down == 0 {
		t.Errorf("factors drawn: %d up, %d down, want both", up, down)
	}
	// Bounds: γ at 0.999 perturbed up by 1/0.8 stays at 0.999 via the max; lr at its max stays.
	out, _ := s.Explore(map[string]any{"lr": 0.01, "gamma": 0.9, "num_envs": int64(8)}, rand.New(rand.NewPCG(3, 4)))
	if lr := out["lr"].(float64); lr > 0.01 || lr < 0.0001 {
		t.Errorf("lr = %v, want within [0.0001, 0.01]", lr)
	}
	if g := out["gamma"].(float64); g < 0.9 || g > 0.999 {
		t.Errorf("gamma = %v, want within [0.9, 0.999]", g)
	}
	// Resampling draws from the distribution.
	s.PBT.ResampleProbability = 1
	out, changes := s.Explore(params, rand.New(rand.NewPCG(5, 6)))
	for _, c := range changes {
		if !c.Resample {
			t.Errorf("change %+v, want a resample with resample_probability 1", c)
		}
	}
	if lr := out["lr"].(float64); lr > 0.01 || lr < 0.0001 {
		t.Errorf("resampled lr = %v, want within [0.0001, 0.01]", lr)
	}
	if !ComplementParam("gae_lambda") || !ComplementParam("gamma") || ComplementParam("lr") || ComplementParam("gammas") {
		t.Error("ComplementParam: want gae_lambda and gamma, not lr or gammas")
	}
}

// examples/pbt.yaml stays valid, with the members and ready steps its comments promise.
func TestPBTExample(t *testing.T) {
	s, err := Load("../examples/pbt.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.PBT.Population != 8 || s.PBT.ReadySteps != 30000 || len(s.PBTReadySteps()) != 9 ||
		!reflect.DeepEqual(s.PBT.Mutable, []string{"lr", "gamma", "gae_lambda", "ent_coef", "clip"}) {
		t.Errorf("examples/pbt.yaml: pbt %+v, want 8 members ready every 30000 steps, lr, gamma, gae_lambda, ent_coef, clip mutable", *s.PBT)
	}
}

// --explain counts a pbt sweep's members, not configurations × seeds.
func TestPBTExplain(t *testing.T) {
	s, err := loadYAML(t, pbtBase)
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := Plan(s)
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	want := "trials: 8 members to start (method pbt, sampler_seed 7; member i has seed seeds[i mod 2]; ready every 4000 steps, bottom 0.25 exploits top 0.25, mutable lr, gamma, ent_coef; a diverged member is replaced)"
	if !slices.Contains(lines, want) {
		t.Errorf("explain:\n%s\nwant the line %q", strings.Join(lines, "\n"), want)
	}
}

// A W&B config with method pbt is told what its rlsweep block needs.
func TestPBTWandB(t *testing.T) {
	_, err := loadWandB(t, "program: train.py\nmethod: pbt\nmetric: {name: r, goal: maximize}\nparameters:\n  lr: {min: 0.001, max: 0.1}\n")
	want := "method: got pbt with metrics.source auto, want an rlsweep block with metrics: {source: jsonl}: PBT resumes from checkpoints the trainer announces in JSON lines"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load() = %v, want it to contain %q", err, want)
	}
}
