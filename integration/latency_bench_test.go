//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	const conc, trialMS = 16, 1000
	trials := 160
	if n, err := strconv.Atoi(os.Getenv("RLSWEEP_BENCH_TRIALS")); err == nil && n > conc {
		trials = n
	}
	for i := 0; i < b.N; i++ {
		e := newEnv(b)
		e.startWorker("a", "--slots", fmt.Sprint(conc))
		spec := benchSpec(e, "cycle", trials, conc, trialMS, 1, filepath.Join(e.dir, "timeline"))
		sweepID := e.submit(spec)
		ctx := context.Background()
		if err := e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil); err != nil {
			b.Fatal(err)
		}
		steps, gaps := trialCycles(b, e, sweepID, conc)
		for _, s := range []struct{ metric, step string }{
			{"first-wft-wait-ms", "WorkflowTaskScheduled>WorkflowTaskStarted#1"},
			{"first-wft-run-ms", "WorkflowTaskStarted>WorkflowTaskCompleted#1"},
			{"activity-wait-ms", "ActivityTaskScheduled>ActivityTaskStarted#1"},
			{"activity-run-ms", "ActivityTaskStarted>ActivityTaskCompleted#1"},
			{"last-wft-wait-ms", "WorkflowTaskScheduled>WorkflowTaskStarted#2"},
			{"last-wft-run-ms", "WorkflowTaskStarted>WorkflowTaskCompleted#2"},
		} {
			b.ReportMetric(median(steps[s.step]), s.metric)
			b.ReportMetric(mean(steps[s.step]), "mean-"+s.metric)
		}
		sweepSteps := sweepCycles(b, e, sweepID)
		for _, s := range []struct{ metric, step string }{
			{"sweep-wft-wait-ms", "WorkflowTaskScheduled>WorkflowTaskStarted"},
			{"sweep-wft-run-ms", "WorkflowTaskStarted>WorkflowTaskCompleted"},
		} {
			b.ReportMetric(mean(sweepSteps[s.step]), "mean-"+s.metric)
		}
		b.ReportMetric(float64(len(sweepSteps["WorkflowTaskStarted>WorkflowTaskCompleted"])), "sweep-wfts")
		b.ReportMetric(median(gaps), "refill-ms")
		b.ReportMetric(mean(gaps), "mean-refill-ms")
	}
}

// trialCycles returns, for every trial of the sweep, the time between consecutive events of its
// history by step ("A>B#n": the n-th such pair), and each trial's gap from its end to the next start.
func trialCycles(b *testing.B, e *env, sweepID string, conc int) (map[string][]float64, []float64) {
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
			addEventGaps(b, e, ex.Execution.WorkflowId, ex.Execution.RunId, steps, true)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	// The sweep keeps conc trials running: the k-th trial to end frees the slot the (k+conc)-th trial
	// to start takes, so the refill gap is between those two.
	starts, ends := make([]time.Time, len(spans)), make([]time.Time, len(spans))
	for i, sp := range spans {
		starts[i], ends[i] = sp.start, sp.end
	}
	slices.SortFunc(starts, time.Time.Compare)
	slices.SortFunc(ends, time.Time.Compare)
	var gaps []float64
	for k := 0; k+conc < len(starts); k++ {
		gaps = append(gaps, float64(starts[k+conc].Sub(ends[k]).Microseconds())/1000)
	}
	return steps, gaps
}

// sweepCycles returns the time between consecutive events of every run of the sweep's own workflow,
// by pair of event types ("A>B").
func sweepCycles(b *testing.B, e *env, sweepID string) map[string][]float64 {
	ctx := context.Background()
	steps := map[string][]float64{}
	resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowId = %q", sweepID)})
	if err != nil {
		b.Fatal(err)
	}
	for _, ex := range resp.Executions {
		addEventGaps(b, e, ex.Execution.WorkflowId, ex.Execution.RunId, steps, false)
	}
	return steps
}

// addEventGaps adds to steps the milliseconds between consecutive events of one workflow run's
// history, keyed "A>B" by their event types; numbered keys "A>B#n" for the n-th such pair in the run.
func addEventGaps(b *testing.B, e *env, workflowID, runID string, steps map[string][]float64, numbered bool) {
	it := e.client.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
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
			if numbered {
				seen[k]++
				k = fmt.Sprintf("%s#%d", k, seen[k])
			}
			steps[k] = append(steps[k], float64(at.Sub(prevTime).Microseconds())/1000)
		}
		prevName, prevTime = name, at
	}
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
