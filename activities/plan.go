package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// Plan expands the spec into trials and stores spec.yaml, spec.json and plan.json. The Sweep workflow
// expands the same deterministic plan itself; the stored copy is for people and tools.
func (a *Activities) Plan(ctx context.Context, in PlanInput) (*PlanResult, error) {
	trials, err := sweeps.Plan(&in.Spec)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	if err := a.claimSweep(ctx, in); err != nil {
		return nil, err
	}
	ss := a.sweepStore()
	if err := ss.WriteSpec(ctx, in.SweepID, []byte(in.SpecYAML), &in.Spec); err != nil {
		return nil, err
	}
	planKey, err := ss.WritePlan(ctx, &sweepstore.Plan{SweepID: in.SweepID, Params: sweeps.ParamNames(&in.Spec), Trials: trials})
	if err != nil {
		return nil, err
	}
	params, err := a.paramsAttribute(ctx)
	if err != nil {
		return nil, err
	}
	return &PlanResult{PlanKey: planKey, Trials: len(trials), ParamsAttribute: params}, nil
}

// claimSweep makes the sweep's files this submission's, or refuses: a sweep's stored files are never
// overwritten by another submission under the same ID, even when the server no longer knows the first
// one (its history deleted or past retention). owner.json is written before anything else, so a retry
// of this activity finds its own claim and goes on.
func (a *Activities) claimSweep(ctx context.Context, in PlanInput) error {
	me := in.Submission
	if me == "" && activity.IsActivity(ctx) {
		me = "run:" + activity.GetInfo(ctx).WorkflowExecution.RunID
	}
	ss := a.sweepStore()
	owner, err := ss.ReadOwner(ctx, in.SweepID)
	switch {
	case err == nil && owner.Submission == me:
		return nil
	case err == nil:
		return sweepExists(in.SweepID, ss.OwnerURL(in.SweepID))
	case !errors.Is(err, artifacts.ErrNotFound):
		return err
	}
	// Without owner.json, a stored spec.yaml or plan.json still makes the ID taken.
	if where, err := ss.Occupied(ctx, in.SweepID); err != nil {
		return err
	} else if where != "" {
		return sweepExists(in.SweepID, where)
	}
	return ss.WriteOwner(ctx, sweepstore.Owner{SweepID: in.SweepID, Submission: me})
}

func sweepExists(sweepID, where string) error {
	msg := fmt.Sprintf("sweep %s: the store already holds a sweep under this ID (%s); its files are left as they are: submit again without --id for a fresh ID, or with another --id", sweepID, where)
	return temporal.NewNonRetryableApplicationError(msg, ErrSweepExists, nil)
}

// paramsAttribute says whether the sweep's namespace has ParamsSearchAttribute registered as a
// KeywordList. Trials go without it otherwise: a start naming an unregistered attribute, or a list for
// a plain Keyword on SQL visibility, would be refused, and the sweep would retry it forever.
func (a *Activities) paramsAttribute(ctx context.Context) (bool, error) {
	if a.Attributes == nil {
		return false, nil
	}
	typ, err := a.Attributes.SearchAttributeType(ctx, activity.GetInfo(ctx).Namespace, ParamsSearchAttribute)
	if err != nil {
		return false, fmt.Errorf("list search attributes: %w", err)
	}
	if typ != "" && typ != "KeywordList" {
		activity.GetLogger(ctx).Warn(ParamsSearchAttribute + " is registered as " + typ + ", not KeywordList; trials go without it")
	}
	return typ == "KeywordList", nil
}
