// Package report renders a sweep's report.html: one self-contained page (inline SVG drawn with
// gonum/plot, inline CSS, no script and nothing fetched from the network) with the leaderboard, learning
// curves coloured by outcome, parallel coordinates, per-parameter sensitivity, the divergence table, the
// probe results and the compute early stopping saved; for a sweep a nightly regression ran, first of all
// the verdict against the baseline.
//
// It is a pure package: the caller loads the trials, their curves and divergence verdicts from the
// artifact store and hands them over in an Input.
package report

import (
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// Trial outcomes, as the Trial workflow records them.
const (
	OutcomeCompleted = "completed"
	OutcomeDiverged  = "diverged"
	OutcomePruned    = "pruned"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// outcomes lists every outcome in display order.
var outcomes = []string{OutcomeCompleted, OutcomeDiverged, OutcomePruned, OutcomeFailed, OutcomeCancelled}

// Input is everything a report shows.
type Input struct {
	SweepID string
	Name    string
	Status  string // the sweep's final status, or its phase while it runs
	Metric  sweeps.Metric
	Params  []string       // parameter names in spec order
	Spec    *sweeps.Spec   // optional: the step budget and the parameters' distributions
	Trials  []Trial        // in plan order
	Probes  *probes.Report // probes.json, when the sweep ran probes
	// CurvesOmitted counts trials whose learning curves were not loaded (very large sweeps).
	CurvesOmitted int
	// Generated is shown as the report's date; the caller passes it so Render stays deterministic.
	Generated string
	// Regression, when the sweep ran as a nightly regression, is its comparison with the baseline
	// (regression.json): shown first.
	Regression *Regression
}

// Trial is one trial's result, its learning curve and, when a rule stopped it, the verdict.
type Trial struct {
	ID          string
	Config      int
	Seed        int64
	Params      map[string]any
	Outcome     string
	Objective   *float64 // the objective's last finite value; nil when it has none
	Steps       int64    // environment steps reached
	StopRule    string
	WallSeconds float64
	Error       string
	Warnings    []string             // problems the trial ran despite: an objective no record carries, a trainer ignoring its stop step
	Malformed   int                  // metric lines its readers dropped as malformed
	Curve       []Point              // the objective against steps, possibly thinned
	Divergence  *diagnostics.Verdict // from divergence.json; nil when none was stored
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
	return in.Spec.Trainer.TotalSteps
}

// maximize says whether a larger objective is better.
func (in *Input) maximize() bool { return in.Metric.Goal != "minimize" }

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
