package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Plan expands the spec into trials and stores spec.yaml, spec.json and plan.json. The Sweep workflow
// expands the same deterministic plan itself; the stored copy is for people and tools.
func (a *Activities) Plan(ctx context.Context, in PlanInput) (*PlanResult, error) {
	trials, err := sweeps.Plan(&in.Spec)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	specJSON, err := json.MarshalIndent(in.Spec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	planJSON, err := json.MarshalIndent(struct {
		SweepID string         `json:"sweep_id"`
		Params  []string       `json:"params"`
		Trials  []sweeps.Trial `json:"trials"`
	}{in.SweepID, sweeps.ParamNames(&in.Spec), trials}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	if err := a.claimSweep(ctx, in); err != nil {
		return nil, err
	}
	planKey := artifacts.PlanKey(in.SweepID)
	for key, body := range map[string][]byte{
		artifacts.SpecYAMLKey(in.SweepID): []byte(in.SpecYAML),
		artifacts.SpecJSONKey(in.SweepID): specJSON,
		planKey:                           planJSON,
	} {
		if err := a.Store.Put(ctx, key, strings.NewReader(string(body))); err != nil {
			return nil, err
		}
	}
	params, err := a.paramsAttribute(ctx)
	if err != nil {
		return nil, err
	}
	return &PlanResult{PlanKey: planKey, Trials: len(trials), ParamsAttribute: params}, nil
}

// sweepOwner is owner.json: which submission a sweep's stored files belong to.
type sweepOwner struct {
	SweepID    string `json:"sweep_id"`
	Submission string `json:"submission"`
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
	ownerKey := artifacts.OwnerKey(in.SweepID)
	var owner sweepOwner
	switch err := getJSON(ctx, a.Store, ownerKey, &owner); {
	case err == nil && owner.Submission == me:
		return nil
	case err == nil:
		return sweepExists(in.SweepID, a.Store.URL(ownerKey))
	case !errors.Is(err, artifacts.ErrNotFound):
		return err
	}
	for _, key := range []string{artifacts.SpecYAMLKey(in.SweepID), artifacts.PlanKey(in.SweepID)} {
		rc, err := a.Store.Get(ctx, key)
		if err == nil {
			rc.Close()
			return sweepExists(in.SweepID, a.Store.URL(key))
		}
		if !errors.Is(err, artifacts.ErrNotFound) {
			return err
		}
	}
	body, _ := json.Marshal(sweepOwner{SweepID: in.SweepID, Submission: me}) // strings: cannot fail
	return a.Store.Put(ctx, ownerKey, bytes.NewReader(body))
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
