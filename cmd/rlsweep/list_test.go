package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rlsweep/rlsweep/activities"
)

func TestListRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the flag, the value and what is allowed, all in one message
	}{
		{[]string{"list", "--limit", "0"}, `--limit: got 0, want an integer from 1 to 1000`},
		{[]string{"list", "--limit", "1001"}, `--limit: got 1001, want an integer from 1 to 1000`},
		{[]string{"list", "--state", "done"}, `--state: got "done", want one of "all", "running", "completed", "cancelled", "failed", "probe_failed", "terminated"`},
		// A name that could change the visibility query is refused before it reaches one.
		{[]string{"list", "--name", "x' OR RlsweepKind = 'trial"}, `--name: got "x' OR RlsweepKind = 'trial", want a sweep name`},
		{[]string{"list", "extra"}, `list`},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitInvalid || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitInvalid, tc.want)
		}
	}
}

func TestListQuery(t *testing.T) {
	base := "RlsweepKind = 'sweep' AND ExecutionStatus != 'ContinuedAsNew'"
	for _, tc := range []struct {
		opts ListOptions
		want string
	}{
		{ListOptions{State: "all"}, base},
		{ListOptions{State: "running", Name: "cartpole.v2"}, base + " AND RlsweepSweepName = 'cartpole.v2' AND ExecutionStatus = 'Running'"},
		{ListOptions{State: "terminated"}, base + " AND ExecutionStatus = 'Terminated'"},
		{ListOptions{State: "probe_failed"}, base + " AND RlsweepOutcome = 'probe_failed'"},
	} {
		if got := tc.opts.query(); got != tc.want {
			t.Errorf("%+v: query %q, want %q", tc.opts, got, tc.want)
		}
	}
}

func TestListingState(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	payload := func(v any) *commonpb.Payload {
		p, err := dc.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	submitted := start.Add(-time.Hour)
	exec := func(st enumspb.WorkflowExecutionStatus, outcome string, memo bool) *workflowpb.WorkflowExecutionInfo {
		ex := &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: "sweep/cp/abc"}, Status: st,
			StartTime: timestamppb.New(start),
			SearchAttributes: &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
				"RlsweepSweepName": payload("cp")}},
		}
		if outcome != "" {
			ex.SearchAttributes.IndexedFields["RlsweepOutcome"] = payload(outcome)
		}
		if st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			ex.CloseTime = timestamppb.New(start.Add(90 * time.Second))
		}
		if memo {
			ex.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{"trials": payload(12), "submitted": payload(submitted)}}
		}
		return ex
	}
	for _, tc := range []struct {
		ex      *workflowpb.WorkflowExecutionInfo
		state   string
		trials  int
		started time.Time
		ended   bool
	}{
		{exec(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "", true), "running", 12, submitted, false},
		{exec(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "completed", true), "completed", 12, submitted, true},
		{exec(enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, "cancelled", true), "cancelled", 12, submitted, true},
		{exec(enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "probe_failed", false), "probe_failed", 0, start, true},
		// Ended by hand or by a timeout, the sweep recorded no phase: Temporal's status says how it ended.
		{exec(enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, "", false), "terminated", 0, start, true},
		{exec(enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, "", false), "timed_out", 0, start, true},
	} {
		l := listing(tc.ex)
		if l.SweepID != "sweep/cp/abc" || l.Name != "cp" || l.State != tc.state || l.Trials != tc.trials ||
			!l.Started.Equal(tc.started) || (l.Ended != nil) != tc.ended {
			t.Errorf("%s: got %+v, want state %s, %d trials, started %s, ended %v", tc.ex.Status, l, tc.state, tc.trials, tc.started, tc.ended)
		}
	}
}

