package sweeps

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/rlsweep/rlsweep/metrics"
	"gopkg.in/yaml.v3"
)

// The pruners early_terminate.type names (docs/spec.md#early_terminate).
const (
	PrunerASHA      = "asha"
	PrunerMedian    = "median"
	PrunerHyperband = "hyperband"
)

// Pruners lists early_terminate's types.
var Pruners = []string{PrunerASHA, PrunerMedian, PrunerHyperband}

// How a pruned sweep meets its decision points (early_terminate.mode, Spec.PruneMode).
const (
	PrunePause = "pause" // segments end at the decision steps; the trainer checkpoints there and resumes
	PruneStop  = "stop"  // no segment ends at decision steps: the trial is judged as its metric stream passes each one, and its trainer is stopped (SIGTERM, grace, kill) when pruned
)

// PruneModes lists early_terminate.mode's values.
var PruneModes = []string{PrunePause, PruneStop}

// What DecisionSteps counts (Spec.RungUnit).
const (
	RungSteps = "steps" // decision points are environment steps (the records' step)
	RungLogs  = "logs"  // decision points count the records carrying the objective metric (W&B's hyperband iterations)
)

// PruneMode is "" without early_terminate; early_terminate.mode when set; else pause when
// trainer.metrics.source is jsonl, stop otherwise.
func (s *Spec) PruneMode() string {
	e := s.EarlyTerminate
	switch {
	case e == nil:
		return ""
	case e.Mode != "":
		return e.Mode
	case s.Trainer.Metrics.Source == metrics.SourceJSONL || s.Trainer.Metrics.Source == "":
		return PrunePause
	}
	return PruneStop
}

// RungUnit: RungLogs for hyperband in stop mode without trainer.segment_steps (below total_steps), as
// W&B counts iterations; RungSteps otherwise ("" without early_terminate).
func (s *Spec) RungUnit() string {
	e, t := s.EarlyTerminate, s.Trainer
	switch {
	case e == nil:
		return ""
	case e.Type == PrunerHyperband && s.PruneMode() == PruneStop && !(t.SegmentSteps > 0 && t.SegmentSteps < t.TotalSteps):
		return RungLogs
	}
	return RungSteps
}

// Defaults and bounds of early_terminate.
const (
	DefaultMedianMinTrials = 5
	// MaxPrunerValues bounds configurations × decision steps: the scheduler keeps one value per
	// configuration per decision step it reached, carried across a continue-as-new (about 20 bytes
	// each as JSON, so at most about 1 MB).
	MaxPrunerValues = 50_000
	maxEta          = 100
	maxHyperbandS   = 20
	// MaxHyperbandLogs bounds hyperband's min_iter bands counted in logged values (RungLogs): the bands
	// min_iter·eta^k stop before passing it (W&B lists 100 of them, far past any run's history).
	MaxHyperbandLogs = 1_000_000
	// MaxDecisionSteps bounds a pruner's decision points (median in stop mode decides at every multiple
	// of min_steps).
	MaxDecisionSteps = 1000
)

// earlyTerminate decodes the early_terminate mapping.
func (d *decoder) earlyTerminate(n *yaml.Node, path string, e *EarlyTerminate) {
	d.mapping(n, path, []field{
		{"type", d.text(&e.Type)},
		{"min_steps", d.bigInt(&e.MinSteps)},
		{"max_steps", d.bigInt(&e.MaxSteps)},
		{"eta", d.smallInt(&e.Eta)},
		{"min_trials", d.smallInt(&e.MinTrials)},
		{"stop_diverged_configs", d.flag(&e.StopDivergedConfigs)},
		{"min_iter", d.smallInt(&e.MinIter)},
		{"max_iter", d.smallInt(&e.MaxIter)},
		{"s", d.smallInt(&e.S)},
		{"strict", d.flag(&e.Strict)},
		{"mode", d.text(&e.Mode)},
	})
}

// wandbEarlyTerminate decodes a W&B config's early_terminate (type hyperband; min_iter, max_iter, s,
// eta, strict) into the same section: its bands map onto asha rungs (HyperbandRungs).
func (d *decoder) wandbEarlyTerminate(n *yaml.Node, path string, s *Spec) {
	e := &EarlyTerminate{StopDivergedConfigs: true}
	s.EarlyTerminate = e
	integer := func(dst *int) func(string, *yaml.Node) {
		return func(p string, v *yaml.Node) {
			if x, ok := d.pyInteger(v, p); ok {
				*dst = int(min(max(x, -1), 1<<30))
			}
		}
	}
	d.mapping(n, path, []field{
		{"type", d.text(&e.Type)},
		{"min_iter", integer(&e.MinIter)},
		{"max_iter", integer(&e.MaxIter)},
		{"s", integer(&e.S)},
		{"eta", integer(&e.Eta)},
		{"strict", d.flag(&e.Strict)},
	})
}

