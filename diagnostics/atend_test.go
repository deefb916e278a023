package diagnostics

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

// curve returns n values: a climb from lo to hi over the first rise of them, a plateau at hi, and from
// fallAt on a fall to end; with Gaussian noise of sd.
func curve(n, rise, fallAt int, lo, hi, end, sd float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		v := hi
		switch {
		case i < rise:
			v = lo + (hi-lo)*float64(i)/float64(rise)
		case i >= fallAt:
			v = hi + (end-hi)*float64(i-fallAt+1)/float64(n-fallAt)
		}
		out[i] = v + sd*r.NormFloat64()
	}
	return out
}

func finish(t *testing.T, cfg Config, vals []float64) (Verdict, bool) {
	t.Helper()
	if cfg.TotalSteps == 0 {
		cfg.TotalSteps = int64(len(vals))
	}
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		e.Observe(metrics.Record{Step: int64(i + 1), Values: map[string]float64{cfg.objective(): v}})
	}
	return e.Finish()
}

func (c Config) objective() string {
	if c.Objective == "" {
		return metrics.Reward
	}
	return c.Objective
}

// cliff is curve with a sudden fall: from the value at index at on, the values sit at end.
func cliff(n, rise, at int, lo, hi, end, sd float64, seed uint64) []float64 {
	out := curve(n, rise, n, lo, hi, hi, sd, seed)
	for i := at; i < n; i++ {
		out[i] += end - hi
	}
	return out
}

// A run that climbs, holds, and collapses in its last 10 % — too late for a sustained rule to stop it —
// ends judged collapsed_at_end; the same run holding its gain, or ending on a noisy late best, does not.
func TestCollapsedAtEnd(t *testing.T) {
	for seed := range uint64(5) {
		v, ok := finish(t, Config{}, cliff(1000, 200, 905, -6, 60, 5, 2, seed))
		if !ok || v.Rule != RuleCollapsedAtEnd || v.Level != Warn || v.Step != 1000 {
			t.Fatalf("seed %d: collapse at 90%% of the run: got %v, %v; want a collapsed_at_end warning at step 1000", seed, v, ok)
		}
		if !strings.Contains(v.Detail, "of the gain lost") || v.Advice == "" || v.ObjectiveValue > 15 {
			t.Errorf("seed %d: verdict %+v: want the detail, the advice and the final level", seed, v)
		}
		if v, ok := finish(t, Config{}, curve(1000, 200, 1000, -6, 60, 60, 2, seed)); ok {
			t.Errorf("seed %d: a run holding its gain: got %v", seed, v)
		}
		// Lost about 60 % of its gain: not a collapse by the default share (0.75); by a share of 0.5 it is.
		if v, ok := finish(t, Config{}, cliff(1000, 200, 890, 0, 60, 33, 2, seed)); ok {
			t.Errorf("seed %d: 60%% of the gain lost: got %v", seed, v)
		}
		// About 60 % lost and still falling at the end: a partial collapse, judged.
		sliding := cliff(1000, 200, 890, 0, 60, 40, 1, seed)
		for i := 900; i < 1000; i++ {
			sliding[i] -= 10 * float64(i-900) / 100
		}
		if v, ok := finish(t, Config{}, sliding); !ok || !strings.Contains(v.Detail, "still falling") {
			t.Errorf("seed %d: 60%% of the gain lost, still falling: got %v, %v", seed, v, ok)
		}
		half := 0.5
		if _, ok := finish(t, Config{Rules: map[string]RuleConfig{RuleCollapsedAtEnd: {Threshold: &half}}}, cliff(1000, 200, 890, 0, 60, 33, 2, seed)); !ok {
			t.Errorf("seed %d: 60%% of the gain lost, threshold 0.5: not judged", seed)
		}
	}
	// Noise whose luckiest window is the "gain": no collapse, whatever the seed.
	for seed := range uint64(200) {
		if v, ok := finish(t, Config{}, curve(300, 1, 300, 10, 10, 10, 3, seed)); ok {
			t.Errorf("flat noisy run, seed %d: got %v", seed, v)
		}
	}
	// A best in the final tenth is a late peak, not a level given back.
	late := curve(400, 380, 400, 0, 50, 50, 1, 2)
	late[len(late)-1] = 0
	if v, ok := finish(t, Config{}, late); ok {
		t.Errorf("late best: got %v", v)
	}
	// Fewer than endMinValues values: not judged.
	if v, ok := finish(t, Config{}, curve(19, 5, 15, 0, 50, 0, 0.1, 3)); ok {
		t.Errorf("19 values: got %v", v)
	}
	// A minimised objective (a loss) that falls and climbs back to where it started.
	if v, ok := finish(t, Config{Objective: "train/loss", Goal: "minimize"}, cliff(500, 100, 455, 10, 1, 9.5, 0.1, 4)); !ok || v.ObjectiveValue < 8 {
		t.Errorf("minimised objective back at its start: got %v, %v", v, ok)
	}
	off := Config{Rules: map[string]RuleConfig{RuleCollapsedAtEnd: {Level: LevelOff}}}
	if v, ok := finish(t, off, cliff(1000, 200, 905, -6, 60, 5, 2, 0)); ok {
		t.Errorf("rule off: got %v", v)
	}
}

// A run a stop rule stopped is not judged again at its end.
func TestFinishAfterStop(t *testing.T) {
	e, err := NewEngine(Config{TotalSteps: 100, WarmupSteps: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range curve(100, 20, 90, 0, 50, 0, 0.5, 1) {
		if i == 60 {
			v = math.NaN()
			e.Observe(metrics.Record{Step: int64(i + 1), Values: map[string]float64{metrics.ValueLoss: v}})
			continue
		}
		e.Observe(metrics.Record{Step: int64(i + 1), Values: map[string]float64{metrics.Reward: v}})
	}
	if _, stopped := e.Stopped(); !stopped {
		t.Fatal("a NaN value loss did not stop the run")
	}
	if v, ok := e.Finish(); ok {
		t.Errorf("Finish after a stop: got %v", v)
	}
}

// collapsed_at_end takes off and warn; stop and patience are refused, naming the field and why, and a
// threshold outside (0, 1].
func TestCollapsedAtEndConfig(t *testing.T) {
	one, bad := 1, 1.5
	_, err := NewEngine(Config{Rules: map[string]RuleConfig{RuleCollapsedAtEnd: {Level: LevelStop, Patience: &one, Threshold: &bad}}})
	for _, want := range []string{
		`diagnostics.rules.collapsed_at_end.level: got "stop", want "off" or "warn"`,
		"diagnostics.rules.collapsed_at_end.patience: got 1, want none",
		"diagnostics.rules.collapsed_at_end.threshold: got 1.5, want the share of its best gain",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v: want it to contain %q", err, want)
		}
	}
}

// The run track keeps at most runTrackCap values, averaging neighbours in pairs past it, and its shape
// still shows a collapse in the last eighth of a run of a million records.
func TestRunTrackCap(t *testing.T) {
	var tr runTrack
	n := 1_000_000
	for i := range n {
		v := 50.0
		if i >= n-n/8 {
			v = 0
		}
		tr.add(v, int64(i+1))
	}
	if len(tr.vals) > runTrackCap || tr.stride < 2 {
		t.Fatalf("kept %d values at stride %d, want at most %d", len(tr.vals), tr.stride, runTrackCap)
	}
	s, ok := tr.shape()
	if !ok || s.final > 1 || s.best != 50 || s.finalStep < int64(n-2*tr.stride) {
		t.Errorf("shape %+v, want final ≈ 0, best 50, last step ≈ %d", s, n)
	}
}
