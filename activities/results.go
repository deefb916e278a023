package activities

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
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
}

// WriteResultsResult says where the results went.
type WriteResultsResult struct {
	ResultsKey string
	CSVKey     string
	// DecisionsKey is decisions.json, the scheduler's decisions; "" when it made none.
	DecisionsKey string `json:",omitempty"`
	ReportKey    string // report.html; "" when it could not be drawn (ReportError says why)
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
	Metric string         `json:"metric"`
	Goal   string         `json:"goal"` // maximize or minimize
	// Objective is the mean objective over its scored seeds.
	Objective float64 `json:"objective"`
	Seeds     int     `json:"seeds"`  // scored seeds: completed trials with a finite objective
	Trials    int     `json:"trials"` // its trials, one per seed
	// Confirmed: it ran again on seeds the search did not use (bayes.rerun_top), and ranks by its score
	// there, Fresh, over FreshSeeds seeds (report.Leaderboard's rule).
	Confirmed  bool     `json:"confirmed,omitempty"`
	Fresh      *float64 `json:"fresh,omitempty"`
	FreshSeeds int      `json:"fresh_seeds,omitempty"`
}

// bestConfig is the first configuration of the leaderboard (report.Leaderboard), nil when none scored.
func bestConfig(res *results.SweepResults) *BestConfig {
	rows := report.Leaderboard(res)
	if len(rows) == 0 || rows[0].Scored == 0 {
		return nil
	}
	r := rows[0]
	return &BestConfig{Config: r.Config, Params: r.Params, Metric: res.Metric.Name, Goal: res.Metric.Goal,
		Objective: r.Mean, Seeds: r.Scored, Trials: r.Trials, Confirmed: r.Confirmed, Fresh: r.Fresh, FreshSeeds: r.FreshSeeds}
}

// WriteResults merges the stored result parts into results.json and results.csv, and draws
// report.html beside them. A report that cannot be drawn does not fail the results: the result says
// why, and `rlsweep report` can draw it again later; a store that cannot be read does fail (and retry).
func (a *Activities) WriteResults(ctx context.Context, in WriteResultsInput) (*WriteResultsResult, error) {
	ss := a.sweepStore()
	trials, err := ss.ReadTrialSummaries(ctx, in.SweepID)
	if err != nil {
		return nil, err
	}
	reg, err := ss.ReadRegression(ctx, in.SweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		reg, err = nil, nil // a sweep that ran as no regression
	}
	if err != nil {
		return nil, err
	}
	sr := results.New(in.SweepID, &in.Spec, in.Status, trials)
	sr.RungValues = in.RungValues
	rin, err := ss.ReportInput(ctx, sr, &in.Spec, reg, time.Now())
	if err != nil {
		return nil, err
	}
	res := rin.Results // each stopped trial with the steps it reached
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
	var html bytes.Buffer
	if err := report.Render(&html, rin); err != nil {
		out.ReportError = err.Error()
		return out, nil
	}
	out.ReportKey, err = ss.WriteReport(ctx, in.SweepID, html.Bytes())
	return out, err
}