// fillDefaults sets what early_terminate leaves out: eta 4 (asha) or 3 (hyperband, as W&B); asha's
// max_steps total_steps and min_steps max_steps / eta³; median's min_trials 5 and min_steps
// total_steps / 10.
func (e *EarlyTerminate) fillDefaults(total int64) {
	if e == nil {
		return
	}
	switch e.Type {
	case PrunerASHA, PrunerHyperband:
		if e.Type == PrunerHyperband {
			if e.Eta == 0 {
				e.Eta = DefaultHyperbandEta
			}
			return
		}
		if e.Eta == 0 {
			e.Eta = DefaultASHAEta
		}
		if e.MaxSteps == 0 {
			e.MaxSteps = total
		}
		if e.MinSteps == 0 && e.Eta >= 2 && e.Eta <= maxEta {
			e.MinSteps = max(e.MaxSteps/int64(e.Eta*e.Eta*e.Eta), 1)
		}
	case PrunerMedian:
		if e.MinTrials == 0 {
			e.MinTrials = DefaultMedianMinTrials
		}
		if e.MinSteps == 0 {
			e.MinSteps = total / 10
		}
	}
}

// DecisionSteps are the points at which the pruner decides, ascending, in RungUnit. In steps (each
// below total_steps): asha's rungs min_steps·eta^k below max_steps; hyperband's bands mapped onto steps
// (HyperbandRungs); median's segment ends at or after min_steps in pause mode, the multiples of
// min_steps in stop mode (at most MaxDecisionSteps+1 listed, so validation can refuse more). In logs
// (hyperband in stop mode without segment_steps): W&B's bands themselves (HyperbandBands). Nil without
// early_terminate.
func (s *Spec) DecisionSteps() []int64 {
	e, total := s.EarlyTerminate, s.Trainer.TotalSteps
	if e == nil || total <= 0 {
		return nil
	}
	var out []int64
	switch e.Type {
	case PrunerASHA:
		if e.MinSteps <= 0 || e.Eta < 2 {
			return nil
		}
		for r := e.MinSteps; r < min(e.MaxSteps, total); r *= int64(e.Eta) {
			out = append(out, r)
		}
	case PrunerHyperband:
		if s.RungUnit() == RungLogs {
			return s.HyperbandBands()
		}
		out = s.HyperbandRungs()
	case PrunerMedian:
		if s.PruneMode() == PruneStop {
			if e.MinSteps <= 0 {
				return nil
			}
			for r := e.MinSteps; r < total && len(out) <= MaxDecisionSteps; r += e.MinSteps {
				out = append(out, r)
			}
			return out
		}
		for _, end := range s.plainSegmentEnds() {
			if end >= e.MinSteps && end < total {
				out = append(out, end)
			}
		}
	}
	return out
}

// HyperbandBands are W&B's hyperband bands in logged values of the metric, as
// src/sweeps/hyperband_stopping.py of github.com/wandb/sweeps computes them: with max_iter (which wins
// when min_iter is set too), ⌊max_iter/eta^k⌋ for k = 1..s while at least 1, ascending; with min_iter,
// min_iter·eta^k for k = 0, 1, ... while at most MaxHyperbandLogs and while configurations × bands
// stays within MaxPrunerValues. A band b is decided once the run has logged b values of the metric (W&B
// reads its history at index b−1), on the windowed mean of its last tenth of logged values.
func (s *Spec) HyperbandBands() []int64 {
	e := s.EarlyTerminate
	if e == nil || e.Eta < 2 || e.Eta > maxEta {
		return nil
	}
	var out []int64
	switch {
	case e.MaxIter > 0:
		band := float64(e.MaxIter)
		for range min(e.S, maxHyperbandS) {
			if band /= float64(e.Eta); band < 1 {
				break
			}
			out = append(out, int64(band))
		}
		slices.Sort(out)
		out = slices.Compact(out)
	case e.MinIter > 0:
		configs := 1
		if n, ok := s.trialCount(); ok && len(s.Seeds) > 0 {
			configs = max(n/len(s.Seeds), 1)
		}
		// W&B lists 100 bands; rlsweep keeps those a run can reach and the pruner can hold: at most
		// MaxHyperbandLogs, and while configurations × bands stays within MaxPrunerValues (one band
		// at least: validation refuses what cannot hold even that).
		for band := int64(e.MinIter); band <= MaxHyperbandLogs; band *= int64(e.Eta) {
			if len(out) > 0 && configs*(len(out)+1) > MaxPrunerValues {
				break
			}
			out = append(out, band)
		}
	}
	return out
}

