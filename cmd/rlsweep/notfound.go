package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// maxTrialsListed is how many trial IDs an unknown trial's error lists before saying how many more.
const maxTrialsListed = 20

// parseSweepRef is workflows.ParseSweepRef with the house rule's fix added to a malformed reference:
// how to list the sweeps.
func parseSweepRef(f *Factory, ref string) (sweepID, trialID string, err error) {
	sweepID, trialID, err = workflows.ParseSweepRef(ref)
	if err != nil {
		return "", "", invalidInput(fmt.Errorf("%w; list the sweeps with: %s", err, f.commandLine("list")))
	}
	return sweepID, trialID, nil
}

// sweepError rewrites Temporal's NotFound for a sweep: a sweep ID it does not know gets the sweep given,
// where it was looked for and how to list the sweeps; a sweep that has ended (an update to it is not
// found either) says so. Other errors are wrapped with the sweep's ID.
func sweepError(ctx context.Context, f *Factory, c client.Client, sweepID string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		desc, derr := c.DescribeWorkflowExecution(ctx, sweepID, "")
		switch {
		case errors.As(derr, &nf):
			return noSuchSweep(f, sweepID)
		case derr == nil && desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return fmt.Errorf("sweep %s has ended (%s): %w", sweepID, workflowState(desc.GetWorkflowExecutionInfo().GetStatus()), err)
		}
	}
	return fmt.Errorf("sweep %s: %w", sweepID, err)
}

func noSuchSweep(f *Factory, sweepID string) error {
	return fmt.Errorf("sweep %s does not exist: Temporal (namespace %s) has no sweep of that ID; list the sweeps with: %s",
		sweepID, f.namespace(), f.commandLine("list"))
}

// trialError rewrites Temporal's answer for a trial it does not know: the sweep does not exist either
// (as sweepError says), or it does and these are its trials (the first maxTrialsListed, and how many
// more).
func trialError(ctx context.Context, f *Factory, c client.Client, sweepID, trialID string, err error) error {
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return fmt.Errorf("trial %s: %w", workflows.TrialWorkflowID(sweepID, trialID), err)
	}
	if _, err := c.DescribeWorkflowExecution(ctx, sweepID, ""); errors.As(err, &nf) {
		return noSuchSweep(f, sweepID)
	} else if err != nil {
		return fmt.Errorf("sweep %s: %w", sweepID, err)
	}
	ids, err := startedTrials(ctx, c, sweepID)
	if err != nil {
		return fmt.Errorf("trial %s of sweep %s does not exist (its trials could not be listed: %v); %s lists them",
			trialID, sweepID, err, f.commandLine("results", sweepID))
	}
	return unknownTrial(f, sweepID, trialID, ids)
}

// unknownTrial says trialID is not one of the sweep's trials, listing them.
func unknownTrial(f *Factory, sweepID, trialID string, ids []string) error {
	if len(ids) == 0 {
		return fmt.Errorf("trial %s of sweep %s does not exist: the sweep has started no trial yet (%s follows it)",
			trialID, sweepID, f.commandLine("watch", sweepID))
	}
	return fmt.Errorf("trial %s of sweep %s does not exist; want one of its %d trials: %s",
		trialID, sweepID, len(ids), listTrialIDs(f, sweepID, ids))
}

// listTrialIDs names the trials, the first maxTrialsListed of them and how to see the rest.
func listTrialIDs(f *Factory, sweepID string, ids []string) string {
	if len(ids) <= maxTrialsListed {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more (%s lists them)", strings.Join(ids[:maxTrialsListed], ", "),
		len(ids)-maxTrialsListed, f.commandLine("results", sweepID))
}

// startedTrials lists the IDs of the trials of a sweep that Temporal has started, in trial order.
func startedTrials(ctx context.Context, c client.Client, sweepID string) ([]string, error) {
	query := fmt.Sprintf("%s = '%s' AND %s = 'trial'", workflows.AttrSweepID.GetName(),
		strings.ReplaceAll(sweepID, "'", "''"), workflows.AttrKind.GetName())
	prefix := workflows.TrialWorkflowID(sweepID, "")
	seen := map[string]bool{}
	var ids []string
	var token []byte
	for page := 0; page < 100; page++ {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, ex := range resp.Executions {
			id := strings.TrimPrefix(ex.GetExecution().GetWorkflowId(), prefix)
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	sortTrialIDs(ids)
	return ids, nil
}

// storedTrials lists the IDs of the trials of a sweep that have anything in the artifact store.
func storedTrials(ctx context.Context, store artifacts.Store, sweepID string) ([]string, error) {
	ids, err := sweepstore.New(store).StoredTrials(ctx, sweepID)
	if err != nil {
		return nil, err
	}
	sortTrialIDs(ids)
	return ids, nil
}

// sortTrialIDs orders trial IDs such as 0-s1, 2-s1, 10-s1 by their numbers, not as text.
func sortTrialIDs(ids []string) {
	sort.SliceStable(ids, func(i, j int) bool {
		a, b := trialIDKey(ids[i]), trialIDKey(ids[j])
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return lessPart(a[k], b[k])
			}
		}
		return len(a) < len(b)
	})
}

// trialIDKey splits a trial ID into runs of digits and of other characters.
func trialIDKey(id string) []string {
	var parts []string
	start := 0
	for i := 1; i <= len(id); i++ {
		if i == len(id) || isDigit(id[i]) != isDigit(id[i-1]) {
			parts = append(parts, id[start:i])
			start = i
		}
	}
	return parts
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func lessPart(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil && x != y {
		return x < y
	}
	return a < b
}
