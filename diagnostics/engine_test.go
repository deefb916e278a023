package diagnostics

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/metrics"
)

func ptr[T any](v T) *T { return &v }

// rec builds a record at step with alternating names and values.
func rec(step int64, kv ...any) metrics.Record {
	r := metrics.Record{Step: step, Values: map[string]float64{}}
	for i := 0; i < len(kv); i += 2 {
		r.Values[kv[i].(string)] = kv[i+1].(float64)
	}
	return r
}

func newEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// noWarmup is a config without warm-up and with patience 1, so one record decides.
var noWarmup = Config{WarmupSteps: -1, Patience: 1}

// seeFlatReward feeds five records of a reward that wanders around 10 (steps −5 … −1): the engine then
// sees the objective, and a run that never improved, so a sustained rule may stop it.
func seeFlatReward(e *Engine) {
	for i, r := range []float64{8, 12, 10, 9, 11} {
		e.Observe(rec(int64(i-5), metrics.Reward, r))
	}
}

// TestRuleBoundaries checks every record-judged rule on both sides of its default threshold, with
// warm-up off and patience 1 so a single record decides.
func TestRuleBoundaries(t *testing.T) {
	tests := []struct {
		rule   string
		metric string
		fires  float64
		holds  float64
		level  Level
		prefix []metrics.Record // records that set the rule's reference first
	}{
		{RuleNonFinite, metrics.ValueLoss, math.NaN(), 1e300, Stop, nil},
		{RuleNonFinite, metrics.ActionStdMin, math.Inf(-1), -1e300, Stop, nil},
		{RuleStdNonPositive, metrics.ActionStdMin, 0, 1e-12, Stop, nil},
		{RuleGradExplosion, metrics.GradNorm, 1.0001e4, 1e4, Stop, nil},
		{RuleStdCollapse, metrics.ActionStdMin, 0.0099, 0.01, Stop, nil},
		{RuleStdExplosion, metrics.ActionStd, 5.0001, 5, Stop, []metrics.Record{rec(0, metrics.ActionStd, 0.5)}},
		{RuleEntropyCollapse, metrics.Entropy, 0.0099, 0.01, Stop, nil},
		{RuleValueAnticorrelated, metrics.ExplainedVariance, -0.5001, -0.5, Warn, nil},
		{RuleClipExcess, metrics.ClipFraction, 0.5001, 0.5, Warn, nil},
		{RuleAdvantageExplosion, metrics.AdvantageAbsMax, 100.01, 100, Warn, nil},
		{RuleKLSpike, metrics.ApproxKL, 0.2001, 0.2, Warn, nil},
		{RuleValueLossBlowup, metrics.ValueLoss, 100.01, 100, Stop, valueLossPrefix()},
		// The window after the prefix is [20 20 20 20 x]: at x = −30 its mean is the start (10), not below it
		// by the noise; at x = −50 it is 6, below 10 − noise (the mean change per record, 3.5 with that jump).
		{RulePolicyCollapse, metrics.Reward, -50, -30, Stop, rewardPrefix()},
	}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.metric, func(t *testing.T) {
			for _, c := range []struct {
				v    float64
				want Level
			}{{tt.fires, tt.level}, {tt.holds, Continue}} {
				e := newEngine(t, noWarmup)
				if tt.rule != RulePolicyCollapse {
					seeFlatReward(e)
				}
				step := int64(0)
				for _, p := range tt.prefix {
					if v := e.Observe(p); v.Level != Continue {
						t.Fatalf("prefix record %+v: got %v, want continue", p, v)
					}
					step = p.Step
				}
				got := e.Observe(rec(step+1, tt.metric, c.v))
				if c.want == Continue {
					// Another rule may judge the same value (std_collapse below 0.01): only this one must not fire.
					if got.Rule == tt.rule || slices.Contains(got.Related, tt.rule) {
						t.Errorf("%s = %g: %s fired (%v), want it silent", tt.metric, c.v, tt.rule, got)
					}
					continue
				}
				if got.Level != c.want || got.Rule != tt.rule {
					t.Errorf("%s = %g: got %s %s, want %s %s", tt.metric, c.v, got.Level, got.Rule, c.want, tt.rule)
				}
				if c.want != Continue && got.Metric != tt.metric {
					t.Errorf("verdict metric = %q, want %q", got.Metric, tt.metric)
				}
			}
		})
	}
}

