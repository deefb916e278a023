package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer"
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
func loadTrialDetails(ctx context.Context, s Store, sweepID, metric string, trials []TrialSummary) (map[string]*trialDetail, int, error) {
	order := make([]int, len(trials))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return trials[order[a]].Outcome != OutcomeCompleted && trials[order[b]].Outcome == OutcomeCompleted
	})
	details := make(map[string]*trialDetail, len(trials))
	omitted := 0
	for n, i := range order {
		t := trials[i]
		d := &trialDetail{}
		details[t.TrialID] = d
		if t.Outcome == OutcomeDiverged || t.Outcome == OutcomePruned {
			if err := readDivergence(ctx, s, sweepID, t.TrialID, d); err != nil {
				return nil, 0, err
			}
		}
		if n >= reportCurveTrials {
			omitted++
			continue
		}
		if err := readCurve(ctx, s, sweepID, t.TrialID, metric, d); err != nil {
			return nil, 0, err
		}
	}
	return details, omitted, nil
}

// readDivergence reads a trial's divergence.json, if it has one.
func readDivergence(ctx context.Context, s Store, sweepID, trialID string, d *trialDetail) error {
	b, err := getBytes(ctx, s, artifacts.TrialKey(sweepID, trialID, "divergence.json"))
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var dump struct {
		Verdict diagnostics.Verdict `json:"verdict"`
	}
	if err := json.Unmarshal(b, &dump); err != nil {
		return fmt.Errorf("trial %s: decode divergence.json: %w", trialID, err)
	}
	d.divergence = &dump.Verdict
	return nil
}

// readCurve reads the objective metric from a trial's stored metrics (artifacts.ReadMetrics);
// malformed lines are skipped, as everywhere metrics are read.
func readCurve(ctx context.Context, s Store, sweepID, trialID, metric string, d *trialDetail) error {
	var curve []report.Point
	err := artifacts.ReadMetrics(ctx, s, sweepID, trialID, math.MaxInt64, func(line []byte, _ int64) error {
		rec, err := trainer.ParseJSONLine(line)
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

// stepsReached corrects the steps of a trial that ended inside a segment: the Trial workflow counts
// steps at segment ends, so a trial stopped mid-segment would otherwise report the previous segment's
// end (0 for a one-segment trial) and the report would count its steps as never spent.
func stepsReached(t TrialSummary, d *trialDetail) int64 {
	steps := t.Steps
	if t.Outcome == OutcomeCompleted || d == nil {
		return steps
	}
	steps = max(steps, d.lastStep)
	if d.divergence != nil {
		steps = max(steps, d.divergence.Step)
	}
	return steps
}

// readProbes reads probes.json; a sweep without one (probes off, or stored before they existed) has
// none.
func readProbes(ctx context.Context, s Store, sweepID string) (*ProbeReport, error) {
	var rep ProbeReport
	err := getJSON(ctx, s, artifacts.SweepKey(sweepID, "probes.json"), &rep)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rep, nil
}

// readRegression reads regression.json, the comparison a nightly regression made; a sweep that ran as
// no regression has none.
func readRegression(ctx context.Context, s Store, sweepID string) (*report.Regression, error) {
	var rep RegressionReport
	err := getJSON(ctx, s, artifacts.SweepKey(sweepID, "regression.json"), &rep)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	th := rep.Thresholds
	out := &report.Regression{Verdict: rep.Verdict, Baseline: rep.Baseline, BaselineKey: rep.BaselineKey,
		Thresholds: sweeps.Regression{Tolerance: th.Tolerance, Confidence: th.Confidence, Resamples: th.Resamples,
			MinProbImprovement: th.MinProbImprovement, MaxNewFailures: th.MaxNewFailures},
		Overridden: rep.Overridden, Compared: rep.Compared}
	if rep.Webhook != nil {
		out.WebhookError = rep.Webhook.Error
	}
	for _, c := range rep.Configs {
		out.Configs = append(out.Configs, report.RegressionConfig{Config: c.Config, BaselineConfig: c.BaselineConfig,
			Params: c.Params, BaselineIQM: c.BaselineIQM, CandidateIQM: c.CandidateIQM, Baseline: len(c.Baseline),
			Candidate: len(c.Candidate), RelChange: c.RelChange, DiffLo: c.DiffCI[0], DiffHi: c.DiffCI[1],
			ProbImprovement: c.ProbImprovement, BaselineFailures: c.BaselineFailures,
			CandidateFailures: c.CandidateFailures, Verdict: c.Verdict, Reason: c.Reason})
	}
	return out, nil
}

// ReportInput assembles a sweep's report from its results and the store: curves, divergence
// verdicts, probe results, and the regression comparison when there is one. It also corrects each stopped trial's steps in res (see stepsReached), so
// call it before writing results.json and results.csv.
func ReportInput(ctx context.Context, s Store, res *SweepResults, spec *sweeps.Spec, now time.Time) (*report.Input, error) {
	details, omitted, err := loadTrialDetails(ctx, s, res.SweepID, res.Metric.Name, res.Trials)
	if err != nil {
		return nil, err
	}
	probes, err := readProbes(ctx, s, res.SweepID)
	if err != nil {
		return nil, err
	}
	reg, err := readRegression(ctx, s, res.SweepID)
	if err != nil {
		return nil, err
	}
	in := &report.Input{SweepID: res.SweepID, Name: res.Name, Status: res.Status, Metric: res.Metric,
		Params: res.Params, Spec: spec, Probes: probes, CurvesOmitted: omitted, Regression: reg,
		Generated: now.UTC().Format("2006-01-02 15:04 UTC")}
	for i := range res.Trials {
		t := &res.Trials[i]
		d := details[t.TrialID]
		t.Steps = stepsReached(*t, d)
		in.Trials = append(in.Trials, report.Trial{ID: t.TrialID, Config: t.Config, Seed: t.Seed, Params: t.Params,
			Outcome: t.Outcome, Objective: t.Objective, Steps: t.Steps, StopRule: t.StopRule,
			WallSeconds: t.WallSeconds, Error: firstLine(t.Error), Warnings: t.Warnings, Malformed: t.Malformed, Curve: d.curve, Divergence: d.divergence})
	}
	return in, nil
}

// RenderReport renders report.html for a sweep.
func RenderReport(ctx context.Context, s Store, res *SweepResults, spec *sweeps.Spec, now time.Time) ([]byte, error) {
	in, err := ReportInput(ctx, s, res, spec, now)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := report.Render(&b, in); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
