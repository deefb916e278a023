package sweepstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// Limits that keep a report of a very large sweep within the WriteResults activity's time: the curves
// of at most reportCurveTrials trials are read (every stopped trial first), each thinned to
// reportCurvePoints points.
const (
	reportCurveTrials = 300
	reportCurvePoints = 256
)

// trialDetail is what the store holds about one trial beyond its summary.
type trialDetail struct {
	curve      []report.Point
	lastStep   int64 // the last step of the stored metrics; 0 when none was read
	divergence *diagnostics.Verdict
}

// loadTrialDetails reads the divergence verdict of every stopped trial and the learning curve (the
// objective metric) of as many trials as the limit allows, stopped trials first.
func (st *Store) loadTrialDetails(ctx context.Context, sweepID, metric string, trials []results.TrialSummary) (map[string]*trialDetail, int, error) {
	order := make([]int, len(trials))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return trials[order[a]].Outcome != results.OutcomeCompleted && trials[order[b]].Outcome == results.OutcomeCompleted
	})
	details := make(map[string]*trialDetail, len(trials))
	omitted := 0
	for n, i := range order {
		t := trials[i]
		d := &trialDetail{}
		details[t.TrialID] = d
		if t.Outcome == results.OutcomeDiverged || t.Outcome == results.OutcomePruned {
			if err := st.readDivergence(ctx, sweepID, t.TrialID, d); err != nil {
				return nil, 0, err
			}
		}
		if n >= reportCurveTrials {
			omitted++
			continue
		}
		if err := st.readCurve(ctx, sweepID, t.TrialID, metric, d); err != nil {
			return nil, 0, err
		}
	}
	return details, omitted, nil
}

// readDivergence reads a trial's divergence verdict, if it has one.
func (st *Store) readDivergence(ctx context.Context, sweepID, trialID string, d *trialDetail) error {
	dump, err := st.ReadDivergence(ctx, sweepID, trialID)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	d.divergence = &dump.Verdict
	return nil
}

// readCurve reads the objective metric from a trial's stored metrics (artifacts.ReadMetrics);
// malformed lines are skipped, as everywhere metrics are read.
func (st *Store) readCurve(ctx context.Context, sweepID, trialID, metric string, d *trialDetail) error {
	var curve []report.Point
	err := artifacts.ReadMetrics(ctx, st.s, sweepID, trialID, math.MaxInt64, metrics.LineStep, func(line []byte, _ int64) error {
		rec, err := metrics.ParseJSONLine(line)
		if err != nil {
			return nil
		}
		d.lastStep = max(d.lastStep, rec.Step)
		if v, ok := rec.Value(metric); ok {
			curve = append(curve, report.Point{Step: rec.Step, Value: v})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("trial %s: read metrics: %w", trialID, err)
	}
	d.curve = report.Thin(curve, reportCurvePoints)
	return nil
}

// readProbes reads probes.json; a sweep without one (probes off) has none.
func (st *Store) readProbes(ctx context.Context, sweepID string) (*probes.Report, error) {
	rep, err := st.ReadProbes(ctx, sweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	return rep, err
}

// TrialDetails is what the store holds about a sweep's trials beyond their summaries: the learning
// curves, the last step of the metrics read, and the divergence verdicts (ReadTrialDetails).
type TrialDetails struct {
	byTrial map[string]*trialDetail
	omitted int // trials whose curves were not read (reportCurveTrials)
}

// ReadTrialDetails reads the divergence verdict of every stopped trial and the learning curve (the
// metric named) of as many trials as the report's limit allows, stopped trials first.
func (st *Store) ReadTrialDetails(ctx context.Context, sweepID, metric string, trials []results.TrialSummary) (*TrialDetails, error) {
	details, omitted, err := st.loadTrialDetails(ctx, sweepID, metric, trials)
	if err != nil {
		return nil, err
	}
	return &TrialDetails{byTrial: details, omitted: omitted}, nil
}

// Reached is, for results.New, how far each trial's stored metrics and divergence verdict go.
func (d *TrialDetails) Reached() map[string]results.Reached {
	out := make(map[string]results.Reached, len(d.byTrial))
	for id, t := range d.byTrial {
		r := results.Reached{LastMetricStep: t.lastStep}
		if t.divergence != nil {
			r.DivergenceStep = t.divergence.Step
		}
		out[id] = r
	}
	return out
}

// ReportInput assembles a sweep's report: res as it is (results.json's content) with the curves,
// divergence verdicts and probe results the store holds, and reg, the regression comparison (nil:
// none). details are the trials' details when the caller read them already (ReadTrialDetails, for
// res's trials); nil reads them. res is not modified.
func (st *Store) ReportInput(ctx context.Context, res *results.SweepResults, spec *sweeps.Spec,
	reg *regression.Report, details *TrialDetails, now time.Time) (*report.Input, error) {
	if details == nil {
		var err error
		if details, err = st.ReadTrialDetails(ctx, res.SweepID, res.Metric.Name, res.Trials); err != nil {
			return nil, err
		}
	}
	probeReport, err := st.readProbes(ctx, res.SweepID)
	if err != nil {
		return nil, err
	}
	in := &report.Input{Results: res, Spec: spec, Probes: probeReport, CurvesOmitted: details.omitted, Regression: reg,
		Curves: map[string][]report.Point{}, Divergences: map[string]*diagnostics.Verdict{},
		Generated: now.UTC().Format("2006-01-02 15:04 UTC")}
	for _, t := range res.Trials {
		d := details.byTrial[t.TrialID]
		if d == nil {
			continue
		}
		if d.divergence != nil {
			in.Divergences[t.TrialID] = d.divergence
		}
		if d.curve != nil {
			in.Curves[t.TrialID] = d.curve
		}
	}
	return in, nil
}

// RenderReport renders report.html for a sweep (ReportInput, then report.Render).
func (st *Store) RenderReport(ctx context.Context, res *results.SweepResults, spec *sweeps.Spec,
	reg *regression.Report, now time.Time) ([]byte, error) {
	in, err := st.ReportInput(ctx, res, spec, reg, nil, now)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := report.Render(&b, in); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
