package activities

import (
	"context"
	"encoding/json"
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
	planKey := artifacts.SweepKey(in.SweepID, "plan.json")
	for key, body := range map[string][]byte{
		artifacts.SweepKey(in.SweepID, "spec.yaml"): []byte(in.SpecYAML),
		artifacts.SweepKey(in.SweepID, "spec.json"): specJSON,
		planKey: planJSON,
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
