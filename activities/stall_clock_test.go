package activities

import (
	"testing"
	"time"
)

func TestStallClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		heard  int // a record read at this second; -1: none
		worked int // seconds the worker spent storing
	}
	for _, c := range []struct {
		name  string
		steps []step
		now   int
		want  time.Duration
	}{
		{name: "silent since the start", steps: nil, now: 30, want: 30 * time.Second},
		{name: "a record restarts the silence", steps: []step{{heard: 20}}, now: 30, want: 10 * time.Second},
		{name: "the worker's uploads are not the trainer's silence", steps: []step{{heard: -1, worked: 12}}, now: 30, want: 18 * time.Second},
		{name: "uploads add up", steps: []step{{heard: -1, worked: 5}, {heard: -1, worked: 7}}, now: 30, want: 18 * time.Second},
		{name: "a record forgets the earlier uploads", steps: []step{{heard: -1, worked: 12}, {heard: 25}}, now: 30, want: 5 * time.Second},
		{name: "negative work counts nothing", steps: []step{{heard: -1, worked: -9}}, now: 30, want: 30 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var clock stallClock
			clock.heard(t0)
			for _, s := range c.steps {
				if s.heard >= 0 {
					clock.heard(at(s.heard))
				}
				clock.worked(time.Duration(s.worked) * time.Second)
			}
			if got := clock.silent(at(c.now)); got != c.want {
				t.Errorf("silent = %s, want %s", got, c.want)
			}
		})
	}
}

// A segment reads its trainer's metrics every PollInterval while records arrive and every idlePoll
// once the trainer has been silent for idleAfter; a PollInterval already as slow is kept.
func TestPollEvery(t *testing.T) {
	for _, c := range []struct {
		silent, fast, want time.Duration
	}{
		{0, 20 * time.Millisecond, 20 * time.Millisecond},
		{idleAfter - time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond},
		{idleAfter, 20 * time.Millisecond, idlePoll},
		{time.Minute, 20 * time.Millisecond, idlePoll},
		{time.Minute, 250 * time.Millisecond, 250 * time.Millisecond},
	} {
		if got := pollEvery(c.silent, c.fast); got != c.want {
			t.Errorf("pollEvery(%s, %s) = %s, want %s", c.silent, c.fast, got, c.want)
		}
	}
}
