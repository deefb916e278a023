package activities

import "testing"

func TestAttemptLedgerInfraFaults(t *testing.T) {
	for _, c := range []struct {
		name                      string
		attempt                   int32
		trainerFailures, maxInfra int
		failed                    bool
		want                      int
		exhausted                 bool
	}{
		{name: "first attempt", attempt: 1, maxInfra: 1, want: 0},
		{name: "one worker died", attempt: 2, maxInfra: 1, want: 1},
		{name: "two worker deaths over one allowed", attempt: 3, maxInfra: 1, want: 2, exhausted: true},
		{name: "crashes are not infra faults", attempt: 3, trainerFailures: 2, maxInfra: 1, want: 0},
		{name: "one crash, two infra faults, two allowed", attempt: 4, trainerFailures: 1, maxInfra: 2, want: 2},
		{name: "one crash, three infra faults, two allowed", attempt: 5, trainerFailures: 1, maxInfra: 2, want: 3, exhausted: true},
		{name: "unbounded", attempt: 9, want: 8},
		{name: "this attempt's trainer failed", attempt: 3, trainerFailures: 1, failed: true, maxInfra: 5, want: 2},
		{name: "more failures than attempts (details of another run)", attempt: 1, trainerFailures: 3, maxInfra: 1, want: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := attemptLedger{attempt: c.attempt, trainerFailures: c.trainerFailures, failed: c.failed, maxInfraRetries: c.maxInfra}
			if got := l.infraFaults(); got != c.want {
				t.Errorf("infraFaults() = %d, want %d", got, c.want)
			}
			if got := l.infraExhausted(); got != c.exhausted {
				t.Errorf("infraExhausted() = %v, want %v", got, c.exhausted)
			}
		})
	}
}

func TestAttemptLedgerTrainerFailed(t *testing.T) {
	for _, c := range []struct {
		name                       string
		attempt                    int32
		before, maxTrainerFailures int
		wantFailures, wantInfra    int
		final                      bool
	}{
		{name: "first crash of three allowed", attempt: 1, maxTrainerFailures: 3, wantFailures: 1},
		{name: "third crash of three allowed", attempt: 3, before: 2, maxTrainerFailures: 3, wantFailures: 3, final: true},
		{name: "second crash after a worker died", attempt: 3, before: 1, maxTrainerFailures: 3, wantFailures: 2, wantInfra: 1},
		{name: "unbounded", attempt: 7, before: 6, wantFailures: 7},
		{name: "past the bound (the bound was lowered)", attempt: 4, before: 3, maxTrainerFailures: 2, wantFailures: 4, final: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := attemptLedger{attempt: c.attempt, trainerFailures: c.before, maxTrainerFailures: c.maxTrainerFailures}
			got, final := l.trainerFailed()
			if got.trainerFailures != c.wantFailures || final != c.final {
				t.Errorf("trainerFailed() = %d failures, final %v; want %d, final %v", got.trainerFailures, final, c.wantFailures, c.final)
			}
			if n := got.infraFaults(); n != c.wantInfra {
				t.Errorf("infraFaults() after the failure = %d, want %d (the attempts the trainer did not fail)", n, c.wantInfra)
			}
			if again, _ := got.trainerFailed(); again.trainerFailures != c.wantFailures {
				t.Errorf("a second trainerFailed() of the same attempt counted %d failures, want %d", again.trainerFailures, c.wantFailures)
			}
			if l.trainerFailures != c.before {
				t.Errorf("trainerFailed changed the ledger it was called on")
			}
		})
	}
}

func TestAttemptLedgerResumed(t *testing.T) {
	for _, c := range []struct {
		name                 string
		attempt              int32
		retrained            int64
		from, reached, wantR int64
	}{
		{name: "first attempt trains nothing again", attempt: 1, from: 0, reached: 500, wantR: 0},
		{name: "retry from the start", attempt: 2, from: 0, reached: 300, wantR: 300},
		{name: "retry from a checkpoint", attempt: 2, from: 200, reached: 350, wantR: 150},
		{name: "adds to earlier retries", attempt: 3, retrained: 100, from: 200, reached: 260, wantR: 160},
		{name: "previous got no further than the checkpoint", attempt: 2, retrained: 40, from: 400, reached: 400, wantR: 40},
		{name: "reach unknown", attempt: 2, from: 400, reached: 0, wantR: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := attemptLedger{attempt: c.attempt, retrained: c.retrained}
			if got := l.resumed(c.from, c.reached).retrained; got != c.wantR {
				t.Errorf("resumed(%d, %d).retrained = %d, want %d", c.from, c.reached, got, c.wantR)
			}
		})
	}
}

func TestNewAttemptLedger(t *testing.T) {
	in := SegmentInput{MaxTrainerFailures: 3, MaxInfraRetries: 2}
	l := newAttemptLedger(in, 4, Heartbeat{TrainerFailures: 1, Retrained: 70})
	want := attemptLedger{attempt: 4, trainerFailures: 1, retrained: 70, maxTrainerFailures: 3, maxInfraRetries: 2}
	if l != want {
		t.Errorf("newAttemptLedger = %+v, want %+v", l, want)
	}
	if !l.retry() || (attemptLedger{attempt: 1}).retry() {
		t.Errorf("retry(): attempt 4 is a retry, attempt 1 is not")
	}
}
