package sweeps

import (
	"encoding/json"
	"strconv"
)

// Numeric is a parameter value as a number: ints, floats and JSON numbers are; strings, bools and
// lists are not.
func Numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// numericParam says whether every value p can take is a number: a list of numbers, a numeric
// constant, or a distribution (a range).
func (p *Parameter) numericParam() bool {
	switch {
	case p.JSON:
		return false
	case len(p.Values) > 0:
		for _, v := range p.Values {
			if _, ok := Numeric(v); !ok {
				return false
			}
		}
		return true
	case p.Value != nil:
		_, ok := Numeric(p.Value)
		return ok
	}
	return p.Min != nil || p.Max != nil || p.Distribution != ""
}

// NextBelow is the largest value of p's space below v, as the spec writes it: the largest of its
// listed values (or its constant) under v. ok is false for a range, whose space has no next value,
// and when no value lies below v.
func (p *Parameter) NextBelow(v float64) (next string, ok bool) {
	vals := p.Values
	if len(vals) == 0 && p.Value != nil {
		vals = []any{p.Value}
	}
	best, found := 0.0, false
	for _, x := range vals {
		if f, isNum := Numeric(x); isNum && f < v && (!found || f > best) {
			best, found = f, true
		}
	}
	if !found {
		return "", false
	}
	return strconv.FormatFloat(best, 'g', -1, 64), true
}

// MemoryAdvice is the advice for a trial that ran out of memory with value v of the memory parameter
// name: "the next smaller num_envs in the space is 1024", "num_envs below 2048 (the space is a range)",
// or "no num_envs of the space is below 256"; "" when the sweep has no such parameter.
func (s *Spec) MemoryAdvice(name string, v float64) string {
	p := s.Param(name)
	if p == nil {
		return ""
	}
	at := strconv.FormatFloat(v, 'g', -1, 64)
	if next, ok := p.NextBelow(v); ok {
		return "the next smaller " + name + " in the space is " + next
	}
	if len(p.Values) == 0 && p.Value == nil {
		return "try " + name + " below " + at + " (the space is a range)"
	}
	return "no " + name + " of the space is below " + at
}
