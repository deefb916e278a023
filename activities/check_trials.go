package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/rlsweep/rlsweep/results"
)

// TrialLookup finds out whether a trial workflow has closed, and how. worker/ implements it with the
// Temporal client, so this package needs no client of its own.
type TrialLookup interface {
	LookupTrial(ctx context.Context, workflowID string) (TrialState, error)
}

// TrialState is what a TrialLookup learnt about one trial workflow.
type TrialState struct {
	Closed bool
	// Status is how the workflow closed, in Temporal's words, lower case: completed, failed, canceled,
	// terminated, timedout; not_found when the server has no such workflow.
	Status string
	// Summary is the trial's result when it completed (and sometimes when it was cancelled).
	Summary *results.TrialSummary
}

// TrialRef names one trial and its workflow.
type TrialRef struct {
	TrialID    string
	WorkflowID string
}

// CheckTrialsInput lists the trials a sweep is still waiting for.
type CheckTrialsInput struct {
	SweepID string
	Trials  []TrialRef
}

// CheckTrialsResult is the trials among them whose workflows have closed, with their summaries.
type CheckTrialsResult struct {
	Ended []results.TrialSummary
}

// CheckTrials is the sweep's safety net for trials it cannot follow by a future: those started by an
// earlier run of a sweep that continued-as-new. Such a trial reports by signal; if it never does
// (terminated by hand, or its report reached a run that was closing), the sweep would wait forever.
// CheckTrials returns each closed trial's summary: its result when it completed, else a failed (or
// cancelled) summary naming how its workflow ended. Trials still running are left out.
func (a *Activities) CheckTrials(ctx context.Context, in CheckTrialsInput) (*CheckTrialsResult, error) {
	if a.Trials == nil {
		return nil, errors.New("check trials: this worker has no Temporal client to look trials up with")
	}
	var out CheckTrialsResult
	for _, t := range in.Trials {
		st, err := a.Trials.LookupTrial(ctx, t.WorkflowID)
		if err != nil {
			return nil, fmt.Errorf("check trial %s: %w", t.TrialID, err)
		}
		if !st.Closed {
			continue
		}
		if st.Summary != nil && st.Summary.TrialID == t.TrialID {
			out.Ended = append(out.Ended, *st.Summary)
			continue
		}
		sum := results.TrialSummary{TrialID: t.TrialID, Outcome: results.OutcomeFailed,
			Error: "trial workflow ended without reporting: " + st.Status}
		if st.Status == "canceled" {
			sum.Outcome = results.OutcomeCancelled
		}
		out.Ended = append(out.Ended, sum)
	}
	return &out, nil
}
