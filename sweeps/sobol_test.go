package sweeps

import (
	"testing"
)

// TestSobolFirstPoints compares the first points with the published unscrambled Sobol sequence in gray-code
// order: Joe and Kuo's reference program sobol.cc with new-joe-kuo-6.21201, which is also what
// scipy.stats.qmc.Sobol(d=3, scramble=False).random(8) returns. The values are exact binary fractions
// (checked by hand from the recurrence: dimension 2 has v = 1/2, 3/4, 5/8; dimension 3 has
// v = 1/2, 3/4, 3/8), so they compare with ==.
func TestSobolFirstPoints(t *testing.T) {
	want := [][3]float64{
		{0, 0, 0},
		{0.5, 0.5, 0.5},
		{0.75, 0.25, 0.25},
		{0.25, 0.75, 0.75},
		{0.375, 0.375, 0.625},
		{0.875, 0.875, 0.125},
		{0.625, 0.125, 0.875},
		{0.125, 0.625, 0.375},
	}
	s, err := NewSobol(3)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		p := s.Next()
		if [3]float64(p) != w {
			t.Errorf("point %d = %v, want %v", i, p, w)
		}
	}
}

// TestSobolStratified checks the defining property of every dimension: the first 2^m points fall one
// into each interval [k/2^m, (k+1)/2^m). It catches a mistyped direction number that is even or too big.
func TestSobolStratified(t *testing.T) {
	const m = 10
	s, err := NewSobol(MaxSobolDims)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([][1 << m]bool, MaxSobolDims)
	for range 1 << m {
		for j, x := range s.Next() {
			k := int(x * (1 << m))
			if seen[j][k] {
				t.Fatalf("dimension %d: two of the first %d points in [%d/%d, %d/%d)", j+1, 1<<m, k, 1<<m, k+1, 1<<m)
			}
			seen[j][k] = true
		}
	}
}

func TestSobolTable(t *testing.T) {
	if MaxSobolDims < 21 {
		t.Errorf("MaxSobolDims = %d, want at least 21", MaxSobolDims)
	}
	for d, row := range joeKuo {
		if int(row.s) != len(row.m) {
			t.Errorf("dimension %d: s = %d with %d initial numbers", d+2, row.s, len(row.m))
		}
		for i, m := range row.m {
			if m%2 == 0 || m >= 1<<(i+1) {
				t.Errorf("dimension %d: m_%d = %d, want odd and < 2^%d", d+2, i+1, m, i+1)
			}
		}
	}
}

func TestSobolShift(t *testing.T) {
	a, _ := NewSobol(2)
	b, _ := NewSobol(2)
	b.Shift(7)
	a.Next()
	b.Next()
	pa, pb := a.Next(), b.Next()
	if pa[0] == pb[0] && pa[1] == pb[1] {
		t.Errorf("shifted point %v equals unshifted %v", pb, pa)
	}
	if _, err := NewSobol(MaxSobolDims + 1); err == nil {
		t.Errorf("NewSobol(%d) = nil error, want an error", MaxSobolDims+1)
	}
}
