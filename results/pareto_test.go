package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestParetoRanksAndCrowding(t *testing.T) {
	pts := [][]float64{
		{1, 5}, // front 1
		{2, 3}, // front 1
		{4, 1}, // front 1
		{3, 4}, // dominated by {2,3}: front 2
		{5, 5}, // dominated by all of front 1 and {3,4}: front 3
		{2, 3}, // equal to a front-1 point: front 1 too
	}
	want := []int{1, 1, 1, 2, 3, 1}
	got := ParetoRanks(pts)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ParetoRanks = %v, want %v", got, want)
		}
	}
	c := Crowding(pts, got)
	if !math.IsInf(c[0], 1) || !math.IsInf(c[2], 1) {
		t.Errorf("the front's extremes have crowding %v and %v, want +Inf", c[0], c[2])
	}
	// {2,3} sits between {1,5} and {4,1}: (4−1)/3 + (5−1)/4 = 2 for the copy sorted between them.
	if math.IsInf(c[1], 1) && math.IsInf(c[5], 1) {
		t.Errorf("both copies of {2,3} have crowding +Inf: %v", c)
	}
	if !math.IsInf(c[3], 1) || !math.IsInf(c[4], 1) {
		t.Errorf("ranks of one point have crowding %v, %v, want +Inf", c[3], c[4])
	}
}

// inclusionExclusion is the hypervolume by inclusion–exclusion over every subset: exact and independent
// of WFG, for a few points.
func inclusionExclusion(points [][]float64, ref []float64) float64 {
	var in [][]float64
	for _, p := range points {
		ok := true
		for i := range p {
			ok = ok && p[i] < ref[i]
		}
		if ok {
			in = append(in, p)
		}
	}
	total := 0.0
	for mask := 1; mask < 1<<len(in); mask++ {
		corner := make([]float64, len(ref))
		bits := 0
		for i, p := range in {
			if mask&(1<<i) == 0 {
				continue
			}
			bits++
			for k := range p {
				corner[k] = max(corner[k], p[k])
			}
		}
		vol := 1.0
		for k := range ref {
			vol *= ref[k] - corner[k]
		}
		if bits%2 == 1 {
			total += vol
		} else {
			total -= vol
		}
	}
	return total
}

func TestHypervolumeMatchesInclusionExclusion(t *testing.T) {
	if got := Hypervolume([][]float64{{1, 2}, {2, 1}}, []float64{3, 3}); math.Abs(got-3) > 1e-12 {
		t.Fatalf("2-d hypervolume of {1,2},{2,1} to {3,3} = %v, want 3", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		d := 2 + trial%4
		n := 1 + rng.IntN(9)
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, d)
			for k := range pts[i] {
				pts[i][k] = math.Round(rng.Float64()*10) / 10 // ties on purpose
			}
		}
		ref := make([]float64, d)
		for k := range ref {
			ref[k] = 0.9 + 0.2*rng.Float64()
		}
		got, want := Hypervolume(pts, ref), inclusionExclusion(pts, ref)
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("d=%d n=%d %v ref %v: Hypervolume %v, inclusion–exclusion %v", d, n, pts, ref, got, want)
		}
		contrib := HypervolumeContributions(pts, ref)
		for i, c := range contrib {
			rest := append(append([][]float64{}, pts[:i]...), pts[i+1:]...)
			if w := want - inclusionExclusion(rest, ref); math.Abs(c-max(0, w)) > 1e-9 {
				t.Fatalf("contribution of %v = %v, want %v", pts[i], c, w)
			}
		}
	}
}