// HyperbandRungs maps W&B's hyperband bands onto asha rungs in environment steps (RungSteps). With
// max_iter (which wins when min_iter is set too), one iteration is total_steps / max_iter steps
// (max_iter is the whole budget) and the bands are max_iter / eta^k for k = 1..s, as W&B computes them
// (whole iterations, at least 1); with min_iter alone, one iteration is one segment
// (trainer.segment_steps) and the bands are min_iter·eta^k. Bands at or past total_steps decide nothing
// and are left out.
func (s *Spec) HyperbandRungs() []int64 {
	e, total := s.EarlyTerminate, s.Trainer.TotalSteps
	if e == nil || e.Eta < 2 || e.Eta > maxEta {
		return nil
	}
	var out []int64
	switch {
	case e.MaxIter > 0:
		unit := total / int64(e.MaxIter)
		band := float64(e.MaxIter)
		for range min(e.S, maxHyperbandS) {
			if band /= float64(e.Eta); band < 1 {
				break
			}
			out = append(out, int64(band)*unit)
		}
		slices.Sort(out)
		out = slices.Compact(out)
	case e.MinIter > 0:
		unit := s.Trainer.SegmentSteps
		if unit <= 0 {
			return nil
		}
		for band := int64(e.MinIter); band*unit < total; band *= int64(e.Eta) {
			out = append(out, band*unit)
		}
	}
	return slices.DeleteFunc(out, func(r int64) bool { return r <= 0 || r >= total })
}

