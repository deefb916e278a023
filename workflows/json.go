package workflows

import (
	"encoding/json"
	"time"

	"github.com/rlsweep/rlsweep/sweeps"
)

// MarshalJSON writes a SweepInput with its durations as Go duration strings ("1m0s", sweeps.Duration),
// as the Temporal Web UI then shows its input.
func (in SweepInput) MarshalJSON() ([]byte, error) {
	type plain SweepInput
	return json.Marshal(struct {
		plain
		HeartbeatTimeout     sweeps.Duration
		TrialCheckInterval   sweeps.Duration `json:",omitempty"`
		ResultsFlushInterval sweeps.Duration `json:",omitempty"`
	}{plain(in), sweeps.Duration(in.HeartbeatTimeout), sweeps.Duration(in.TrialCheckInterval), sweeps.Duration(in.ResultsFlushInterval)})
}

// UnmarshalJSON reads a SweepInput whose durations are Go duration strings or integer counts of
// nanoseconds, as recorded histories hold them (sweeps.Duration); a field the JSON leaves out keeps its
// value.
func (in *SweepInput) UnmarshalJSON(b []byte) error {
	type plain SweepInput
	raw := struct {
		plain
		HeartbeatTimeout     sweeps.Duration
		TrialCheckInterval   sweeps.Duration `json:",omitempty"`
		ResultsFlushInterval sweeps.Duration `json:",omitempty"`
	}{plain(*in), sweeps.Duration(in.HeartbeatTimeout), sweeps.Duration(in.TrialCheckInterval), sweeps.Duration(in.ResultsFlushInterval)}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*in = SweepInput(raw.plain)
	in.HeartbeatTimeout, in.TrialCheckInterval, in.ResultsFlushInterval = time.Duration(raw.HeartbeatTimeout),
		time.Duration(raw.TrialCheckInterval), time.Duration(raw.ResultsFlushInterval)
	return nil
}

// MarshalJSON writes a TrialInput with its heartbeat timeout as a Go duration string (sweeps.Duration).
func (in TrialInput) MarshalJSON() ([]byte, error) {
	type plain TrialInput
	return json.Marshal(struct {
		plain
		HeartbeatTimeout sweeps.Duration
	}{plain(in), sweeps.Duration(in.HeartbeatTimeout)})
}

// UnmarshalJSON reads a TrialInput whose heartbeat timeout is a Go duration string or an integer count
// of nanoseconds (sweeps.Duration); a field the JSON leaves out keeps its value.
func (in *TrialInput) UnmarshalJSON(b []byte) error {
	type plain TrialInput
	raw := struct {
		plain
		HeartbeatTimeout sweeps.Duration
	}{plain(*in), sweeps.Duration(in.HeartbeatTimeout)}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*in = TrialInput(raw.plain)
	in.HeartbeatTimeout = time.Duration(raw.HeartbeatTimeout)
	return nil
}
