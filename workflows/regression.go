package workflows

import (
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/regression"
)

// RegressionInput starts a regression: the pinned sweep stored under SpecKey, compared with Baseline.
// A schedule's action carries it, so it holds references, never the spec itself.
type RegressionInput struct {
	// Name names the regression (the schedule's name), for IDs and summaries.
	Name string
	// SpecKey is the artifact-store key of the pinned spec.yaml.
	SpecKey string
	// Baseline is a sweep ID or a stored baseline's name (artifacts.BaselineKey).
	Baseline string
	// Thresholds override the pinned spec's regression section field by field where nonzero (a
	// schedule's --tolerance); the spec's section, or the defaults, decide the rest.
	Thresholds regression.Thresholds
	// WebhookURL, optional, receives regression.json as a JSON POST; "env:NAME" reads it on the worker.
	WebhookURL string
}

// RegressionResult is the verdict and where the evidence is.
type RegressionResult struct {
	SweepID       string
	Verdict       string
	RegressionKey string
	Regressed     int
	Improved      int
	// New and Missing count the configurations only the sweep or only the baseline has (not compared).
	New          int    `json:",omitempty"`
	Missing      int    `json:",omitempty"`
	WebhookError string `json:",omitempty"`
	// ReportKey is the sweep's report.html, drawn once with the regression section; "" when it could
	// not be drawn (ReportError says why).
	ReportKey   string `json:",omitempty"`
	ReportError string `json:",omitempty"`
}

// Regression runs a pinned sweep as a child Sweep workflow, compares its objective with the baseline
// (activities.CompareBaseline), records the verdict in the RlsweepVerdict search attribute and draws the
// sweep's report.html once, with the comparison (activities.DrawReport): the child writes its results
// without drawing it. A sweep that does not complete fails the regression, with verdict "failed"; one
// that failed because every trial failed (ErrAllTrialsFailed) has its results written and is compared
// like any other. However the regression ends once its sweep ran, the report of the results the sweep
// wrote is drawn, with the comparison when there is one.
func Regression(ctx workflow.Context, in RegressionInput) (*RegressionResult, error) {
	var spec activities.LoadSpecResult
	err := workflow.ExecuteActivity(regressionOptions(ctx, "load spec "+in.SpecKey), (*activities.Activities).LoadSpec,
		activities.LoadSpecInput{Key: in.SpecKey}).Get(ctx, &spec)
	if err != nil {
		return nil, failRegression(ctx, err)
	}
	sweepID := SweepWorkflowID(spec.Spec.Name, regressionShortID(ctx))
	var sweep SweepResult
	err = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: sweepID,
		TaskQueue:  ControlQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(AttrSweepID.ValueSet(sweepID),
			AttrSweepName.ValueSet(spec.Spec.Name), AttrKind.ValueSet("sweep")),
		StaticSummary: "regression " + in.Name + ": pinned sweep " + spec.Spec.Name,
	}), WorkflowTypeSweep, SweepInput{SweepID: sweepID, Spec: spec.Spec, SpecYAML: spec.SpecYAML, NoReport: true}).Get(ctx, &sweep)
	if err != nil && !everyTrialFailed(err) {
		drawReport(ctx, sweepID)
		return nil, failRegression(ctx, err)
	}
	var cmp activities.CompareBaselineResult
	err = workflow.ExecuteActivity(regressionOptions(ctx, "compare with "+in.Baseline), (*activities.Activities).CompareBaseline,
		activities.CompareBaselineInput{SweepID: sweepID, Baseline: in.Baseline, SpecThresholds: spec.Spec.Regression,
			Thresholds: in.Thresholds, WebhookURL: in.WebhookURL}).Get(ctx, &cmp)
	if err != nil {
		drawReport(ctx, sweepID)
		return nil, failRegression(ctx, err)
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, AttrVerdict.ValueSet(cmp.Verdict)); err != nil {
		drawReport(ctx, sweepID)
		return nil, err
	}
	drawn := drawReport(ctx, sweepID)
	return &RegressionResult{SweepID: sweepID, Verdict: cmp.Verdict, RegressionKey: cmp.RegressionKey,
		Regressed: cmp.Regressed, Improved: cmp.Improved, New: cmp.New, Missing: cmp.Missing,
		WebhookError: cmp.WebhookError, ReportKey: drawn.ReportKey, ReportError: drawn.ReportError}, nil
}

// drawReport draws the pinned sweep's report.html from the results it wrote and the comparison, if
// one was written (activities.DrawReport), also when the regression was cancelled. A report that could
// not be drawn fails nothing: the result says why, and the regression's outcome stands.
func drawReport(ctx workflow.Context, sweepID string) activities.DrawReportResult {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var out activities.DrawReportResult
	err := workflow.ExecuteActivity(regressionOptions(dctx, "draw report"), (*activities.Activities).DrawReport,
		activities.DrawReportInput{SweepID: sweepID}).Get(dctx, &out)
	if err != nil {
		workflow.GetLogger(ctx).Warn("report.html not drawn", "sweep", sweepID, "error", err)
		out.ReportError = err.Error()
	}
	return out
}

// everyTrialFailed says whether a pinned sweep failed because every trial failed (ErrAllTrialsFailed):
// its results are written, and the comparison goes on, for a trainer that now fails on every seed is
// the regression to report (each configuration's new failures, max_new_failures).
func everyTrialFailed(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == ErrAllTrialsFailed
}

// VerdictFailed is the verdict of a regression whose sweep or comparison did not complete.
const VerdictFailed = regression.VerdictFailed

func failRegression(ctx workflow.Context, err error) error {
	if uerr := workflow.UpsertTypedSearchAttributes(ctx, AttrVerdict.ValueSet(VerdictFailed)); uerr != nil {
		workflow.GetLogger(ctx).Warn("record verdict", "error", uerr)
	}
	return err
}

func regressionOptions(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ControlQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute,
			MaximumAttempts: 10, NonRetryableErrorTypes: []string{activities.ErrInvalidSpec}},
		Summary: summary,
	})
}

// regressionShortID is the pinned sweep's short ID: the last 8 hex digits of the regression's run ID,
// random in both UUIDv4 and UUIDv7 (the first digits of a UUIDv7 are a timestamp, the same for two
// regressions started together), so every scheduled run gets its own sweep and a replay gets the same
// one.
func regressionShortID(ctx workflow.Context) string {
	id := strings.ReplaceAll(workflow.GetInfo(ctx).WorkflowExecution.RunID, "-", "")
	return id[max(0, len(id)-8):]
}
