package probes

import (
	"fmt"
	"math"
	"strings"
)

// Record is what a trainer reports after training on a probe: its value and policy outputs at the
// probe's observations. The built-in trainer builds it in memory; an external trainer writes it as
// JSON to RLSWEEP_PROBE_RESULT (docs/probes.md).
type Record struct {
	Probe ID      `json:"probe"`
	Gamma float64 `json:"gamma"` // the discount the trainer used
	Steps int64   `json:"steps"` // environment steps it trained for
	Evals []Eval  `json:"evals"`
}

// Eval is a trainer's outputs at one observation. A NaN output is written as null (JSON has no NaN)
// and judged a failure.
type Eval struct {
	Obs   []float64  `json:"obs"`
	Value *float64   `json:"value"`
	Probs []*float64 `json:"probs,omitempty"` // π(·|obs), categorical policies
	Mean  []*float64 `json:"mean,omitempty"`  // μ(obs), Gaussian policies
}

// Check is one measured quantity against its expected value.
type Check struct {
	Name string `json:"name"` // "V(0)", "π(1|0)", "μ(-1)"
	// Measured is nil when the trainer reported no value or a non-finite one (JSON has no NaN).
	Measured *float64 `json:"measured"`
	Expected float64  `json:"expected"`
	// Tolerance: the check passes when |Measured − Expected| ≤ Tolerance.
	Tolerance float64 `json:"tolerance"`
	Passed    bool    `json:"passed"`
}

// Result is the outcome of one probe.
type Result struct {
	Probe   ID      `json:"probe"`
	Level   int     `json:"level"`
	Passed  bool    `json:"passed"`
	Skipped bool    `json:"skipped,omitempty"` // the trainer does not support this action space
	Checks  []Check `json:"checks,omitempty"`
	Steps   int64   `json:"steps"`
	Seconds float64 `json:"seconds"`
	// Error says why the probe could not be judged (a crash, a missing record); the probe fails.
	Error string `json:"error,omitempty"`
	// Fault, when set, says the probe failed for want of a verdict, not on its values: the trainer
	// crashed, or it does not speak the probe protocol. The diagnosis then says so instead of naming
	// what the probe's level adds.
	Fault Fault `json:"fault,omitempty"`
}

// Fault is why a probe could not be judged at all.
type Fault string

const (
	// FaultCrashed: the trainer exited with a status other than 0 and 3, or was killed.
	FaultCrashed Fault = "crashed"
	// FaultNoRecord: the trainer exited 0 without writing a record: it does not speak the probe
	// protocol (a plain trainer that follows only the trainer contract).
	FaultNoRecord Fault = "no_record"
	// FaultBadRecord: the record is not the JSON object of the protocol.
	FaultBadRecord Fault = "bad_record"
)

// Tolerances of the pass criteria. They are wide enough that a sound trainer passes on every seed
// we tried (values land within 0.05, probabilities above 0.95, means within 0.05 of their targets;
// docs/probes.md) and narrow enough that every injected bug lands outside them: a broken value net
// stays near its initial output, a trainer without γ reports V(0) = 1 against 0.5, a flipped
// advantage drives π(1|0) to 0.
const (
	ValueTol = 0.15 // |V − expected|
	ProbTol  = 0.1  // π(correct action) ≥ 0.9
	MeanTol  = 0.15 // |μ − expected|
)

// Judge compares rec with what a sound trainer learns on p. Probes 1–3 judge the value, 4 and 5 the
// policy (their value is reported by the trainer but, as in Andy Jones's list, not judged: the value of
// a policy still improving lags behind it).
func Judge(p Probe, rec Record) Result {
	res := Result{Probe: p.ID, Level: p.Level, Steps: rec.Steps}
	if rec.Probe != "" && rec.Probe != p.ID {
		res.Error = fmt.Sprintf("record: probe %q, want %q", rec.Probe, p.ID)
		return res
	}
	gamma := rec.Gamma
	if gamma == 0 {
		gamma = Gamma // not reported: the protocol's (RLSWEEP_PROBE_GAMMA)
	}
	if p.Level == 3 && math.Abs(1-gamma) <= ValueTol {
		// V(0) = γ is then within the tolerance of V(0) = 1, what a trainer that ignores γ learns.
		res.Error = fmt.Sprintf("record: gamma %g cannot tell discounting from none (|1 − γ| ≤ %g); train probes with %s (%g)", gamma, ValueTol, EnvProbeGamma, Gamma)
		return res
	}
	for _, o := range p.Obs {
		e, ok := evalAt(rec.Evals, o)
		if !ok {
			res.Error = fmt.Sprintf("record: no eval at obs [%g], want one for each of %v", o, p.Obs)
			return res
		}
		res.Checks = append(res.Checks, checksAt(p, gamma, o, e)...)
	}
	res.Passed = true
	for _, c := range res.Checks {
		res.Passed = res.Passed && c.Passed
	}
	return res
}

func evalAt(evals []Eval, o float64) (Eval, bool) {
	for _, e := range evals {
		if len(e.Obs) == 1 && e.Obs[0] == o {
			return e, true
		}
	}
	return Eval{}, false
}

func checksAt(p Probe, gamma, o float64, e Eval) []Check {
	switch p.Level {
	case 1:
		return []Check{check(fmt.Sprintf("V(%g)", o), e.Value, 1, ValueTol)}
	case 2:
		return []Check{check(fmt.Sprintf("V(%g)", o), e.Value, o, ValueTol)}
	case 3:
		want := 1.0
		if o == 0 {
			want = gamma
		}
		return []Check{check(fmt.Sprintf("V(%g)", o), e.Value, want, ValueTol)}
	}
	if p.Continuous {
		want := 0.5
		if p.Level == 5 {
			want = 0.5 * o
		}
		return []Check{check(fmt.Sprintf("μ(%g)", o), at(e.Mean, 0), want, MeanTol)}
	}
	a := 1
	if p.Level == 5 && o < 0 {
		a = 0
	}
	return []Check{check(fmt.Sprintf("π(%d|%g)", a, o), at(e.Probs, a), 1, ProbTol)}
}

func at(xs []*float64, i int) *float64 {
	if i < len(xs) {
		return xs[i]
	}
	return nil
}

func check(name string, got *float64, want, tol float64) Check {
	c := Check{Name: name, Expected: want, Tolerance: tol}
	if got != nil && !math.IsNaN(*got) && !math.IsInf(*got, 0) {
		m := *got
		c.Measured, c.Passed = &m, math.Abs(m-want) <= tol
	}
	return c
}

// String reads "probe 3: V(0) = 0.98, want 0.5 ± 0.15 (fail); V(1) = 1.00, want 1 ± 0.15".
func (r Result) String() string {
	verdict := "pass"
	if !r.Passed {
		verdict = "FAIL"
	}
	if r.Skipped {
		verdict = "skipped"
	}
	var parts []string
	for _, c := range r.Checks {
		m := "none (NaN or missing)"
		if c.Measured != nil {
			m = fmt.Sprintf("%.3f", *c.Measured)
		}
		s := fmt.Sprintf("%s = %s, want %g ± %g", c.Name, m, c.Expected, c.Tolerance)
		if !c.Passed {
			s += " (fail)"
		}
		parts = append(parts, s)
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	return fmt.Sprintf("probe %s %s: %s", r.Probe, verdict, strings.Join(parts, "; "))
}
