package artifacts

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// An attempt's log parts read back in numeric order as one log; a segment run again with attempt
// numbers that are taken gets the next free number, so no stored log is overwritten.
func TestLogParts(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	const sweep, trial = "sweep/x/ab12", "0-s1"
	if got, want := LogPartKey(sweep, trial, 2, 3, 17), "sweeps/x/ab12/trials/0-s1/logs/segment-2-attempt-3/00000017.log"; got != want {
		t.Errorf("LogPartKey = %q, want %q", got, want)
	}
	if n, err := LogAttempt(ctx, s, sweep, trial, 0, 1); err != nil || n != 1 {
		t.Errorf("LogAttempt with nothing stored = %d, %v, want 1", n, err)
	}
	var want strings.Builder
	for i := range 12 {
		part := strings.Repeat(string(rune('a'+i)), i+1)
		want.WriteString(part)
		if err := s.Put(ctx, LogPartKey(sweep, trial, 0, 1, i), strings.NewReader(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, LogPartKey(sweep, trial, 0, 3, 0), strings.NewReader("third")); err != nil {
		t.Fatal(err)
	}
	// Objects that are not parts are ignored.
	for _, k := range []string{LogsDir(sweep, trial) + "/segment-0-attempt-1.log", LogDir(sweep, trial, 0, 1) + "/notes.txt"} {
		if err := s.Put(ctx, k, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	var got strings.Builder
	if err := ReadLog(ctx, s, sweep, trial, 0, 1, &got); err != nil || got.String() != want.String() {
		t.Errorf("ReadLog = %q, %v, want %q", got.String(), err, want.String())
	}
	if err := ReadLog(ctx, s, sweep, trial, 0, 2, &got); !errors.Is(err, ErrNoLog) {
		t.Errorf("ReadLog of an attempt without parts: %v, want ErrNoLog", err)
	}
	logs, err := ListLogs(ctx, s, sweep, trial)
	if err != nil || len(logs) != 2 || logs[0] != (LogRef{0, 1, 12}) || logs[1] != (LogRef{0, 3, 1}) {
		t.Errorf("ListLogs = %+v, %v, want segment 0 attempts 1 (12 parts) and 3 (1 part)", logs, err)
	}
	for _, c := range []struct{ attempt, want int32 }{{1, 4}, {2, 2}, {3, 4}} {
		if n, err := LogAttempt(ctx, s, sweep, trial, 0, c.attempt); err != nil || n != c.want {
			t.Errorf("LogAttempt(attempt %d) = %d, %v, want %d", c.attempt, n, err, c.want)
		}
	}
	if n, err := LogAttempt(ctx, s, sweep, trial, 1, 1); err != nil || n != 1 {
		t.Errorf("LogAttempt of another segment = %d, %v, want 1", n, err)
	}
}
