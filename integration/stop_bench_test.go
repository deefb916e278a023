//go:build integration

package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// BenchmarkStopLatency measures what a running trial costs the Temporal server in heartbeats, and how
// fast each kind of stop reaches its trainer, on a dev server with one worker (--slots 16), the
// scripted trainer and the default heartbeat timeout and grace period:
//
//   - beats-per-trial-hour: the server's RecordActivityTaskHeartbeat requests (its frontend's own
//     metrics) during a sweep of 16 trials that each train 180 s, per hour of training (the trainers'
//     start to exit);
//   - cancel: `rlsweep cancel`'s request (the client's CancelWorkflow on the sweep) to each of 16
//     running trainers' SIGTERM;
//   - prune: the sweep's stop reaching the trial (the SignalStopTrial event in the trial's history) to
//     its trainer's SIGTERM, for the trials asha stops in stop mode;
//   - diagnostics: the NaN record's append (its wall_ns) to its trainer's SIGTERM.
//
// SIGTERM's arrival is the trainer's own "term" line in its timeline. RLSWEEP_BENCH_ROUNDS (default 2)
// repeats the three stops. To compare two builds, run one test binary with RLSWEEP_IT_BINDIR naming
// each build's binaries, in turns (docs/BENCHMARKS.md, "Heartbeats and stop latency").
func BenchmarkStopLatency(b *testing.B) {
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("RLSWEEP_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for i := 0; i < b.N; i++ {
		port := freePort(b)
		e := newEnvArgs(b, "--metrics-port", strconv.Itoa(port))
		metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
		e.startWorker("a", "--slots", "16")
		b.ReportMetric(heartbeatsPerTrialHour(b, e, metricsURL), "beats-per-trial-hour")
		var cancel, prune, diag []float64
		for r := 0; r < rounds; r++ {
			cancel = append(cancel, cancelLatencies(b, e, r)...)
			prune = append(prune, pruneLatencies(b, e, r)...)
			diag = append(diag, diagnosticsLatencies(b, e, r)...)
		}
		for _, s := range []struct {
			name string
			ms   []float64
		}{{"cancel", cancel}, {"prune", prune}, {"diagnostics", diag}} {
			sort.Float64s(s.ms)
			b.ReportMetric(float64(len(s.ms)), s.name+"-n")
			b.ReportMetric(quantile(s.ms, 0.5), s.name+"-p50-ms")
			b.ReportMetric(quantile(s.ms, 0.99), s.name+"-p99-ms")
			b.ReportMetric(s.ms[len(s.ms)-1], s.name+"-max-ms")
		}
	}
}

// quantile of sorted values, nearest rank.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// heartbeatsPerTrialHour runs 16 trials of 180 s at once and divides the heartbeats the server
// recorded meanwhile by the trainers' hours.
func heartbeatsPerTrialHour(b *testing.B, e *env, metricsURL string) float64 {
	timeline := filepath.Join(e.dir, "beats.timeline")
	spec := seedsSpec(e, "beats", 1000, "  sleep_ms: {value: 180000}\n", "diagnostics: {enabled: false}\n", timeline)
	before := heartbeatRequests(b, metricsURL)
	sweepID := e.submit(spec)
	ctx := context.Background()
	if err := e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil); err != nil {
		b.Fatal(err)
	}
	beats := heartbeatRequests(b, metricsURL) - before
	marks := trialMarks(b, timeline)
	var hours float64
	for trial, start := range marks["start"] {
		end, ok := marks["exit"][trial]
		if !ok {
			b.Fatalf("trial %s started and never exited", trial)
		}
		hours += end.Sub(start).Hours()
	}
	b.Logf("%.0f heartbeats over %.4f trial-hours (%d trials)", beats, hours, len(marks["start"]))
	return beats / hours
}

