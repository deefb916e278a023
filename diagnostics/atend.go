package diagnostics

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// runTrackCap bounds how many values runTrack keeps: past it, neighbouring values are averaged in pairs
// (a run of a million records keeps at most this many means, each of 2^k consecutive values).
const runTrackCap = 1 << 16

// runTrack keeps a run's objective values (in the goal's direction) from its first record to its last,
// for the rules that judge the run once it is over.
type runTrack struct {
	vals     []float64
	steps    []int64 // the step of each value's last record
	pending  float64 // the sum of the values of the mean being built, when stride > 1
	pendingN int
	stride   int // how many values each kept value averages: 1, then doubled each time the cap is reached
}

func (t *runTrack) add(v float64, step int64) {
	if t.stride == 0 {
		t.stride = 1
	}
	t.pending += v
	t.pendingN++
	if t.pendingN < t.stride {
		return
	}
	t.vals = append(t.vals, t.pending/float64(t.pendingN))
	t.steps = append(t.steps, step)
	t.pending, t.pendingN = 0, 0
	if len(t.vals) < runTrackCap {
		return
	}
	for i := 0; i < len(t.vals)/2; i++ {
		t.vals[i] = (t.vals[2*i] + t.vals[2*i+1]) / 2
		t.steps[i] = t.steps[2*i+1]
	}
	t.vals, t.steps = t.vals[:len(t.vals)/2], t.steps[:len(t.steps)/2]
	t.stride *= 2
}

// endMinValues is the fewest objective values a run must have for an end-of-run rule to judge it: with
// fewer, a tenth of the run is one or two values and a "best" one lucky episode.
const endMinValues = 20

// runShape is what the end-of-run rules read from a whole run: its start and final levels (the means of
// its first and last tenth of values), its best level (the best mean of a twentieth of them, at least 3
// and at most a fifth), where that best ended, and the run's record-to-record noise.
type runShape struct {
	n, k, w             int
	start, final, best  float64
	bestEnd             int
	bestStep, finalStep int64
	noise               float64
	// falling: the final tenth's least-squares line falls across it by more than three standard errors
	// of that fall (the run is still losing ground when it ends).
	falling bool
}

func (t *runTrack) shape() (runShape, bool) {
	n := len(t.vals)
	if n < endMinValues {
		return runShape{}, false
	}
	s := runShape{n: n, k: max(1, int(math.Round(float64(n)/10)))}
	s.w = min(max(3, int(math.Round(float64(n)/20))), 2*s.k)
	s.start, s.final = stat.Mean(t.vals[:s.k], nil), stat.Mean(t.vals[n-s.k:], nil)
	var sum float64
	for i, v := range t.vals {
		sum += v
		if i >= s.w {
			sum -= t.vals[i-s.w]
		}
		if i >= s.w-1 {
			if m := sum / float64(s.w); i == s.w-1 || m > s.best {
				s.best, s.bestEnd = m, i
			}
		}
		if i > 0 {
			s.noise += math.Abs(v - t.vals[i-1])
		}
	}
	s.noise /= float64(n - 1)
	s.falling = fallsThrough(t.vals[n-s.k:])
	s.bestStep, s.finalStep = t.steps[s.bestEnd], t.steps[n-1]
	return s, true
}

// collapsedAtEnd judges a run that is over: it fires when the run lost at least share of its gain by its
// end, or at least partialShare of it and its final tenth is still falling (fallsThrough). The gain must
// be real: the run's best level rose above its start by a
// tenth of the return's scale or more (the larger of |start| and |best|) and by more than three standard
// errors of the difference between a start and a best mean (the best of many noisy windows is high by
// chance: a flat run's luckiest window is no gain), that best ended before the
// run's final tenth (a best among the last values is a noisy late peak, not a level given back), and the
// final level is below it by more than three standard errors of the difference between a final and a
// best mean, with the record-to-record change for the values' spread. A return
// that fell because the episodes lengthened (progress.lengthened) is not judged.
func (e *Engine) collapsedAtEnd(share float64) (Verdict, bool) {
	s, ok := e.run.shape()
	if !ok || e.prog.lengthened() {
		return Verdict{}, false
	}
	gain := s.best - s.start
	scale := max(math.Abs(s.start), math.Abs(s.best))
	drop := s.best - s.final
	se := s.noise * math.Sqrt(1/float64(s.k)+1/float64(s.w))
	if !(gain > 0) || gain < 0.1*scale || gain < 3*se || s.bestEnd >= s.n-s.k || drop < 3*se {
		return Verdict{}, false
	}
	lost := drop / gain
	if lost < share && (lost < partialShare || !s.falling) {
		return Verdict{}, false
	}
	limit := s.best - share*gain
	p := &e.prog
	return Verdict{Level: Warn, Rule: RuleCollapsedAtEnd, Metric: e.objective, Value: p.raw(s.final),
		Threshold: p.raw(limit), Step: s.finalStep, Objective: e.objective, ObjectiveValue: p.raw(s.final),
		Detail: fmt.Sprintf("%s of the last tenth of the run %.4g, best %.4g (to step %d), start %.4g: %.0f%% of the gain lost%s",
			e.objective, p.raw(s.final), p.raw(s.best), s.bestStep, p.raw(s.start), 100*lost, fallingNote(s.falling))}, true
}

// Finish judges the run as a whole once its last record was observed, with the rules that look at a run
// that is over (collapsed_at_end), and returns their verdict: a warning, since nothing is left to stop.
// A run a stop rule already stopped is not judged again. Call it once, after the last Observe.
func (e *Engine) Finish() (Verdict, bool) {
	if e.stopped != nil {
		return Verdict{}, false
	}
	for _, ar := range e.rules {
		if ar.kind != atEnd || ar.level == Continue {
			continue
		}
		if v, ok := e.collapsedAtEnd(ar.threshold); ok {
			v.Advice = ar.advice
			e.warn(v)
			return v, true
		}
	}
	return Verdict{}, false
}

func fallingNote(falling bool) string {
	if falling {
		return ", and still falling"
	}
	return ""
}

// partialShare is the share of its gain a run must have lost, and still be losing at its end, for
// collapsed_at_end to judge it when it lost less than the rule's threshold.
const partialShare = 0.5

// fallsThrough reports whether the least-squares line through ys falls across them by more than three
// standard errors of its slope times their span.
func fallsThrough(ys []float64) bool {
	n := len(ys)
	if n < 10 {
		return false
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	intercept, slope := stat.LinearRegression(xs, ys, nil, false)
	var rss float64
	for i, y := range ys {
		r := y - (intercept + slope*xs[i])
		rss += r * r
	}
	// Σ(x − x̄)² of 0..n−1 is n(n²−1)/12.
	sxx := float64(n) * (float64(n)*float64(n) - 1) / 12
	seSlope := math.Sqrt(rss / float64(n-2) / sxx)
	return slope < 0 && -slope > 3*seSlope
}
