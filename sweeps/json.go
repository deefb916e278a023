package sweeps

import (
	"bytes"
	"encoding/json"
	"strings"
)

// UnmarshalJSON decodes a Parameter so that integers written without a fraction or exponent come back
// as int64, as Decode makes them: a Spec survives a JSON round trip (Temporal payloads) unchanged.
func (p *Parameter) UnmarshalJSON(b []byte) error {
	type plain Parameter
	var raw struct {
		plain
		Values []json.RawMessage `json:"values,omitempty"`
		Value  json.RawMessage   `json:"value,omitempty"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = Parameter(raw.plain)
	p.Values, p.Value = nil, nil
	if raw.Values != nil {
		p.Values = make([]any, len(raw.Values))
		for i, v := range raw.Values {
			x, err := jsonScalar(v)
			if err != nil {
				return err
			}
			p.Values[i] = x
		}
	}
	if raw.Value != nil {
		x, err := jsonScalar(raw.Value)
		if err != nil {
			return err
		}
		p.Value = x
	}
	return nil
}

// UnmarshalJSON decodes a Trial keeping integer parameters int64, as Plan makes them.
func (t *Trial) UnmarshalJSON(b []byte) error {
	type plain Trial
	var raw struct {
		plain
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = Trial(raw.plain)
	t.Params = nil
	if raw.Params != nil {
		t.Params = make(map[string]any, len(raw.Params))
		for k, v := range raw.Params {
			x, err := jsonScalar(v)
			if err != nil {
				return err
			}
			t.Params[k] = x
		}
	}
	return nil
}

// jsonScalar decodes one JSON value, numbers as int64 when they are written as integers.
func jsonScalar(b json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	n, ok := v.(json.Number)
	if !ok {
		return v, nil
	}
	if !strings.ContainsAny(n.String(), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return n.Float64()
}
