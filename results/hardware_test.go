package results_test

import (
	"slices"
	"testing"

	"github.com/rlsweep/rlsweep/results"
)

const (
	h100 = "NVIDIA H100 80GB HBM3"
	a100 = "NVIDIA A100-SXM4-80GB"
)

func onGPU(name string) *results.Hardware {
	return &results.Hardware{Host: "box", GPUs: []results.GPU{{ID: "0", Name: name}}}
}

// ran is a trial of configuration config (parameters lr) that trained on gpu under precision.
func ran(id string, config int, lr float64, precision, gpu, outcome string) results.TrialSummary {
	return results.TrialSummary{TrialID: id, Config: config, Params: map[string]any{"lr": lr}, Precision: precision,
		Outcome: outcome, Steps: 1000, WallSeconds: 10, Hardware: onGPU(gpu)}
}

func TestHardwareClass(t *testing.T) {
	tests := []struct {
		hw   *results.Hardware
		want string
	}{
		{onGPU(h100), h100},
		{&results.Hardware{GPUs: []results.GPU{{ID: "0", Name: a100}, {ID: "1", Name: a100}}}, "2 × " + a100},
		{&results.Hardware{CPU: "AMD EPYC 9654 96-Core Processor"}, "no GPU (AMD EPYC 9654 96-Core Processor)"},
		{&results.Hardware{Host: "box"}, "no GPU"},
		{nil, results.UnknownHardware},
	}
	for _, tt := range tests {
		if got := (results.TrialSummary{Hardware: tt.hw}).HardwareClass(); got != tt.want {
			t.Errorf("HardwareClass(%+v) = %q, want %q", tt.hw, got, tt.want)
		}
	}
}

