package sweeps

import (
	"strings"
	"testing"
)

func TestMemoryParamDefaultsToNumEnvs(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"parameters:\n  num_envs: {values: [256, 512]}\n", "num_envs"},
		{"parameters:\n  lr: {values: [0.1, 0.2]}\n", ""},
		{"parameters:\n  num_envs: {values: [256, 512]}\nresources: {memory_param: none}\n", ""},
		{"parameters:\n  batch: {min: 64, max: 4096}\n  num_envs: {values: [256, 512]}\nresources: {memory_param: batch}\nmethod: random\ntrials: 4\n", "batch"},
	} {
		s, err := Decode(strings.NewReader("name: m\ntrainer: {command: [\"python\", \"t.py\"], total_steps: 1000}\n"+tc.yaml), "m.yaml")
		if err == nil {
			err = s.Validate()
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		if got := s.MemoryParam(); got != tc.want {
			t.Errorf("%s: MemoryParam() = %q, want %q", tc.yaml, got, tc.want)
		}
	}
}

func TestMemoryParamMustBeNumeric(t *testing.T) {
	s, err := Decode(strings.NewReader("name: m\ntrainer: {command: [\"python\", \"t.py\"], total_steps: 1000}\n"+
		"parameters:\n  env: {values: [a, b]}\n  n: {values: [1, 2]}\nresources: {memory_param: env}\n"), "m.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), `resources.memory_param: got "env", want the numeric parameter that drives a trial's memory, one of n, or none`) {
		t.Fatalf("got %v", err)
	}
}

func TestMemoryAdvice(t *testing.T) {
	s := &Spec{Parameters: []Parameter{{Name: "num_envs", Values: []any{int64(256), int64(1024), int64(512), int64(4096)}},
		{Name: "batch", Min: new(64.0), Max: new(8192.0)}}}
	for _, tc := range []struct {
		name string
		v    float64
		want string
	}{
		{"num_envs", 2048, "the next smaller num_envs in the space is 1024"},
		{"num_envs", 4096, "the next smaller num_envs in the space is 1024"},
		{"num_envs", 256, "no num_envs of the space is below 256"},
		{"batch", 2048, "try batch below 2048 (the space is a range)"},
		{"other", 1, ""},
	} {
		if got := s.MemoryAdvice(tc.name, tc.v); got != tc.want {
			t.Errorf("MemoryAdvice(%s, %g) = %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
}
