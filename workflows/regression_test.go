package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// verdictIs matches an upsert of the verdict search attribute to want.
func verdictIs(want string) any {
	return mock.MatchedBy(func(sa temporal.SearchAttributes) bool {
		got, ok := sa.GetKeyword(workflows.AttrVerdict)
		return ok && got == want
	})
}

func TestRegression(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	spec := sweepSpec(t, []float64{1, 2}, 2, "maximize")
	spec.Regression = &sweeps.Regression{Tolerance: 0.2, Confidence: 0.9, Resamples: 500, MinProbImprovement: 0.8, MaxNewFailures: 1}
	env.OnActivity(acts.LoadSpec, mock.Anything, activities.LoadSpecInput{Key: "schedules/nightly/spec.yaml"}).Return(
		&activities.LoadSpecResult{Spec: spec, SpecYAML: "name: unit\n"}, nil).Once()
	var child workflows.SweepInput
	var childID string
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.SweepInput) (*workflows.SweepResult, error) {
		child, childID = in, workflow.GetInfo(ctx).WorkflowExecution.ID
		return &workflows.SweepResult{SweepID: in.SweepID, Status: workflows.PhaseCompleted}, nil
	}, workflow.RegisterOptions{Name: "Sweep"})
	var compared activities.CompareBaselineInput
	env.OnActivity(acts.CompareBaseline, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CompareBaselineInput) (*activities.CompareBaselineResult, error) {
			compared = in
			return &activities.CompareBaselineResult{Verdict: regression.VerdictRegressed, Regressed: 1,
				RegressionKey: "sweeps/" + in.SweepID + "/regression.json"}, nil
		}).Once()
	env.OnUpsertTypedSearchAttributes(verdictIs(regression.VerdictRegressed)).Return(nil).Once()
	drawn := expectDrawReport(env)

	in := workflows.RegressionInput{Name: "nightly", SpecKey: "schedules/nightly/spec.yaml", Baseline: "nightly",
		Thresholds: regression.Thresholds{Regression: sweeps.Regression{Tolerance: 0.1}}, WebhookURL: "http://example.invalid/hook"}
	env.ExecuteWorkflow(workflows.Regression, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var got workflows.RegressionResult
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	env.AssertExpectations(t)
	if !strings.HasPrefix(got.SweepID, "sweep/unit/") || childID != got.SweepID || child.SweepID != got.SweepID {
		t.Errorf("sweep ID %q, child workflow ID %q, child input ID %q, want one sweep/unit/<short> ID", got.SweepID, childID, child.SweepID)
	}
	if child.SpecYAML == "" || child.Spec.Name != "unit" || !child.NoReport {
		t.Errorf("child sweep got spec %q with spec.yaml %q, NoReport %v; want the stored spec, and no report drawn by the child",
			child.Spec.Name, child.SpecYAML, child.NoReport)
	}
	if len(*drawn) != 1 || (*drawn)[0] != got.SweepID || got.ReportKey != "sweeps/"+got.SweepID+"/report.html" {
		t.Errorf("DrawReport for %q, result report key %q; want it drawn once for %s", *drawn, got.ReportKey, got.SweepID)
	}
	if compared.SweepID != got.SweepID || compared.Baseline != "nightly" || compared.WebhookURL != in.WebhookURL ||
		compared.Thresholds.Tolerance != 0.1 {
		t.Errorf("CompareBaseline got %+v, want the sweep, baseline, thresholds and webhook of the input", compared)
	}
	if compared.SpecThresholds == nil || *compared.SpecThresholds != *spec.Regression {
		t.Errorf("CompareBaseline got spec thresholds %+v, want the pinned spec's regression section %+v", compared.SpecThresholds, spec.Regression)
	}
	if got.Verdict != regression.VerdictRegressed || got.Regressed != 1 {
		t.Errorf("result = %+v, want verdict regressed with 1 configuration", got)
	}
}

func TestRegressionSweepFails(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.LoadSpec, mock.Anything, mock.Anything).Return(
		&activities.LoadSpecResult{Spec: sweepSpec(t, []float64{1}, 1, "maximize")}, nil)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.SweepInput) (*workflows.SweepResult, error) {
		return nil, temporal.NewNonRetryableApplicationError("probe failed", "ProbeFailed", nil)
	}, workflow.RegisterOptions{Name: "Sweep"})
	env.OnUpsertTypedSearchAttributes(verdictIs(workflows.VerdictFailed)).Return(nil).Once()
	drawn := expectDrawReport(env)
	env.ExecuteWorkflow(workflows.Regression, workflows.RegressionInput{Name: "nightly", SpecKey: "k", Baseline: "b"})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "probe failed") {
		t.Fatalf("workflow error = %v, want the sweep's failure", err)
	}
	if len(*drawn) != 1 {
		t.Errorf("DrawReport ran %d times, want once: the results the failed sweep wrote get their report", len(*drawn))
	}
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Errorf("workflow error %v, want an application error from the child", err)
	}
	env.AssertExpectations(t)
}

