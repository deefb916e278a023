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
		{0, DefaultGracePeriod, 28 * time.Second, ""},
		{10 * time.Second, 3 * time.Second, 5 * time.Second, ""},
		{4 * time.Second, time.Second, time.Second, ""},
		{0, 58 * time.Second, 0, "trainer.grace_period: got 58s with a heartbeat timeout of 1m0s, want less than 58s (the heartbeat timeout less 2s)"},
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
