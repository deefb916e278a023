package ppo

import "math"

// RunningMeanStd tracks the mean and variance of a stream of vectors with Chan et al.'s parallel
// update, exactly as Gymnasium's RunningMeanStd (count starts at 1e-4, mean 0, variance 1).
type RunningMeanStd struct {
	Mean, Var []float64
	Count     float64
}

func newRunningMeanStd(dim int) *RunningMeanStd {
	r := &RunningMeanStd{Mean: make([]float64, dim), Var: make([]float64, dim), Count: 1e-4}
	for i := range r.Var {
		r.Var[i] = 1
	}
	return r
}

// Update folds in a batch of rows (len(batch)/dim rows of dim values).
func (r *RunningMeanStd) Update(batch []float64) {
	dim := len(r.Mean)
	rows := len(batch) / dim
	if rows == 0 {
		return
	}
	n := float64(rows)
	tot := r.Count + n
	for j := 0; j < dim; j++ {
		var mean float64
		for k := 0; k < rows; k++ {
			mean += batch[k*dim+j]
		}
		mean /= n
		var v float64
		for k := 0; k < rows; k++ {
			d := batch[k*dim+j] - mean
			v += d * d
		}
		v /= n
		delta := mean - r.Mean[j]
		m2 := r.Var[j]*r.Count + v*n + delta*delta*r.Count*n/tot
		r.Mean[j] += delta * n / tot
		r.Var[j] = m2 / tot
	}
	r.Count = tot
}

// normalizeInto writes clip((x − mean)/√(var + 1e-8), ±bound) for each row of x into dst.
func (r *RunningMeanStd) normalizeInto(dst, x []float64, bound float64) {
	dim := len(r.Mean)
	for k := range x {
		j := k % dim
		v := (x[k] - r.Mean[j]) / math.Sqrt(r.Var[j]+1e-8)
		dst[k] = math.Max(-bound, math.Min(bound, v))
	}
}

func (r *RunningMeanStd) clone() RunningMeanStd {
	return RunningMeanStd{Mean: append([]float64(nil), r.Mean...), Var: append([]float64(nil), r.Var...), Count: r.Count}
}
