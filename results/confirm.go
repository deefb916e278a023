package results

import (
	"math"
	"sort"
)

// ClassRun is one configuration's trials on one GPU class: the search's ("" for the sweep's own
// class) or a confirm re-run's.
type ClassRun struct {
	GPUClass string         `json:"gpu_class"`
	GPU      string         `json:"gpu"` // the GPU model of its trials' hardware records (HardwareClass)
	Trials   int            `json:"trials"`
	Outcomes map[string]int `json:"outcomes"`
	// Mean is the mean objective of its completed trials; NaN when none completed.
	Mean   float64 `json:"-"`
	Scored int     `json:"scored"`
}

// ClassConfirmation is a configuration a sweep with confirm re-ran on other GPU classes: its runs on
// the sweep's class first, then on each other class by name.
type ClassConfirmation struct {
	Config int            `json:"config"`
	Params map[string]any `json:"params"`
	Runs   []ClassRun     `json:"runs"`
}

// ClassConfirmations lists the configurations with confirm re-runs (TrialSummary.GPUClass), in the
// order their first re-run is listed, each with its trials on the sweep's class and on each other.
func ClassConfirmations(trials []TrialSummary) []ClassConfirmation {
	var order []int
	rerun := map[int]bool{}
	for _, t := range trials {
		if t.GPUClass != "" && !rerun[t.Config] {
			rerun[t.Config] = true
			order = append(order, t.Config)
		}
	}
	if len(order) == 0 {
		return nil
	}
	byConfig := map[int]*ClassConfirmation{}
	runs := map[int]map[string]*ClassRun{}
	sums := map[*ClassRun]float64{}
	for _, t := range trials {
		if !rerun[t.Config] {
			continue
		}
		c := byConfig[t.Config]
		if c == nil {
			c = &ClassConfirmation{Config: t.Config, Params: t.Params}
			byConfig[t.Config], runs[t.Config] = c, map[string]*ClassRun{}
		}
		r := runs[t.Config][t.GPUClass]
		if r == nil {
			r = &ClassRun{GPUClass: t.GPUClass, Outcomes: map[string]int{}}
			runs[t.Config][t.GPUClass] = r
		}
		r.Trials++
		r.Outcomes[t.Outcome]++
		if g := t.HardwareClass(); r.GPU == "" && t.Hardware != nil {
			r.GPU = g
		}
		if t.Scored() {
			r.Scored++
			sums[r] += *t.Objective
		}
	}
	out := make([]ClassConfirmation, 0, len(order))
	for _, cfg := range order {
		c := byConfig[cfg]
		for _, r := range runs[cfg] {
			r.Mean = math.NaN()
			if r.Scored > 0 {
				r.Mean = sums[r] / float64(r.Scored)
			}
			c.Runs = append(c.Runs, *r)
		}
		// The sweep's own class ("") first, then the others by name.
		sort.Slice(c.Runs, func(i, j int) bool { return c.Runs[i].GPUClass < c.Runs[j].GPUClass })
		out = append(out, *c)
	}
	return out
}
