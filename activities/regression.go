package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/sweeps"
)

// ErrNoComparableConfigs is the error type of a comparison in which no configuration of the sweep has
// the parameter values of one of the baseline's: not retried, since the plans will not change.
const ErrNoComparableConfigs = "NoComparableConfigs"

// CompareBaselineInput asks for a sweep's results to be compared with a baseline.
type CompareBaselineInput struct {
	SweepID  string
	Baseline string // see artifacts.BaselineKey
	// SpecThresholds is the pinned spec's regression section; nil for the defaults.
	SpecThresholds *sweeps.Regression `json:",omitempty"`
	// Thresholds overrides SpecThresholds field by field where nonzero (regression.Resolve).
	Thresholds regression.Thresholds
	// WebhookURL receives regression.json as a JSON POST; "" for none. "env:NAME" reads the URL from the
	// worker's environment variable NAME, so a chat webhook's secret never travels in a payload.
	WebhookURL string
}

// CompareBaselineResult is the verdict and where the full comparison went.
type CompareBaselineResult struct {
	Verdict       string
	RegressionKey string
	Regressed     int
	Improved      int
	New           int `json:",omitempty"`
	Missing       int `json:",omitempty"`
	WebhookError  string
}

// CompareBaseline compares the sweep's results.json with the baseline, posts the comparison to the
// webhook if one is set and writes regression.json beside results.json, for the report (DrawReport)
// to show. When no configuration of the sweep has the parameter values of one of the
// baseline's, it writes regression.json (the new and missing configurations, verdict failed) and
// returns a non-retryable ErrNoComparableConfigs.
func (a *Activities) CompareBaseline(ctx context.Context, in CompareBaselineInput) (*CompareBaselineResult, error) {
	ss := a.sweepStore()
	cand, err := ss.ReadResults(ctx, in.SweepID)
	if err != nil {
		return nil, err
	}
	base, bkey, err := ss.ReadBaseline(ctx, in.Baseline)
	if err != nil {
		return nil, fmt.Errorf("baseline %q: %w", in.Baseline, err)
	}
	th, overridden := regression.Resolve(in.SpecThresholds, in.Thresholds)
	rep, noMatch := regression.New(in.SweepID, in.Baseline, bkey, base, cand, th, overridden)
	if noMatch != nil {
		noMatch = temporal.NewNonRetryableApplicationError(noMatch.Error(), ErrNoComparableConfigs, nil)
	}
	if in.WebhookURL != "" {
		rep.Webhook = postWebhook(ctx, in.WebhookURL, rep)
	}
	n := rep.Counts()
	out := &CompareBaselineResult{Verdict: rep.Verdict,
		Regressed: n.Regressed, Improved: n.Improved, New: n.New, Missing: n.Missing}
	if rep.Webhook != nil {
		out.WebhookError = rep.Webhook.Error
	}
	if out.RegressionKey, err = ss.WriteRegression(ctx, rep); err != nil {
		return nil, err
	}
	if noMatch != nil {
		return nil, noMatch
	}
	return out, nil
}

// postWebhook posts rep as JSON and reports the outcome; it never returns an error, since a chat
// notification that fails must not fail the regression it reports.
func postWebhook(ctx context.Context, url string, rep *regression.Report) *regression.WebhookOutcome {
	if name, ok := strings.CutPrefix(url, "env:"); ok {
		url = os.Getenv(name)
		if url == "" {
			return &regression.WebhookOutcome{Error: fmt.Sprintf("webhook: environment variable %s is not set on the worker", name)}
		}
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return &regression.WebhookOutcome{Error: fmt.Sprintf("webhook: encode: %v", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return &regression.WebhookOutcome{Error: fmt.Sprintf("webhook: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return &regression.WebhookOutcome{Error: fmt.Sprintf("webhook: %v", err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	out := &regression.WebhookOutcome{Status: resp.StatusCode}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		out.Error = fmt.Sprintf("webhook: got HTTP %d, want 2xx", resp.StatusCode)
	}
	return out
}

// LoadSpecInput names a stored spec.
type LoadSpecInput struct {
	Key string
}

// LoadSpecResult is the stored spec, parsed and validated, with its text.
type LoadSpecResult struct {
	Spec     sweeps.Spec
	SpecYAML string
}

// LoadSpec reads a spec stored in the artifact store (a schedule's pinned spec) and validates it. An
// invalid spec is ErrInvalidSpec: it will not become valid by retrying.
func (a *Activities) LoadSpec(ctx context.Context, in LoadSpecInput) (*LoadSpecResult, error) {
	raw, err := a.sweepStore().ReadScheduleSpec(ctx, in.Key)
	if err != nil {
		return nil, err
	}
	spec, err := sweeps.Decode(bytes.NewReader(raw), in.Key)
	if err == nil {
		_, err = sweeps.Plan(spec) // validates it, then plans it
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidSpec, err)
	}
	return &LoadSpecResult{Spec: *spec, SpecYAML: string(raw)}, nil
}
