package sweeps

import (
	"strings"
	"testing"
)

const precisionBase = "name: p\ntrainer: {command: [\"python\", \"t.py\"], total_steps: 1000}\nseeds: [1, 2]\n"

func decodeValid(t *testing.T, yaml string) (*Spec, error) {
	t.Helper()
	s, err := Decode(strings.NewReader(precisionBase+yaml), "p.yaml")
	if err != nil {
		return nil, err
	}
	return s, s.Validate()
}

// TestPrecisionRunsEachConfigurationUnderEachSetting: a grid of two configurations under fp32 and tf32
// is four configurations, numbered with the setting varying fastest, each with its parameters and
// setting, every one once per seed.
func TestPrecisionRunsEachConfigurationUnderEachSetting(t *testing.T) {
	s, err := decodeValid(t, "parameters:\n  lr: {values: [0.1, 0.2]}\nresources: {precision: [fp32, tf32]}\n")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id, prec string
		lr       float64
	}{
		{"0-s1", "fp32", 0.1}, {"0-s2", "fp32", 0.1}, {"1-s1", "tf32", 0.1}, {"1-s2", "tf32", 0.1},
		{"2-s1", "fp32", 0.2}, {"2-s2", "fp32", 0.2}, {"3-s1", "tf32", 0.2}, {"3-s2", "tf32", 0.2},
	}
	if len(trials) != len(want) {
		t.Fatalf("%d trials, want %d: %+v", len(trials), len(want), trials)
	}
	for i, w := range want {
		tr := trials[i]
		if tr.ID != w.id || tr.Precision != w.prec || tr.Params["lr"] != w.lr {
			t.Errorf("trial %d = %s %s lr=%v, want %s %s lr=%v", i, tr.ID, tr.Precision, tr.Params["lr"], w.id, w.prec, w.lr)
		}
	}
	if n := s.Budget(); n != 8 {
		t.Errorf("Budget() = %d, want 8", n)
	}
	if first := FirstListed(s, trials[0]); first.Precision != "fp32" {
		t.Errorf("FirstListed precision %q, want fp32", first.Precision)
	}
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(lines, "\n")
	for _, w := range []string{"trials: 8 (2 configurations × 2 precision settings (fp32, tf32) × 2 seeds",
		"precision tf32: removes NVIDIA_TF32_OVERRIDE TORCH_ALLOW_TF32_CUBLAS_OVERRIDE JAX_DEFAULT_MATMUL_PRECISION from the worker's environment, sets TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 JAX_DEFAULT_MATMUL_PRECISION=tensorfloat32 RLSWEEP_PRECISION=tf32"} {
		if !strings.Contains(text, w) {
			t.Errorf("explain lacks %q:\n%s", w, text)
		}
	}
}

// TestPrecisionRandomKeepsParamsAcrossSettings: method random draws `trials` configurations and runs
// each under every setting with the same parameter values.
func TestPrecisionRandomKeepsParamsAcrossSettings(t *testing.T) {
	s, err := decodeValid(t, "method: random\ntrials: 3\nparameters:\n  lr: {min: 0.001, max: 0.1}\nresources: {precision: [default, tf32]}\n")
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 3*2*2 {
		t.Fatalf("%d trials, want 12", len(trials))
	}
	byConfig := map[int]Trial{}
	for _, tr := range trials {
		byConfig[tr.Config] = tr
	}
	for c := 0; c < 6; c += 2 {
		a, b := byConfig[c], byConfig[c+1]
		if a.Precision != "default" || b.Precision != "tf32" || a.Params["lr"] != b.Params["lr"] {
			t.Errorf("configurations %d and %d: %s lr=%v, %s lr=%v; want default and tf32 with one lr", c, c+1, a.Precision, a.Params["lr"], b.Precision, b.Params["lr"])
		}
	}
	if byConfig[0].Params["lr"] == byConfig[2].Params["lr"] {
		t.Errorf("configurations 0 and 2 drew the same lr %v", byConfig[0].Params["lr"])
	}
}

func TestPrecisionErrors(t *testing.T) {
	grid := "parameters:\n  lr: {values: [0.1, 0.2]}\n"
	for _, tc := range []struct{ yaml, want string }{
		{grid + "resources: {precision: [fp16]}\n", `resources.precision[0]: got "fp16", want one of default, fp32, tf32`},
		{grid + "resources: {precision: [tf32, fp32, tf32]}\n", `resources.precision[2]: got "tf32", want each setting once (resources.precision[0] is the same)`},
		{grid + "resources: {precision: []}\n", `resources.precision: got an empty list, want at least one of default, fp32, tf32 (or remove resources.precision)`},
		{"method: bayes\ntrials: 10\nparameters:\n  lr: {min: 0.001, max: 0.1}\nresources: {precision: [fp32, tf32]}\n",
			"resources.precision: got [fp32, tf32], want no precision dimension with method bayes"},
		{grid + "resources: {precision: tf32}\n", "resources.precision"},
	} {
		_, err := decodeValid(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\ngot %v\nwant %q", tc.yaml, err, tc.want)
		}
	}
}

func TestPrecisionAndTrainerEnvironment(t *testing.T) {
	s, err := Decode(strings.NewReader("name: p\ntrainer: {command: [\"python\", \"t.py\"], total_steps: 1000, environment: {NVIDIA_TF32_OVERRIDE: \"0\"}}\n"+
		"parameters:\n  lr: {values: [0.1, 0.2]}\nresources: {precision: [fp32, tf32]}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate()
	if want := `trainer.environment.NVIDIA_TF32_OVERRIDE: got "0", want not set with resources.precision`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestPrecisionAndBuiltinTrainer(t *testing.T) {
	s, err := Decode(strings.NewReader("name: p\ntrainer: {builtin: ppo, env: CartPole-v1}\nparameters:\n  lr: {values: [0.1, 0.2]}\nresources: {precision: [fp32, tf32]}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "no precision dimension with trainer.builtin ppo") {
		t.Fatalf("got %v", err)
	}
}

// TestPrecisionCountsInTheTrialBound: the settings multiply the plan, and its bound says so.
func TestPrecisionCountsInTheTrialBound(t *testing.T) {
	_, err := decodeValid(t, "method: random\ntrials: 20000\nparameters:\n  lr: {min: 0.001, max: 0.1}\nresources: {precision: [default, fp32, tf32]}\n")
	if err == nil || !strings.Contains(err.Error(), "20000 trials × 3 precision settings × 2 seeds") {
		t.Fatalf("got %v", err)
	}
}
