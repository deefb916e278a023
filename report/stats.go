package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Row is one configuration of the leaderboard.
type Row struct {
	Config int
	Params map[string]any
	// Precision is the configuration's resources.precision setting; "" without one.
	Precision string
	Trials    int            // trials of this configuration (one per seed)
	Scored    int            // completed trials with a finite objective: the seeds the statistics use
	Outcomes  map[string]int // trials per outcome
	Mean      float64        // mean objective over the scored seeds; NaN when none
	// Lo and Hi are the 95% confidence interval of the mean, clipped to metric.bounds; NaN with fewer
	// than results.MinIntervalSeeds scored seeds (the table says "too few seeds").
	Lo, Hi    float64
	IQM       float64   // interquartile mean over the scored seeds (rliable's aggregate); NaN when none
	Objective []float64 // the scored seeds' objectives
	// Confirmed: the configuration ran again on seeds the search did not use (a bayes sweep's
	// bayes.rerun_top). Fresh is its score there (results.Confirmation.RerunScore), nil when infeasible
	// there or not ended; FreshSeeds how many fresh seeds it ran on.
	Confirmed  bool
	Fresh      *float64
	FreshSeeds int
}

// Leaderboard groups a sweep's trials by configuration and ranks the configurations, best first:
//
//  1. confirmed configurations (re-run on fresh seeds, results.SweepResults.Confirmations) with a score
//     there, by that score: the fresh seeds were not chosen by the search, so their score is free of
//     the optimism of picking the best of many noisy scores (the winner's curse);
//  2. every other configuration with a scored seed, by its mean objective over its seeds;
//  3. configurations with no scored seed, in configuration order.
//
// Confirm re-runs on other GPU classes (TrialSummary.GPUClass) are left out: the ranking is the
// search's, on its own class. Only completed trials are scored: the last objective of a diverged or cancelled run is not its
// result, and a configuration that diverged on some seeds says so in Outcomes. The interval is
// Student's t: mean ± t(0.975, n−1)·s/√n, with s the sample standard deviation — with the 3 to 5 seeds
// RL sweeps run, a bootstrap interval would be far too narrow — from results.MinIntervalSeeds seeds
// on, clipped to metric.bounds.
func Leaderboard(res *results.SweepResults) []Row {
	maximize := res.Maximize()
	byConfig := map[int]*Row{}
	var order []int
	for _, t := range res.Trials {
		if t.GPUClass != "" {
			continue // a confirm re-run on another GPU class: not the search's result
		}
		r := byConfig[t.Config]
		if r == nil {
			r = &Row{Config: t.Config, Params: t.Params, Outcomes: map[string]int{}}
			byConfig[t.Config] = r
			order = append(order, t.Config)
		}
		r.Trials++
		r.Outcomes[t.Outcome]++
		if r.Precision == "" {
			r.Precision = t.Precision
		}
		if t.Scored() {
			r.Objective = append(r.Objective, *t.Objective)
		}
	}
	rows := make([]Row, 0, len(order))
	for _, c := range order {
		r := byConfig[c]
		r.Scored = len(r.Objective)
		r.Mean, r.Lo, r.Hi = meanCI(r.Objective, 0.95)
		if r.Scored >= results.MinIntervalSeeds {
			r.Lo, r.Hi = results.ClipToBounds(r.Lo, r.Hi, res.Metric.Bounds)
		} else {
			r.Lo, r.Hi = math.NaN(), math.NaN()
		}
		r.IQM = diagnostics.IQM(r.Objective)
		rows = append(rows, *r)
	}
	confirmed := map[int]results.Confirmation{}
	for _, c := range res.Confirmations {
		confirmed[c.Config] = c
	}
	for i := range rows {
		if c, ok := confirmed[rows[i].Config]; ok {
			rows[i].Confirmed, rows[i].Fresh, rows[i].FreshSeeds = true, c.RerunScore, c.RerunSeeds
		}
	}
	tier := func(r Row) int {
		switch {
		case r.Fresh != nil:
			return 0
		case r.Scored > 0:
			return 1
		}
		return 2
	}
	better := func(x, y float64) bool { return (x > y) == maximize }
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ta, tb := tier(a), tier(b); ta != tb {
			return ta < tb
		}
		switch {
		case a.Fresh != nil && *a.Fresh != *b.Fresh:
			return better(*a.Fresh, *b.Fresh)
		case a.Fresh == nil && a.Scored > 0 && a.Mean != b.Mean:
			return better(a.Mean, b.Mean)
		}
		return a.Config < b.Config
	})
	return rows
}

