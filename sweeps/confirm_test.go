package sweeps

import (
	"strings"
	"testing"
)

func TestConfirmErrors(t *testing.T) {
	grid := "parameters:\n  lr: {values: [0.1, 0.2]}\nresources: {gpu_class: h100}\n"
	for _, tc := range []struct{ yaml, want string }{
		{grid + "confirm: {gpu_classes: []}\n", "confirm.gpu_classes: got an empty list, want at least one GPU class"},
		{grid + "confirm: {gpu_classes: [A100]}\n", `confirm.gpu_classes[0]: got "A100", want a GPU class: lower-case letters`},
		{grid + "confirm: {gpu_classes: [a100, a100]}\n", `confirm.gpu_classes[1]: got "a100", want each class once (confirm.gpu_classes[0] is the same)`},
		{grid + "confirm: {gpu_classes: [h100]}\n", `confirm.gpu_classes[0]: got "h100", want a class other than the sweep's own`},
		{grid + "confirm: {gpu_classes: [a100], top: 0}\n", "confirm.top: got 0, want an integer in [1, 20]"},
		{grid + "confirm: {gpu_classes: [a100], topp: 2}\n", "confirm.topp"},
	} {
		_, err := decodeValid(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\ngot %v\nwant %q", tc.yaml, err, tc.want)
		}
	}
	s, err := decodeValid(t, grid+"confirm: {gpu_classes: [a100, rtx4090]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.Confirm.Top != DefaultConfirmTop {
		t.Errorf("confirm.top = %d, want the default %d", s.Confirm.Top, DefaultConfirmTop)
	}
	// The search's budget: 2 configurations × 2 seeds; the re-runs (up to 3 × 2 classes × 2 seeds)
	// are counted apart, by the scheduler's Total.
	if n, r := s.Budget(), s.ConfirmBudget(); n != 4 || r != 12 {
		t.Errorf("Budget() = %d, confirm trials %d; want 4 and 12", n, r)
	}
}
