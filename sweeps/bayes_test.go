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
	want := "search: TPE over 30 configurations: 10 random start-up ones (bayes.startup_trials left out: a third of run_cap 30, within [2, 10]), then 20 proposed by TPE from the results so far; then the best 3 run again on seeds [2] to confirm them (3 trials)"
	if !slices.Contains(lines, want) {
		t.Errorf("explain:\n%s\nwant the line %q", strings.Join(lines, "\n"), want)
	}
}

// The bayes section's defaults, and fresh seeds after the spec's.
func TestBayesSettings(t *testing.T) {
	s := &Spec{Method: MethodBayes, Seeds: []int64{3, 1, 7}}
	s.Trials = 30
	b := s.BayesSettings()
	if b.StartupTrials != 10 || b.RerunTop != 3 || !slices.Equal(b.RerunSeeds, []int64{8, 9, 10}) {
		t.Errorf("defaults %+v, want 10 start-up, top 3, re-run seeds [8 9 10]", b)
	}
	s.Bayes = &Bayes{StartupTrials: 4, RerunTop: 0, RerunSeeds: []int64{100}}
	if b := s.BayesSettings(); b.StartupTrials != 4 || b.RerunTop != 0 || !slices.Equal(b.RerunSeeds, []int64{100}) {
		t.Errorf("settings %+v, want the section's", b)
	}
}

// Left out, startup_trials is min(10, max(2, trials/3)) of the spec's budget, a section without it
// included; written out it is used as given, above the budget too.
func TestDefaultStartupFollowsBudget(t *testing.T) {
	for _, c := range []struct{ trials, want int }{{1, 2}, {2, 2}, {6, 2}, {8, 2}, {9, 3}, {12, 4}, {20, 6}, {29, 9}, {30, 10}, {31, 10}, {1000, 10}} {
		if got := DefaultStartup(c.trials); got != c.want {
			t.Errorf("DefaultStartup(%d) = %d, want %d", c.trials, got, c.want)
		}
		for _, section := range []*Bayes{nil, {RerunTop: 1}} {
			s := &Spec{Method: MethodBayes, Trials: c.trials, Seeds: []int64{1}, Bayes: section}
			applyLateDefaults(s)
			if got := s.BayesSettings().StartupTrials; got != c.want || !s.StartupDefaulted() {
				t.Errorf("trials %d, bayes section %+v: startup_trials %d (defaulted %v), want %d, defaulted", c.trials, section, got, s.StartupDefaulted(), c.want)
			}
		}
	}
	// A spec recorded without the count (a sweep started before it was written into the spec) keeps
	// the start-up count it was started with.
	if got := (&Spec{Method: MethodBayes, Trials: 12, Seeds: []int64{1}}).BayesSettings().StartupTrials; got != DefaultStartupTrials {
		t.Errorf("a recorded spec without bayes_startup: startup_trials %d, want %d", got, DefaultStartupTrials)
	}
	for _, given := range []int{1, 4, 10, 15} {
		s := &Spec{Method: MethodBayes, Trials: 12, Seeds: []int64{1}, Bayes: &Bayes{StartupTrials: given}}
		if got := s.BayesSettings().StartupTrials; got != given || s.StartupDefaulted() {
			t.Errorf("startup_trials %d with trials 12: got %d (defaulted %v), want it as given", given, got, s.StartupDefaulted())
		}
	}
}

// A spec of 12 configurations without startup_trials plans 4 start-up ones and --explain says where 4
// comes from; startup_trials written out is named as given; 0 written out is an error.
func TestDefaultStartupExplain(t *testing.T) {
	spec := "name: small\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 100000}\nmethod: bayes\ntrials: 12\nseeds: [1]\nparameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\n"
	for _, c := range []struct{ extra, line string }{
		{"", "search: TPE over 12 configurations: 4 random start-up ones (bayes.startup_trials left out: a third of trials 12, within [2, 10]), then 8 proposed by TPE from the results so far; then the best 3 run again on seeds [2] to confirm them (3 trials)"},
		{"bayes: {rerun_top: 0}\n", "search: TPE over 12 configurations: 4 random start-up ones (bayes.startup_trials left out: a third of trials 12, within [2, 10]), then 8 proposed by TPE from the results so far; no re-run (bayes.rerun_top 0)"},
		{"bayes: {startup_trials: 10}\n", "search: TPE over 12 configurations: 10 random start-up ones (bayes.startup_trials 10), then 2 proposed by TPE from the results so far; then the best 3 run again on seeds [2] to confirm them (3 trials)"},
	} {
		s, err := Decode(strings.NewReader(spec+c.extra), "small.yaml")
		if err != nil {
			t.Fatalf("%q: %v", c.extra, err)
		}
		trials, err := Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.BayesSettings().StartupTrials; len(trials) != want {
			t.Errorf("%q: plan has %d trials, want the %d start-up ones", c.extra, len(trials), want)
		}
		lines, err := Explain(s, trials)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(lines, c.line) {
			t.Errorf("%q: explain:\n%s\nwant the line %q", c.extra, strings.Join(lines, "\n"), c.line)
		}
		if w := s.Warnings(); len(w) > 0 {
			t.Errorf("%q: warnings %q, want none", c.extra, w)
		}
	}
	_, err := Decode(strings.NewReader(spec+"bayes: {startup_trials: 0}\n"), "small.yaml")
	want := "small.yaml:8: bayes.startup_trials: got 0, want an integer in [1, 100000], or no startup_trials for the default: a third of the configurations, within [2, 10]"
	if err == nil || err.Error() != want {
		t.Errorf("startup_trials 0: %v, want %q", err, want)
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

// With startup_trials left out only a budget of 1 or 2 configurations leaves none to TPE (the default
// is at least 2), and the warning says the count is the default.
func TestDefaultStartupWarning(t *testing.T) {
	for trials, warn := range map[int]bool{1: true, 2: true, 3: false, 6: false} {
		s := &Spec{Method: MethodBayes, Trials: trials, Seeds: []int64{1}}
		applyLateDefaults(s)
		w := s.Warnings()
		if !warn {
			if len(w) > 0 {
				t.Errorf("trials %d: warnings %q, want none", trials, w)
			}
			continue
		}
		if len(w) != 1 || !strings.Contains(w[0], "whose first 2 configurations are random start-up ones (bayes.startup_trials left out: a third of trials") ||
			!strings.Contains(w[0], "want trials above 2 (the start-up ones), e.g. 4") {
			t.Errorf("trials %d: warnings %q, want one naming the default start-up count and trials above 2", trials, w)
		}
	}
}
