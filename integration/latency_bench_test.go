//go:build integration

package integration

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/rlsweep/rlsweep/workflows"
)

// BenchmarkTrialCycle breaks one trial cycle down into its steps, from the trials' own histories: 160
// trials of 1 s at concurrency 16 on a real dev server with one worker. It reports the median of each
// step in milliseconds: the first workflow task (waiting for a poller, running), the activity waiting
// for a poller, what TrainSegment adds to the trainer's second, the closing workflow task, and the gap
// between a trial's end and the next trial's start (the sweep's part). Run with -benchtime 1x; see
// docs/BENCHMARKS.md.
func BenchmarkTrialCycle(b *testing.B) {
	const trials, conc, trialMS = 160, 16, 1000
	for i := 0; i < b.N; i++ {
		e := newEnv(b)
		e.startWorker("a", "--slots", fmt.Sprint(conc))
		spec := benchSpec(e, "cycle", trials, conc, trialMS)
		out, code := e.cli("submit", spec)
		if code != 0 {
			b.Fatalf("submit exited %d:\n%s", code, out)
		}
		sweepID := sweepIDFrom(e.t, out)
		ctx := context.Background()
		if err := e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil); err != nil {
			b.Fatal(err)
		}
		steps, gaps := trialCycles(b, e, sweepID)
		for _, s := range []struct{ metric, step string }{
			{"first-wft-wait-ms", "WorkflowTaskScheduled>WorkflowTaskStarted#1"},
			{"first-wft-run-ms", "WorkflowTaskStarted>WorkflowTaskCompleted#1"},
			{"activity-wait-ms", "ActivityTaskScheduled>ActivityTaskStarted#1"},
			{"activity-run-ms", "ActivityTaskStarted>ActivityTaskCompleted#1"},
			{"last-wft-wait-ms", "WorkflowTaskScheduled>WorkflowTaskStarted#2"},
			{"last-wft-run-ms", "WorkflowTaskStarted>WorkflowTaskCompleted#2"},
		} {
			b.ReportMetric(median(steps[s.step]), s.metric)
		}
		b.ReportMetric(median(gaps), "end-to-next-start-ms")
	}
}

// trialCycles returns, for every trial of the sweep, the time between consecutive events of its
// history by step ("A>B#n": the n-th such pair), and each trial's gap from its end to the next start.
func trialCycles(b *testing.B, e *env, sweepID string) (map[string][]float64, []float64) {
	ctx := context.Background()
	steps := map[string][]float64{}
	type span struct{ start, end time.Time }
	var spans []span
	var token []byte
	for {
		resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("%s = %q AND %s = 'trial'", workflows.AttrSweepID.GetName(), sweepID, workflows.AttrKind.GetName()),
			NextPageToken: token})
		if err != nil {
			b.Fatal(err)
		}
		for _, ex := range resp.Executions {
			spans = append(spans, span{ex.StartTime.AsTime(), ex.CloseTime.AsTime()})
			it := e.client.GetWorkflowHistory(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			var prevName string
			var prevTime time.Time
			seen := map[string]int{}
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					b.Fatal(err)
				}
				name, at := ev.EventType.String(), ev.EventTime.AsTime()
				if prevName != "" {
					k := prevName + ">" + name
					seen[k]++
					k = fmt.Sprintf("%s#%d", k, seen[k])
					steps[k] = append(steps[k], float64(at.Sub(prevTime).Microseconds())/1000)
				}
				prevName, prevTime = name, at
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	var gaps []float64
	for _, a := range spans {
		next := time.Duration(-1)
		for _, c := range spans {
			if d := c.start.Sub(a.end); d >= 0 && (next < 0 || d < next) {
				next = d
			}
		}
		if next >= 0 {
			gaps = append(gaps, float64(next.Microseconds())/1000)
		}
	}
	return steps, gaps
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
