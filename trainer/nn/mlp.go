package nn

import "fmt"

// Activation is the nonlinearity of an MLP's hidden layers. The output layer is always linear.
type Activation int

// Hidden-layer activations.
const (
	Tanh Activation = iota // tanh(z); derivative 1 − tanh²(z)
	ReLU                   // max(0, z); derivative 1 for z > 0, else 0
)

// String returns the activation's name as ParseActivation accepts it.
func (a Activation) String() string {
	switch a {
	case Tanh:
		return "tanh"
	case ReLU:
		return "relu"
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// ParseActivation returns the activation named s ("tanh" or "relu").
func ParseActivation(s string) (Activation, error) {
	switch s {
	case "tanh":
		return Tanh, nil
	case "relu":
		return ReLU, nil
	}
	return 0, fmt.Errorf("activation: got %q, want tanh or relu", s)
}

// layer is a view of one affine layer's parameters and gradients inside the MLP's flat buffers.
type layer struct {
	in, out int
	w, b    []float64 // w is out×in row-major
	gw, gb  []float64
}

// MLP is a fully connected network: Sizes[0] inputs, hidden layers of Sizes[1:len-1] units with
// activation Act, and a linear output layer of Sizes[len-1] units.
type MLP struct {
	Sizes  []int
	Act    Activation
	Params []float64 // all weights and biases, layer by layer: W (out×in), then b
	Grads  []float64 // same layout as Params; Backward adds into it

	layers []layer
}

// ParamCount returns the number of parameters of an MLP with the given layer sizes.
func ParamCount(sizes ...int) int {
	n := 0
	for i := 1; i < len(sizes); i++ {
		n += sizes[i-1]*sizes[i] + sizes[i]
	}
	return n
}

// NewMLP returns an MLP with the given layer sizes (inputs, hidden..., outputs) and zero parameters.
// It panics if fewer than two sizes are given or any size is not positive.
func NewMLP(act Activation, sizes ...int) *MLP {
	if len(sizes) < 2 {
		panic("nn: an MLP needs at least an input and an output size")
	}
	for _, s := range sizes {
		if s <= 0 {
			panic(fmt.Sprintf("nn: layer size %d is not positive", s))
		}
	}
	n := ParamCount(sizes...)
	m := &MLP{Sizes: append([]int(nil), sizes...), Act: act}
	m.bind(make([]float64, n), make([]float64, n))
	return m
}

// Attach moves the network's parameters and gradients into params and grads (each of length
// ParamCount(m.Sizes...)), copying the current values, so that several networks can share one flat
// buffer. It panics on a length mismatch.
func (m *MLP) Attach(params, grads []float64) {
	n := len(m.Params)
	if len(params) != n || len(grads) != n {
		panic(fmt.Sprintf("nn: Attach got %d params and %d grads, want %d", len(params), len(grads), n))
	}
	copy(params, m.Params)
	copy(grads, m.Grads)
	m.bind(params, grads)
}

func (m *MLP) bind(params, grads []float64) {
	m.Params, m.Grads = params, grads
	m.layers = m.layers[:0]
	off := 0
	for i := 1; i < len(m.Sizes); i++ {
		in, out := m.Sizes[i-1], m.Sizes[i]
		l := layer{in: in, out: out}
		l.w, l.gw = params[off:off+in*out:off+in*out], grads[off:off+in*out:off+in*out]
		off += in * out
		l.b, l.gb = params[off:off+out:off+out], grads[off:off+out:off+out]
		off += out
		m.layers = append(m.layers, l)
	}
}

// Workspace holds the activations of one batched forward pass and the scratch space of the backward
// pass through it. A workspace belongs to one MLP shape and serves batches up to its capacity.
type Workspace struct {
	maxBatch int
	batch    int
	input    []float64   // the last Forward's input, batch×Sizes[0]; not owned
	acts     [][]float64 // acts[i]: output of layer i (post-activation for hidden layers), maxBatch×out
	delta    [2][]float64

	// Feature-major pass (batch ≥ featureMajorMin): acts and delta hold transposed (out×batch)
	// matrices, xT the transposed input and out the row-major outputs.
	featureMajor bool
	xT, out      []float64
}

// NewWorkspace returns a workspace for batches of up to maxBatch rows.
func (m *MLP) NewWorkspace(maxBatch int) *Workspace {
	ws := &Workspace{maxBatch: maxBatch}
	widest := 0
	for _, l := range m.layers {
		ws.acts = append(ws.acts, make([]float64, maxBatch*l.out))
		widest = max(widest, l.out, l.in)
	}
	ws.delta[0] = make([]float64, maxBatch*widest)
	ws.delta[1] = make([]float64, maxBatch*widest)
	if maxBatch >= featureMajorMin {
		ws.xT = make([]float64, maxBatch*m.Sizes[0])
		ws.out = make([]float64, maxBatch*m.Sizes[len(m.Sizes)-1])
	}
	return ws
}

// Forward computes the network's outputs for batch rows of x (batch×Sizes[0], row-major) and returns
// them as a batch×Sizes[last] view into ws, valid until the next Forward on ws. ws keeps a reference
// to x for Backward: x must not change in between.
func (m *MLP) Forward(ws *Workspace, x []float64, batch int) []float64 {
	if batch > ws.maxBatch || len(x) < batch*m.Sizes[0] {
		panic(fmt.Sprintf("nn: Forward batch %d with %d inputs exceeds workspace %d", batch, len(x), ws.maxBatch))
	}
	ws.batch, ws.input = batch, x[:batch*m.Sizes[0]]
	ws.featureMajor = batch >= featureMajorMin
	if ws.featureMajor {
		return m.forwardFeatureMajor(ws)
	}
	in := ws.input
	last := len(m.layers) - 1
	for i, l := range m.layers {
		z := ws.acts[i][:batch*l.out]
		for r := 0; r < batch; r++ {
			copy(z[r*l.out:(r+1)*l.out], l.b)
		}
		// z = in·Wᵀ + b
		if l.in <= narrow {
			narrowForward(l, in, z, batch)
		} else {
			mulTransBAdd(z, in, l.w, batch, l.in, l.out)
		}
		if i < last {
			activate(m.Act, z)
		}
		in = z
	}
	return in
}

// Backward propagates dOut (batch×Sizes[last], the loss gradient with respect to the outputs of the
// last Forward on ws) through the network, adds the parameter gradients into m.Grads, and, if dX is
// not nil, writes the gradient with respect to the inputs into dX (batch×Sizes[0]).
func (m *MLP) Backward(ws *Workspace, dOut, dX []float64) {
	if ws.featureMajor {
		m.backwardFeatureMajor(ws, dOut, dX)
		return
	}
	batch := ws.batch
	last := len(m.layers) - 1
	delta := ws.delta[0][:batch*m.Sizes[len(m.Sizes)-1]]
	copy(delta, dOut)
	for i := last; i >= 0; i-- {
		l := m.layers[i]
		in := ws.input
		if i > 0 {
			in = ws.acts[i-1][:batch*l.in]
		}
		// dW += δᵀ·in, db += Σ_rows δ
		if l.in <= narrow {
			narrowWeightGrad(l, delta, in, batch)
		} else {
			mulTransAAdd(l.gw, delta, in, l.out, batch, l.in)
		}
		for r := 0; r < batch; r++ {
			row := delta[r*l.out : (r+1)*l.out]
			for j, d := range row {
				l.gb[j] += d
			}
		}
		if i == 0 && dX == nil {
			break
		}
		next := ws.delta[(last-i+1)%2][:batch*l.in]
		if i == 0 {
			next = dX[:batch*l.in]
		}
		// δ_prev = δ·W ⊙ act'(in)
		clear(next)
		mulAdd(next, delta, l.w, batch, l.out, l.in)
		if i > 0 {
			activateGrad(m.Act, in, next)
		}
		delta = next
	}
}

// narrow is the input width up to which plain loops beat the product kernels (gemm.go): for a
// batch-major pass they are dot products and axpys along the input dimension, and for an input
// layer of 3 or 4 observations the per-call overhead of four-element kernels costs more than the
// arithmetic.
const narrow = 8

// narrowForward adds in·Wᵀ to z for a layer with few inputs.
func narrowForward(l layer, in, z []float64, batch int) {
	for r := 0; r < batch; r++ {
		x := in[r*l.in : (r+1)*l.in]
		zr := z[r*l.out : (r+1)*l.out]
		for o := range zr {
			w := l.w[o*l.in : (o+1)*l.in]
			w = w[:len(x)]
			s := zr[o]
			for i, xi := range x {
				s += xi * w[i]
			}
			zr[o] = s
		}
	}
}

// narrowWeightGrad adds δᵀ·in to the weight gradient of a layer with few inputs.
func narrowWeightGrad(l layer, delta, in []float64, batch int) {
	for r := 0; r < batch; r++ {
		x := in[r*l.in : (r+1)*l.in]
		d := delta[r*l.out : (r+1)*l.out]
		for o, dv := range d {
			g := l.gw[o*l.in : (o+1)*l.in]
			g = g[:len(x)]
			for i, xi := range x {
				g[i] += dv * xi
			}
		}
	}
}

func activate(act Activation, z []float64) {
	switch act {
	case Tanh:
		tanhInPlace(z)
	case ReLU:
		for i, v := range z {
			if v < 0 {
				z[i] = 0
			}
		}
	}
}

// activateGrad multiplies d in place by the activation's derivative, given the activation's output a.
func activateGrad(act Activation, a, d []float64) {
	a = a[:len(d)]
	switch act {
	case Tanh:
		for i, v := range a {
			d[i] *= 1 - v*v
		}
	case ReLU:
		for i, v := range a {
			if v <= 0 {
				d[i] = 0
			}
		}
	}
}
