// Package report renders a sweep's report.html: one self-contained page (inline SVG drawn with
// gonum/plot, inline CSS, no script and nothing fetched from the network) with the leaderboard, learning
// curves coloured by outcome, parallel coordinates, per-parameter sensitivity, the divergence table,
// throughput and divergence by GPU class and precision, the probe results and the compute early
// stopping saved; for a sweep with several objectives, the Pareto front, its table, its hypervolume
// over the sweep and the environment steps to a threshold; for a sweep a nightly regression ran, first of all the verdict against the baseline.
//
// It is a pure package: the caller loads the trials, their curves and divergence verdicts from the
// artifact store and hands them over in an Input.
package report

import (
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// Input is everything a report shows. Render reads it and never modifies it.
type Input struct {
	// Results is the sweep and its trials in plan order (results.json, or the parts stored so far while
	// it runs), rendered as they are; its Status is the sweep's final status, or its phase while it runs.
	Results *results.SweepResults
	Spec    *sweeps.Spec // optional: the step budget and the parameters' distributions
	// Curves holds each loaded trial's objective against steps, possibly thinned, by trial ID.
	Curves map[string][]Point
	// Divergences holds the verdict of divergence.json, by trial ID, for the trials that have one.
	Divergences map[string]*diagnostics.Verdict
	Probes      *probes.Report // probes.json, when the sweep ran probes
	// CurvesOmitted counts trials whose learning curves were not loaded (very large sweeps).
	CurvesOmitted int
	// Generated is shown as the report's date; the caller passes it so Render stays deterministic.
	Generated string
	// Regression, when the sweep ran as a nightly regression, is its comparison with the baseline
	// (regression.json): shown first.
	Regression *regression.Report
}

// Trial is one trial as the report draws it: its result, its learning curve and, when a rule stopped
// it, the verdict.
type Trial struct {
	results.TrialSummary
	Curve      []Point              // the objective against steps, possibly thinned
	Divergence *diagnostics.Verdict // from divergence.json; nil when none was stored
}

// trials joins each trial's result with its curve and verdict, in plan order.
func (in *Input) trials() []Trial {
	out := make([]Trial, len(in.Results.Trials))
	for i, t := range in.Results.Trials {
		out[i] = Trial{TrialSummary: t, Curve: in.Curves[t.TrialID], Divergence: in.Divergences[t.TrialID]}
	}
	return out
}

// Point is one value of a learning curve.
type Point struct {
	Step  int64
	Value float64 // may be NaN or ±Inf: the plot breaks the line there
}

// totalSteps is the step budget of every trial, 0 when unknown.
func (in *Input) totalSteps() int64 {
	if in.Spec == nil {
		return 0
	}
	if in.Spec.Trainer.TotalSteps == sweeps.DefaultWandBTotalSteps {
		// A W&B config's trainer decides its own length: a full budget is what its completed trials
		// trained (the most steps one reached); unknown while none completed.
		var most int64
		for _, t := range in.Results.Trials {
			if t.Outcome == results.OutcomeCompleted {
				most = max(most, t.Steps)
			}
		}
		return most
	}
	return in.Spec.Trainer.TotalSteps
}

// maximize says whether a larger objective is better.
func (in *Input) maximize() bool { return in.Results.Maximize() }

// Thin returns at most n points of pts, evenly spaced by index, always keeping the first and the last
// and every non-finite value (a NaN is the point a reader of a diverged curve looks for). pts is not
// modified.
func Thin(pts []Point, n int) []Point {
	if n < 2 || len(pts) <= n {
		return pts
	}
	out := make([]Point, 0, n+1)
	stride := float64(len(pts)-1) / float64(n-1)
	next := 0.0
	for i, p := range pts {
		keep := float64(i) >= next || i == len(pts)-1 || !isFinite(p.Value)
		if float64(i) >= next {
			next += stride
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}
