// Package probes holds the probe checks of docs/probes.md: five tiny environments, each isolating one part
// of a PPO trainer, with Gaussian variants for continuous actions; the record a trainer reports after
// training on one (its value and policy at the probe's observations); the pass criteria that judge it;
// and the ladder that turns a set of results into a diagnosis: when probe N fails while N−1 passes, the
// bug is in what N adds. Run trains any Trainer on the ladder; the package knows no trainer itself
// (the built-in PPO is adapted to it in trainer/builtin), so whatever reads probes.json can import it.
package probes

import (
	"fmt"
	"slices"
	"strings"
)

// ID names a probe: "1"…"5" for discrete actions, "1c"…"5c" for continuous (Gaussian) ones.
type ID string

// Probe describes one probe environment and what a sound trainer learns on it.
type Probe struct {
	ID         ID
	Level      int  // 1–5: its rung on the ladder
	Continuous bool // a Box action space (the Gaussian variants)
	// Adds is what this probe adds to the one below it, so a failure here while the lower probes pass
	// points at it.
	Adds string
	// Obs are the observations at which the trainer's value and policy are judged.
	Obs []float64
}

// Gamma is the discount the probes are trained and judged with. Probe 3 expects V(0) = γ; with the
// usual 0.99 a trainer that ignores γ (V(0) = 1) would differ by 0.01, inside any honest tolerance,
// so the probes use 0.5, where the two differ by 0.5.
const Gamma = 0.5

var ladder = []Probe{
	{Level: 1, Adds: "value loss or optimiser broken (a constant reward is not learnt)", Obs: []float64{0}},
	{Level: 2, Adds: "backprop through the value net broken, or observations misaligned with their value targets in the batch", Obs: []float64{-1, 1}},
	{Level: 3, Adds: "discounting, GAE or done-masking broken", Obs: []float64{0, 1}},
	{Level: 4, Adds: "advantage or policy-gradient update broken", Obs: []float64{0}},
	{Level: 5, Adds: "policy and value interaction, batching or stale data: the policy does not condition on the observation", Obs: []float64{-1, 1}},
}

// All returns the probes of an action space ("discrete" or "continuous"), in ladder order.
func All(actionSpace string) ([]Probe, error) {
	var c bool
	switch actionSpace {
	case "discrete":
	case "continuous":
		c = true
	default:
		return nil, fmt.Errorf("action-space: got %q, want discrete or continuous", actionSpace)
	}
	out := make([]Probe, len(ladder))
	for i, p := range ladder {
		p.Continuous = c
		p.ID = ID(fmt.Sprint(p.Level))
		if c {
			p.ID += "c"
		}
		out[i] = p
	}
	return out, nil
}

// Lookup returns the probe named id.
func Lookup(id ID) (Probe, error) {
	space := "discrete"
	if strings.HasSuffix(string(id), "c") {
		space = "continuous"
	}
	all, _ := All(space)
	i := slices.IndexFunc(all, func(p Probe) bool { return p.ID == id })
	if i < 0 {
		return Probe{}, fmt.Errorf("probe: got %q, want one of 1, 2, 3, 4, 5, 1c, 2c, 3c, 4c, 5c", id)
	}
	return all[i], nil
}

// IDs returns every probe ID, discrete then continuous.
func IDs() []ID {
	var ids []ID
	for _, space := range []string{"discrete", "continuous"} {
		all, _ := All(space)
		for _, p := range all {
			ids = append(ids, p.ID)
		}
	}
	return ids
}
