//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// docSweepID and docSweepName are the example sweep in docs/webui.md's filters.
const (
	docSweepID   = "sweep/cartpole/1e114cb9"
	docSweepName = "cartpole"
)

// documentedFilters reads the "Filters to type" list of docs/webui.md: each "- label: `query`" line.
func documentedFilters(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../docs/webui.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?m)^- ([^:`]+): `([^`]+)`$")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// listIDs runs query through the client's list API, as the Web UI does, and returns the workflow IDs.
func listIDs(t *testing.T, e *env, query string) ([]string, error) {
	t.Helper()
	var ids []string
	var token []byte
	for {
		resp, err := e.client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, ex := range resp.Executions {
			ids = append(ids, ex.Execution.WorkflowId)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// checkWebUIFilters runs every documented filter, with the example sweep replaced by the finished sweep
// res, and compares what Temporal lists with what results.json says each filter should find.
func checkWebUIFilters(t *testing.T, e *env, res results.SweepResults, since time.Time) {
	t.Helper()
	filters := documentedFilters(t)
	trialIDs := func(keep func(results.TrialSummary) bool) []string {
		var ids []string
		for _, tr := range res.Trials {
			if keep(tr) {
				ids = append(ids, workflows.TrialWorkflowID(res.SweepID, tr.TrialID))
			}
		}
		sort.Strings(ids)
		return ids
	}
	var objs []float64
	for _, tr := range res.Trials {
		if tr.Outcome == results.OutcomeCompleted && tr.Objective != nil {
			objs = append(objs, *tr.Objective)
		}
	}
	sort.Float64s(objs)
	threshold := objs[len(objs)/2]
	all := append(trialIDs(func(results.TrialSummary) bool { return true }), res.SweepID)
	sort.Strings(all)
	tests := []struct {
		label   string
		replace []string // old, new pairs applied to the documented query after the sweep ID and name
		want    []string
	}{
		{"all of a sweep (the sweep and its trials)", nil, all},
		{"diverged trials of a sweep", nil, trialIDs(func(tr results.TrialSummary) bool { return tr.Outcome == results.OutcomeDiverged })},
		{"trials stopped by one rule", nil, trialIDs(func(tr results.TrialSummary) bool { return tr.StopRule == "non_finite" })},
		{"every NaN stop since a date, across sweeps", []string{"2026-11-14T00:00:00Z", since.UTC().Format(time.RFC3339)},
			trialIDs(func(tr results.TrialSummary) bool { return tr.StopRule == "non_finite" })},
		{"completed trials above a score", []string{"> 400", "> " + strconv.FormatFloat(threshold, 'g', -1, 64)},
			trialIDs(func(tr results.TrialSummary) bool {
				return tr.Outcome == results.OutcomeCompleted && tr.Objective != nil && *tr.Objective > threshold
			})},
		{"trials with one parameter value", []string{`"lr=0.001"`, `"fault=1"`},
			trialIDs(func(tr results.TrialSummary) bool { return fmt.Sprint(tr.Params["fault"]) == "1" })},
		{"trials still running", nil, nil},
		{"every sweep of a name", nil, []string{res.SweepID}},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			q, ok := filters[tt.label]
			if !ok {
				t.Fatalf("docs/webui.md has no filter %q (it has %v)", tt.label, filters)
			}
			if !strings.Contains(q, docSweepID) && !strings.Contains(q, `"`+docSweepName+`"`) && tt.replace == nil {
				t.Fatalf("documented filter %q names neither the example sweep nor its name", q)
			}
			q = strings.ReplaceAll(q, docSweepID, res.SweepID)
			q = strings.ReplaceAll(q, `"`+docSweepName+`"`, strconv.Quote(res.Name))
			for i := 0; i+1 < len(tt.replace); i += 2 {
				if !strings.Contains(q, tt.replace[i]) {
					t.Fatalf("documented filter %q lacks %q", q, tt.replace[i])
				}
				q = strings.ReplaceAll(q, tt.replace[i], tt.replace[i+1])
			}
			// Visibility is eventually consistent: give it a few seconds to agree, then compare.
			var got []string
			var err error
			deadline := time.Now().Add(15 * time.Second)
			for {
				got, err = listIDs(t, e, q)
				if (err == nil && slices.Equal(got, tt.want)) || time.Now().After(deadline) {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("ListWorkflow(%q): %v", q, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ListWorkflow(%q) = %d workflows %v,\nwant %d %v", q, len(got), got, len(tt.want), tt.want)
			}
			t.Logf("%s: %q → %d workflows", tt.label, q, len(got))
		})
	}
	if n := len(trialIDs(func(tr results.TrialSummary) bool { return tr.Outcome == results.OutcomeDiverged })); n == 0 {
		t.Errorf("the sweep has no diverged trial: the diverged-trials filter was not put to the test")
	}
}
