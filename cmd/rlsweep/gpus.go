package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/runner"
)

// gpusUsage is the help of --gpus, one flag with one meaning for worker and dev.
const gpusUsage = "GPU indices, comma-separated: one trial slot per GPU, each trial seeing only its GPU through CUDA_VISIBLE_DEVICES (e.g. 0,1,2,3), trials with a fractional resources.gpus packed several to a GPU; without it trials run on the CPU"

// addGPUsFlag defines --gpus on worker and dev.
func addGPUsFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "gpus", "", gpusUsage)
}

// parseGPUs checks --gpus: comma-separated non-negative integers, each once. "" is no GPU.
func parseGPUs(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	gpus := strings.Split(s, ",")
	seen := map[string]bool{}
	for _, g := range gpus {
		if g == "" || strings.Trim(g, "0123456789") != "" {
			return nil, fmt.Errorf("--gpus: got %q, want comma-separated GPU indices such as 0,1,2,3", s)
		}
		if seen[g] {
			return nil, fmt.Errorf("--gpus: GPU %s listed twice in %q, want each GPU once (use --trials-per-gpu to share one)", g, s)
		}
		seen[g] = true
	}
	return gpus, nil
}

// checkSlotsWithGPUs refuses --slots next to --gpus: with GPUs, the slots are the GPUs.
func checkSlotsWithGPUs(cmd *cobra.Command, slots int, gpus string) error {
	if cmd.Flags().Changed("slots") && gpus != "" {
		return fmt.Errorf("--slots: got %d with --gpus %s, want one of the two (with --gpus there is one trial per GPU)", slots, gpus)
	}
	return nil
}

// gpuLookup lists the indices of the GPUs on this machine; found is false when it cannot tell (no
// nvidia-smi).
type gpuLookup func(ctx context.Context) (indices []string, found bool, err error)

// nvidiaSMI asks nvidia-smi on PATH for the GPU indices it reports.
func nvidiaSMI(ctx context.Context) ([]string, bool, error) {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	smi := exec.CommandContext(ctx, path, "--query-gpu=index", "--format=csv,noheader")
	smi.Env = runner.WithoutSecrets(os.Environ())
	out, err := smi.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, true, fmt.Errorf("%s --query-gpu=index: %w", path, err)
	}
	var indices []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			indices = append(indices, line)
		}
	}
	return indices, true, nil
}

// checkGPUsPresent refuses --gpus indices this machine does not have, as lookup reports them; a trial
// handed CUDA_VISIBLE_DEVICES of a missing GPU would fail, or silently train on the CPU. When lookup
// cannot tell (no nvidia-smi), or fails, it warns and lets the GPUs through.
func checkGPUsPresent(ctx context.Context, gpus string, lookup gpuLookup, warn io.Writer) error {
	want, err := parseGPUs(gpus)
	if err != nil || len(want) == 0 {
		return err
	}
	have, found, err := lookup(ctx)
	switch {
	case !found:
		fmt.Fprintf(warn, "warning: --gpus %s not checked: nvidia-smi is not on PATH, so the GPUs present are unknown\n", gpus)
		return nil
	case err != nil:
		fmt.Fprintf(warn, "warning: --gpus %s not checked: %v\n", gpus, err)
		return nil
	}
	var missing []string
	for _, g := range want {
		// nvidia-smi writes indices in decimal without leading zeros; so may the user.
		if !slices.Contains(have, strings.TrimLeft(g, "0")) && !slices.Contains(have, g) {
			missing = append(missing, g)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	present := "none"
	if len(have) > 0 {
		present = strings.Join(have, ",")
	}
	which := "GPU " + missing[0] + " is"
	if len(missing) > 1 {
		which = "GPUs " + strings.Join(missing, ",") + " are"
	}
	return fmt.Errorf("--gpus: got %q, but %s not on this machine; want indices of the GPUs present (nvidia-smi reports %s)",
		gpus, which, present)
}
