package sweeps

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration as rlsweep writes it in JSON (Temporal payloads, spec.json): a Go
// duration string such as "1m30s", which the Temporal Web UI shows as it is, rather than time.Duration's
// own integer count of nanoseconds. It reads either form: a recorded workflow history holds the
// integer, and a replay must decode it to the same value.
type Duration time.Duration

// MarshalJSON writes d as a Go duration string ("10m0s").
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string ("1m30s") or an integer count of nanoseconds; null leaves d
// as it is.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration: got %q, want a Go duration such as \"1m30s\" or an integer count of nanoseconds", s)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: got %s, want a Go duration such as \"1m30s\" or an integer count of nanoseconds", b)
	}
	*d = Duration(n)
	return nil
}

// MarshalJSON writes a Trainer with its durations as Go duration strings (Duration).
func (t Trainer) MarshalJSON() ([]byte, error) {
	type plain Trainer
	return json.Marshal(struct {
		plain
		StallTimeout Duration `json:"stall_timeout"`
		GracePeriod  Duration `json:"grace_period"`
	}{plain(t), Duration(t.StallTimeout), Duration(t.GracePeriod)})
}

// UnmarshalJSON reads a Trainer whose durations are Go duration strings or integer counts of
// nanoseconds (Duration); a field the JSON leaves out keeps its value.
func (t *Trainer) UnmarshalJSON(b []byte) error {
	type plain Trainer
	raw := struct {
		plain
		StallTimeout Duration `json:"stall_timeout"`
		GracePeriod  Duration `json:"grace_period"`
	}{plain(*t), Duration(t.StallTimeout), Duration(t.GracePeriod)}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*t = Trainer(raw.plain)
	t.StallTimeout, t.GracePeriod = time.Duration(raw.StallTimeout), time.Duration(raw.GracePeriod)
	return nil
}
