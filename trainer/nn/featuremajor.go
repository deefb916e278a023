package nn

// featureMajorMin is the batch size from which Forward and Backward keep activations feature-major
// (one row per unit, one column per sample). The product kernels (gemm.go) are dot products and axpys
// along the rows of their operands: feature-major, they run along the batch (128 long for PPO minibatches)
// and there are in·out of them per layer, where batch-major gives batch·out kernels along the input
// width (64, or 4 for CartPole's input layer). Fewer, longer kernels win once the batch is large;
// rollouts with a handful of environments stay batch-major.
const featureMajorMin = 32

// forwardFeatureMajor is Forward for large batches: Zᵀ = W·Aᵀ + b per layer.
func (m *MLP) forwardFeatureMajor(ws *Workspace) []float64 {
	batch := ws.batch
	inT := ws.xT[:batch*m.Sizes[0]]
	transpose(inT, ws.input, batch, m.Sizes[0])
	last := len(m.layers) - 1
	for i, l := range m.layers {
		zT := ws.acts[i][:l.out*batch]
		for o, b := range l.b {
			row := zT[o*batch : (o+1)*batch]
			for k := range row {
				row[k] = b
			}
		}
		mulAdd(zT, l.w, inT, l.out, l.in, batch)
		if i < last {
			activate(m.Act, zT)
		}
		inT = zT
	}
	out := ws.out[:batch*m.layers[last].out]
	transpose(out, inT, m.layers[last].out, batch)
	return out
}

// backwardFeatureMajor is Backward after forwardFeatureMajor: dW += δᵀ·A, db += Σ δ, δ_prev = Wᵀ·δ ⊙ act'.
func (m *MLP) backwardFeatureMajor(ws *Workspace, dOut, dX []float64) {
	batch := ws.batch
	last := len(m.layers) - 1
	nOut := m.layers[last].out
	deltaT := ws.delta[0][:nOut*batch]
	transpose(deltaT, dOut[:batch*nOut], batch, nOut)
	for i := last; i >= 0; i-- {
		l := m.layers[i]
		var inT []float64
		if i > 0 {
			inT = ws.acts[i-1][:l.in*batch]
		} else {
			inT = ws.xT[:l.in*batch]
		}
		mulTransBAdd(l.gw, deltaT, inT, l.out, batch, l.in)
		addRowSums(l.gb, deltaT, batch)
		if i == 0 && dX == nil {
			break
		}
		nextT := ws.delta[(last-i+1)%2][:l.in*batch]
		mulTransA(nextT, l.w, deltaT, l.in, l.out, batch)
		if i == 0 {
			transpose(dX[:batch*l.in], nextT, l.in, batch)
			break
		}
		activateGrad(m.Act, inT, nextT)
		deltaT = nextT
	}
}

// addRowSums adds to sums[r] the sum of row r of m (len(sums) rows of cols), each row summed left
// to right. Four rows go at a time: one row's sum is a chain of dependent additions, four chains
// keep the adder busy, and the order within each row, so the bits, stay those of a plain loop.
func addRowSums(sums, m []float64, cols int) {
	r := 0
	for ; r+4 <= len(sums); r += 4 {
		m0 := m[r*cols : (r+1)*cols]
		m1 := m[(r+1)*cols : (r+2)*cols][:len(m0)]
		m2 := m[(r+2)*cols : (r+3)*cols][:len(m0)]
		m3 := m[(r+3)*cols : (r+4)*cols][:len(m0)]
		var s0, s1, s2, s3 float64
		for c, v := range m0 {
			s0 += v
			s1 += m1[c]
			s2 += m2[c]
			s3 += m3[c]
		}
		sums[r] += s0
		sums[r+1] += s1
		sums[r+2] += s2
		sums[r+3] += s3
	}
	for ; r < len(sums); r++ {
		var s float64
		for _, v := range m[r*cols : (r+1)*cols] {
			s += v
		}
		sums[r] += s
	}
}

// transpose writes the cols×rows transpose of src (rows×cols, row-major) into dst.
//
// Four source rows go at a time, so that each store fills four adjacent elements of a destination
// row instead of landing on a different cache line every time.
func transpose(dst, src []float64, rows, cols int) {
	r := 0
	for ; r+4 <= rows; r += 4 {
		s0 := src[r*cols : (r+1)*cols]
		s1 := src[(r+1)*cols : (r+2)*cols][:len(s0)]
		s2 := src[(r+2)*cols : (r+3)*cols][:len(s0)]
		s3 := src[(r+3)*cols : (r+4)*cols][:len(s0)]
		for c, v := range s0 {
			d := dst[c*rows+r : c*rows+r+4 : c*rows+r+4]
			d[0], d[1], d[2], d[3] = v, s1[c], s2[c], s3[c]
		}
	}
	for ; r < rows; r++ {
		for c, v := range src[r*cols : (r+1)*cols] {
			dst[c*rows+r] = v
		}
	}
}
