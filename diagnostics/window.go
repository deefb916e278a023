package diagnostics

import "math"

// WindowFraction is the share of a trial's steps so far that its windowed objective averages over.
const WindowFraction = 0.1

// ObjectiveWindow keeps the objective's values at the steps in the last WindowFraction of the steps
// so far — those at or after s − ⌊s·WindowFraction⌋ for the last step s — and their mean, what a
// pruner compares: one noisy last value or a best-ever value says little about an RL curve. Steps
// only grow, so values leave from the front; it holds at most the records of the window.
type ObjectiveWindow struct {
	steps  []int64
	values []float64
}

// Add takes the objective's value at step. A step below the last one (a retried attempt resuming
// from its checkpoint) starts the window again.
func (w *ObjectiveWindow) Add(step int64, v float64) {
	if n := len(w.steps); n > 0 && step < w.steps[n-1] {
		w.steps, w.values = w.steps[:0], w.values[:0]
	}
	w.steps, w.values = append(w.steps, step), append(w.values, v)
	from := step - int64(float64(step)*WindowFraction)
	drop := 0
	for drop < len(w.steps)-1 && w.steps[drop] < from {
		drop++
	}
	if drop > 0 {
		w.steps, w.values = append(w.steps[:0], w.steps[drop:]...), append(w.values[:0], w.values[drop:]...)
	}
}

// Mean is the mean of the values in the window; false when it holds none or the mean is not finite.
// The window never reaches back past the records it was given: a segment shorter than a tenth of
// the steps so far averages its own records.
func (w *ObjectiveWindow) Mean() (float64, bool) {
	if len(w.values) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, v := range w.values {
		sum += v
	}
	m := sum / float64(len(w.values))
	if math.IsNaN(m) || math.IsInf(m, 0) {
		return 0, false
	}
	return m, true
}
