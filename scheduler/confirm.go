package scheduler

import (
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// ConfirmState is the memory of a sweep with confirm: the re-runs on other GPU classes, nil until the
// search is over and the workflow picked them (Confirmer.Confirm), and how many of them started.
type ConfirmState struct {
	Trials []sweeps.Trial `json:"trials"`
	Next   int            `json:"next"`
}

// Confirmer is the scheduler of a sweep with confirm (spec.confirm): the search's scheduler, then the
// re-runs of its best configurations on other GPU classes.
type Confirmer interface {
	// SearchDone says the search will start no trial again: its best can be picked once every
	// trial of it has ended.
	SearchDone() bool
	// Picked says the re-runs were given (Confirm), none among them possibly.
	Picked() bool
	// Confirm gives the re-runs, which start after the search, in order.
	Confirm(trials []sweeps.Trial)
	// Rerun is the re-run of that ID; false when it is none.
	Rerun(id string) (sweeps.Trial, bool)
}

// confirming runs the search (its inner scheduler) and then the re-runs Confirm gave. The re-runs go
// on at every boundary and are never told to the search's scheduler, whose state and decisions stay
// those of its own trials.
type confirming struct {
	inner  Scheduler
	st     *ConfirmState
	budget int                     // re-runs at most, until picked: Total's share
	byID   map[string]sweeps.Trial // the re-runs picked
}

func newConfirming(spec *sweeps.Spec, inner Scheduler, st *ConfirmState) *confirming {
	c := &confirming{inner: inner, budget: spec.ConfirmBudget()}
	if st != nil {
		c.Confirm(st.Trials)
		c.st.Next = st.Next
	}
	return c
}

func (c *confirming) SearchDone() bool { return c.inner.Done() }
func (c *confirming) Picked() bool     { return c.st != nil }

func (c *confirming) Confirm(trials []sweeps.Trial) {
	c.st = &ConfirmState{Trials: trials}
	c.byID = make(map[string]sweeps.Trial, len(trials))
	for _, t := range trials {
		c.byID[t.ID] = t
	}
}

func (c *confirming) Rerun(id string) (sweeps.Trial, bool) {
	t, ok := c.byID[id]
	return t, ok
}

// isRerun says whether id is one of the re-runs.
func (c *confirming) isRerun(id string) bool {
	_, ok := c.byID[id]
	return ok
}

func (c *confirming) rerun() (sweeps.Trial, bool) {
	if c.st == nil || !c.inner.Done() || c.st.Next >= len(c.st.Trials) {
		return sweeps.Trial{}, false
	}
	return c.st.Trials[c.st.Next], true
}

func (c *confirming) Peek() (sweeps.Trial, bool) {
	if !c.inner.Done() {
		return c.inner.Peek()
	}
	return c.rerun()
}

func (c *confirming) Next() (sweeps.Trial, bool) {
	if !c.inner.Done() {
		return c.inner.Next()
	}
	t, ok := c.rerun()
	if ok {
		c.st.Next++
	}
	return t, ok
}

func (c *confirming) Finished(sum results.TrialSummary) {
	if !c.isRerun(sum.TrialID) {
		c.inner.Finished(sum)
	}
}

func (c *confirming) AtBoundary(b Boundary) Decision {
	if c.isRerun(b.TrialID) {
		return Decision{Segment: b.Segment, Action: Continue}
	}
	return c.inner.AtBoundary(b)
}

func (c *confirming) AsksAtBoundaries() bool { return c.inner.AsksAtBoundaries() }

func (c *confirming) Done() bool {
	return c.inner.Done() && c.st != nil && c.st.Next >= len(c.st.Trials)
}

func (c *confirming) Total() int {
	if c.st != nil {
		return c.inner.Total() + len(c.st.Trials)
	}
	return c.inner.Total() + c.budget
}

func (c *confirming) State() State {
	s := c.inner.State()
	s.Confirm = c.st
	return s
}

// Passed, Interrupt, Replacements and Pruning are the search's.

func (c *confirming) Passed(p Pass) {
	if pa, ok := c.inner.(Passer); ok && !c.isRerun(p.TrialID) {
		pa.Passed(p)
	}
}

func (c *confirming) Interrupt() []Interruption {
	if in, ok := c.inner.(Interrupter); ok {
		return in.Interrupt()
	}
	return nil
}

func (c *confirming) Replacements() []Replacement {
	if r, ok := c.inner.(Replacer); ok {
		return r.Replacements()
	}
	return nil
}

func (c *confirming) Pruning() *PruningStatus {
	if p, ok := c.inner.(PruningReporter); ok {
		return p.Pruning()
	}
	return nil
}
