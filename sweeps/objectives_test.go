package sweeps

import (
	"strings"
	"testing"
)

// TestObjectivesList: metric written as a list gives the objectives in order, with goals defaulted
// (maximize for the logged metric, minimize for derived ones), and Metric is the logged one.
func TestObjectivesList(t *testing.T) {
	s, err := decodeValid(t, "parameters:\n  lr: {values: [0.1, 0.2]}\nmetric:\n  - name: env_steps\n    target: -200\n  - {name: episode_return, bounds: [-1700, 0]}\n  - name: seed_failure_rate\n")
	if err != nil {
		t.Fatal(err)
	}
	if !s.MultiObjective() || len(s.Objectives) != 3 {
		t.Fatalf("objectives %+v", s.Objectives)
	}
	if s.Metric.Name != "episode_return" || s.Metric.Goal != GoalMaximize || s.Metric.Bounds == nil {
		t.Errorf("metric = %+v, want the logged objective episode_return, maximize, with its bounds", s.Metric)
	}
	wantGoals := []string{GoalMinimize, GoalMaximize, GoalMinimize}
	for i, o := range s.Objectives {
		if o.Goal != wantGoals[i] {
			t.Errorf("objective %d (%s) goal %q, want %q", i, o.Name, o.Goal, wantGoals[i])
		}
	}
	if s.Objectives[0].Label() != "env_steps_to_target" || *s.Objectives[0].Target != -200 {
		t.Errorf("env_steps with a target: %+v (label %s)", s.Objectives[0], s.Objectives[0].Label())
	}
	text := explainText(t, s)
	for _, want := range []string{"objectives: 3", "objective 1: minimize env_steps_to_target: environment steps until the windowed episode_return first reaches -200",
		"objective 3: minimize seed_failure_rate"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain lacks %q:\n%s", want, text)
		}
	}
}

// TestObjectivesErrors: each mistake in a metric list is named with its field, value and what is
// allowed.
func TestObjectivesErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"metric: [{name: env_steps}, {name: wall_seconds}]", `p.yaml:6: metric: got no objective the trainer logs, want one objective the trainer logs`},
		{"metric: [{name: reward}, {name: value_loss, goal: minimize}]", `metric[1].name: got "value_loss", want one objective the trainer logs (reward); the others derived`},
		{"metric: [{name: reward}, {name: env_steps, goal: maximize}]", `metric[1].goal: got "maximize", want minimize for env_steps`},
		{"metric: [{name: reward}, {name: wall_seconds, target: 3}]", `metric[1].target: got 3, want no target here`},
		{"metric: [{name: reward}, {name: reward}]", `metric[1].name: got "reward", want each objective once`},
		{"metric: [{name: reward}, {name: env_steps, bounds: [0, 1]}]", `metric[1].bounds: got [0, 1], want no bounds on a derived objective`},
		{"metric: [{name: reward}, {name: gpu_seconds}]\nresources: {gpus: 0}", `metric[1].name: got "gpu_seconds", want gpu_seconds with resources.gpus set`},
		{"metric: [{name: reward}, {name: env_steps}, {name: wall_seconds}, {name: gpu_seconds}, {name: seed_failure_rate}]", `metric: got a list of 5 objectives, want 1 to 4`},
		{"metric: [{name: reward, goal: up}]", `metric[0].goal: got "up", want maximize or minimize`},
		{"metric: [{name: reward}, {name: env_steps}]\nearly_terminate: {type: median}", `early_terminate.type: got "median" with 2 objectives, want asha or hyperband with several objectives`},
		{"metric: [{name: reward}, {name: env_steps}]\nmethod: bayes\ntrials: 301", `trials: got 301, want an integer in [1, 300] for method bayes with several objectives`},
		{"metric: [{name: reward}, {name: env_steps}]\nmethod: pbt", `method: got "pbt", want grid, random, sobol or bayes with several objectives`},
	} {
		_, err := decodeValid(t, "parameters:\n  lr: {values: [0.1, 0.2]}\n"+c.yaml+"\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.yaml, err, c.want)
		}
	}
}

// TestObjectivesWithASHA: asha and hyperband take several objectives, and explain says each rung keeps
// its Pareto front and what each objective reads there.
func TestObjectivesWithASHA(t *testing.T) {
	for _, et := range []string{"{type: asha}", "{type: hyperband, max_iter: 27, s: 3}"} {
		s, err := decodeValid(t, "parameters:\n  lr: {values: [0.1, 0.2]}\nmetric: [{name: reward}, {name: env_steps, target: 5}, {name: wall_seconds}]\nearly_terminate: "+et+"\n")
		if err != nil {
			t.Fatalf("%s: %v", et, err)
		}
		text := explainText(t, s)
		for _, want := range []string{"3 objectives; at a rung reached by n configurations so far, one goes on if it is on their Pareto front there",
			"env_steps_to_target: the IQM over its seeds of the step each reached the target, never for a seed that has not yet",
			"wall_seconds: the IQM over its seeds of their training seconds so far"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: explain lacks %q:\n%s", et, want, text)
			}
		}
	}
}

// explainText is what validate --explain prints of s, one line each.
func explainText(t *testing.T, s *Spec) string {
	t.Helper()
	trials, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Explain(s, trials)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
