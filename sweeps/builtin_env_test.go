package sweeps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltinTrainerEnv checks that a spec for the built-in trainer names one of its environments:
// Gymnasium's four classic-control ids pass, anything else is refused with the allowed names listed.
func TestBuiltinTrainerEnv(t *testing.T) {
	const allowed = "want Acrobot-v1, CartPole-v1, MountainCarContinuous-v0 or Pendulum-v1 (the builtin trainer's environments)"
	tests := []struct{ env, want string }{
		{"CartPole-v1", ""},
		{"Pendulum-v1", ""},
		{"Acrobot-v1", ""},
		{"MountainCarContinuous-v0", ""},
		{"MountainCar-v0", `t.yaml:4: trainer.env: got "MountainCar-v0", ` + allowed},
		{`""`, `trainer.env: got "", ` + allowed},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.yaml")
			spec := "name: t\ntrainer:\n  builtin: ppo\n  env: " + tt.env + "\n  total_steps: 1000\n"
			if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
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

// TestBuiltinTrainerActions: a built-in trainer's categorical environment fills diagnostics.actions
// with its number of actions (so the entropy rules judge against log(actions)); a continuous one leaves
// it 0, and a spec's own value is kept.
func TestBuiltinTrainerActions(t *testing.T) {
	tests := []struct {
		env, extra string
		want       int
	}{
		{"Acrobot-v1", "", 3},
		{"CartPole-v1", "", 2},
		{"Pendulum-v1", "", 0},
		{"MountainCarContinuous-v0", "", 0},
		{"CartPole-v1", "diagnostics: {actions: 5}\n", 5},
	}
	for _, tt := range tests {
		t.Run(tt.env+tt.extra, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.yaml")
			spec := "name: t\ntrainer:\n  builtin: ppo\n  env: " + tt.env + "\n  total_steps: 1000\n" + tt.extra
			if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if s.Diagnostics.Actions != tt.want {
				t.Errorf("diagnostics.actions = %d, want %d", s.Diagnostics.Actions, tt.want)
			}
		})
	}
}