// mergeSteps merges two ascending step lists, each step once.
func mergeSteps(a, b []int64) []int64 {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// earlyTerminate checks the early_terminate section.
func (c *checker) earlyTerminate() {
	e := c.s.EarlyTerminate
	if e == nil {
		return
	}
	t := c.s.Trainer
	const p = "early_terminate."
	if !slices.Contains(Pruners, e.Type) {
		c.choice(p+"type", e.Type, Pruners, "")
		return
	}
	onlyFor := func(key string, set bool, types ...string) {
		if set && !slices.Contains(types, e.Type) {
			c.add(p+key, "a value with type "+e.Type, "no "+key+": it applies to type "+joinOr(types))
		}
	}
	onlyFor("min_steps", e.MinSteps != 0 && e.Type == PrunerHyperband, PrunerASHA, PrunerMedian)
	onlyFor("max_steps", e.MaxSteps != 0 && e.Type != PrunerASHA, PrunerASHA)
	onlyFor("eta", e.Eta != 0 && e.Type == PrunerMedian, PrunerASHA, PrunerHyperband)
	onlyFor("min_trials", e.MinTrials != 0 && e.Type != PrunerMedian, PrunerMedian)
	onlyFor("min_iter", e.MinIter != 0, PrunerHyperband)
	onlyFor("max_iter", e.MaxIter != 0, PrunerHyperband)
	onlyFor("s", e.S != 0, PrunerHyperband)
	onlyFor("strict", e.Strict, PrunerHyperband)
	if e.Mode != "" && !slices.Contains(PruneModes, e.Mode) {
		c.choice(p+"mode", e.Mode, PruneModes, " (or no mode: pause with metrics.source jsonl, stop with the others)")
		return
	}
	if src := t.Metrics.Source; e.Mode == PrunePause && src != "" && src != metrics.SourceJSONL {
		c.add(p+"mode", quote(e.Mode), fmt.Sprintf("stop with trainer.metrics.source %s, or source jsonl: in pause mode a trial resumes after each decision step from the checkpoint its trainer announces in a JSON-lines record, which only source jsonl carries", src))
		return
	}
	if e.Type != PrunerMedian && (e.Eta < 2 || e.Eta > maxEta) {
		c.add(p+"eta", strconv.Itoa(e.Eta), fmt.Sprintf("an integer in [2, %d]", maxEta))
		return
	}
	if t.TotalSteps <= 0 {
		return // reported at trainer.total_steps
	}
	stop, logs := c.s.PruneMode() == PruneStop, c.s.RungUnit() == RungLogs
	switch e.Type {
	case PrunerASHA:
		if e.MaxSteps <= 0 || e.MaxSteps > t.TotalSteps {
			c.add(p+"max_steps", strconv.FormatInt(e.MaxSteps, 10), fmt.Sprintf("an integer in (0, %d] (total_steps)", t.TotalSteps))
			return
		}
		if e.MinSteps <= 0 || e.MinSteps >= e.MaxSteps {
			c.add(p+"min_steps", strconv.FormatInt(e.MinSteps, 10), fmt.Sprintf("an integer in (0, %d) (max_steps): the first rung", e.MaxSteps))
			return
		}
	case PrunerMedian:
		if e.MinTrials < 1 || e.MinTrials > MaxTrials {
			c.add(p+"min_trials", strconv.Itoa(e.MinTrials), fmt.Sprintf("an integer in [1, %d]", MaxTrials))
		}
		switch {
		case stop && (e.MinSteps <= 0 || e.MinSteps >= t.TotalSteps):
			c.add(p+"min_steps", strconv.FormatInt(e.MinSteps, 10), fmt.Sprintf("an integer in (0, %d) (total_steps) in stop mode: the median rule decides at its multiples", t.TotalSteps))
			return
		case e.MinSteps < 0 || e.MinSteps >= t.TotalSteps:
			c.add(p+"min_steps", strconv.FormatInt(e.MinSteps, 10), fmt.Sprintf("an integer in [0, %d) (total_steps): the warm-up", t.TotalSteps))
			return
		case stop && (t.TotalSteps-1)/e.MinSteps > MaxDecisionSteps:
			c.add(p+"min_steps", strconv.FormatInt(e.MinSteps, 10), fmt.Sprintf("at least %d (total_steps / %d) in stop mode: the median rule decides at its multiples, at most %d of them", (t.TotalSteps+MaxDecisionSteps-1)/MaxDecisionSteps, MaxDecisionSteps, MaxDecisionSteps))
			return
		case !stop && t.SegmentSteps >= t.TotalSteps:
			c.add("trainer.segment_steps", strconv.FormatInt(t.SegmentSteps, 10),
				fmt.Sprintf("an integer below %d (total_steps) with early_terminate type median in pause mode: the median rule decides at segment ends (or early_terminate.mode stop: it decides at the multiples of min_steps)", t.TotalSteps))
			return
		}
	case PrunerHyperband:
		switch {
		case e.MinIter <= 0 && e.MaxIter <= 0:
			c.add(p+"min_iter", fmt.Sprintf("min_iter %d and max_iter %d", e.MinIter, e.MaxIter), "min_iter or max_iter, an integer > 0 (with both, max_iter wins, as in W&B)")
			return
		case e.MinIter < 0:
			c.add(p+"min_iter", strconv.Itoa(e.MinIter), "an integer > 0 (the first band)")
			return
		case e.MaxIter < 0 || !logs && int64(e.MaxIter) > t.TotalSteps:
			c.add(p+"max_iter", strconv.Itoa(e.MaxIter), fmt.Sprintf("an integer in (0, %d] (total_steps): the whole budget in iterations", t.TotalSteps))
			return
		case e.MaxIter > 0 && (e.S < 1 || e.S > maxHyperbandS):
			c.add(p+"s", strconv.Itoa(e.S), fmt.Sprintf("an integer in [1, %d] with max_iter: how many bands", maxHyperbandS))
			return
		case e.MinIter > 0 && e.MaxIter == 0 && e.MinIter > MaxHyperbandLogs:
			c.add(p+"min_iter", strconv.Itoa(e.MinIter), fmt.Sprintf("an integer in [1, %d] (logged values of the metric)", MaxHyperbandLogs))
			return
		case e.MinIter > 0 && e.MaxIter == 0 && !logs && t.SegmentSteps >= t.TotalSteps:
			c.add("trainer.segment_steps", strconv.FormatInt(t.SegmentSteps, 10),
				fmt.Sprintf("an integer below %d (total_steps) with early_terminate min_iter in pause mode: one iteration is one segment (or early_terminate.mode stop: an iteration is a logged value of the metric)", t.TotalSteps))
			return
		}
	}
	steps := c.s.DecisionSteps()
	if len(steps) == 0 {
		want := fmt.Sprintf("settings that put a decision step below total_steps (%d): these decide nothing", t.TotalSteps)
		if logs {
			want = "settings that give at least one band (max_iter / eta ≥ 1): these decide nothing"
		}
		c.add(p+"type", quote(e.Type), want)
		return
	}
	if n := len(c.s.SegmentEnds()); n > MaxSegments {
		c.add(p+"type", fmt.Sprintf("%d segments with its decision steps", n), fmt.Sprintf("at most %d segments: a larger trainer.segment_steps, or early_terminate.mode stop", MaxSegments))
	}
	if n, ok := c.s.trialCount(); ok && len(c.s.Seeds) > 0 {
		if configs := n / len(c.s.Seeds); configs*len(steps) > MaxPrunerValues {
			c.add(p+"type", fmt.Sprintf("%d configurations × %d decision steps", configs, len(steps)),
				fmt.Sprintf("at most %d values for the pruner to keep: fewer configurations or decision steps", MaxPrunerValues))
		}
	}
}

func joinOr(xs []string) string {
	switch len(xs) {
	case 1:
		return xs[0]
	case 2:
		return xs[0] + " or " + xs[1]
	}
	return fmt.Sprint(xs)
}
