package sweeps

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A W&B bayes config validates, plans its random start-up configurations (method random's first, so
// its first trial's argv is what it was for random), and --explain says what the search does.
func TestBayesWandBExplain(t *testing.T) {
	cfg := "program: t.py\nmethod: bayes\nrun_cap: 30\nmetric: {name: loss, goal: minimize}\nparameters:\n  lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}\n  bs: {values: [16, 32, 64]}\n"
	s, err := loadWandB(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != DefaultStartupTrials || s.Budget() != 30+DefaultRerunTop {
		t.Errorf("plan has %d trials, budget %d; want the %d start-up ones and 30 configurations + %d re-run", len(trials), s.Budget(), DefaultStartupTrials, DefaultRerunTop)
	}
	r, err := loadWandB(t, strings.Replace(cfg, "method: bayes", "method: random", 1))
	if err != nil {
		t.Fatal(err)
	}
	random, _ := Plan(r)
	for i := range trials {
		if !reflect.DeepEqual(trials[i].Params, random[i].Params) {
			t.Errorf("start-up configuration %d = %v, want method random's %v", i, trials[i].Params, random[i].Params)
		}
	}
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	want := "search: TPE over 30 configurations: 10 random start-up ones (bayes.startup_trials 10), then 20 proposed by TPE from the results so far; then the best 3 run again on seeds [2] to confirm them (3 trials)"
	if !slices.Contains(lines, want) {
		t.Errorf("explain:\n%s\nwant the line %q", strings.Join(lines, "\n"), want)
	}
}

// The bayes section's defaults, and fresh seeds after the spec's.
func TestBayesSettings(t *testing.T) {
	s := &Spec{Method: MethodBayes, Seeds: []int64{3, 1, 7}}
	b := s.BayesSettings()
	if b.StartupTrials != 10 || b.RerunTop != 3 || !slices.Equal(b.RerunSeeds, []int64{8, 9, 10}) {
		t.Errorf("defaults %+v, want 10 start-up, top 3, re-run seeds [8 9 10]", b)
	}
	s.Bayes = &Bayes{StartupTrials: 4, RerunTop: 0, RerunSeeds: []int64{100}}
	if b := s.BayesSettings(); b.StartupTrials != 4 || b.RerunTop != 0 || !slices.Equal(b.RerunSeeds, []int64{100}) {
		t.Errorf("settings %+v, want the section's", b)
	}
}

// Start-up configurations of a small discrete space are distinct, and fewer than asked for when the
// space has fewer.
func TestStartupConfigsDistinct(t *testing.T) {
	s := &Spec{Method: MethodBayes, SamplerSeed: 4, Parameters: []Parameter{{Name: "a", Values: []any{"x", "y"}}, {Name: "b", Values: []any{int64(1), int64(2)}}}}
	got := StartupConfigs(s, 10)
	if len(got) != 4 {
		t.Fatalf("%d start-up configurations of a 4-configuration space, want 4", len(got))
	}
	seen := map[string]bool{}
	for _, c := range got {
		if seen[ConfigKey(c)] {
			t.Errorf("%v twice", c)
		}
		seen[ConfigKey(c)] = true
	}
}
