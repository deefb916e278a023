package diagnostics

import (
	"math"
	"testing"
)

func TestObjectiveWindow(t *testing.T) {
	var w ObjectiveWindow
	if _, ok := w.Mean(); ok {
		t.Error("empty window has a mean")
	}
	// Records every 100 steps to 1000: the window is [900, 1000], values 9 and 10; the last value
	// (10) and the best-ever (10) are not what it says.
	for s := int64(100); s <= 1000; s += 100 {
		w.Add(s, float64(s/100))
	}
	if m, ok := w.Mean(); !ok || m != 9.5 {
		t.Errorf("mean %v %v, want 9.5 over steps 900 and 1000", m, ok)
	}
	// A noisy spike at the end moves the mean by a share, not all the way.
	w.Add(1050, 100)
	if m, _ := w.Mean(); m != 55 {
		t.Errorf("mean %v, want 55 over steps 1000 and 1050 (≥ 1050−105)", m)
	}
	// One record far past the others leaves only itself.
	w.Add(100_000, 7)
	if m, _ := w.Mean(); m != 7 {
		t.Errorf("mean %v, want 7", m)
	}
	// A step going back (an attempt resumed from its checkpoint) starts again.
	w.Add(500, 3)
	if m, _ := w.Mean(); m != 3 {
		t.Errorf("mean %v, want 3 after a resume", m)
	}
	w.Add(510, math.NaN())
	if _, ok := w.Mean(); ok {
		t.Error("a NaN in the window gives a mean")
	}
}
