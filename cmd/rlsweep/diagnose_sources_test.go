package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies a file of metrics/testdata (real formats, our own numbers) under a new name.
func copyFixture(t *testing.T, name, as string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "metrics", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), as)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// diagnose tells a console log and a progress.csv from JSON lines by their content and name, and
// replays them: rsl_rl's table whose value loss turns nan (its last block, cut short when the trainer
// stopped, still counts), SB3's table (its cut last table is counted as malformed) and progress.csv.
func TestRunDiagnoseConsoleAndCSV(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		args    []string
		wantOut []string
	}{
		{"rsl_rl console", copyFixture(t, "rsl_rl_v1.log", "train.log"), nil, []string{
			"stdout (rsl_rl), 7 records, 1 malformed", "steps: environment steps (Total timesteps)",
			"STOP  non_finite at step 98304: "}},
		{"rsl_rl iterations", copyFixture(t, "rsl_rl_v1.log", "out.txt"), []string{"--steps-per-iteration", "1000"}, []string{
			"steps: environment steps (iteration × 1000)", "STOP  non_finite at step 4000: "}},
		{"sb3 console", copyFixture(t, "sb3_stdout.log", "sb3.out"), nil, []string{
			"stdout (sb3), 4 records, 2 malformed", "STOP  non_finite at step 6144: value_loss = NaN"}},
		{"sb3 progress.csv", copyFixture(t, "sb3_progress.csv", "progress.csv"), nil, []string{
			"csv (sb3), 4 records, 2 malformed", "steps: environment steps (time/total_timesteps)",
			"STOP  non_finite at step 6144: value_loss = NaN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
			args := append(append([]string{"diagnose"}, tt.args...), tt.path)
			code := run(context.Background(), args, &Factory{In: strings.NewReader(""), Out: out, ErrOut: errOut})
			if code != exitDiverged {
				t.Fatalf("exit = %d, want %d; stderr %s\n%s", code, exitDiverged, errOut, out)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
