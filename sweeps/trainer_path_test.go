package sweeps

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A relative command[0] becomes the absolute path it names from the spec's directory; a bare name, a
// template and an absolute path stay as written.
func TestResolveTrainerPath(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "sweep.yaml")
	for _, c := range []struct{ cmd, want string }{
		{"./train.sh", filepath.Join(dir, "train.sh")},
		{"scripts/train.sh", filepath.Join(dir, "scripts", "train.sh")},
		{"python", "python"},
		{"/usr/bin/env", "/usr/bin/env"},
		{"{{.Params.bin}}/x", "{{.Params.bin}}/x"},
	} {
		y := "name: p\ntrainer:\n  command: [" + strconv.Quote(c.cmd) + ", \"--lr={{.Params.lr}}\"]\n  total_steps: 100\nmetric: {name: reward, goal: maximize}\nparameters:\n  lr: {values: [0.1]}\n"
		s, err := Decode(strings.NewReader(y), spec)
		if err != nil {
			t.Fatal(err)
		}
		s.ResolveTrainerPath()
		if s.Trainer.Command[0] != c.want || s.Trainer.Command[1] != "--lr={{.Params.lr}}" {
			t.Errorf("command[0] %q: resolved to %q, want %q", c.cmd, s.Trainer.Command, c.want)
		}
	}
}