// valueLossPrefix: ten records whose smallest value loss is 1, so the blow-up limit is 100, while the reward
// falls from 10 to 0 (value_loss_blowup stops only once it has fallen).
func valueLossPrefix() []metrics.Record {
	var out []metrics.Record
	for i := range 10 {
		out = append(out, rec(int64(i), metrics.ValueLoss, float64(1+i%3), metrics.Reward, 0.0))
	}
	return out
}

// rewardPrefix: a start level of 10 (mean of five records, spread 4), then an improvement to 20 held
// for sustainedImprovement windows and more.
func rewardPrefix() []metrics.Record {
	out := []metrics.Record{}
	for i, r := range []float64{8, 12, 10, 9, 11} {
		out = append(out, rec(int64(i), metrics.Reward, r))
	}
	for i := range 2 * sustainedImprovement {
		out = append(out, rec(int64(5+i), metrics.Reward, 20.0))
	}
	return out
}

func TestWarmupSilencesSustainedRulesOnly(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: 1000, Patience: 1})
	if got := e.Observe(rec(999, metrics.ClipFraction, 0.9)); got.Level != Continue {
		t.Errorf("clip_excess in warm-up: got %v, want continue", got)
	}
	if got := e.Observe(rec(999, metrics.GradNorm, 1e5)); got.Level != Stop || got.Rule != RuleGradExplosion {
		t.Errorf("grad_explosion in warm-up: got %v, want stop", got)
	}
	seeFlatReward(e)
	if got := e.Observe(rec(1000, metrics.ActionStdMin, 0.001)); got.Level != Stop {
		t.Errorf("std_collapse at the end of warm-up: got %v, want stop", got)
	}
}

func TestDefaultWarmupIsTenPercent(t *testing.T) {
	e := newEngine(t, Config{TotalSteps: 500000})
	if got, want := e.WarmupSteps(), int64(50000); got != want {
		t.Errorf("WarmupSteps = %d, want %d", got, want)
	}
}

func TestPatience(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1})
	seeFlatReward(e)
	levels := []Level{}
	// Four collapsed records, a healthy one that breaks the streak, one without the metric that does
	// not, then five in a row: only the fifth consecutive stops.
	for i, v := range []float64{0.001, 0.001, 0.001, 0.001, 0.5, -1, 0.001, 0.001, 0.001, 0.001, 0.001} {
		r := rec(int64(i), metrics.ActionStdMin, v)
		if v == -1 {
			r = rec(int64(i), "custom", 1.0)
		}
		levels = append(levels, e.Observe(r).Level)
	}
	want := []Level{Warn, Warn, Warn, Warn, Continue, Continue, Warn, Warn, Warn, Warn, Stop}
	for i := range want {
		if levels[i] != want[i] {
			t.Fatalf("levels = %v, want %v", levels, want)
		}
	}
	if w := e.Warnings(); len(w) != 1 || w[0].Rule != RuleStdCollapse || w[0].Step != 0 {
		t.Errorf("Warnings = %v, want the first std_collapse warning at step 0", w)
	}
	if s, ok := e.Stopped(); !ok || s.Step != 10 {
		t.Errorf("Stopped = %v, %v; want a stop at step 10", s, ok)
	}
}

func TestRulePatienceOverride(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, Rules: map[string]RuleConfig{RuleStdCollapse: {Patience: ptr(2)}}})
	seeFlatReward(e)
	if got := e.Observe(rec(1, metrics.ActionStdMin, 0.001)); got.Level != Warn {
		t.Errorf("first: got %v, want warn", got.Level)
	}
	if got := e.Observe(rec(2, metrics.ActionStdMin, 0.001)); got.Level != Stop {
		t.Errorf("second: got %v, want stop", got.Level)
	}
}

