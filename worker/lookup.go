package worker

import (
	"context"
	"errors"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// clientLookup implements activities.TrialLookup and activities.SearchAttributeLookup with the worker's
// Temporal client.
type clientLookup struct{ c client.Client }

func (l clientLookup) SearchAttributeType(ctx context.Context, namespace, name string) (string, error) {
	resp, err := l.c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	var denied *serviceerror.PermissionDenied
	var unimplemented *serviceerror.Unimplemented
	if errors.As(err, &denied) || errors.As(err, &unimplemented) {
		return "", nil // a key without operator rights (Temporal Cloud): the optional attributes go unused
	}
	if err != nil {
		return "", err
	}
	typ, ok := resp.GetCustomAttributes()[name]
	if !ok {
		return "", nil
	}
	return typ.String(), nil
}

func (l clientLookup) LookupTrial(ctx context.Context, workflowID string) (activities.TrialState, error) {
	d, err := l.c.DescribeWorkflowExecution(ctx, workflowID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		// Never started, or already deleted by retention: it will never report.
		return activities.TrialState{Closed: true, Status: "not_found"}, nil
	}
	if err != nil {
		return activities.TrialState{}, err
	}
	info := d.GetWorkflowExecutionInfo()
	status := info.GetStatus()
	if status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return activities.TrialState{}, nil
	}
	st := activities.TrialState{Closed: true,
		Status: strings.ToLower(strings.TrimPrefix(status.String(), "WorkflowExecutionStatus"))}
	if status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		var sum results.TrialSummary
		if err := l.c.GetWorkflow(ctx, workflowID, info.GetExecution().GetRunId()).Get(ctx, &sum); err != nil {
			return activities.TrialState{}, err
		}
		st.Summary = &sum
	}
	return st, nil
}

// HandOff releases a standby trial (workflows.SignalRelease): implements activities.SlotHandOff.
func (l clientLookup) HandOff(ctx context.Context, sweepID, trialID string) error {
	return l.c.SignalWorkflow(ctx, workflows.TrialWorkflowID(sweepID, trialID), "", workflows.SignalRelease, workflows.Release{})
}

// RungPassed tells a sweep that a trial's metric stream passed a decision point
// (workflows.SignalRungPassed): implements activities.RungReporter.
func (l clientLookup) RungPassed(ctx context.Context, sweepWorkflowID string, p activities.RungPassed) error {
	return l.c.SignalWorkflow(ctx, sweepWorkflowID, "", workflows.SignalRungPassed, p)
}

// SegmentStarted tells a Trial workflow where its running segment takes a stop
// (activities.SignalSegmentStarted): implements activities.SegmentAnnouncer.
func (l clientLookup) SegmentStarted(ctx context.Context, workflowID, runID string, s activities.SegmentStarted) error {
	return l.c.SignalWorkflow(ctx, workflowID, runID, activities.SignalSegmentStarted, s)
}

// ServerHealth asks the Temporal server's health check (activities.Activities.ServerHealth).
func (l clientLookup) ServerHealth(ctx context.Context) error {
	_, err := l.c.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}