// heartbeatRequests is the server's count of RecordActivityTaskHeartbeat requests so far (its
// frontend's).
func heartbeatRequests(b *testing.B, url string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatalf("metrics %s: %v", url, err)
	}
	defer resp.Body.Close()
	var n float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// The frontend's count: the history service counts each request again.
		if !strings.HasPrefix(line, "service_requests{") || !strings.Contains(line, `operation="RecordActivityTaskHeartbeat"`) ||
			!strings.Contains(line, `service_name="frontend"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			n += v
			found = true
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if !found {
		// The server counts a series once it has seen a request: none yet is 0.
		return 0
	}
	return n
}

// cancelLatencies starts 16 trials that train for minutes, cancels the sweep once every trainer runs,
// and returns each trainer's latency from the cancel request to its SIGTERM, in ms.
func cancelLatencies(b *testing.B, e *env, round int) []float64 {
	timeline := filepath.Join(e.dir, fmt.Sprintf("cancel-%d.timeline", round))
	spec := seedsSpec(e, fmt.Sprintf("cancel-%d", round), 100000, "  sleep_ms: {value: 1000}\n", "diagnostics: {enabled: false}\n", timeline)
	sweepID := e.submit(spec)
	waitFor(b, 2*time.Minute, "16 trainers to run", func() bool { return len(trialMarks(b, timeline)["start"]) == 16 })
	time.Sleep(3 * time.Second) // past every trainer's start: the segment attempts have announced themselves
	ctx := context.Background()
	t0 := time.Now()
	if err := e.client.CancelWorkflow(ctx, sweepID, ""); err != nil {
		b.Fatal(err)
	}
	waitFor(b, 2*time.Minute, "16 trainers to get SIGTERM", func() bool { return len(trialMarks(b, timeline)["term"]) == 16 })
	var ms []float64
	for _, at := range trialMarks(b, timeline)["term"] {
		ms = append(ms, float64(at.Sub(t0).Microseconds())/1000)
	}
	_ = e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil)
	return ms
}

// pruneLatencies runs 16 configurations under asha in stop mode, and returns, for each trial the sweep
// stops while its trainer runs, the latency from the stop signal's arrival in the trial's history to
// its trainer's SIGTERM, in ms. The sweep is cancelled after 30 s.
func pruneLatencies(b *testing.B, e *env, round int) []float64 {
	timeline := filepath.Join(e.dir, fmt.Sprintf("prune-%d.timeline", round))
	qualities := make([]string, 16)
	for i := range qualities {
		qualities[i] = strconv.Itoa((i*7)%16 + 1)
	}
	spec := e.spec(fmt.Sprintf("prune-%d", round), fmt.Sprintf(`
  total_steps: 1000000
metric: {name: reward, goal: maximize}
method: grid
parameters:
  quality: {values: [%s]}
  sleep_ms: {value: 100}
  step_size: {value: 1000}
  checkpoint_every: {value: 0}
  timeline: {value: %q}
early_terminate: {type: asha, min_steps: 5000, eta: 2, mode: stop}
order: listed
probes: {enabled: false}
diagnostics: {enabled: false}
concurrency: 16
`, strings.Join(qualities, ", "), timeline))
	sweepID := e.submit(spec)
	time.Sleep(30 * time.Second)
	ctx := context.Background()
	cancelled := time.Now()
	if err := e.client.CancelWorkflow(ctx, sweepID, ""); err != nil {
		b.Fatal(err)
	}
	_ = e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil)
	terms := trialMarks(b, timeline)["term"]
	var ms []float64
	for trial, at := range terms {
		if !at.Before(cancelled) {
			continue // stopped by the cancel
		}
		signalled, ok := stopSignalled(b, e, workflows.TrialWorkflowID(sweepID, trial))
		if !ok {
			b.Fatalf("trial %s got SIGTERM before the cancel without a stop signal", trial)
		}
		ms = append(ms, float64(at.Sub(signalled).Microseconds())/1000)
	}
	if len(ms) == 0 {
		b.Fatalf("sweep %s: no trial was stopped while its trainer ran", sweepID)
	}
	return ms
}

// stopSignalled is when the trial's history took the sweep's stop (SignalStopTrial).
func stopSignalled(b *testing.B, e *env, workflowID string) (time.Time, bool) {
	it := e.client.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalStopTrial {
			return ev.GetEventTime().AsTime(), true
		}
	}
	return time.Time{}, false
}

// diagnosticsLatencies runs 16 trials that write a NaN value loss at step 5,000 (a record every
// 100 ms) and returns each one's latency from the NaN record's append to its trainer's SIGTERM, in ms.
func diagnosticsLatencies(b *testing.B, e *env, round int) []float64 {
	timeline := filepath.Join(e.dir, fmt.Sprintf("diag-%d.timeline", round))
	spec := seedsSpec(e, fmt.Sprintf("diag-%d", round), 100000,
		"  fault: {value: 1}\n  fault_at: {value: 5000}\n  sleep_ms: {value: 100}\n", "", timeline)
	sweepID := e.submit(spec)
	ctx := context.Background()
	if err := e.client.GetWorkflow(ctx, sweepID, "").Get(ctx, nil); err != nil {
		b.Fatal(err)
	}
	terms := trialMarks(b, timeline)["term"]
	var ms []float64
	for s := 1; s <= 16; s++ {
		trial := fmt.Sprintf("0-s%d", s)
		var d sweepstore.Divergence
		e.readJSON(artifacts.DivergenceKey(sweepID, trial), &d)
		at, ok := terms[trial]
		if !ok {
			b.Fatalf("trial %s diverged and its trainer never got SIGTERM", trial)
		}
		ms = append(ms, float64(at.Sub(appendedAt(b, d)).Microseconds())/1000)
	}
	return ms
}

// seedsSpec is a sweep of the scripted trainer over seeds 1–16 at concurrency 16, a record of 1,000
// steps at a time, no checkpoint, no probe: params are more of its parameters' lines, rest more of the
// spec's.
func seedsSpec(e *env, name string, total int, params, rest, timeline string) string {
	return e.spec(name, fmt.Sprintf(`
  total_steps: %d
seeds: [%s]
parameters:
%s  step_size: {value: 1000}
  checkpoint_every: {value: 0}
  timeline: {value: %q}
probes: {enabled: false}
%sconcurrency: 16
`, total, seedList(16), params, timeline, rest))
}

func seedList(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ", ")
}

// trialMarks is a scripted trainer's timeline by event ("start", "term", "exit"): each trial's first time.
func trialMarks(t testing.TB, path string) map[string]map[string]time.Time {
	out := map[string]map[string]time.Time{}
	for _, ev := range readTimeline(t, path) {
		if out[ev.event] == nil {
			out[ev.event] = map[string]time.Time{}
		}
		if _, seen := out[ev.event][ev.trial]; !seen {
			out[ev.event][ev.trial] = ev.at
		}
	}
	return out
}
