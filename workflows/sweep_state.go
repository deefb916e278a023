package workflows

import (
	"errors"
	"fmt"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
)

// SweepState is what a sweep carries across continue-as-new: counts and references, never metrics.
type SweepState struct {
	Phase string
	// Scheduler is the scheduler's state: which trial it starts next.
	Scheduler   scheduler.State
	Running     []string       // trial IDs started and not yet reported
	Counts      map[string]int // finished trials per outcome
	Pending     []results.TrialSummary
	Part        int // next results part number
	Paused      bool
	Concurrency int
	Leader      *results.TrialSummary
	Runs        int // how many runs this sweep has had (continue-as-new count + 1)
	Started     time.Time
	// Probes is the probe stage's report, once it has run.
	Probes *activities.ProbeReport `json:",omitempty"`
	// ParamsAttribute: trials carry AttrParams (the namespace has it registered).
	ParamsAttribute bool `json:",omitempty"`
	// LastFailure is the trial that failed last, its whole error kept, for status and watch.
	LastFailure *results.TrialSummary `json:",omitempty"`
	// Decided is the scheduler's answer to each running trial's last boundary question, so that a
	// question asked again (after a continue-as-new too) gets the same answer and is not decided or
	// logged twice.
	Decided map[string]scheduler.Decision `json:",omitempty"`
	// Decisions are the scheduler decisions not stored yet (the decision log, stored with the
	// results); DecisionSeq numbers the next one, DecisionPart is the next decision-log part.
	Decisions    []results.Decision `json:",omitempty"`
	DecisionSeq  int                `json:",omitempty"`
	DecisionPart int                `json:",omitempty"`
	// Lanes is the slot hand-off's bookkeeping; nil for a sweep whose trials do not hand off (handsOff).
	Lanes *Lanes `json:",omitempty"`
	// OOMBounds: per GPU class (the trial task queue, sweepRun.trialClass), the smallest value of the
	// memory parameter that ran out of memory; no trial at or above it starts on that class.
	OOMBounds map[string]OOMBound `json:",omitempty"`
	// ConfirmNote says which configurations a sweep with confirm re-runs on other GPU classes, or that
	// none qualified; "" until they are picked (pickConfirm).
	ConfirmNote string `json:",omitempty"`
}

// tally counts a finished trial (sum) in the state: its outcome, the pending results, the last
// failure, and the leader, the best completed objective by goal ("minimize" or "maximize"); the
// last records are not kept in the failure and the leader.
func (st *SweepState) tally(sum results.TrialSummary, goal string) {
	st.Counts[sum.Outcome]++
	st.Pending = append(st.Pending, sum)
	if sum.Outcome == results.OutcomeFailed || sum.Outcome == results.OutcomeOOM {
		failed := sum
		failed.Last = nil
		st.LastFailure = &failed
	}
	// A confirm re-run on another GPU class is not the search's result: it never leads.
	if sum.Outcome == results.OutcomeCompleted && sum.Objective != nil && sum.GPUClass == "" && better(goal, sum, st.Leader) {
		lead := sum
		lead.Last = nil
		st.Leader = &lead
	}
}

// better says whether a's objective beats b's by goal; any objective beats none.
func better(goal string, a results.TrialSummary, b *results.TrialSummary) bool {
	if b == nil || b.Objective == nil {
		return true
	}
	if goal == "minimize" {
		return *a.Objective < *b.Objective
	}
	return *a.Objective > *b.Objective
}

// finished is how many trials have finished, whatever their outcome.
func (st *SweepState) finished() int {
	done := 0
	for _, n := range st.Counts {
		done += n
	}
	return done
}

// details is the sweep's current details line in the Web UI: trials finished of total, active ones
// running (and standby), the count of each outcome, and the leader's metric.
func (st *SweepState) details(total, active int, metric string) string {
	d := fmt.Sprintf("%d/%d trials finished, %d running", st.finished(), total, active)
	if l := st.Lanes; l != nil && len(l.Standby) > 0 {
		d += fmt.Sprintf(" (%d standby)", len(l.Standby))
	}
	for _, o := range results.Outcomes {
		if n := st.Counts[o]; n > 0 {
			d += fmt.Sprintf(", %d %s", n, o)
		}
	}
	if l := st.Leader; l != nil {
		d += fmt.Sprintf("; leader %s %s=%.4g", l.TrialID, metric, *l.Objective)
	}
	return d
}

// unstored says whether finished trials or decisions wait to be stored.
func (st *SweepState) unstored() bool { return len(st.Pending) > 0 || len(st.Decisions) > 0 }

// logDecision adds a decision that changes a trial's course (a stop or an exploit) to the decision
// log, numbered in the order the sweep made it; it is stored with the next results part.
func (st *SweepState) logDecision(trialID string, step int64, d scheduler.Decision) {
	if d.Action != scheduler.Stop && d.Action != scheduler.Exploit {
		return
	}
	st.Decisions = append(st.Decisions, results.Decision{Seq: st.DecisionSeq, TrialID: trialID,
		Segment: d.Segment, Step: step, Action: string(d.Action), Outcome: d.Outcome, Reason: d.Reason, Pruning: d.Pruning,
		ResumeFrom: d.ResumeFrom, Params: d.Params})
	st.DecisionSeq++
}

// logReplacement adds a trial a scheduler added in place of one that ended (a pbt member replacing a
// diverged one) to the decision log, as action replace.
func (st *SweepState) logReplacement(r scheduler.Replacement) {
	st.Decisions = append(st.Decisions, results.Decision{Seq: st.DecisionSeq, TrialID: r.Member,
		Segment: -1, Step: r.ResumeStep, Action: DecisionReplace, Reason: r.Reason, ResumeFrom: r.ResumeFrom, Params: r.Params,
		Replaces: r.Replaces, Parent: r.Parent})
	st.DecisionSeq++
}

// validateChange refuses a change (pause, resume, set-concurrency) to a sweep that no longer runs, or
// one that would change nothing (redundant, saying why).
func (st *SweepState) validateChange(op string, redundant bool, why string) error {
	switch st.Phase {
	case PhaseCancelling, PhaseReporting, PhaseCompleted, PhaseCancelled, PhaseFailed, PhaseProbeFailed:
		return fmt.Errorf("%s: sweep is %s, want a sweep that is still running", op, st.Phase)
	}
	if redundant {
		return errors.New(op + ": sweep is " + why)
	}
	return nil
}
