package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweeps"
)

// RungPassed is what a segment tells its sweep as the trial's metric stream passes a decision point
// inside the segment: early_terminate in stop mode, where no segment ends at the decision points, and
// a trainer that trains past its segment's stop step. The sweep judges the trial's configuration on
// it (scheduler.Pass) while the trainer goes on, and stops the trainer by cancelling the segment when
// the configuration is pruned.
type RungPassed struct {
	TrialID string
	Config  int
	Seed    int64
	// Point is the decision point passed, in the spec's rung unit (SegmentInput.RungUnit); Step the
	// step the records had reached.
	Point int64
	Step  int64
	// Windowed is the objective's windowed mean there (SegmentResult.Windowed; in the logs unit, over
	// the last tenth of its logged values); nil when none was finite.
	Windowed *float64 `json:",omitempty"`
	// TargetStep is the first step at which the trial's windowed objective reached the env_steps
	// objective's target (0: not yet), Seconds its training wall seconds so far: what a sweep of
	// several objectives judges the trial on besides.
	TargetStep int64   `json:",omitempty"`
	Seconds    float64 `json:",omitempty"`
}

// RungReporter delivers a RungPassed to the sweep's workflow (the worker sets it from its Temporal
// client). A pass that cannot be delivered is logged: the trial then goes on unjudged at that point,
// as a trial whose configuration was decided without it.
type RungReporter interface {
	RungPassed(ctx context.Context, sweepWorkflowID string, p RungPassed) error
}

// rungTracker follows a segment's records past the trial's decision points.
type rungTracker struct {
	points []int64 // the points not yet passed, ascending
	unit   string
	metric string
	stop   int64 // the segment's stop step: a point there is the segment's own boundary
	logs   int64 // records that carried the objective (unit logs)
	window diagnostics.ObjectiveWindow
}

// newRungTracker follows the decision points of in past its start step; nil when the segment has none
// to report (no early_terminate, or no sweep to tell).
func newRungTracker(in SegmentInput) *rungTracker {
	if in.ReportTo == "" || len(in.Rungs) == 0 {
		return nil
	}
	t := &rungTracker{unit: in.RungUnit, metric: in.Metric, stop: in.StopAtStep}
	for _, p := range in.Rungs {
		if t.unit == sweeps.RungLogs || p > in.StartStep {
			t.points = append(t.points, p)
		}
	}
	if len(t.points) == 0 {
		return nil
	}
	return t
}

// observe takes in a record and returns the points it passed, each with the windowed objective there
// (windowed: the segment's window over steps).
func (t *rungTracker) observe(rec metrics.Record, windowed func() (float64, bool)) []RungPassed {
	var out []RungPassed
	if t.unit == sweeps.RungLogs {
		v, ok := rec.Values[t.metric]
		if !ok {
			return nil
		}
		t.logs++
		t.window.Add(t.logs, v)
		for len(t.points) > 0 && t.logs >= t.points[0] {
			p := RungPassed{Point: t.points[0], Step: rec.Step}
			if m, ok := t.window.Mean(); ok {
				p.Windowed = &m
			}
			out = append(out, p)
			t.points = t.points[1:]
		}
		return out
	}
	for len(t.points) > 0 && rec.Step >= t.points[0] {
		point := t.points[0]
		if point >= t.stop && rec.Step <= t.stop {
			// The segment's own end: the trial asks there (a boundary), unless its trainer trains on.
			break
		}
		p := RungPassed{Point: point, Step: rec.Step}
		if m, ok := windowed(); ok {
			p.Windowed = &m
		}
		out = append(out, p)
		t.points = t.points[1:]
	}
	return out
}

// reportPasses sends the passes to the sweep, in order, from a goroutine of the segment: a slow server
// never delays the records. Each is tried for up to a minute.
func (r *segmentRun) reportPasses(ctx context.Context, passes []RungPassed) {
	if r.a.Rungs == nil || len(passes) == 0 {
		return
	}
	target := r.in.TargetStepBefore
	if at, ok := r.records.TargetStep(); ok && target == 0 {
		target = at
	}
	seconds := r.in.SecondsBefore + time.Since(r.started).Seconds()
	for i := range passes {
		passes[i].TrialID, passes[i].Config, passes[i].Seed = r.in.Trial.ID, r.in.Trial.Config, r.in.Trial.Seed
		passes[i].TargetStep, passes[i].Seconds = target, seconds
	}
	r.passes.Add(1)
	go func() {
		defer r.passes.Done()
		log := activity.GetLogger(ctx)
		for _, p := range passes {
			var err error
			for try := 0; try < 6; try++ {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				err = r.a.Rungs.RungPassed(sctx, r.in.ReportTo, p)
				cancel()
				if err == nil || ctx.Err() != nil {
					break
				}
				time.Sleep(time.Second)
			}
			if err != nil {
				log.Warn("decision point not reported to the sweep; the trial goes on unjudged there", "point", p.Point, "error", err)
			}
		}
	}()
}
