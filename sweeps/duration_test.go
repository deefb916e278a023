package sweeps

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A Duration is written as a Go duration string and read from one or from an integer count of
// nanoseconds (time.Duration's own JSON, which recorded workflow histories hold).
func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(Duration(90 * time.Second))
	if err != nil || string(b) != `"1m30s"` {
		t.Errorf("Marshal(90s) = %s, %v; want \"1m30s\"", b, err)
	}
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{`"1m30s"`, 90 * time.Second},
		{`"0s"`, 0},
		{`90000000000`, 90 * time.Second},
		{`0`, 0},
	} {
		var d Duration
		if err := json.Unmarshal([]byte(tc.in), &d); err != nil || time.Duration(d) != tc.want {
			t.Errorf("Unmarshal(%s) = %s, %v; want %s", tc.in, time.Duration(d), err, tc.want)
		}
	}
	d := Duration(time.Minute)
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || d != Duration(time.Minute) {
		t.Errorf("Unmarshal(null) = %s, %v; want it left at 1m0s", time.Duration(d), err)
	}
	for _, bad := range []string{`"ten minutes"`, `1.5`, `true`} {
		var d Duration
		err := json.Unmarshal([]byte(bad), &d)
		if err == nil || !strings.Contains(err.Error(), `want a Go duration such as "1m30s" or an integer count of nanoseconds`) {
			t.Errorf("Unmarshal(%s): %v; want an error saying what is allowed", bad, err)
		}
	}
}

// A spec's trainer durations are written as Go duration strings in JSON (spec.json, the sweep's
// workflow input) and a spec survives the round trip; JSON with integer nanoseconds reads the same.
func TestTrainerDurationsJSON(t *testing.T) {
	s, err := Load("testdata/good/command.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Trainer.StallTimeout, s.Trainer.GracePeriod = 90*time.Second, 45*time.Second
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"stall_timeout":"1m30s"`) || !strings.Contains(string(b), `"grace_period":"45s"`) {
		t.Errorf("spec JSON lacks the durations as strings:\n%s", b)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Trainer.StallTimeout != 90*time.Second || back.Trainer.GracePeriod != 45*time.Second ||
		strings.Join(back.Trainer.Command, " ") != strings.Join(s.Trainer.Command, " ") || back.Trainer.TotalSteps != s.Trainer.TotalSteps {
		t.Errorf("trainer after a round trip = %+v, want %+v", back.Trainer, s.Trainer)
	}
	var old Trainer
	if err := json.Unmarshal([]byte(`{"command":["python","t.py"],"total_steps":1000,"stall_timeout":90000000000,"grace_period":45000000000}`), &old); err != nil ||
		old.StallTimeout != 90*time.Second || old.GracePeriod != 45*time.Second || old.TotalSteps != 1000 || len(old.Command) != 2 {
		t.Errorf("trainer from nanoseconds = %+v, %v", old, err)
	}
	if err := json.Unmarshal([]byte(`{"stall_timeout":"soon"}`), &old); err == nil || !strings.Contains(err.Error(), `got "soon"`) {
		t.Errorf("a bad stall_timeout: %v", err)
	}
}