func TestWriteListing(t *testing.T) {
	var b bytes.Buffer
	if err := writeListing(&b, nil, time.Now()); err != nil || b.String() != "no sweeps\n" {
		t.Errorf("empty listing: %q, %v", b.String(), err)
	}
	b.Reset()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	end := now.Add(-time.Minute)
	ls := []SweepListing{
		{SweepID: "sweep/a/1", State: "running", Trials: 8, Started: now.Add(-90 * time.Second)},
		{SweepID: "sweep/b/2", State: "completed", Started: now.Add(-time.Hour), Ended: &end},
		{SweepID: "sweep/c/3", State: "completed", Trials: 26, Started: now.Add(-time.Hour), Ended: &end,
			Best: &ListedBest{Config: 7, Metric: "reward", Objective: 451.5833}},
	}
	if err := writeListing(&b, ls, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "SWEEP") || !strings.HasSuffix(lines[0], "BEST") {
		t.Fatalf("listing:\n%s", b.String())
	}
	// A running sweep's duration runs to now; an ended one's to its end. Unknown trial counts show "-".
	// The best configuration of an ended sweep, from its memo; "-" while running or when none scored.
	if f := strings.Fields(lines[1]); f[0] != "sweep/a/1" || f[1] != "running" || f[2] != "8" || f[len(f)-2] != "1m30s" || f[len(f)-1] != "-" {
		t.Errorf("running row %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[0] != "sweep/b/2" || f[2] != "-" || f[len(f)-2] != "59m0s" {
		t.Errorf("ended row %q", lines[2])
	}
	if !strings.HasSuffix(lines[3], "reward=451.6 (config 7)") || strings.Fields(lines[3])[2] != "26" {
		t.Errorf("ended row with its best %q", lines[3])
	}
}

// TestListGolden: list's table for a running sweep, a completed one with its best configuration, one
// whose every trial failed and a bayes sweep whose best was confirmed on fresh seeds, each read from
// its visibility record (search attributes and memo) as Temporal returns it.
func TestListGolden(t *testing.T) {
	local := time.Local
	time.Local = time.UTC // STARTED is printed in local time
	t.Cleanup(func() { time.Local = local })
	dc := converter.GetDefaultDataConverter()
	payload := func(v any) *commonpb.Payload {
		p, err := dc.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	exec := func(id string, st enumspb.WorkflowExecutionStatus, outcome string, submitted, took time.Duration, memo map[string]any) *workflowpb.WorkflowExecutionInfo {
		name := strings.Split(id, "/")[1]
		ex := &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: id}, Status: st, StartTime: timestamppb.New(now.Add(-submitted)),
			SearchAttributes: &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
				"RlsweepSweepName": payload(name)}},
			Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{"submitted": payload(now.Add(-submitted))}},
		}
		if outcome != "" {
			ex.SearchAttributes.IndexedFields["RlsweepOutcome"] = payload(outcome)
			ex.CloseTime = timestamppb.New(now.Add(-submitted + took))
		}
		for k, v := range memo {
			ex.Memo.Fields[k] = payload(v)
		}
		return ex
	}
	fresh := 401.4167
	var ls []SweepListing
	for _, ex := range []*workflowpb.WorkflowExecutionInfo{
		exec("sweep/cartpole-lr/ab12cd34", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "", 150*time.Second, 0,
			map[string]any{"trials": 18, "method": "grid"}),
		exec("sweep/hopper-asha/9f8e7d6c", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "completed", 3*time.Hour, 47*time.Minute+12*time.Second,
			map[string]any{"trials": 26, "method": "random", "best": activities.BestConfig{Config: 7, Metric: "reward", Goal: "maximize",
				Objective: 2451.5833, Seeds: 3, Trials: 3}}),
		exec("sweep/broken-env/0a1b2c3d", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "failed", 5*time.Hour, 38*time.Second,
			map[string]any{"trials": 6, "method": "grid"}),
		exec("sweep/lunar-bayes/5e6f7a8b", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "completed", 26*time.Hour, 2*time.Hour+5*time.Minute,
			map[string]any{"trials": 15, "method": "bayes", "best": activities.BestConfig{Config: 0, Metric: "reward", Goal: "maximize",
				Objective: 403, Seeds: 5, Trials: 5, Confirmed: true, Fresh: &fresh, FreshSeeds: 3}}),
	} {
		ls = append(ls, listing(ex))
	}
	var b bytes.Buffer
	if err := writeListing(&b, ls, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "list.golden", b.String())
}

// list reads the memo's best configuration, which the sweep writes as activities.BestConfig, into its
// own ListedBest: the JSON names agree.
func TestListedBestReadsTheMemo(t *testing.T) {
	fresh := 420.5
	b, err := json.Marshal(activities.BestConfig{Config: 3, Metric: "reward", Goal: "maximize", Objective: 451.25, Seeds: 3, Trials: 3,
		Confirmed: true, Fresh: &fresh, FreshSeeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got ListedBest
	if err := json.Unmarshal(b, &got); err != nil || got.Config != 3 || got.Metric != "reward" || got.Objective != 451.25 ||
		!got.Confirmed || got.Fresh == nil || *got.Fresh != 420.5 {
		t.Errorf("ListedBest from %s = %+v, %v", b, got, err)
	}
}
