package artifacts

import (
	"context"
	"fmt"
	"strings"
)

// LastAttemptReach is how far the latest attempt of a segment that stored metrics got: its attempt
// number (as its parts are named) and the highest step its parts hold; attempt 0 when no attempt of
// the segment stored any. A retry reads it to count the steps it trains again: the previous attempt may
// have trained on past its last heartbeat (the server unreachable, the worker killed) and stored those
// records meanwhile.
func LastAttemptReach(ctx context.Context, s Store, sweepID, trialID string, segment int, step StepFunc) (attempt int32, last int64, err error) {
	prefix := MetricsDir(sweepID, trialID) + "/"
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return 0, 0, fmt.Errorf("list metrics: %w", err)
	}
	var parts []metricsPart
	highest := int64(0)
	for _, k := range keys {
		p, ok := parseMetricsPart(k)
		if !ok || strings.Contains(k[len(prefix):], "/") || p.segment != int64(segment) {
			continue
		}
		parts = append(parts, p)
		highest = max(highest, p.attempt)
	}
	if highest == 0 || highest > int64(^uint32(0)>>1) {
		return 0, 0, nil
	}
	for _, p := range parts {
		if p.attempt != highest {
			continue
		}
		if err := eachLine(ctx, s, p.key, func(line []byte) error {
			if st, ok := step(line); ok {
				last = max(last, st)
			}
			return nil
		}); err != nil {
			return 0, 0, err
		}
	}
	return int32(highest), last, nil
}
