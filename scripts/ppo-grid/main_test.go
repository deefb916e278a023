package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A grid with a total_steps axis: each configuration's budget is its total_steps, the grid's steps the
// largest; -param total_steps=... replaces the axis; the values must be whole numbers of steps.
func TestBudgetAxis(t *testing.T) {
	g := grids["Pendulum-v1-budget"]
	if g.Env != "Pendulum-v1" || g.Name != "Pendulum-v1-budget" || len(g.configs()) != 36 || len(g.Seeds) != 5 {
		t.Fatalf("Pendulum-v1-budget: env %s, name %s, %d configurations, %d seeds; want Pendulum-v1, 36 and 5", g.Env, g.Name, len(g.configs()), len(g.Seeds))
	}
	budgets := map[int64]int{}
	for _, c := range g.configs() {
		budgets[g.budget(c)]++
	}
	if len(budgets) != 3 || budgets[50_000] != 12 || budgets[100_000] != 12 || budgets[200_000] != 12 {
		t.Errorf("budgets %v, want 12 configurations each at 50,000, 100,000 and 200,000", budgets)
	}
	if err := g.override("1,2", []string{"total_steps=2048,4096"}); err != nil {
		t.Fatal(err)
	}
	if g.Steps != 4096 || len(g.configs()) != 24 {
		t.Errorf("after -param total_steps=2048,4096: steps %d, %d configurations; want 4096 and 24", g.Steps, len(g.configs()))
	}
	for _, bad := range []string{"total_steps=0", "total_steps=1.5", "total_step=1000"} {
		if err := g.override("", []string{bad}); err == nil {
			t.Errorf("-param %s: accepted", bad)
		}
	}
	if got := grids["Pendulum-v1"].budget(map[string]float64{"lr": 1e-3}); got != 200_000 {
		t.Errorf("Pendulum-v1: budget %d, want the grid's 200,000", got)
	}
}

// record trains a configuration to its own budget: --steps is its total_steps (not passed as --set),
// the diagnostics judge it with that budget, and the run's params keep it.
func TestRecordBudget(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	// A stand-in for rlsweep train: a record every 1,000 steps up to --steps, reward flat.
	bin := filepath.Join(dir, "rlsweep")
	script := `#!/bin/sh
echo "$@" > ` + argsFile + `
steps=0
while [ $# -gt 0 ]; do
  if [ "$1" = --steps ]; then steps=$2; fi
  shift
done
s=1000
while [ $s -le $steps ]; do
  echo "{\"step\": $s, \"reward\": -500}" >> "$RLSWEEP_METRICS_FILE"
  s=$((s + 1000))
done
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := grids["Pendulum-v1-budget"]
	r, err := record(bin, g, map[string]float64{"lr": 1e-3, "num_envs": 4, BudgetParam: 50_000}, 3)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(args), "--steps 50000 ") || strings.Contains(string(args), "total_steps") {
		t.Errorf("rlsweep %s: want --steps 50000 and no --set total_steps", args)
	}
	if len(r.Steps) != 50 || r.Steps[len(r.Steps)-1] != 50_000 || r.Params[BudgetParam] != 50_000 || r.Seed != 3 {
		t.Errorf("run: %d records to %d, params %v, seed %d; want 50 to 50,000 with total_steps 50000", len(r.Steps), r.Steps[len(r.Steps)-1], r.Params, r.Seed)
	}
}