func TestRegressionInvalidSpec(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.LoadSpec, mock.Anything, mock.Anything).Return(nil,
		temporal.NewNonRetryableApplicationError("metric.goal: got \"up\"", activities.ErrInvalidSpec, nil)).Once()
	env.OnUpsertTypedSearchAttributes(verdictIs(workflows.VerdictFailed)).Return(nil).Once()
	env.ExecuteWorkflow(workflows.Regression, workflows.RegressionInput{Name: "nightly", SpecKey: "k", Baseline: "b"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "metric.goal") {
		t.Fatalf("workflow error = %v, want the invalid spec, not retried", err)
	}
	env.AssertExpectations(t)
}

// A pinned sweep whose every trial failed fails (AllTrialsFailed) with its results written: the
// regression compares them all the same, for a trainer that now fails on every seed is the regression
// to report (and to post to the webhook), not a regression run that could not complete.
func TestRegressionEveryTrialFailedIsCompared(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.LoadSpec, mock.Anything, mock.Anything).Return(
		&activities.LoadSpecResult{Spec: sweepSpec(t, []float64{1}, 1, "maximize")}, nil)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.SweepInput) (*workflows.SweepResult, error) {
		res := &workflows.SweepResult{SweepID: in.SweepID, Status: workflows.PhaseFailed, Total: 1,
			Counts: map[string]int{"failed": 1}, ResultsKey: "sweeps/" + in.SweepID + "/results.json"}
		return nil, temporal.NewNonRetryableApplicationError("failed: its 1 trial failed", workflows.ErrAllTrialsFailed, nil, res)
	}, workflow.RegisterOptions{Name: "Sweep"})
	compared := 0
	env.OnActivity(acts.CompareBaseline, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CompareBaselineInput) (*activities.CompareBaselineResult, error) {
			compared++
			return &activities.CompareBaselineResult{Verdict: regression.VerdictRegressed, Regressed: 1}, nil
		})
	env.OnUpsertTypedSearchAttributes(verdictIs(regression.VerdictRegressed)).Return(nil).Once()
	drawn := expectDrawReport(env)
	env.ExecuteWorkflow(workflows.Regression, workflows.RegressionInput{Name: "nightly", SpecKey: "k", Baseline: "b"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("regression error %v, want the failed sweep compared", err)
	}
	if len(*drawn) != 1 {
		t.Errorf("DrawReport ran %d times, want once", len(*drawn))
	}
	var got workflows.RegressionResult
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if compared != 1 || got.Verdict != regression.VerdictRegressed {
		t.Errorf("CompareBaseline ran %d times, verdict %q; want it run once and verdict regressed", compared, got.Verdict)
	}
	env.AssertExpectations(t)
}

// expectDrawReport answers DrawReport with the sweep's report key and records each sweep it drew.
func expectDrawReport(env *testsuite.TestWorkflowEnvironment) *[]string {
	var drawn []string
	env.OnActivity(acts.DrawReport, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DrawReportInput) (*activities.DrawReportResult, error) {
			drawn = append(drawn, in.SweepID)
			return &activities.DrawReportResult{ReportKey: "sweeps/" + in.SweepID + "/report.html"}, nil
		})
	return &drawn
}

// A comparison that fails (no configuration in common, never retried) fails the regression with
// verdict failed, and the report of the sweep's results is still drawn, once.
func TestRegressionComparisonFailsReportDrawn(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.OnActivity(acts.LoadSpec, mock.Anything, mock.Anything).Return(
		&activities.LoadSpecResult{Spec: sweepSpec(t, []float64{1}, 1, "maximize")}, nil)
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.SweepInput) (*workflows.SweepResult, error) {
		return &workflows.SweepResult{SweepID: in.SweepID, Status: workflows.PhaseCompleted}, nil
	}, workflow.RegisterOptions{Name: "Sweep"})
	env.OnActivity(acts.CompareBaseline, mock.Anything, mock.Anything).Return(nil,
		temporal.NewNonRetryableApplicationError("no configuration in common", activities.ErrNoComparableConfigs, nil)).Once()
	env.OnUpsertTypedSearchAttributes(verdictIs(workflows.VerdictFailed)).Return(nil).Once()
	drawn := expectDrawReport(env)
	env.ExecuteWorkflow(workflows.Regression, workflows.RegressionInput{Name: "nightly", SpecKey: "k", Baseline: "b"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "no configuration in common") {
		t.Fatalf("workflow error = %v, want the comparison's failure", err)
	}
	if len(*drawn) != 1 || !strings.HasPrefix((*drawn)[0], "sweep/unit/") {
		t.Errorf("DrawReport for %q, want once for the pinned sweep", *drawn)
	}
	env.AssertExpectations(t)
}
