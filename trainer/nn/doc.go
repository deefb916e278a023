// Package nn holds the small dense networks the built-in PPO trainer needs: a multilayer perceptron
// with tanh or ReLU hidden layers, batched forward and backward passes over flat row-major []float64
// buffers, orthogonal initialisation, the Adam optimiser and clipping by global gradient norm.
//
// Every buffer is allocated once, by NewMLP and NewWorkspace; Forward and Backward allocate nothing,
// so a training loop that reuses its workspaces runs without garbage. Matrix products are computed
// in blas64.Gemm's order, with its bits, by kernels that do four of gonum's at a time (gemm.go; AVX
// assembly on amd64, gonum's kernels elsewhere); batches of 32 rows or more are computed with
// feature-major activations internally, which gives the kernels fewer and longer rows (the API stays
// row-major). Hidden-layer tanh is a rational approximation accurate to 3e-7 (float32 precision).
//
// Parameters and gradients of a network live in two flat slices, Params and Grads, laid out layer by
// layer as W (Out×In, row-major, the PyTorch nn.Linear layout) followed by b (Out). Attach points a
// network at a region of a larger buffer, so an agent made of several networks can be optimised and
// clipped as one flat vector.
package nn
