package activities

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// RecordResultsInput is a batch of finished trials the Sweep workflow hands over for storage.
type RecordResultsInput struct {
	SweepID string
	Part    int // batch number, from 0: a retried call rewrites the same part
	Trials  []results.TrialSummary
	// Decisions are the scheduler decisions made since the last part, stored as decision-log part
	// DecisionPart when there are any.
	Decisions    []results.Decision `json:",omitempty"`
	DecisionPart int                `json:",omitempty"`
}

// RecordResults stores a batch of trial summaries as results/part-NNNNNN.json. The Sweep workflow keeps
// only counts in its own state, so a sweep of any size continues-as-new with a small history.
func (a *Activities) RecordResults(ctx context.Context, in RecordResultsInput) error {
	if len(in.Decisions) > 0 {
		if err := a.sweepStore().WriteDecisionsPart(ctx, in.SweepID, in.DecisionPart, in.Decisions); err != nil {
			return err
		}
	}
	if len(in.Trials) == 0 {
		return nil
	}
	return a.sweepStore().WriteResultsPart(ctx, in.SweepID, in.Part, in.Trials)
}

// WriteResultsInput asks for the sweep's results files.
type WriteResultsInput struct {
	SweepID string
	Spec    sweeps.Spec
	Status  string // the sweep's final status
	// RungValues are early_terminate's compared values (scheduler.PrunerState.RungValues), stored in
	// results.json for the report's rung plot; nil without pruning.
	RungValues []results.ConfigRungs `json:",omitempty"`
	// NoReport: write the results without drawing report.html, for a caller that draws it once later
	// (the Regression workflow, with its comparison: DrawReport).
	NoReport bool `json:",omitempty"`
}

// WriteResultsResult says where the results went.
type WriteResultsResult struct {
	ResultsKey string
	CSVKey     string
	// DecisionsKey is decisions.json, the scheduler's decisions; "" when it made none.
	DecisionsKey string `json:",omitempty"`
	ReportKey    string // report.html; "" when NoReport or it could not be drawn (ReportError says why)
	ReportError  string
	Trials       int
	// Best is the best configuration as `rlsweep results --top` and the report's leaderboard rank it;
	// nil when no trial has a score (every trial failed, diverged or was cancelled before its first
	// objective).
	Best *BestConfig `json:",omitempty"`
}

// BestConfig is a sweep's best configuration, for the sweep's result and memo (docs/webui.md).
type BestConfig struct {
	Config int            `json:"config"` // its plan index
	Params map[string]any `json:"params"`
	// Precision is its resources.precision setting; "" without one.
	Precision string `json:"precision,omitempty"`
	Metric    string `json:"metric"`
	Goal      string `json:"goal"` // maximize or minimize
	// Objective is the mean objective over its scored seeds.
	Objective float64 `json:"objective"`
	Seeds     int     `json:"seeds"`  // scored seeds: completed trials with a finite objective
	Trials    int     `json:"trials"` // its trials, one per seed
	// Confirmed: it ran again on seeds the search did not use (bayes.rerun_top), and ranks by its score
	// there, Fresh, over FreshSeeds seeds (report.Leaderboard's rule).
	Confirmed  bool     `json:"confirmed,omitempty"`
	Fresh      *float64 `json:"fresh,omitempty"`
	FreshSeeds int      `json:"fresh_seeds,omitempty"`
	// Front counts the configurations on the Pareto front of a sweep with several objectives
	// (results.SweepResults.Pareto); 0 for a sweep with one.
	Front int `json:"front,omitempty"`
}

// bestConfig is the first configuration of the leaderboard (report.Leaderboard), nil when none scored.
func bestConfig(res *results.SweepResults) *BestConfig {
	rows := report.Leaderboard(res)
	if len(rows) == 0 || rows[0].Scored == 0 {
		return nil
	}
	r := rows[0]
	best := &BestConfig{Config: r.Config, Params: r.Params, Precision: r.Precision, Metric: res.Metric.Name, Goal: res.Metric.Goal,
		Objective: r.Mean, Seeds: r.Scored, Trials: r.Trials, Confirmed: r.Confirmed, Fresh: r.Fresh, FreshSeeds: r.FreshSeeds}
	for _, p := range res.Pareto {
		if p.OnFront() {
			best.Front++
		}
	}
	return best
}

