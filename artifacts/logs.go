package artifacts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A trainer's log (its stdout and stderr) is stored per segment attempt as immutable parts, each
// holding only the bytes written since the attempt's previous part:
//
//	sweeps/<sweep-id>/trials/<trial-id>/logs/segment-<segment>-attempt-<attempt>/<seq>.log
//
// with <seq> zero-padded to 8 digits, so every byte of a log is uploaded once. ReadLog streams an
// attempt's parts back in order as the one log. <attempt> is the attempt's number unless parts of this
// segment with that number are stored already (a segment run again): then it is one above the highest
// stored (LogAttempt), so a stored log is never overwritten.

// LogRef names one stored attempt log.
type LogRef struct {
	Segment int
	Attempt int32
	// Parts is how many parts are stored.
	Parts int
}

// parseLogDir reads segment and attempt from "segment-S-attempt-A".
func parseLogDir(name string) (segment, attempt int64, ok bool) {
	rest, ok := strings.CutPrefix(name, "segment-")
	if !ok {
		return 0, 0, false
	}
	s, a, ok := strings.Cut(rest, "-attempt-")
	if !ok {
		return 0, 0, false
	}
	seg, err1 := parseCount(s)
	att, err2 := parseCount(a)
	if err1 != nil || err2 != nil || seg > math.MaxInt32 || att > math.MaxInt32 {
		return 0, 0, false
	}
	return seg, att, true
}

// parseCount reads a non-negative decimal integer without sign.
func parseCount(s string) (int64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

// logPart is a part's place in its attempt's log, parsed from its key.
type logPart struct {
	key string
	seq int64
}

// ListLogs lists a trial's stored attempt logs in the order they ran: by segment, then attempt.
func ListLogs(ctx context.Context, s Store, sweepID, trialID string) ([]LogRef, error) {
	prefix := LogsDir(sweepID, trialID) + "/"
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list logs: %w", err)
	}
	var out []LogRef
	for _, k := range keys {
		dir, name, ok := strings.Cut(k[len(prefix):], "/")
		if !ok || strings.Contains(name, "/") || !isLogPartName(name) {
			continue
		}
		seg, att, ok := parseLogDir(dir)
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(r LogRef) bool { return r.Segment == int(seg) && r.Attempt == int32(att) })
		if i < 0 {
			out = append(out, LogRef{Segment: int(seg), Attempt: int32(att)})
			i = len(out) - 1
		}
		out[i].Parts++
	}
	slices.SortFunc(out, func(a, b LogRef) int {
		return cmp.Or(cmp.Compare(a.Segment, b.Segment), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out, nil
}

func isLogPartName(name string) bool {
	_, ok := logPartSeq(name)
	return ok
}

func logPartSeq(name string) (int64, bool) {
	base, ok := strings.CutSuffix(name, ".log")
	if !ok {
		return 0, false
	}
	n, err := parseCount(base)
	return n, err == nil
}

// LogAttempt is the number a segment attempt names its log with: attempt, or, when a log of the
// segment with that number is stored already, one above the highest stored.
func LogAttempt(ctx context.Context, s Store, sweepID, trialID string, segment int, attempt int32) (int32, error) {
	logs, err := ListLogs(ctx, s, sweepID, trialID)
	if err != nil {
		return 0, err
	}
	taken, highest := false, int32(0)
	for _, l := range logs {
		if l.Segment != segment {
			continue
		}
		taken = taken || l.Attempt == attempt
		highest = max(highest, l.Attempt)
	}
	if !taken {
		return attempt, nil
	}
	if highest == math.MaxInt32 {
		return 0, fmt.Errorf("log of segment %d: attempt %d stored already, no higher number left", segment, highest)
	}
	return highest + 1, nil
}

// ErrNoLog is returned (wrapped) by ReadLog when the attempt has no stored log.
var ErrNoLog = errors.New("no stored log")

// ReadLog writes one segment attempt's stored log to w: its parts in order, each streamed.
func ReadLog(ctx context.Context, s Store, sweepID, trialID string, segment int, attempt int32, w io.Writer) error {
	prefix := LogDir(sweepID, trialID, segment, attempt) + "/"
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list log: %w", err)
	}
	var parts []logPart
	for _, k := range keys {
		if seq, ok := logPartSeq(k[len(prefix):]); ok && !strings.Contains(k[len(prefix):], "/") {
			parts = append(parts, logPart{key: k, seq: seq})
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("segment %d attempt %d: %w", segment, attempt, ErrNoLog)
	}
	slices.SortFunc(parts, func(a, b logPart) int { return cmp.Compare(a.seq, b.seq) })
	for _, p := range parts {
		if err := copyObject(ctx, s, p.key, w); err != nil {
			return err
		}
	}
	return nil
}

func copyObject(ctx context.Context, s Store, key string, w io.Writer) error {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("read log %s: %w", key, err)
	}
	return nil
}
