package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 whose JSON form survives NaN and ±Inf: a number when finite, otherwise one of the
// strings "NaN", "+Inf", "-Inf". It decodes numbers, those strings, and "Infinity"/"-Infinity".
type Float float64

// MarshalJSON encodes f as a number, or as a string when it is not finite.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON decodes a number or one of the non-finite strings.
func (f *Float) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*f = Float(math.NaN())
		case "+Inf", "Inf", "Infinity", "+Infinity":
			*f = Float(math.Inf(1))
		case "-Inf", "-Infinity":
			*f = Float(math.Inf(-1))
		default:
			return fmt.Errorf("float: got %q, want a number, \"NaN\", \"+Inf\" or \"-Inf\"", s)
		}
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*f = Float(x)
	return nil
}

// recordJSON is Record's wire form, with NaN-safe values.
type recordJSON struct {
	Step       int64            `json:"step"`
	Values     map[string]Float `json:"values,omitempty"`
	Checkpoint string           `json:"checkpoint,omitempty"`
}

// MarshalJSON encodes the record as {"step", "values", "checkpoint"} with non-finite values as the
// strings of Float, so a divergence dump holding the NaN that stopped a run can be written at all.
func (r Record) MarshalJSON() ([]byte, error) {
	w := recordJSON{Step: r.Step, Checkpoint: r.Checkpoint}
	if len(r.Values) > 0 {
		w.Values = make(map[string]Float, len(r.Values))
		for k, v := range r.Values {
			w.Values[k] = Float(v)
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (r *Record) UnmarshalJSON(b []byte) error {
	var w recordJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Record{Step: w.Step, Checkpoint: w.Checkpoint}
	if len(w.Values) > 0 {
		r.Values = make(map[string]float64, len(w.Values))
		for k, v := range w.Values {
			r.Values[k] = float64(v)
		}
	}
	return nil
}
