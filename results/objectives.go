package results

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweeps"
)

// ConfigPoint is one configuration of a sweep with several objectives: its value of each objective,
// and where it stands on the Pareto front.
type ConfigPoint struct {
	Config    int            `json:"config"`
	Params    map[string]any `json:"params"`
	Precision string         `json:"precision,omitempty"`
	// Values holds each objective's value, in the spec's order and in the objective's own units and
	// sense: the IQM over the configuration's seeds (seed_failure_rate: the share). +Inf for
	// env_steps with a target that too few seeds reached for their IQM.
	Values Floats `json:"values"`
	// Low and High are the 95% bootstrap interval of the IQM of each objective with a spread over
	// seeds (the logged objective, env_steps to a target); NaN where there is none (too few seeds, a
	// share, a cost). Both nil from ObjectiveVectors.
	Low  Floats `json:"low"`
	High Floats `json:"high"`
	// Seeds counts the configuration's seeds that ended; Reached how many of them reached the target of
	// env_steps (0 without one).
	Seeds   int `json:"seeds"`
	Reached int `json:"reached,omitempty"`
	// Rank is the configuration's non-dominated rank among the ranked configurations (1: on the front);
	// 0 when it is not ranked, Why saying why (a seed diverged, pruned, not ended).
	Rank     int     `json:"rank"`
	Crowding float64 `json:"-"` // +Inf at a rank's extremes: JSON carries it as metrics.Float does
	Why      string  `json:"why,omitempty"`
}

// configPointJSON is ConfigPoint as JSON carries it: Crowding may be +Inf.
type configPointJSON struct {
	configPointFields
	Crowding metrics.Float `json:"crowding"`
}

type configPointFields ConfigPoint

