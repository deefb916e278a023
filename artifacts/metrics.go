package artifacts

import (
	"bufio"
	"bytes"
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

// A trial's metrics are stored as immutable parts, one per flush of a segment attempt, each holding
// only the records read since the attempt's previous flush:
//
//	sweeps/<sweep-id>/trials/<trial-id>/metrics/<segment>-<attempt>-<seq>.jsonl
//
// with the three numbers zero-padded (6, 6 and 8 digits) so the names sort in the order they were
// written. Every record is uploaded once. ReadMetrics merges the parts back into one stream.
//
// <attempt> is the attempt's number (Temporal's), unless parts of this segment with that number are
// stored already (the attempt numbers of a segment run again start over): then it is one above the
// highest stored (MetricsAttempt), so a later attempt always sorts after the earlier ones.

// MetricsAttempt is the number a segment attempt names its metrics parts with: attempt, or, when
// parts of the segment with that number are stored already, one above the highest stored.
func MetricsAttempt(ctx context.Context, s Store, sweepID, trialID string, segment int, attempt int32) (int32, error) {
	prefix := MetricsDir(sweepID, trialID) + "/"
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return 0, fmt.Errorf("list metrics: %w", err)
	}
	taken, highest := false, int64(0)
	for _, k := range keys {
		p, ok := parseMetricsPart(k)
		if !ok || strings.Contains(k[len(prefix):], "/") || p.segment != int64(segment) {
			continue
		}
		taken = taken || p.attempt == int64(attempt)
		highest = max(highest, p.attempt)
	}
	if !taken {
		return attempt, nil
	}
	if highest >= math.MaxInt32 {
		return 0, fmt.Errorf("metrics of segment %d: attempt %d stored already, no higher number left", segment, highest)
	}
	return int32(highest + 1), nil
}

// IsMetricsPart tells whether a file name is that of a metrics part.
func IsMetricsPart(name string) bool {
	_, ok := parseMetricsPart(name)
	return ok
}

// metricsPart is a part's place in the stream, parsed from its name.
type metricsPart struct {
	key                   string
	segment, attempt, seq int64
}

// parseMetricsPart reads segment, attempt and seq from a part's base name; false for any other name.
// The numbers are compared as numbers, so a name wider than its padding still sorts right.
func parseMetricsPart(key string) (metricsPart, bool) {
	name := key[strings.LastIndexByte(key, '/')+1:]
	base, ok := strings.CutSuffix(name, ".jsonl")
	if !ok {
		return metricsPart{}, false
	}
	fields := strings.Split(base, "-")
	if len(fields) != 3 {
		return metricsPart{}, false
	}
	var n [3]int64
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 || f == "" || f[0] == '+' {
			return metricsPart{}, false
		}
		n[i] = v
	}
	return metricsPart{key: key, segment: n[0], attempt: n[1], seq: n[2]}, true
}

// StepFunc reads a stored metrics line's step; false when the line has none. The store parses no
// metrics: its callers pass metrics.LineStep, the canonical line codec's.
type StepFunc func(line []byte) (int64, bool)

// ReadMetrics calls fn, in stream order, for each line of a trial's metrics whose step (as step reads
// it) is below before (math.MaxInt64 for all of them), with the line (no newline; valid only during
// the call) and its step. A trial without stored metrics has no lines; lines without a readable step
// are skipped.
//
// The stream is what the attempts wrote, in the order they ran (segment, then attempt), each part in
// the order it was written, except that an attempt overrides what came before it from its first step
// on: an attempt whose first record is step F keeps, of everything stored before it, only the records
// below F. A retry that resumes from an earlier checkpoint than its crashed attempt reached, and a
// segment that resumes below where the previous one ran to, so yield each step once, the later
// attempt's records winning.
func ReadMetrics(ctx context.Context, s Store, sweepID, trialID string, before int64, step StepFunc, fn func(line []byte, step int64) error) error {
	return readMetricsUnder(ctx, s, MetricsDir(sweepID, trialID)+"/", before, step, fn)
}

// CopyMetrics writes a trial's merged metrics stream (ReadMetrics) to w as JSON lines: the
// metrics.jsonl of the whole trial.
func CopyMetrics(ctx context.Context, s Store, sweepID, trialID string, step StepFunc, w io.Writer) error {
	return ReadMetrics(ctx, s, sweepID, trialID, math.MaxInt64, step, func(line []byte, _ int64) error {
		if _, err := w.Write(line); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	})
}

// ReadMetricsDir is ReadMetrics over a folder of parts in a local file system (a local artifact
// store's trials/<trial-id>/metrics).
func ReadMetricsDir(ctx context.Context, dir string, before int64, step StepFunc, fn func(line []byte, step int64) error) error {
	l := &Local{root: dir}
	return readMetricsUnder(ctx, l, "", before, step, fn)
}

func readMetricsUnder(ctx context.Context, s Store, prefix string, before int64, lineStep StepFunc, fn func([]byte, int64) error) error {
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list metrics: %w", err)
	}
	var parts []metricsPart
	for _, k := range keys {
		if strings.Contains(k[len(prefix):], "/") {
			continue
		}
		if p, ok := parseMetricsPart(k); ok {
			parts = append(parts, p)
		}
	}
	slices.SortFunc(parts, func(a, b metricsPart) int {
		if c := cmp.Compare(a.segment, b.segment); c != 0 {
			return c
		}
		if c := cmp.Compare(a.attempt, b.attempt); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	// Each attempt's parts form a group; a group's records survive if their step is below the first
	// step of every later group (and below before).
	type group struct {
		parts  []metricsPart
		cutoff int64
	}
	var groups []group
	for i, p := range parts {
		if i == 0 || p.segment != parts[i-1].segment || p.attempt != parts[i-1].attempt {
			groups = append(groups, group{})
		}
		g := &groups[len(groups)-1]
		g.parts = append(g.parts, p)
	}
	cutoff := before
	for i := len(groups) - 1; i >= 0; i-- {
		groups[i].cutoff = cutoff
		first, err := firstStep(ctx, s, groups[i].parts, lineStep)
		if err != nil {
			return err
		}
		cutoff = min(cutoff, first)
	}
	for _, g := range groups {
		for _, p := range g.parts {
			if err := eachLine(ctx, s, p.key, func(line []byte) error {
				if step, ok := lineStep(line); ok && step < g.cutoff {
					return fn(line, step)
				}
				return nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// errFirst ends a read at the first line with a step.
var errFirst = errors.New("first step found")

// firstStep is the step of an attempt's first record: the first line with a step in its parts;
// math.MaxInt64 when there is none (the attempt then overrides nothing).
func firstStep(ctx context.Context, s Store, parts []metricsPart, lineStep StepFunc) (int64, error) {
	first := int64(math.MaxInt64)
	for _, p := range parts {
		err := eachLine(ctx, s, p.key, func(line []byte) error {
			if step, ok := lineStep(line); ok {
				first = step
				return errFirst
			}
			return nil
		})
		if errors.Is(err, errFirst) {
			return first, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return first, nil
}

// eachLine calls fn for each non-empty line of the object under key, of any length. A part that has
// gone missing since it was listed has no lines.
func eachLine(ctx context.Context, s Store, key string, fn func([]byte) error) error {
	rc, err := s.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read metrics: %w", err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) > 0 {
			if ferr := fn(line); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read metrics %s: %w", key, err)
		}
	}
}
