package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
)

// SegmentLog is what one attempt of a training segment keeps of the records its trainer writes: each as
// a canonical JSON line (what the store keeps), the last step and values, the objective, and the last
// records for a divergence dump. It decides which records add a line: a record that only announces a
// checkpoint at a step already recorded adds none — the step just read, or, before the attempt's first
// line, a step at or below the checkpoint the attempt resumed from (a resumed trainer that announces that
// checkpoint again must not blank the stored line of its step).
type SegmentLog struct {
	w         io.Writer // the canonical lines
	metric    string    // the objective's metric name
	resumedAt int64     // the step of the checkpoint the attempt resumed from; 0 for a fresh start

	records   int
	lines     int
	firstLine int64 // the step of the attempt's first line; -1 before it
	lastStep  int64
	last      map[string]float64 // the last value of each canonical metric
	objective float64
	hasObj    bool
	window    diagnostics.ObjectiveWindow
	target    *float64 // SetTarget's; nil: none
	maximize  bool
	reachedAt int64 // the step of the first record whose windowed objective reached target
	reached   bool
	seen      map[string]bool // the metric names records carried, while none carried the objective
	recent    recentLines
}

// maxSeenKeys bounds the metric names MissingMetric lists.
const maxSeenKeys = 64

// dumpRecords is how many of the last lines Recent keeps.
const dumpRecords = 64

// NewSegmentLog returns the log of an attempt that writes its canonical lines to w, whose objective is
// metric, and which resumed from a checkpoint at step resumedAt (0 for a fresh start; its step is the
// attempt's LastStep until a record comes).
func NewSegmentLog(w io.Writer, metric string, resumedAt int64) *SegmentLog {
	return &SegmentLog{w: w, metric: metric, resumedAt: resumedAt, firstLine: -1, lastStep: resumedAt}
}

// Added says what Add did with a record.
type Added struct {
	// First: the record is the attempt's first line. Whoever judges the records should first take in
	// the trial's stored history before FirstLine (earlier segments and attempts).
	First bool
	// Line: the record added a line (false for a checkpoint announcement at a step recorded already).
	Line bool
}

// Add takes in one record.
func (l *SegmentLog) Add(rec metrics.Record) (Added, error) {
	checkpointOnly := len(rec.Values) == 0 &&
		(l.records > 0 && rec.Step == l.lastStep || l.firstLine < 0 && rec.Step <= l.resumedAt)
	var a Added
	if !checkpointOnly {
		a.Line = true
		if l.firstLine < 0 {
			l.firstLine, a.First = rec.Step, true
		}
	}
	l.records++
	l.lastStep = rec.Step
	l.Take(rec)
	if a.Line {
		l.lines++
		line := metrics.AppendRecordJSON(nil, rec)
		l.recent.add(line)
		if _, err := l.w.Write(line); err != nil {
			return a, fmt.Errorf("write metrics: %w", err)
		}
	}
	return a, nil
}

// Take keeps a record's canonical metrics as the last values and its objective, without a line: Add
// does it for every record; a resumed attempt with no record of its own does it for the stored record
// of the step it resumed at.
func (l *SegmentLog) Take(rec metrics.Record) {
	if l.last == nil {
		l.last = map[string]float64{}
	}
	for _, name := range metrics.CanonicalMetrics {
		if v, ok := rec.Values[name]; ok {
			l.last[name] = v
		}
	}
	if v, ok := rec.Values[l.metric]; ok {
		l.objective, l.hasObj = v, true
		l.window.Add(rec.Step, v)
		l.checkTarget(rec.Step)
		l.seen = nil
		return
	}
	if l.hasObj {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for k := range rec.Values {
		if len(l.seen) >= maxSeenKeys {
			break
		}
		l.seen[k] = true
	}
}

// SetTarget asks the log to note the first step at which the windowed objective reaches target, at or
// above it when maximize, at or below it otherwise (an env_steps objective's target, TargetStep).
func (l *SegmentLog) SetTarget(target float64, maximize bool) {
	l.target, l.maximize = &target, maximize
}

func (l *SegmentLog) checkTarget(step int64) {
	if l.target == nil || l.reached {
		return
	}
	m, ok := l.window.Mean()
	if ok && (l.maximize && m >= *l.target || !l.maximize && m <= *l.target) {
		l.reachedAt, l.reached = step, true
	}
}

// TargetStep is the step of the first record whose windowed objective reached SetTarget's target, and
// whether one did.
func (l *SegmentLog) TargetStep() (int64, bool) { return l.reachedAt, l.reached }

// Records is how many records Add took in; Lines how many lines they added.
func (l *SegmentLog) Records() int { return l.records }

// Lines is how many lines the records added.
func (l *SegmentLog) Lines() int { return l.lines }

// FirstLine is the step of the attempt's first line; -1 before it.
func (l *SegmentLog) FirstLine() int64 { return l.firstLine }

// LastStep is the step of the last record, or the step the attempt resumed at before any.
func (l *SegmentLog) LastStep() int64 { return l.lastStep }

// Last is the last value of each canonical metric (nil before any).
func (l *SegmentLog) Last() map[string]float64 { return l.last }

// Objective is the objective's last value, and whether a record carried it.
func (l *SegmentLog) Objective() (float64, bool) { return l.objective, l.hasObj }

// Windowed is the objective's mean over the records in the last tenth of the steps so far
// (diagnostics.ObjectiveWindow), and whether there is one.
func (l *SegmentLog) Windowed() (float64, bool) { return l.window.Mean() }

// MissingMetric is, when records came and none carried the objective, the names they carried instead,
// sorted (at most maxSeenKeys; empty when they carried none); nil otherwise.
func (l *SegmentLog) MissingMetric() []string {
	if l.hasObj || l.records == 0 {
		return nil
	}
	out := make([]string, 0, len(l.seen))
	for k := range l.seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Recent returns the last lines (at most 64), oldest first, each a JSON string with the secrets m
// knows masked (m may be nil).
func (l *SegmentLog) Recent(m *Masker) []json.RawMessage { return l.recent.all(m) }

// recentLines keeps the last lines in a ring.
type recentLines struct {
	lines [][]byte
	next  int
	full  bool
}

func (r *recentLines) add(line []byte) {
	if r.lines == nil {
		r.lines = make([][]byte, dumpRecords)
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % dumpRecords
	r.full = r.full || r.next == 0
}

func (r *recentLines) all(m *Masker) []json.RawMessage {
	var out []json.RawMessage
	start, n := 0, r.next
	if r.full {
		start, n = r.next, dumpRecords
	}
	for i := 0; i < n; i++ {
		line := r.lines[(start+i)%dumpRecords]
		// json.Marshal, not %q: Go quoting writes \x7f and \U000e0001, which are not JSON, and one such
		// record would make the whole dump unencodable.
		b, _ := json.Marshal(string(m.Mask(trimNewline(line)))) // a string always marshals
		out = append(out, json.RawMessage(b))
	}
	return out
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
