package diagnostics

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/rlsweep/rlsweep/metrics"
)

// Level is how serious a verdict is: Continue, Warn or Stop.
type Level int

// Verdict levels, in increasing severity.
const (
	Continue Level = iota
	Warn
	Stop
)

var levelNames = [...]string{"continue", LevelWarn, LevelStop}

// String returns "continue", "warn" or "stop".
func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// MarshalText encodes the level by name, so JSON carries "stop", not 2.
func (l Level) MarshalText() ([]byte, error) {
	if l < 0 || int(l) >= len(levelNames) {
		return nil, fmt.Errorf("level: got %d, want one of %s", int(l), metrics.QuotedList(levelNames[:]))
	}
	return []byte(levelNames[l]), nil
}

// UnmarshalText decodes a level name.
func (l *Level) UnmarshalText(b []byte) error {
	for i, n := range levelNames {
		if string(b) == n {
			*l = Level(i)
			return nil
		}
	}
	return fmt.Errorf("level: got %q, want one of %s", b, metrics.QuotedList(levelNames[:]))
}

// Verdict is the engine's judgement of one record: Continue, or the rule that fired, on which metric,
// with what value against what threshold, at which step, and what to do about it.
//
// Encoded as JSON, Value and Threshold are numbers when finite and the strings "NaN", "+Inf", "-Inf"
// otherwise (see Float): encoding/json cannot encode a NaN, and a NaN is the value a non_finite
// verdict most often carries.
type Verdict struct {
	Level     Level    // Continue, Warn or Stop
	Rule      string   // the rule that fired; "" for Continue
	Metric    string   // the canonical metric it judged
	Value     float64  // the metric's value in the record
	Threshold float64  // the limit it crossed (absolute, after any factor applied); 0 for non_finite
	Step      int64    // the record's step
	Advice    string   // one line: what usually causes this and what to try
	Related   []string // other rules that fired on this record or shortly before it (a kl_spike before a policy_collapse)
	// Objective is the objective's metric name and ObjectiveValue where the run stood when the rule fired:
	// the mean of its last five values (its last value early in the run; NaN before any). A stop is
	// judged beside it: a run near its best return is not diverging.
	Objective      string
	ObjectiveValue float64
	// Detail says in words what an end-of-run rule measured (the run's start, best and final levels);
	// "" for the rules that judge one record.
	Detail string
}

// verdictJSON is Verdict's wire form.
type verdictJSON struct {
	Level     Level          `json:"level"`
	Rule      string         `json:"rule,omitempty"`
	Metric    string         `json:"metric,omitempty"`
	Value     metrics.Float  `json:"value"`
	Threshold metrics.Float  `json:"threshold"`
	Step      int64          `json:"step"`
	Advice    string         `json:"advice,omitempty"`
	Related   []string       `json:"related,omitempty"`
	Objective string         `json:"objective,omitempty"`
	ObjValue  *metrics.Float `json:"objective_value,omitempty"`
	Detail    string         `json:"detail,omitempty"`
}

// MarshalJSON encodes the verdict with non-finite numbers as strings.
func (v Verdict) MarshalJSON() ([]byte, error) {
	w := verdictJSON{v.Level, v.Rule, v.Metric, metrics.Float(v.Value), metrics.Float(v.Threshold), v.Step, v.Advice, v.Related,
		v.Objective, nil, v.Detail}
	if v.Objective != "" {
		f := metrics.Float(v.ObjectiveValue)
		w.ObjValue = &f
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var w verdictJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*v = Verdict{w.Level, w.Rule, w.Metric, float64(w.Value), float64(w.Threshold), w.Step, w.Advice, w.Related,
		w.Objective, math.NaN(), w.Detail}
	if w.ObjValue != nil {
		v.ObjectiveValue = float64(*w.ObjValue)
	}
	return nil
}

// String formats the verdict as one line for logs and the terminal.
func (v Verdict) String() string {
	if v.Level == Continue {
		return "continue"
	}
	at := ""
	if v.Objective != "" && !math.IsNaN(v.ObjectiveValue) {
		at = fmt.Sprintf(", %s %.4g", v.Objective, v.ObjectiveValue)
	}
	if v.Detail != "" {
		return fmt.Sprintf("%s %s at step %d: %s — %s", v.Level, v.Rule, v.Step, v.Detail, v.Advice)
	}
	return fmt.Sprintf("%s %s at step %d: %s = %g (threshold %g%s) — %s", v.Level, v.Rule, v.Step, v.Metric,
		v.Value, v.Threshold, at, v.Advice)
}
