package results

import (
	"cmp"
	"slices"
	"strings"
)

// UnknownHardware is the hardware class of a trial without a hardware record (one whose results were
// recorded before segments kept where they ran, or one that never started).
const UnknownHardware = "unknown hardware"

// HardwareClass is the class of hardware the trial ran on, which its throughput and its divergences
// are grouped by: its GPUs' models (Hardware.GPUNames, "NVIDIA H100 80GB HBM3"), "no GPU (CPU model)"
// for a trial given no GPU ("no GPU" when the CPU model is unknown too), UnknownHardware without a
// hardware record.
func (t TrialSummary) HardwareClass() string {
	h := t.Hardware
	switch {
	case h == nil:
		return UnknownHardware
	case len(h.GPUs) > 0:
		return h.GPUNames()
	case h.CPU != "":
		return "no GPU (" + h.CPU + ")"
	}
	return "no GPU"
}

// NotStarted says whether the trial never trained: a standby trial that ended before its release
// (Unstarted), or a trial the sweep did not start because its memory parameter was at or above a value
// that ran out of memory on its GPU class (recorded oom with the reason as its error). Such a trial has
// no hardware record, no step and no wall time.
func (t TrialSummary) NotStarted() bool {
	return t.Unstarted || t.Hardware == nil && t.Steps == 0 && t.WallSeconds == 0
}

// DivergedItself says whether the trial diverged: outcome diverged, and not because another seed of
// its configuration diverged (Pruning.SiblingDiverged), which says nothing of its own hardware.
func (t TrialSummary) DivergedItself() bool {
	return t.Outcome == OutcomeDiverged && (t.Pruning == nil || !t.Pruning.SiblingDiverged)
}

// HardwareGroup is the trials that ran on one GPU class (HardwareClass) under one precision setting
// (TrialSummary.Precision, "" when the sweep has none): how many, and how many ended with each outcome.
type HardwareGroup struct {
	GPU       string         `json:"gpu"`
	Precision string         `json:"precision,omitempty"`
	Trials    int            `json:"trials"`
	Outcomes  map[string]int `json:"outcomes"`
}

// Name is the group in words: "tf32 on NVIDIA H100 80GB HBM3", or the GPU class alone without a
// precision.
func (g HardwareGroup) Name() string {
	if g.Precision == "" {
		return g.GPU
	}
	return g.Precision + " on " + g.GPU
}

// healthy says whether every trial of the group completed or was pruned.
func (g HardwareGroup) healthy() bool {
	return g.Trials > 0 && g.Outcomes[OutcomeCompleted]+g.Outcomes[OutcomePruned] == g.Trials
}

// hardwareKey identifies a trial's group.
type hardwareKey struct{ gpu, precision string }

func keyOf(t TrialSummary) hardwareKey { return hardwareKey{t.HardwareClass(), t.Precision} }

// DivergenceByHardware groups the trials that ran by GPU class and precision setting, with each group's
// outcome counts; sorted by class, then precision. Trials that never started (NotStarted) ran on
// nothing and are left out.
func DivergenceByHardware(trials []TrialSummary) []HardwareGroup {
	at := map[hardwareKey]int{}
	var out []HardwareGroup
	for _, t := range trials {
		if t.NotStarted() {
			continue
		}
		k := keyOf(t)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, HardwareGroup{GPU: k.gpu, Precision: k.precision, Outcomes: map[string]int{}})
		}
		out[i].Trials++
		out[i].Outcomes[t.Outcome]++
	}
	slices.SortFunc(out, func(a, b HardwareGroup) int {
		return cmp.Or(strings.Compare(a.GPU, b.GPU), strings.Compare(a.Precision, b.Precision))
	})
	return out
}

// SensitiveConfig is a configuration whose divergence depends on where it ran: a trial of it diverged
// in some group of GPU class and precision (Diverged) while in another group all its trials completed
// or were pruned (Healthy). Each group counts only this configuration's trials.
type SensitiveConfig struct {
	Params map[string]any `json:"params"`
	// Configs are the plan indices with these parameters: one per precision setting when the sweep
	// has a precision dimension (trials differing only in precision are different configurations of
	// the plan).
	Configs  []int           `json:"configs"`
	Diverged []HardwareGroup `json:"diverged"`
	Healthy  []HardwareGroup `json:"healthy"`
}

// Line says where the configuration diverged and where it trained: "diverges under tf32 on NVIDIA H100
// 80GB HBM3; trains under fp32 on NVIDIA H100 80GB HBM3, fp32 on NVIDIA A100-SXM4-80GB".
func (c SensitiveConfig) Line() string {
	names := func(gs []HardwareGroup) string {
		out := make([]string, len(gs))
		for i, g := range gs {
			out[i] = g.Name()
		}
		return strings.Join(out, ", ")
	}
	return "diverges under " + names(c.Diverged) + "; trains under " + names(c.Healthy)
}

// HardwareSensitivity lists the hardware-sensitive configurations of a sweep: those (identified by
// their parameters, ParamsKey, whatever their precision) with a trial that diverged itself
// (DivergedItself) in some group of GPU class and precision, and a group in which all their trials
// completed or were pruned. A group holding any other outcome (failed, oom, cancelled, a seed stopped
// for its sibling's divergence) is neither. Ordered by their first plan index; nil when none.
func HardwareSensitivity(trials []TrialSummary) []SensitiveConfig {
	byParams := map[string][]TrialSummary{}
	var keys []string
	for _, t := range trials {
		k := ParamsKey(t.Params)
		if _, ok := byParams[k]; !ok {
			keys = append(keys, k)
		}
		byParams[k] = append(byParams[k], t)
	}
	var out []SensitiveConfig
	for _, k := range keys {
		if c, ok := sensitive(byParams[k]); ok {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b SensitiveConfig) int { return cmp.Compare(a.Configs[0], b.Configs[0]) })
	return out
}

// sensitive judges one configuration's trials (all with the same parameters).
func sensitive(trials []TrialSummary) (SensitiveConfig, bool) {
	c := SensitiveConfig{Params: trials[0].Params}
	diverged := map[hardwareKey]bool{}
	for _, t := range trials {
		if !slices.Contains(c.Configs, t.Config) {
			c.Configs = append(c.Configs, t.Config)
		}
		if t.DivergedItself() && !t.NotStarted() {
			diverged[keyOf(t)] = true
		}
	}
	slices.Sort(c.Configs)
	for _, g := range DivergenceByHardware(trials) {
		switch {
		case diverged[hardwareKey{g.GPU, g.Precision}]:
			c.Diverged = append(c.Diverged, g)
		case g.healthy():
			c.Healthy = append(c.Healthy, g)
		}
	}
	return c, len(c.Diverged) > 0 && len(c.Healthy) > 0
}