// FreshSeeds says "n fresh seeds", singular for one.
func FreshSeeds(n int) string {
	if n == 1 {
		return "1 fresh seed"
	}
	return fmt.Sprintf("%d fresh seeds", n)
}

// RankingRule says in a sentence how Leaderboard ranks res's configurations, for the tables that show it.
func RankingRule(res *results.SweepResults) string {
	if len(res.Confirmations) == 0 {
		return fmt.Sprintf("ranked by the mean over seeds; 95%% intervals from %d seeds on", results.MinIntervalSeeds)
	}
	return fmt.Sprintf("ranked by: configurations confirmed on fresh seeds first, by their score there; then the "+
		"others by their mean over seeds; 95%% intervals from %d seeds on", results.MinIntervalSeeds)
}

// meanCI returns the mean of xs and its Student-t confidence interval at the given level; NaN for what
// the sample cannot give.
func meanCI(xs []float64, level float64) (mean, lo, hi float64) {
	nan := math.NaN()
	switch len(xs) {
	case 0:
		return nan, nan, nan
	case 1:
		return xs[0], nan, nan
	}
	mean = stat.Mean(xs, nil)
	half, _ := diagnostics.MeanMargin(xs, 0.5+level/2)
	return mean, mean - half, mean + half
}

// Sensitivity says how much one parameter explains the objective across the scored trials and the
// pruned ones (by their value at the rung they were stopped at).
type Sensitivity struct {
	Param string
	// Spearman is the rank correlation of the parameter with the objective; NaN for a non-numeric
	// parameter or when either side is constant.
	Spearman float64
	// EtaSquared is the share of the objective's variance between the parameter's groups (each distinct
	// value, or quintiles of a continuous parameter): 0 means the parameter explains nothing, 1 all of it.
	EtaSquared float64
	Groups     int
	Scored     int // samples: completed trials with a finite objective and pruned trials with a rung value
	Pruned     int // of them, pruned trials
}

// Sample is one trial as the sensitivity analysis sees it: the parameters it trained under and its
// value, the final objective of a completed trial or the last windowed value at a rung of a pruned one.
type Sample struct {
	TrialID string
	Params  map[string]any
	Value   float64
	Pruned  bool
}

// Sensitivities computes a Sensitivity per swept parameter over samples (a parameter with one value
// among them is skipped).
func Sensitivities(samples []Sample, params []string) []Sensitivity {
	var out []Sensitivity
	for _, p := range params {
		var xs []any
		var ys []float64
		pruned := 0
		for _, s := range samples {
			if !isFinite(s.Value) {
				continue
			}
			xs, ys = append(xs, s.Params[p]), append(ys, s.Value)
			if s.Pruned {
				pruned++
			}
		}
		groups := groupKeys(xs)
		if distinct(groups) < 2 {
			continue
		}
		s := Sensitivity{Param: p, Spearman: math.NaN(), EtaSquared: etaSquared(groups, ys),
			Groups: distinct(groups), Scored: len(ys), Pruned: pruned}
		if num, ok := numbers(xs); ok {
			s.Spearman = spearman(num, ys)
		}
		out = append(out, s)
	}
	return out
}

// groupKeys assigns each value its group: the value itself when there are at most 10 distinct values,
// else its quintile.
func groupKeys(xs []any) []string {
	keys := make([]string, len(xs))
	for i, x := range xs {
		keys[i] = formatValue(x)
	}
	num, ok := numbers(xs)
	if !ok || distinct(keys) <= 10 {
		return keys
	}
	r := ranks(num)
	for i := range keys {
		keys[i] = strconv.Itoa(int(5 * (r[i] - 1) / float64(len(r))))
	}
	return keys
}

