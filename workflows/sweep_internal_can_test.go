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

// A run the server suggests closing goes on when the trials left would finish in it, at twice what
// each trial finished in it cost, under the run's event limit and historySizeBudget: the measured
// 1,000-trial benchmark's last run (26 trials left at the server's 4,096 events) finishes in place;
// its first (500 left) closes.
func TestRunNearItsEndFinishesInPlace(t *testing.T) {
	start := runMark{events: 5, bytes: 2000}
	for _, c := range []struct {
		name       string
		now        runMark
		total, lim int
		want       bool
	}{
		{"26 trials left", runMark{events: 4096, bytes: 4 << 20, finished: 974}, 1000, 8000, true},
		{"500 trials left", runMark{events: 4096, bytes: 4 << 20, finished: 500}, 1000, 8000, false},
		{"too few ended to judge", runMark{events: 4096, bytes: 1 << 20, finished: minEndedToProject - 1}, 30, 8000, false},
		{"total not known", runMark{events: 4096, bytes: 1 << 20, finished: 974}, 0, 8000, false},
		{"the events fit, the size does not", runMark{events: 4096, bytes: 7800 << 10, finished: 974}, 1000, 8000, false},
		{"a lowered limit", runMark{events: 4096, bytes: 1 << 20, finished: 974}, 1000, 4200, false},
	} {
		if got := endsWithin(start, c.now, c.total, c.lim); got != c.want {
			t.Errorf("%s: endsWithin = %v, want %v", c.name, got, c.want)
		}
	}
}