// WriteResults merges the stored result parts into results.json and results.csv, and draws
// report.html beside them unless NoReport. Results come first: each trial that did not complete gets
// the steps its stored metrics and divergence verdict show it reached (results.New), and the report
// draws those results. A report that cannot be drawn does not fail the results: the result says why,
// and `rlsweep report` can draw it again later; a store that cannot be read does fail (and retry).
func (a *Activities) WriteResults(ctx context.Context, in WriteResultsInput) (*WriteResultsResult, error) {
	ss := a.sweepStore()
	trials, err := ss.ReadTrialSummaries(ctx, in.SweepID)
	if err != nil {
		return nil, err
	}
	details, err := ss.ReadTrialDetails(ctx, in.SweepID, in.Spec.Metric.Name, trials)
	if err != nil {
		return nil, err
	}
	res := results.New(in.SweepID, &in.Spec, in.Status, trials, details.Reached())
	res.RungValues = in.RungValues
	out := &WriteResultsResult{Trials: len(trials), Best: bestConfig(res)}
	if out.ResultsKey, err = ss.WriteResults(ctx, res); err != nil {
		return nil, err
	}
	if out.CSVKey, err = ss.WriteResultsCSV(ctx, res); err != nil {
		return nil, err
	}
	decisions, err := ss.ReadDecisionsParts(ctx, in.SweepID)
	if err != nil {
		return nil, err
	}
	if len(decisions) > 0 {
		if out.DecisionsKey, err = ss.WriteDecisions(ctx, in.SweepID, decisions); err != nil {
			return nil, err
		}
	}
	if in.NoReport {
		return out, nil
	}
	reg, err := readRegression(ctx, ss, in.SweepID)
	if err != nil {
		return nil, err
	}
	rin, err := ss.ReportInput(ctx, res, &in.Spec, reg, details, time.Now())
	if err != nil {
		return nil, err
	}
	out.ReportKey, out.ReportError, err = writeReport(ctx, ss, rin)
	return out, err
}

// readRegression reads the sweep's regression.json; nil for a sweep that ran as no regression.
func readRegression(ctx context.Context, ss *sweepstore.Store, sweepID string) (*regression.Report, error) {
	reg, err := ss.ReadRegression(ctx, sweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	}
	return reg, err
}

// writeReport draws report.html from rin and stores it: its key, or why it could not be drawn (which
// fails nothing); a store error is returned, to be retried.
func writeReport(ctx context.Context, ss *sweepstore.Store, rin *report.Input) (key, reportErr string, err error) {
	var html bytes.Buffer
	if err := report.Render(&html, rin); err != nil {
		return "", err.Error(), nil
	}
	key, err = ss.WriteReport(ctx, rin.Results.SweepID, html.Bytes())
	return key, "", err
}

// DrawReportInput names the sweep whose report.html to draw.
type DrawReportInput struct {
	SweepID string
}

// DrawReportResult says where the report went.
type DrawReportResult struct {
	// ReportKey is report.html; "" when the sweep has no results.json (nothing to draw) or the report
	// could not be drawn (ReportError says why).
	ReportKey   string `json:",omitempty"`
	ReportError string `json:",omitempty"`
}

// DrawReport draws report.html from the sweep's stored results.json, spec.json and regression.json
// (each of the last two when the sweep has it), as the Regression workflow asks once its comparison is
// over or failed. A sweep without results.json has nothing to draw: an empty result, no error. A
// report that cannot be drawn does not fail: the result says why; a store error fails (and retries).
func (a *Activities) DrawReport(ctx context.Context, in DrawReportInput) (*DrawReportResult, error) {
	ss := a.sweepStore()
	res, err := ss.ReadResults(ctx, in.SweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		return &DrawReportResult{}, nil
	}
	if err != nil {
		return nil, err
	}
	spec, err := ss.ReadSpec(ctx, in.SweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		spec, err = nil, nil // the report goes without the spec's section
	}
	if err != nil {
		return nil, err
	}
	reg, err := readRegression(ctx, ss, in.SweepID)
	if err != nil {
		return nil, err
	}
	rin, err := ss.ReportInput(ctx, res, spec, reg, nil, time.Now())
	if err != nil {
		return nil, err
	}
	out := &DrawReportResult{}
	out.ReportKey, out.ReportError, err = writeReport(ctx, ss, rin)
	return out, err
}
