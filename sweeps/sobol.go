package sweeps

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// joeKuo holds the direction numbers of dimensions 2 to 32 from S. Joe and F. Y. Kuo,
// "Constructing Sobol sequences with better two-dimensional projections", SIAM J. Sci. Comput. 30
// (2008) 2635–2654, file new-joe-kuo-6.21201 (https://web.maths.unsw.edu.au/~fkuo/sobol/): for each
// dimension the degree s of its primitive polynomial, the polynomial's coefficients a, and the initial
// direction numbers m_1..m_s. Dimension 1 is the van der Corput sequence (all m = 1).
var joeKuo = []struct {
	s, a uint32
	m    []uint32
}{
	{1, 0, []uint32{1}},
	{2, 1, []uint32{1, 3}},
	{3, 1, []uint32{1, 3, 1}},
	{3, 2, []uint32{1, 1, 1}},
	{4, 1, []uint32{1, 1, 3, 3}},
	{4, 4, []uint32{1, 3, 5, 13}},
	{5, 2, []uint32{1, 1, 5, 5, 17}},
	{5, 4, []uint32{1, 1, 5, 5, 5}},
	{5, 7, []uint32{1, 1, 7, 11, 19}},
	{5, 11, []uint32{1, 1, 5, 1, 1}},
	{5, 13, []uint32{1, 1, 1, 3, 11}},
	{5, 14, []uint32{1, 3, 5, 5, 31}},
	{6, 1, []uint32{1, 3, 3, 9, 7, 49}},
	{6, 13, []uint32{1, 1, 1, 15, 21, 21}},
	{6, 16, []uint32{1, 3, 1, 13, 27, 49}},
	{6, 19, []uint32{1, 1, 1, 15, 7, 5}},
	{6, 22, []uint32{1, 3, 1, 15, 13, 25}},
	{6, 25, []uint32{1, 1, 5, 5, 19, 61}},
	{7, 1, []uint32{1, 3, 7, 11, 23, 15, 103}},
	{7, 4, []uint32{1, 3, 7, 13, 13, 15, 69}},
	{7, 7, []uint32{1, 1, 3, 13, 7, 35, 63}},
	{7, 8, []uint32{1, 3, 5, 9, 1, 25, 53}},
	{7, 14, []uint32{1, 3, 1, 13, 9, 35, 107}},
	{7, 19, []uint32{1, 3, 1, 5, 27, 61, 31}},
	{7, 21, []uint32{1, 1, 5, 11, 19, 41, 61}},
	{7, 28, []uint32{1, 3, 5, 3, 3, 13, 69}},
	{7, 31, []uint32{1, 1, 7, 13, 1, 19, 1}},
	{7, 32, []uint32{1, 3, 7, 5, 13, 19, 59}},
	{7, 37, []uint32{1, 1, 3, 9, 25, 29, 41}},
	{7, 41, []uint32{1, 3, 5, 13, 23, 1, 55}},
	{7, 42, []uint32{1, 3, 7, 3, 13, 59, 17}},
}

// MaxSobolDims is the number of dimensions Sobol supports: how many parameters a sobol sweep may sample.
var MaxSobolDims = len(joeKuo) + 1

const sobolBits = 32

// Sobol generates the Sobol low-discrepancy sequence in gray-code order (Antonov–Saleev), as Joe and
// Kuo's reference implementation does: x_n = x_{n−1} XOR v_c, where c is the position of the lowest zero
// bit of n−1. Points are exact multiples of 2^−32; at most 2^32 of them.
type Sobol struct {
	v     [][sobolBits]uint32 // direction numbers per dimension, scaled by 2^32
	x     []uint32            // current point, scaled by 2^32
	shift []uint32            // digital shift XORed onto each coordinate; zero unless Shift was called
	n     uint64              // index of the next point
}

// NewSobol returns the sequence in dims dimensions, 0 ≤ dims ≤ MaxSobolDims.
func NewSobol(dims int) (*Sobol, error) {
	if dims < 0 || dims > MaxSobolDims {
		return nil, fmt.Errorf("sobol: got %d dimensions, want 0 to %d", dims, MaxSobolDims)
	}
	s := &Sobol{v: make([][sobolBits]uint32, dims), x: make([]uint32, dims), shift: make([]uint32, dims)}
	for j := range dims {
		if j == 0 {
			for i := range sobolBits {
				s.v[0][i] = 1 << (sobolBits - 1 - i)
			}
			continue
		}
		s.v[j] = directions(joeKuo[j-1].s, joeKuo[j-1].a, joeKuo[j-1].m)
	}
	return s, nil
}

// directions expands initial direction numbers by the recurrence of the primitive polynomial of
// degree deg with inner coefficients a (Bratley and Fox, Algorithm 659):
// v_i = v_{i−s} ⊕ (v_{i−s} >> s) ⊕ a_1 v_{i−1} ⊕ … ⊕ a_{s−1} v_{i−s+1}.
func directions(deg, a uint32, m []uint32) [sobolBits]uint32 {
	var v [sobolBits]uint32
	for i := uint32(0); i < sobolBits; i++ {
		if i < deg {
			v[i] = m[i] << (sobolBits - 1 - i)
			continue
		}
		v[i] = v[i-deg] ^ (v[i-deg] >> deg)
		for k := uint32(1); k < deg; k++ {
			v[i] ^= ((a >> (deg - 1 - k)) & 1) * v[i-k]
		}
	}
	return v
}

// Shift applies a random digital shift drawn from seed: every coordinate is XORed with a fixed random
// 32-bit word. The result is still a (t, s)-sequence in base 2, a different one per seed.
func (s *Sobol) Shift(seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x736f626f6c)) // "sobol"
	for j := range s.shift {
		s.shift[j] = rng.Uint32()
	}
}

// Next returns the next point in [0, 1)^dims. The first point is the origin (or the shift).
func (s *Sobol) Next() []float64 {
	p := make([]float64, len(s.x))
	s.NextInto(p)
	return p
}

// NextInto writes the next point into p, which must have one element per dimension.
func (s *Sobol) NextInto(p []float64) {
	if s.n > 0 {
		c := bits.TrailingZeros64(^(s.n - 1))
		if c >= sobolBits {
			panic("sweeps: Sobol sequence exhausted after 2^32 points")
		}
		for j := range s.x {
			s.x[j] ^= s.v[j][c]
		}
	}
	for j := range s.x {
		p[j] = float64(s.x[j]^s.shift[j]) / (1 << sobolBits)
	}
	s.n++
}