func distinct(keys []string) int {
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	return len(seen)
}

// etaSquared is SS_between / SS_total of ys grouped by keys.
func etaSquared(keys []string, ys []float64) float64 {
	mean := stat.Mean(ys, nil)
	sum, n := map[string]float64{}, map[string]float64{}
	var total float64
	for i, y := range ys {
		sum[keys[i]] += y
		n[keys[i]]++
		total += (y - mean) * (y - mean)
	}
	if total == 0 {
		return math.NaN()
	}
	var between float64
	for k, s := range sum {
		d := s/n[k] - mean
		between += n[k] * d * d
	}
	return between / total
}

// spearman is Pearson's correlation of the ranks (ties share their mean rank).
func spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	c := stat.Correlation(rx, ry, nil)
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return math.NaN()
	}
	return c
}

// ranks returns the 1-based ranks of xs, ties sharing their mean rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// numbers returns xs as float64s when every one is a number.
func numbers(xs []any) ([]float64, bool) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		f, ok := toFloat(x)
		if !ok {
			return nil, false
		}
		out[i] = f
	}
	return out, true
}

// toFloat is a parameter value as a number (sweeps.Numeric).
func toFloat(x any) (float64, bool) { return sweeps.Numeric(x) }

func formatValue(x any) string {
	if f, ok := toFloat(x); ok {
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	if x == nil {
		return "—"
	}
	return fmt.Sprint(x)
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Saving is the compute one early-stopped trial did not spend.
type Saving struct {
	TrialID      string
	Outcome      string
	Rule         string
	StepsReached int64
	StepsSaved   int64   // the step budget minus the steps reached
	SecondsSaved float64 // StepsSaved at the trial's own steps per second; NaN when it reached no step
}

// Savings is the compute early stopping saved across a sweep.
type Savings struct {
	Trials       []Saving
	StepsSaved   int64
	SecondsSaved float64 // over the trials whose time could be extrapolated
	StepsSpent   int64   // by every trial of the sweep
	Budget       int64   // trials × the step budget
	// PrunedSteps and PrunedSeconds: the part early_terminate saved (trials it stopped: pruned, and
	// those stopped because a sibling seed diverged); Pruned: how many trials it stopped.
	PrunedSteps   int64
	PrunedSeconds float64
	Pruned        int
}

// ComputeSavings finds, for every diverged or pruned trial, the steps and trial time it did not spend:
// total − reached steps, and that many steps at the rate the trial itself ran (reached / wall seconds),
// against every trial at its full budget; the part early_terminate saved is counted apart.
// totalSteps ≤ 0 (unknown budget) saves nothing.
func ComputeSavings(trials []results.TrialSummary, totalSteps int64) Savings {
	var s Savings
	for _, t := range trials {
		s.StepsSpent += t.Steps
		if totalSteps <= 0 {
			continue
		}
		s.Budget += totalSteps
		if t.Outcome != results.OutcomeDiverged && t.Outcome != results.OutcomePruned {
			continue
		}
		sv := Saving{TrialID: t.TrialID, Outcome: t.Outcome, Rule: t.StopRule, StepsReached: t.Steps,
			StepsSaved: max(totalSteps-t.Steps, 0), SecondsSaved: math.NaN()}
		if t.Pruning != nil {
			sv.Rule = results.FormatPruning(t.Pruning)
		}
		if t.Steps > 0 && t.WallSeconds > 0 {
			sv.SecondsSaved = float64(sv.StepsSaved) * t.WallSeconds / float64(t.Steps)
			s.SecondsSaved += sv.SecondsSaved
		}
		s.StepsSaved += sv.StepsSaved
		if t.Pruning != nil || t.Outcome == results.OutcomePruned {
			s.Pruned++
			s.PrunedSteps += sv.StepsSaved
			if !math.IsNaN(sv.SecondsSaved) {
				s.PrunedSeconds += sv.SecondsSaved
			}
		}
		s.Trials = append(s.Trials, sv)
	}
	return s
}
