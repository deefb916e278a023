package ppo

import (
	"fmt"
	"strings"

	"github.com/rlsweep/rlsweep/trainer"
)

// Bug is a defect injected on purpose (`rlsweep train --inject-bug`), so tests can prove that the
// probe checks and the diagnostics catch the failures they claim to. Never set it in real training.
type Bug int

// Injectable bugs.
const (
	BugNone          Bug = iota
	BugNoDiscount        // GAE and truncation bootstrap use γ = 1 whatever the config says
	BugDetachValue       // the value network receives no gradient
	BugFlipAdvantage     // the policy gradient ascends −A: the policy learns to do worse
	BugStaleBatch        // minibatch observations are paired with another sample's actions
	BugNoEntropyGrad     // the entropy bonus is reported but contributes no gradient
)

// BugParam is the RLSWEEP_PARAMS key (and sweep parameter) that sets Bug, as --inject-bug does: a
// test aid, not a hyperparameter, so the trainer's table of names (trainer.PPOParamNames) leaves it out.
const BugParam = trainer.PPOBugParam

var bugNames = []string{"none", "no-discount", "detach-value", "flip-advantage", "stale-batch", "no-entropy-grad"}

// String returns the bug's name as ParseBug accepts it.
func (b Bug) String() string {
	if int(b) >= 0 && int(b) < len(bugNames) {
		return bugNames[b]
	}
	return fmt.Sprintf("Bug(%d)", int(b))
}

// ParseBug returns the bug named s; "" and "none" are BugNone.
func ParseBug(s string) (Bug, error) {
	if s == "" {
		return BugNone, nil
	}
	for i, n := range bugNames {
		if n == s {
			return Bug(i), nil
		}
	}
	return BugNone, fmt.Errorf("inject-bug: got %q, want one of %s", s, strings.Join(bugNames[1:], ", "))
}

// BugNames returns the names of the injectable bugs.
func BugNames() []string { return append([]string(nil), bugNames[1:]...) }
