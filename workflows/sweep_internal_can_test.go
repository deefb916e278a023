package workflows

import "testing"

// A run continues-as-new at 8,000 events unless its running trials' reports at closing (two events
// each) would take it past historyBudget; a smaller configured limit (tests) is kept.
func TestCANLimitLeavesRoomToClose(t *testing.T) {
	for _, c := range []struct{ configured, running, want int }{
		{0, 16, defaultCANMaxEvent},
		{0, 500, 8000},
		{0, 1000, 7600},
		{0, 2000, 5600},
		{50, 2000, 50},
	} {
		if got := canLimit(c.configured, c.running); got != c.want {
			t.Errorf("canLimit(%d, %d) = %d, want %d", c.configured, c.running, got, c.want)
		}
		if got := canLimit(c.configured, c.running); c.configured == 0 && got+closingEvents*c.running > historyBudget {
			t.Errorf("canLimit(0, %d) = %d: closing would reach %d events, over %d", c.running, got, got+closingEvents*c.running, historyBudget)
		}
	}
}