func TestNaNExplainedVarianceNeverStops(t *testing.T) {
	e := newEngine(t, noWarmup)
	for i := range 100 {
		if got := e.Observe(rec(int64(i), metrics.ExplainedVariance, math.NaN(), metrics.Reward, 1.0)); got.Level != Continue {
			t.Fatalf("record %d: got %v, want continue", i, got)
		}
	}
}

func TestEntropyCollapseOnlyForCategorical(t *testing.T) {
	e := newEngine(t, noWarmup)
	e.Observe(rec(0, metrics.ActionStd, 0.5))
	// A Gaussian's differential entropy is negative once σ < 0.24: not a collapse.
	if got := e.Observe(rec(1, metrics.Entropy, -3.0, metrics.ActionStd, 0.1)); got.Level != Continue {
		t.Errorf("Gaussian policy: got %v, want continue", got)
	}
	if got := e.Observe(rec(2, metrics.Entropy, -3.0)); got.Level != Continue {
		t.Errorf("Gaussian policy, std not in this record: got %v, want continue", got)
	}
}

func TestKLSpikeTarget(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, TargetKL: 0.01})
	if got := e.Observe(rec(1, metrics.ApproxKL, 0.1)); got.Level != Continue {
		t.Errorf("KL = 10 × target: got %v, want continue", got)
	}
	got := e.Observe(rec(2, metrics.ApproxKL, 0.11))
	if got.Level != Warn || got.Threshold != 0.1 {
		t.Errorf("KL > 10 × target: got %v, want warn at threshold 0.1", got)
	}
}

func TestPolicyCollapseNamesKLSpike(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, Patience: 2})
	prefix := rewardPrefix()
	for _, r := range prefix {
		e.Observe(r)
	}
	step := prefix[len(prefix)-1].Step
	e.Observe(rec(step+1, metrics.ApproxKL, 0.5, metrics.Reward, 18.0))
	var got Verdict
	for i := int64(2); i < 8 && got.Level != Stop; i++ {
		got = e.Observe(rec(step+i, metrics.Reward, 0.0))
	}
	if got.Level != Stop || got.Rule != RulePolicyCollapse {
		t.Fatalf("got %v, want a policy_collapse stop", got)
	}
	if len(got.Related) != 1 || got.Related[0] != RuleKLSpike {
		t.Errorf("Related = %v, want [kl_spike]", got.Related)
	}
	if got.Threshold != 10 {
		t.Errorf("Threshold = %g, want the starting level 10", got.Threshold)
	}
	if got.Objective != metrics.Reward || got.ObjectiveValue >= 10 {
		t.Errorf("objective at the stop = %s %g, want reward below its start 10", got.Objective, got.ObjectiveValue)
	}
}

func TestPolicyCollapseNeedsImprovement(t *testing.T) {
	e := newEngine(t, noWarmup)
	for i, r := range []float64{10, 10, 10, 10, 10, 10.5, 9, 8, 7, 6, 5, 4, 3, 2} { // never improved by 10%
		if got := e.Observe(rec(int64(i), metrics.Reward, r)); got.Level != Continue {
			t.Fatalf("record %d: got %v, want continue", i, got)
		}
	}
}

// An improvement must be held before a fall counts as a collapse: one lucky window early in the run,
// then a dip below the start, is how many healthy runs begin.
func TestPolicyCollapseNeedsAHeldImprovement(t *testing.T) {
	e := newEngine(t, noWarmup)
	vals := []float64{10, 10, 10, 10, 10, 30, 30, 10, 10, 10} // two lucky records
	for range 20 {
		vals = append(vals, 5)
	}
	for i, r := range vals {
		if got := e.Observe(rec(int64(i), metrics.Reward, r)); got.Level == Stop {
			t.Fatalf("record %d (%g): got %v, want no stop", i, r, got)
		}
	}
}

