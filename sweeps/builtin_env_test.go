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
