package sweeps

import (
	"fmt"
	"math"
	"strconv"
)

// GPUUnits is one GPU in the units a GPU worker counts shares in: ten-thousandths, integers, so that
// four trials of resources.gpus 0.25 fill a GPU exactly.
const GPUUnits = 10000

// MinGPUFraction is the smallest fraction of a GPU a trial may hold (resources.gpus): a hundred trials
// on one GPU, each with its own CUDA context, is already past what a GPU holds in practice.
const MinGPUFraction = 0.01

// MinGPUFractionUnits is MinGPUFraction in GPUUnits.
const MinGPUFractionUnits = GPUUnits / 100

// MaxGPUs is the most GPUs a trial may hold (resources.gpus).
const MaxGPUs = 64

// IsGPUFraction says whether resources.gpus asks for a share of one GPU rather than whole GPUs.
func IsGPUFraction(gpus float64) bool { return gpus > 0 && gpus < 1 }

// GPUFractionUnits is a fraction of a GPU in GPUUnits, rounded to the nearest unit (1/3 is 3333).
func GPUFractionUnits(gpus float64) int { return int(math.Round(gpus * GPUUnits)) }

// trialsPerGPU is how many trials holding gpus (a fraction) share one GPU.
func trialsPerGPU(gpus float64) int { return GPUUnits / max(GPUFractionUnits(gpus), 1) }

// formatGPUs writes resources.gpus in shortest form: "0.25", "2".
func formatGPUs(gpus float64) string { return strconv.FormatFloat(gpus, 'g', -1, 64) }

// checkGPUs checks resources.gpus: a whole number in [0, MaxGPUs], or a fraction of one GPU in
// [MinGPUFraction, 1).
func (c *checker) checkGPUs() {
	g := c.s.Resources.GPUs
	got := formatGPUs(g)
	switch {
	case math.IsNaN(g) || math.IsInf(g, 0) || g < 0:
		c.add("resources.gpus", got, fmt.Sprintf("a whole number of GPUs in [0, %d], or a fraction of one GPU in [%g, 1) such as 0.25 (four trials share a GPU)", MaxGPUs, MinGPUFraction))
	case g > MaxGPUs:
		c.add("resources.gpus", got, fmt.Sprintf("at most %d GPUs per trial", MaxGPUs))
	case g > 1 && g != math.Trunc(g):
		c.add("resources.gpus", got, fmt.Sprintf("a whole number of GPUs above 1 (%g or %g): a trial shares a GPU only with a fraction below 1, such as 0.5",
			math.Floor(g), math.Ceil(g)))
	case IsGPUFraction(g) && GPUFractionUnits(g) < MinGPUFractionUnits:
		c.add("resources.gpus", got, fmt.Sprintf("a fraction of at least %g (at most %d trials share a GPU), or 0 for trials that need no GPU",
			MinGPUFraction, GPUUnits/MinGPUFractionUnits))
	}
}

// describeGPUFraction says how trials holding a fraction of a GPU pack on a GPU worker (validate
// --explain).
func describeGPUFraction(gpus float64) string {
	n := trialsPerGPU(gpus)
	line := fmt.Sprintf("each trial holds %s of a GPU: %d share one", formatGPUs(gpus), n)
	if left := GPUUnits - n*GPUFractionUnits(gpus); left >= MinGPUFractionUnits {
		line += fmt.Sprintf(", leaving %s of it to other trials", formatGPUs(float64(left)/GPUUnits))
	}
	return line + "; a GPU worker packs them best-fit, keeping whole GPUs free for whole-GPU trials, and tells each trainer its share in RLSWEEP_GPU_MEMORY_FRACTION"
}