func TestMinimizeObjective(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, Patience: 1, Objective: "loss", Goal: "minimize"})
	for i := range 5 {
		e.Observe(rec(int64(i), "loss", 10.0))
	}
	for i := range 2 * sustainedImprovement {
		e.Observe(rec(int64(5+i), "loss", 5.0))
	}
	var got Verdict
	for i := int64(0); i < 5 && got.Level != Stop; i++ {
		got = e.Observe(rec(100+i, "loss", 30.0))
	}
	if got.Level != Stop || got.Rule != RulePolicyCollapse {
		t.Errorf("got %v, want a policy_collapse stop", got)
	}
}

func TestMostSevereWins(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, Patience: 3})
	got := e.Observe(rec(1, metrics.ClipFraction, 0.9, metrics.GradNorm, 1e6))
	if got.Rule != RuleGradExplosion || got.Level != Stop {
		t.Errorf("got %v, want grad_explosion stop", got)
	}
	if len(got.Related) != 1 || got.Related[0] != RuleClipExcess {
		t.Errorf("Related = %v, want [clip_excess]", got.Related)
	}
}

func TestRuleOverrides(t *testing.T) {
	e := newEngine(t, Config{WarmupSteps: -1, Rules: map[string]RuleConfig{
		RuleGradExplosion: {Threshold: ptr(10.0), Level: LevelWarn},
		RuleNonFinite:     {Level: LevelOff},
		RuleKLSpike:       {Level: LevelStop, Patience: ptr(1)},
	}})
	seeFlatReward(e)
	if got := e.Observe(rec(1, metrics.GradNorm, 11.0)); got.Level != Warn || got.Threshold != 10 {
		t.Errorf("grad_explosion at warn: got %v, want warn at 10", got)
	}
	if got := e.Observe(rec(2, metrics.Reward, math.NaN())); got.Level != Continue {
		t.Errorf("non_finite off: got %v, want continue", got)
	}
	if got := e.Observe(rec(3, metrics.ApproxKL, 0.3)); got.Level != Stop {
		t.Errorf("kl_spike at stop: got %v, want stop", got)
	}
}