// MarshalJSON writes the point with its crowding as a number, or "+Inf".
func (p ConfigPoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(configPointJSON{configPointFields(p), metrics.Float(p.Crowding)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *ConfigPoint) UnmarshalJSON(b []byte) error {
	var j configPointJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = ConfigPoint(j.configPointFields)
	p.Crowding = float64(j.Crowding)
	return nil
}

// OnFront says whether the configuration is on the Pareto front.
func (p ConfigPoint) OnFront() bool { return p.Rank == 1 }

// Reasons a configuration is left out of the ranking (ConfigPoint.Why).
const (
	WhyDiverged = "a seed diverged (infeasible)"
	WhyPruned   = "pruned before the end of its budget"
	WhyNoScore  = "no seed completed with the objective"
	WhyRunning  = "seeds not ended"
)

// Objectives computes each configuration's objective vector, its 95% bootstrap intervals (Low, High),
// non-dominated rank and crowding from a sweep's trials. Only the search's trials count (confirm
// re-runs on other GPU classes and re-runs on fresh seeds are left out: seeds, when given, are the
// search's). A configuration is ranked when each of its seeds completed or failed, none diverged (a
// configuration with a diverged seed is infeasible and never on the front) and one has the logged
// objective; a pruned one was not trained to its budget.
func Objectives(spec *sweeps.Spec, trials []TrialSummary) []ConfigPoint {
	return objectives(spec, trials, true)
}

// ObjectiveVectors is Objectives without the bootstrap intervals (Low and High nil): the vectors,
// seeds reaching the target, feasibility, rank and crowding, as Objectives gives them, for method
// bayes, which reads no interval and remakes every vector in workflow code after a continue-as-new.
func ObjectiveVectors(spec *sweeps.Spec, trials []TrialSummary) []ConfigPoint {
	return objectives(spec, trials, false)
}

// objectives is Objectives, with the intervals when intervals is set.
func objectives(spec *sweeps.Spec, trials []TrialSummary, intervals bool) []ConfigPoint {
	objs := spec.Objectives
	if len(objs) == 0 {
		objs = []sweeps.Objective{{Name: spec.Metric.Name, Goal: spec.Metric.Goal, Bounds: spec.Metric.Bounds}}
	}
	byConfig := map[int][]TrialSummary{}
	for _, t := range trials {
		if t.GPUClass != "" || (len(spec.Seeds) > 0 && !slices.Contains(spec.Seeds, t.Seed)) {
			continue
		}
		byConfig[t.Config] = append(byConfig[t.Config], t)
	}
	configs := make([]int, 0, len(byConfig))
	for c := range byConfig {
		configs = append(configs, c)
	}
	sort.Ints(configs)
	points := make([]ConfigPoint, 0, len(configs))
	for _, c := range configs {
		points = append(points, configPoint(spec, objs, c, byConfig[c], intervals))
	}
	rankPoints(objs, points)
	return points
}

// configPoint is one configuration's vector, before ranking, with its intervals when intervals is set.
func configPoint(spec *sweeps.Spec, objs []sweeps.Objective, c int, ts []TrialSummary, intervals bool) ConfigPoint {
	p := ConfigPoint{Config: c, Params: ts[0].Params, Precision: ts[0].Precision, Values: make(Floats, len(objs))}
	if intervals {
		p.Low, p.High = make(Floats, len(objs)), make(Floats, len(objs))
	}
	var scored, failed int
	for _, t := range ts {
		switch t.Outcome {
		case OutcomeDiverged:
			if p.Why == "" || p.Why == WhyPruned || p.Why == WhyRunning {
				p.Why = WhyDiverged
			}
		case OutcomePruned:
			if p.Why == "" || p.Why == WhyRunning {
				p.Why = WhyPruned
			}
		case OutcomeCompleted, OutcomeFailed, OutcomeOOM:
		default: // cancelled, or not ended
			if p.Why == "" {
				p.Why = WhyRunning
			}
		}
		if t.Outcome != OutcomeCancelled && t.Outcome != "" {
			p.Seeds++
		}
		if t.Scored() {
			scored++
		}
		if FailedSeed(t) {
			failed++
		}
	}
	if p.Why == "" && scored == 0 {
		p.Why = WhyNoScore
	}
	for i, o := range objs {
		if intervals {
			p.Low[i], p.High[i] = math.NaN(), math.NaN()
		}
		var xs []float64
		switch o.Name {
		case sweeps.ObjectiveSeedFailureRate:
			p.Values[i] = math.NaN()
			if p.Seeds > 0 {
				p.Values[i] = float64(failed) / float64(p.Seeds)
			}
			continue
		case sweeps.ObjectiveEnvSteps:
			for _, t := range ts {
				switch {
				case !ended(t):
				case o.Target == nil:
					xs = append(xs, float64(t.Steps))
				case t.TargetStep > 0:
					xs = append(xs, float64(t.TargetStep))
					p.Reached++
				default:
					xs = append(xs, math.Inf(1))
				}
			}
		case sweeps.ObjectiveWallSeconds, sweeps.ObjectiveGPUSeconds:
			scale := 1.0
			if o.Name == sweeps.ObjectiveGPUSeconds {
				scale = spec.Resources.GPUs
			}
			for _, t := range ts {
				if ended(t) {
					xs = append(xs, scale*t.WallSeconds)
				}
			}
		default:
			for _, t := range ts {
				if t.Scored() {
					xs = append(xs, *t.Objective)
				}
			}
		}
		p.Values[i] = IQMNever(xs)
		if intervals && len(xs) >= MinIntervalSeeds && (!o.Derived() || o.Target != nil) {
			p.Low[i], p.High[i] = iqmInterval(xs)
			if !o.Derived() {
				p.Low[i], p.High[i] = ClipToBounds(p.Low[i], p.High[i], o.Bounds)
			}
		}
	}
	return p
}

// ended says whether a seed ran its course: the outcomes a configuration's cost counts.
func ended(t TrialSummary) bool {
	switch t.Outcome {
	case OutcomeCompleted, OutcomeDiverged, OutcomeFailed, OutcomeOOM, OutcomePruned:
		return true
	}
	return false
}

// FailedSeed says whether a seed counts as failed for seed_failure_rate: it diverged itself (not
// stopped because a sibling did), failed, ran out of memory, or completed having collapsed by the end.
func FailedSeed(t TrialSummary) bool {
	switch t.Outcome {
	case OutcomeDiverged:
		return t.Pruning == nil || !t.Pruning.SiblingDiverged
	case OutcomeFailed, OutcomeOOM:
		return true
	case OutcomeCompleted:
		return t.End != nil
	}
	return false
}

// IQMNever is the IQM of xs (diagnostics.IQM), +Inf (never) when an infinite value stays in its middle half:
// when more of them are +Inf than the ⌊n/4⌋ the trim drops from the top; NaN for none.
func IQMNever(xs []float64) float64 {
	inf := 0
	for _, x := range xs {
		if math.IsInf(x, 1) {
			inf++
		}
	}
	if len(xs) > 0 && inf > len(xs)/4 {
		return math.Inf(1)
	}
	return diagnostics.IQM(xs)
}

// iqmInterval is the 95% percentile bootstrap interval of the IQM of xs (2,000 resamples, a fixed seed
// so the interval is the same each time it is computed), as rliable computes it for one task.
func iqmInterval(xs []float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(uint64(len(xs)), 0x5eed))
	lo, hi = diagnostics.StratifiedBootstrapCI([][]float64{xs},
		func(s [][]float64) float64 { return IQMNever(s[0]) }, 2000, 0.95, rng)
	// A percentile between two resamples that never reached a target interpolates +Inf − +Inf: never.
	if math.IsNaN(lo) {
		lo = math.Inf(1)
	}
	if math.IsNaN(hi) {
		hi = math.Inf(1)
	}
	return lo, hi
}

// rankPoints sets the rank and crowding of the points that can be ranked.
func rankPoints(objs []sweeps.Objective, points []ConfigPoint) {
	var idx []int
	var vecs [][]float64
	for i, p := range points {
		if p.Why != "" {
			continue
		}
		v, ok := Minimizing(objs, p.Values)
		if !ok {
			points[i].Why = WhyNoScore
			continue
		}
		idx, vecs = append(idx, i), append(vecs, v)
	}
	ranks := ParetoRanks(vecs)
	crowd := Crowding(vecs, ranks)
	for k, i := range idx {
		points[i].Rank, points[i].Crowding = ranks[k], crowd[k]
	}
}

// Minimizing turns an objective vector into one whose every coordinate is minimized (a maximized
// objective negated); false when a value is NaN.
func Minimizing(objs []sweeps.Objective, values []float64) ([]float64, bool) {
	out := make([]float64, len(values))
	for i, v := range values {
		if math.IsNaN(v) {
			return nil, false
		}
		out[i] = v
		if objs[i].Goal == sweeps.GoalMaximize {
			out[i] = -v
		}
	}
	return out, true
}

// FrontHypervolume is the hypervolume of the front of the ranked points among the first k
// configurations, for each k in configuration order (the order the search made them), with every
// objective scaled by Normalizer over the ranked points and the reference point 1.1 in each: the share
// of the final front's hypervolume reached by the k-th configuration is hv[k] / hv[len−1]. configs
// holds the configuration of each value.
func FrontHypervolume(objs []sweeps.Objective, points []ConfigPoint) (configs []int, hv []float64) {
	var ranked []ConfigPoint
	for _, p := range points {
		if p.Rank > 0 {
			ranked = append(ranked, p)
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].Config < ranked[b].Config })
	norm := Normalizer(objs, ranked)
	var seen [][]float64
	for _, p := range ranked {
		seen = append(seen, norm(p.Values))
		configs = append(configs, p.Config)
		hv = append(hv, Hypervolume(seen, refPoint(len(objs))))
	}
	return configs, hv
}

