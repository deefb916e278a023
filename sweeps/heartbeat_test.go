package sweeps

import (
	"strings"
	"testing"
	"time"
)

func TestCheckGracePeriod(t *testing.T) {
	tests := []struct {
		heartbeat, grace time.Duration
		stop             time.Duration
		want             string // "" fits
	}{
		{0, DefaultGracePeriod, 88 * time.Second, ""},
		{10 * time.Second, 3 * time.Second, 5 * time.Second, ""},
		{4 * time.Second, time.Second, time.Second, ""},
		{0, 118 * time.Second, 0, "trainer.grace_period: got 1m58s with a heartbeat timeout of 2m0s, want less than 1m58s (the heartbeat timeout less 2s)"},
		{5 * time.Second, DefaultGracePeriod, -27 * time.Second, "raise --heartbeat-timeout above 32s"},
	}
	for _, tt := range tests {
		if got := PartitionStop(tt.heartbeat, tt.grace); got != tt.stop {
			t.Errorf("PartitionStop(%s, %s) = %s, want %s", tt.heartbeat, tt.grace, got, tt.stop)
		}
		err := CheckGracePeriod(tt.heartbeat, tt.grace)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckGracePeriod(%s, %s) = %v, want nil", tt.heartbeat, tt.grace, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckGracePeriod(%s, %s) = %v, want %q", tt.heartbeat, tt.grace, err, tt.want)
		}
	}
}

// A segment heartbeats at half its partition stop, between a second and a minute: 44 s with the
// defaults (82 a trial-hour), a second for the short heartbeat timeouts of the fault tests.
func TestHeartbeatInterval(t *testing.T) {
	for _, c := range []struct {
		heartbeat, grace, want time.Duration
	}{
		{0, 30 * time.Second, 44 * time.Second},
		{2 * time.Minute, 30 * time.Second, 44 * time.Second},
		{time.Minute, 30 * time.Second, 14 * time.Second},
		{10 * time.Minute, 30 * time.Second, time.Minute},
		{4 * time.Second, time.Second, time.Second},
		{5 * time.Second, 0, 1500 * time.Millisecond},
	} {
		if got := HeartbeatInterval(c.heartbeat, c.grace); got != c.want {
			t.Errorf("HeartbeatInterval(%s, %s) = %s, want %s", c.heartbeat, c.grace, got, c.want)
		}
	}
	if n := time.Hour / HeartbeatInterval(0, 30*time.Second); n > 120 {
		t.Errorf("%d heartbeats a trial-hour with the defaults, want at most 120", n)
	}
}