func TestNewEngineErrors(t *testing.T) {
	_, err := NewEngine(Config{Patience: -1, Goal: "up", Rules: map[string]RuleConfig{
		"nan":           {},
		RuleClipExcess:  {Level: "kill", Patience: ptr(0)},
		RuleNonFinite:   {Threshold: ptr(1.0)},
		RuleStdCollapse: {Threshold: ptr(math.Inf(1))},
	}})
	if err == nil {
		t.Fatal("NewEngine: got no error")
	}
	for _, want := range []string{
		"diagnostics.patience: got -1, want an integer ≥ 1",
		`metric.goal: got "up"`,
		`diagnostics.rules: got "nan", want one of "non_finite", "std_nonpositive"`,
		`diagnostics.rules.clip_excess.level: got "kill", want one of "off", "warn", "stop"`,
		"diagnostics.rules.clip_excess.patience: got 0, want an integer ≥ 1",
		"diagnostics.rules.non_finite.threshold: got 1, want none",
		"diagnostics.rules.std_collapse.threshold: got +Inf, want a finite number",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

func TestVerdictJSON(t *testing.T) {
	v := Verdict{Level: Stop, Rule: RuleNonFinite, Metric: metrics.ValueLoss, Value: math.NaN(), Threshold: math.Inf(-1),
		Step: 42, Advice: Advice(RuleNonFinite), Related: []string{RuleKLSpike}}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"level":"stop"`) || !strings.Contains(string(b), `"value":"NaN"`) ||
		!strings.Contains(string(b), `"threshold":"-Inf"`) {
		t.Errorf("JSON = %s, want level by name and non-finite numbers as strings", b)
	}
	var back Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Value) || !math.IsInf(back.Threshold, -1) || back.Step != 42 || back.Level != Stop ||
		back.Related[0] != RuleKLSpike {
		t.Errorf("round trip = %+v, want %+v", back, v)
	}
}

func TestRecordJSON(t *testing.T) {
	r := rec(7, metrics.Reward, math.Inf(1), metrics.ValueLoss, 0.25)
	r.Checkpoint = "c/7"
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back metrics.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Step != 7 || back.Checkpoint != "c/7" || !math.IsInf(back.Values[metrics.Reward], 1) || back.Values[metrics.ValueLoss] != 0.25 {
		t.Errorf("round trip of %s = %+v", b, back)
	}
}

func TestRuleNamesHaveAdvice(t *testing.T) {
	names := RuleNames()
	if len(names) != 19 || names[len(names)-1] != RuleStalled {
		t.Errorf("RuleNames = %v, want the 17 record rules, collapsed_at_end and stalled", names)
	}
	for _, n := range names {
		if Advice(n) == "" {
			t.Errorf("rule %s has no advice", n)
		}
	}
}

// A Gaussian policy's first record must not count towards entropy_collapse: its differential
// entropy is legitimately negative (docs/diagnostics.md).
func TestEntropyCollapseIgnoresGaussianFromFirstRecord(t *testing.T) {
	e, err := NewEngine(Config{TotalSteps: 1000, WarmupSteps: -1, Patience: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := e.Observe(metrics.Record{Step: 1, Values: map[string]float64{metrics.Entropy: -4.5, metrics.ActionStd: 0.5, metrics.ActionStdMin: 0.4}})
	if v.Level != Continue {
		t.Errorf("first Gaussian record: got %v, want continue", v)
	}
}

// A Gaussian policy whose trainer logs entropy but no std (CleanRL's and rl_games' continuous PPO, and
// their presets) is known by its first negative entropy, which a categorical policy's cannot be: a
// healthy 6-dimensional policy at σ = 0.2 (entropy -1.14) was stopped as entropy_collapse.
func TestEntropyCollapseIgnoresNegativeEntropyWithoutStd(t *testing.T) {
	e, err := NewEngine(Config{TotalSteps: 1000, WarmupSteps: -1, Patience: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []float64{2.0, 0.5, -1.14, -1.14, -1.2, 0.005, 0.004} {
		if v := e.Observe(rec(int64(i+1), metrics.Entropy, h)); v.Level == Stop {
			t.Fatalf("record %d (entropy %g): got %v, want no stop for a Gaussian policy", i, h, v)
		}
	}
	// The doctor agrees: no "policy died" from entropy alone once it has been negative.
	var rs []metrics.Record
	for i := int64(1); i <= 20; i++ {
		rs = append(rs, rec(i, metrics.Entropy, -1.14))
	}
	if f, ok := checkPolicyDied(rs, rs); ok {
		t.Errorf("doctor on a Gaussian policy's negative entropy: %+v, want no finding", f)
	}
	// A categorical policy still collapses.
	c, err := NewEngine(Config{TotalSteps: 1000, WarmupSteps: -1, Patience: 2})
	if err != nil {
		t.Fatal(err)
	}
	seeFlatReward(c)
	c.Observe(rec(1, metrics.Entropy, 0.005))
	if v := c.Observe(rec(2, metrics.Entropy, 0.004)); v.Level != Stop || v.Rule != RuleEntropyCollapse {
		t.Errorf("categorical entropy 0.004 twice: got %v, want stop by %s", v, RuleEntropyCollapse)
	}
}

// A NaN explained variance is no evidence either way: between two -0.9s it must not break the
// value_anticorrelated streak, or a run alternating -0.9 and NaN is never stopped.
func TestNaNDoesNotBreakAStreak(t *testing.T) {
	e, err := NewEngine(Config{TotalSteps: 1000, WarmupSteps: -1, Patience: 3,
		Rules: map[string]RuleConfig{RuleValueAnticorrelated: {Level: LevelStop}}})
	if err != nil {
		t.Fatal(err)
	}
	seeFlatReward(e)
	var last Verdict
	for i, ev := range []float64{-0.9, math.NaN(), -0.9, math.NaN(), -0.9} {
		last = e.Observe(rec(int64(i+1), metrics.ExplainedVariance, ev))
	}
	if last.Level != Stop || last.Rule != RuleValueAnticorrelated {
		t.Errorf("three EV -0.9 with NaN between: got %v, want stop by %s", last, RuleValueAnticorrelated)
	}
}