func TestNotStarted(t *testing.T) {
	// As the sweep records a trial it did not start for an out-of-memory bound (workflows' skipped):
	// outcome oom, the reason as its error, no hardware, no step, no wall time; Unstarted is cleared
	// before it is stored.
	skipped := results.TrialSummary{TrialID: "7-s2", Outcome: results.OutcomeOOM,
		Error: "trial 7-s2: not started: num_envs 4096 ≥ 2048, which ran out of memory on " + h100}
	tests := []struct {
		name string
		t    results.TrialSummary
		want bool
	}{
		{"skipped for the oom bound", skipped, true},
		{"standby never released", results.TrialSummary{Outcome: results.OutcomeCancelled, Unstarted: true}, true},
		{"ran out of memory", ran("3-s1", 3, 0.1, "", h100, results.OutcomeOOM), false},
		{"ran out of memory at step 0", results.TrialSummary{Outcome: results.OutcomeOOM, WallSeconds: 4, Hardware: onGPU(h100)}, false},
		{"ran without a hardware record", results.TrialSummary{Outcome: results.OutcomeCompleted, Steps: 100, WallSeconds: 3}, false},
	}
	for _, tt := range tests {
		if got := tt.t.NotStarted(); got != tt.want {
			t.Errorf("%s: NotStarted() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// sensitivityTrials: configuration lr=0.01 (plan indices 0 under fp32, 1 under tf32) diverges only
// under tf32 on the H100; lr=0.1 (2, 3) diverges everywhere; lr=0.001 (4, 5) diverges under tf32 and
// fails under fp32; lr=0.0001 (6) completes everywhere, one seed never started; lr=0.03 (8 under tf32,
// 9 under fp32) diverges under tf32 on the H100, which stops its seed on the A100, and trains under
// fp32.
func sensitivityTrials() []results.TrialSummary {
	const c, d = results.OutcomeCompleted, results.OutcomeDiverged
	sibling := ran("8-s2", 8, 0.03, "tf32", a100, d)
	sibling.Pruning = &results.Pruning{Rule: "asha", SiblingDiverged: true}
	return []results.TrialSummary{
		ran("0-s1", 0, 0.01, "fp32", h100, c),
		ran("0-s2", 0, 0.01, "fp32", a100, c),
		ran("1-s1", 1, 0.01, "tf32", h100, d),
		ran("1-s2", 1, 0.01, "tf32", a100, results.OutcomePruned),
		ran("2-s1", 2, 0.1, "fp32", h100, d),
		ran("3-s1", 3, 0.1, "tf32", h100, d),
		ran("4-s1", 4, 0.001, "fp32", a100, results.OutcomeFailed),
		ran("5-s1", 5, 0.001, "tf32", h100, d),
		ran("6-s1", 6, 0.0001, "fp32", h100, c),
		ran("6-s2", 6, 0.0001, "fp32", a100, c),
		{TrialID: "6-s3", Config: 6, Params: map[string]any{"lr": 0.0001}, Precision: "fp32", Outcome: results.OutcomeOOM},
		ran("8-s1", 8, 0.03, "tf32", h100, d),
		sibling,
		ran("9-s1", 9, 0.03, "fp32", h100, c),
	}
}

func TestHardwareSensitivity(t *testing.T) {
	got := results.HardwareSensitivity(sensitivityTrials())
	if len(got) != 2 {
		t.Fatalf("HardwareSensitivity flagged %d configurations, want 2 (lr=0.01, lr=0.03): %+v", len(got), got)
	}
	c := got[0]
	if c.Params["lr"] != 0.01 || !slices.Equal(c.Configs, []int{0, 1}) {
		t.Errorf("first flagged: params %v, configs %v; want lr=0.01, configs [0 1]", c.Params, c.Configs)
	}
	want := "diverges under tf32 on " + h100 + "; trains under fp32 on " + a100 + ", tf32 on " + a100 + ", fp32 on " + h100
	if line := c.Line(); line != want {
		t.Errorf("Line() = %q\nwant     %q", line, want)
	}
	// The seed stopped because its sibling diverged did not diverge on the A100 itself, nor train
	// there: that group is neither.
	c = got[1]
	want = "diverges under tf32 on " + h100 + "; trains under fp32 on " + h100
	if c.Params["lr"] != 0.03 || !slices.Equal(c.Configs, []int{8, 9}) || c.Line() != want {
		t.Errorf("second flagged: params %v, configs %v, %q; want lr=0.03, configs [8 9], %q", c.Params, c.Configs, c.Line(), want)
	}
	if got := results.HardwareSensitivity(nil); got != nil {
		t.Errorf("HardwareSensitivity(nil) = %v, want nil", got)
	}
}

func TestDivergenceByHardware(t *testing.T) {
	groups := results.DivergenceByHardware(sensitivityTrials())
	var names []string
	for _, g := range groups {
		names = append(names, g.Name())
	}
	want := []string{"fp32 on " + a100, "tf32 on " + a100, "fp32 on " + h100, "tf32 on " + h100}
	if !slices.Equal(names, want) {
		t.Fatalf("groups %q, want %q (the trial never started left out)", names, want)
	}
	// fp32 on the A100: 0-s2 and 6-s2 completed, 4-s1 failed (6-s3 never started).
	g := groups[0]
	if g.Trials != 3 || g.Outcomes[results.OutcomeCompleted] != 2 || g.Outcomes[results.OutcomeFailed] != 1 {
		t.Errorf("%s: %d trials, outcomes %v; want 3 trials, 2 completed, 1 failed", g.Name(), g.Trials, g.Outcomes)
	}
	// tf32 on the H100: 1-s1, 3-s1, 5-s1 and 8-s1 diverged.
	g = groups[3]
	if g.Trials != 4 || g.Outcomes[results.OutcomeDiverged] != 4 {
		t.Errorf("%s: %d trials, outcomes %v; want 4 trials, 4 diverged", g.Name(), g.Trials, g.Outcomes)
	}
	if name := (results.HardwareGroup{GPU: h100}).Name(); name != h100 {
		t.Errorf("Name() without a precision = %q, want %q", name, h100)
	}
}
