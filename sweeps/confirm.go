package sweeps

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Confirm re-runs the best configurations of a sweep on other GPU classes once its search is over
// (confirm: {gpu_classes: [a100, rtx4090], top: 3}): each of the Top best configurations by the
// leaderboard's ranking, on each class, with the sweep's seeds. A configuration that trains on the
// sweep's class and diverges on another is flagged hardware-sensitive by the report and `rlsweep
// results`, as one that diverges under one precision setting is.
type Confirm struct {
	GPUClasses []string `json:"gpu_classes"`
	Top        int      `json:"top"`
}

// DefaultConfirmTop is confirm.top when the spec leaves it out; MaxConfirmTop bounds it.
const (
	DefaultConfirmTop = 3
	MaxConfirmTop     = 20
)

// ConfirmTrialID is the ID of the re-run of configuration config with seed on GPU class class:
// "<config>-s<seed>-<class>".
func ConfirmTrialID(config int, seed int64, class string) string {
	return TrialID(config, seed) + "-" + class
}

// ConfirmTrials are the re-runs of the configurations best (each a trial of it, which gives its
// number, parameters and precision setting) on the spec's confirm classes: per configuration, per
// class, per seed.
func (s *Spec) ConfirmTrials(best []Trial) []Trial {
	if s.Confirm == nil {
		return nil
	}
	var out []Trial
	for _, b := range best {
		for _, class := range s.Confirm.GPUClasses {
			for _, seed := range s.Seeds {
				out = append(out, Trial{ID: ConfirmTrialID(b.Config, seed, class), Config: b.Config, Seed: seed,
					Params: b.Params, Precision: b.Precision, GPUClass: class})
			}
		}
	}
	return out
}

// ConfirmBudget is how many trials the confirmation runs at most: top × classes × seeds.
func (s *Spec) ConfirmBudget() int {
	if s.Confirm == nil {
		return 0
	}
	return s.Confirm.Top * len(s.Confirm.GPUClasses) * len(s.Seeds)
}

func (c *checker) confirm() {
	s := c.s
	cf := s.Confirm
	if cf == nil {
		return
	}
	if len(cf.GPUClasses) == 0 {
		c.add("confirm.gpu_classes", "an empty list", "at least one GPU class to re-run the best configurations on, such as [a100] (or remove confirm)")
	}
	for i, class := range cf.GPUClasses {
		p := fmt.Sprintf("confirm.gpu_classes[%d]", i)
		switch j := slices.Index(cf.GPUClasses, class); {
		case !ValidGPUClass(class):
			c.add(p, quote(class), "a GPU class: lower-case letters, digits, '_', '-', at most 40 characters (e.g. a100, h100, rtx4090)")
		case j < i:
			c.add(p, quote(class), fmt.Sprintf("each class once (confirm.gpu_classes[%d] is the same)", j))
		case GPUClassQueue(class) == s.Resources.TrialQueue():
			c.add(p, quote(class), "a class other than the sweep's own (resources.gpu_class): its best configurations ran there already")
		}
	}
	if cf.Top < 1 || cf.Top > MaxConfirmTop {
		c.add("confirm.top", strconv.Itoa(cf.Top), fmt.Sprintf("an integer in [1, %d] (configurations to re-run)", MaxConfirmTop))
	}
	if s.Method == MethodPBT {
		c.add("confirm", "{gpu_classes: ["+strings.Join(cf.GPUClasses, ", ")+"]}",
			"no confirm with method pbt: a member's parameters change as it trains; re-run its schedule (rlsweep results --export-schedule) with resources.gpu_class set to the other class")
	}
}
