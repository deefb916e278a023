package nn

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Orthogonal fills w (rows×cols, row-major) with a random (semi-)orthogonal matrix scaled by gain,
// as torch.nn.init.orthogonal_ does: QR-decompose a matrix of standard normal draws (transposed when
// rows < cols), take Q with the signs of R's diagonal folded in, and scale. Its rows (or columns, when
// rows > cols) are orthonormal before scaling.
func Orthogonal(rng *rand.Rand, w []float64, rows, cols int, gain float64) {
	r, c := rows, cols
	if r < c {
		r, c = c, r
	}
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	for j := 0; j < c; j++ {
		s := 1.0
		if rr.At(j, j) < 0 {
			s = -1
		}
		for i := 0; i < r; i++ {
			v := gain * s * q.At(i, j)
			if rows >= cols {
				w[i*cols+j] = v
			} else {
				w[j*cols+i] = v
			}
		}
	}
}

// InitOrthogonal initialises the network as CleanRL's layer_init does: orthogonal weights with gain
// hiddenGain on hidden layers (√2 in CleanRL) and outGain on the output layer, zero biases.
func (m *MLP) InitOrthogonal(rng *rand.Rand, hiddenGain, outGain float64) {
	for i, l := range m.layers {
		gain := hiddenGain
		if i == len(m.layers)-1 {
			gain = outGain
		}
		Orthogonal(rng, l.w, l.out, l.in, gain)
		clear(l.b)
	}
}

// Sqrt2 is the orthogonal-initialisation gain CleanRL and SB3 use for tanh and ReLU hidden layers.
var Sqrt2 = math.Sqrt2
