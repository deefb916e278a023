package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Probe is one probe check's result as the report shows it.
type Probe struct {
	Name   string
	Passed bool
	// Skipped: the probe did not run (an action space the trainer does not have); neither pass nor fail.
	Skipped bool
	Detail  string // why it failed, or what it measured
	// Checks are the measured values against their targets, readable: "V(0)=0.98 (want 1 ± 0.15)".
	Checks []string
	Values map[string]string // any other fields of the record, formatted
}

// ParseProbes reads probes.json. The probe stage writes it; the reader accepts the shapes that stage
// may reasonably write — an array of probe records, or an object holding one under "probes" or
// "results" — so the report does not break when a field is added. A record's name is its "name",
// "probe" or "id"; its result "passed", "pass" or "ok" (a boolean) or "status"/"result" ("pass",
// "passed", "ok"); "skipped" (a boolean) marks a probe that did not run; its detail "detail",
// "diagnosis", "reason", "message" or "error"; "checks" (the stage's measured values: name, measured,
// expected, tolerance, passed) become readable Checks. "level" (the probe's place on the ladder, which
// its name already says) is dropped; other fields are kept as Values.
func ParseProbes(b []byte) ([]Probe, error) {
	var records []map[string]any
	if err := json.Unmarshal(b, &records); err != nil {
		var wrapped map[string]json.RawMessage
		if werr := json.Unmarshal(b, &wrapped); werr != nil {
			return nil, fmt.Errorf("probes.json: got neither an array nor an object: %w", err)
		}
		raw, ok := wrapped["probes"]
		if !ok {
			raw, ok = wrapped["results"]
		}
		if !ok {
			return nil, fmt.Errorf("probes.json: got an object without \"probes\" or \"results\", want a list of probe records")
		}
		if err := json.Unmarshal(raw, &records); err != nil {
			return nil, fmt.Errorf("probes.json: probes: %w", err)
		}
	}
	out := make([]Probe, 0, len(records))
	for i, r := range records {
		out = append(out, probeOf(i, r))
	}
	return out, nil
}

func probeOf(i int, r map[string]any) Probe {
	p := Probe{Name: fmt.Sprintf("probe %d", i+1), Values: map[string]string{}}
	used := map[string]bool{}
	if k, v := first(r, "name", "probe", "id"); k != "" {
		p.Name, used[k] = fmt.Sprint(v), true
	}
	if k, v := first(r, "passed", "pass", "ok"); k != "" {
		b, _ := v.(bool)
		p.Passed, used[k] = b, true
	} else if k, v := first(r, "status", "result"); k != "" {
		s := strings.ToLower(fmt.Sprint(v))
		p.Passed, used[k] = s == "pass" || s == "passed" || s == "ok", true
	}
	if v, ok := r["skipped"].(bool); ok {
		p.Skipped, used["skipped"] = v, true
	}
	if k, v := first(r, "detail", "diagnosis", "reason", "message", "error"); k != "" {
		p.Detail, used[k] = fmt.Sprint(v), true
	}
	if cs, ok := checksOf(r["checks"]); ok {
		p.Checks, used["checks"] = cs, true
	}
	used["level"] = true
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if used[k] || r[k] == nil {
			continue
		}
		switch v := r[k].(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(v) // decoded from JSON, so it encodes
			p.Values[k] = string(b)
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1e15 {
				p.Values[k] = strconv.FormatInt(int64(v), 10) // steps: 10240, not 1.024e+04
			} else {
				p.Values[k] = formatValue(v)
			}
		default:
			p.Values[k] = formatValue(v)
		}
	}
	return p
}

// first returns the first of keys present in r, and its value.
func first(r map[string]any, keys ...string) (string, any) {
	for _, k := range keys {
		if v, ok := r[k]; ok && v != nil {
			return k, v
		}
	}
	return "", nil
}

// checksOf formats the probe stage's checks as "V(0)=0.980 (want 1 ± 0.15)", with "none" for a value
// the trainer did not report or reported as NaN, and " FAIL" after a failing one. ok is false when v
// is not a list of objects with a name.
func checksOf(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		c, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := c["name"].(string)
		if !ok {
			return nil, false
		}
		measured := "none"
		if m, ok := c["measured"].(float64); ok {
			measured = fmt.Sprintf("%.3f", m)
		}
		s := name + "=" + measured
		if want, ok := c["expected"].(float64); ok {
			s += " (want " + formatValue(want)
			if tol, ok := c["tolerance"].(float64); ok {
				s += " ± " + formatValue(tol)
			}
			s += ")"
		}
		if passed, ok := c["passed"].(bool); ok && !passed {
			s += " FAIL"
		}
		out = append(out, s)
	}
	return out, true
}
