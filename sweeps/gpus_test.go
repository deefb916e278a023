package sweeps

import (
	"encoding/json"
	"strings"
	"testing"
)

// resources.gpus takes whole numbers of GPUs and fractions of one GPU, from YAML and JSON specs alike;
// what it refuses names the field, the value, what is allowed and the fix.
func TestResourcesGPUs(t *testing.T) {
	const trainer = "name: g\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}\n"
	for _, tt := range []struct {
		gpus string
		want float64
		err  string // "" when valid
	}{
		{"0", 0, ""},
		{"1", 1, ""},
		{"2", 2, ""},
		{"64", 64, ""},
		{"2.0", 2, ""},
		{"0.25", 0.25, ""},
		{"0.5", 0.5, ""},
		{"0.01", 0.01, ""},
		{"0.999", 0.999, ""},
		{"1.5", 0, "resources.gpus: got 1.5, want a whole number of GPUs above 1 (1 or 2): a trial shares a GPU only with a fraction below 1, such as 0.5"},
		{"0.005", 0, "resources.gpus: got 0.005, want a fraction of at least 0.01 (at most 100 trials share a GPU), or 0 for trials that need no GPU"},
		{"-0.25", 0, "resources.gpus: got -0.25, want a whole number of GPUs in [0, 64], or a fraction of one GPU in [0.01, 1) such as 0.25 (four trials share a GPU)"},
		{"65", 0, "resources.gpus: got 65, want at most 64 GPUs per trial"},
		{"quarter", 0, `resources.gpus: got "quarter"`},
	} {
		s, err := Decode(strings.NewReader(trainer+"resources: {gpus: "+tt.gpus+"}\n"), "g.yaml")
		if err == nil {
			err = s.Validate()
		}
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("gpus %s: %v, want it accepted", tt.gpus, err)
		case tt.err == "" && s.Resources.GPUs != tt.want:
			t.Errorf("gpus %s: decoded %v, want %v", tt.gpus, s.Resources.GPUs, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("gpus %s: %v, want an error with %q", tt.gpus, err, tt.err)
		}
	}
	// A JSON spec says the same.
	s, err := Decode(strings.NewReader(`{"name": "g", "trainer": {"builtin": "ppo", "env": "CartPole-v1", "total_steps": 1000}, "resources": {"gpus": 0.25}}`), "g.json")
	if err == nil {
		err = s.Validate()
	}
	if err != nil || s.Resources.GPUs != 0.25 {
		t.Errorf("JSON spec with gpus 0.25: %v, %v; want 0.25", s, err)
	}
	// A spec stored with an integer (a workflow's input) decodes to the same number.
	var r Resources
	if err := json.Unmarshal([]byte(`{"task_queue":"rlsweep-gpu","gpus":2}`), &r); err != nil || r.GPUs != 2 {
		t.Errorf("stored resources with gpus 2: %+v, %v; want 2", r, err)
	}
	if b, _ := json.Marshal(Resources{GPUs: 1}); !strings.Contains(string(b), `"gpus":1`) {
		t.Errorf("resources with one GPU encode as %s, want \"gpus\":1 as before", b)
	}
}

// validate --explain says how fractional trials pack; whole-GPU trials add no line.
func TestExplainGPUFraction(t *testing.T) {
	for _, tt := range []struct {
		gpus float64
		want string
	}{
		{0.25, "resources: each trial holds 0.25 of a GPU: 4 share one; a GPU worker packs them best-fit"},
		{0.3, "resources: each trial holds 0.3 of a GPU: 3 share one, leaving 0.1 of it to other trials;"},
		{0.5, "resources: each trial holds 0.5 of a GPU: 2 share one;"},
		{1, ""},
	} {
		s, err := Decode(strings.NewReader("name: g\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 1000}\n"), "g.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s.Resources.GPUs = tt.gpus
		trials, err := Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := Explain(s, trials)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(lines, "\n")
		switch {
		case tt.want == "" && strings.Contains(text, "resources:"):
			t.Errorf("gpus %g: explain =\n%s\nwant no resources line", tt.gpus, text)
		case tt.want != "" && !strings.Contains(text, tt.want):
			t.Errorf("gpus %g: explain =\n%s\nwant a line with %q", tt.gpus, text, tt.want)
		}
	}
}