// refPoint is the hypervolume reference of scaled objectives: 1.1 in each.
func refPoint(d int) []float64 {
	ref := make([]float64, d)
	for i := range ref {
		ref[i] = 1.1
	}
	return ref
}

// Normalizer scales objective vectors to minimized coordinates in [0, 1] over points: 0 the best finite
// value among them, 1 the worst (+Inf and values past the worst count as 1; a coordinate every point
// shares is 0).
func Normalizer(objs []sweeps.Objective, points []ConfigPoint) func([]float64) []float64 {
	d := len(objs)
	lo, hi := make([]float64, d), make([]float64, d)
	for i := range d {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	for _, p := range points {
		v, ok := Minimizing(objs, p.Values)
		if !ok {
			continue
		}
		for i, x := range v {
			if math.IsInf(x, 0) {
				continue
			}
			lo[i], hi[i] = min(lo[i], x), max(hi[i], x)
		}
	}
	return func(values []float64) []float64 {
		v, _ := Minimizing(objs, values)
		out := make([]float64, d)
		for i := range out {
			switch {
			case v == nil || math.IsNaN(v[i]) || math.IsInf(v[i], 1) || v[i] > hi[i]:
				out[i] = 1
			case hi[i] > lo[i]:
				out[i] = max(0, (v[i]-lo[i])/(hi[i]-lo[i]))
			}
		}
		return out
	}
}

// FormatObjective writes an objective's value for tables: a share as a percentage, steps and seconds
// rounded, +Inf as "never".
func FormatObjective(o sweeps.Objective, v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.IsInf(v, 1):
		return "never"
	}
	switch o.Name {
	case sweeps.ObjectiveSeedFailureRate:
		return fmt.Sprintf("%.0f%%", 100*v)
	case sweeps.ObjectiveEnvSteps:
		return fmt.Sprintf("%.0f", v)
	case sweeps.ObjectiveWallSeconds, sweeps.ObjectiveGPUSeconds:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.4g", v)
}
