//go:build topology

package topology

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/workflows"
)

// TestFleetBenchmark runs the fleet benchmark of docs/BENCHMARKS.md ("Fleet on the production
// topology"): a sweep of N trials of the scripted trainer, each sleeping trial_ms and writing one record
// (one segment), at concurrency N, on this topology as it is deployed: the Temporal server on PostgreSQL,
// MinIO as the artifact store, a control worker on a host of its own and H trial workers each on a host
// of its own (network namespaces joined by the bridge). While that sweep runs, it measures the stops
// under its load, in rounds: a cancel (the client's CancelWorkflow on a sweep of 16 running trials, to
// each trainer's SIGTERM) and prunes (asha in stop mode over 16 configurations: the stop signal's arrival
// in a trial's history to its trainer's SIGTERM), each on sweeps of their own beside the load. It reads
// the server's Prometheus metrics before and after (the `action` counter the server keeps by action
// type, what Temporal Cloud bills, and the heartbeats among them), the CPU of the server, PostgreSQL and
// the workers, the memory of the workers and trainers, PostgreSQL's growth, and checks that results.json
// holds every trial of the load once, completed. It runs only with RLSWEEP_FLEET_BENCH=1:
//
//	RLSWEEP_FLEET_BENCH=1 make test-topology TOPOLOGY_RUN='^TestFleetBenchmark$'
//
// RLSWEEP_BENCH_TRIALS (2000), RLSWEEP_BENCH_TRIAL_MS (60000), RLSWEEP_BENCH_HOSTS (4 trial hosts) and
// RLSWEEP_BENCH_ROUNDS (2 rounds of stops) set the case; RLSWEEP_BENCH_OUT names a file the report is
// also written to.
func TestFleetBenchmark(t *testing.T) {
	if os.Getenv("RLSWEEP_FLEET_BENCH") != "1" {
		t.Skip("the fleet benchmark runs only with RLSWEEP_FLEET_BENCH=1")
	}
	trials, ms := envInt(t, "RLSWEEP_BENCH_TRIALS", 2000), envInt(t, "RLSWEEP_BENCH_TRIAL_MS", 60000)
	nHosts, rounds := envInt(t, "RLSWEEP_BENCH_HOSTS", 4), envInt(t, "RLSWEEP_BENCH_ROUNDS", 2)
	dir := filepath.Join(stateDir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := hostIP + ":" + tempPort
	metricsURL := "http://" + hostIP + ":" + metricPort + "/metrics"

	// The hosts: the control worker as the topology plans it, and nHosts trial workers, each with room
	// for its share of the load and for the stop sweeps' 16 trials beside it.
	control := startHost(t, 1, "rlsweep-control")
	slots := (trials+nHosts-1)/nHosts + 16
	gpu, ok := planned["rlsweep-gpu"]
	if !ok {
		t.Fatal("scripts/topology.sh plan has no service rlsweep-gpu")
	}
	pids := []int{control.cmd.Process.Pid}
	for i := 1; i <= nHosts; i++ {
		name := fmt.Sprintf("fleet-%d", i)
		p := service{env: gpu.env, argv: withFlag(withFlag(gpu.argv, "--slots", strconv.Itoa(slots)),
			"--work-dir", filepath.Join(dir, "work", name))}
		pids = append(pids, startHostAs(t, 10+i, name, p).cmd.Process.Pid)
	}
	c := dial(t)

	before := scrape(t, metricsURL)
	serverCPU0, dbCPU0, dbBytes0 := cpuOf(listener(addr)), postgresCPU(), postgresBytes()
	var workerCPU0 time.Duration
	for _, p := range pids {
		workerCPU0 += cpuOf(p)
	}
	mem := sampleTrainers(pids...)

	loadTimeline := filepath.Join(dir, "load.timeline")
	start := time.Now()
	loadID := submitSpec(t, dir, "fleet-load", fmt.Sprintf(`
  total_steps: 1000
seeds: [%s]
parameters:
  sleep_ms: {value: %d}
  step_size: {value: 1000}
  checkpoint_every: {value: 0}
  timeline: {value: %q}
probes: {enabled: false}
diagnostics: {enabled: false}
concurrency: %d
`, seedRange(trials), ms, loadTimeline, trials))
	loadRuns := func() int {
		n := 0
		for _, p := range trainerProcs() {
			if p.sweep == loadID {
				n++
			}
		}
		return n
	}
	// The stops start once the load is at its height: its first trials have ended (a trial's length
	// after its start), so trials start as fast as others end.
	waitFor(t, 10*time.Minute, "the load's first trials to end", func() bool { return len(fleetMarks(t, loadTimeline)["exit"]) >= 10 })

	var cancels, cancelArrived, prunes, decided []float64
	var timelines = []string{loadTimeline}
	var under []string
	for r := 1; r <= rounds; r++ {
		tl := filepath.Join(dir, fmt.Sprintf("cancel-%d.timeline", r))
		timelines = append(timelines, tl)
		ms, arrived, load := fleetCancel(t, c, dir, r, tl, loadRuns)
		cancels, cancelArrived = append(cancels, ms...), append(cancelArrived, arrived...)
		under = append(under, fmt.Sprintf("cancel %d: %d load trainers", r, load))
		tl = filepath.Join(dir, fmt.Sprintf("prune-%d.timeline", r))
		timelines = append(timelines, tl)
		ms, fromDecision, load := fleetPrune(t, c, dir, r, tl, loadRuns)
		prunes, decided = append(prunes, ms...), append(decided, fromDecision...)
		under = append(under, fmt.Sprintf("prunes %d: %d load trainers", r, load))
	}
	stopsDone := time.Since(start)

	var res workflows.SweepResult
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := c.GetWorkflow(ctx, loadID, "").Get(ctx, &res); err != nil {
		t.Fatalf("load sweep %s: %v", loadID, err)
	}
	wall := time.Since(start)
	serverCPU, dbCPU, dbBytes := cpuOf(listener(addr))-serverCPU0, postgresCPU()-dbCPU0, postgresBytes()-dbBytes0
	var workerCPU time.Duration
	for _, p := range pids {
		workerCPU += cpuOf(p)
	}
	workerCPU -= workerCPU0
	peak, workerMB, trainerMB := mem.stop()
	after := scrape(t, metricsURL)
	if res.Counts["completed"] != trials {
		t.Errorf("load sweep finished with %v, want %d completed", res.Counts, trials)
	}
	eachOnce(t, "load", storedResults(t, topologyStore(t), loadID), trials)

	// Trainer-hours: every trainer of the load and of the stop sweeps, its start to its exit (or its
	// SIGTERM, for one that wrote no exit).
	var hours float64
	started := 0
	for _, tl := range timelines {
		marks := fleetMarks(t, tl)
		for trial, s := range marks["start"] {
			started++
			end, ok := marks["exit"][trial]
			if term, ok2 := marks["term"][trial]; ok2 && (!ok || term.Before(end)) {
				end, ok = term, true
			}
			if ok {
				hours += end.Sub(s).Hours()
			}
		}
	}
	actions := delta(before, after, "action", func(series string) string {
		if label(series, "namespace") != "default" {
			return ""
		}
		return label(series, "action_type")
	})
	var total float64
	var types []string
	for k, s := range actions {
		total += s.count
		types = append(types, k)
	}
	sort.Slice(types, func(i, j int) bool { return actions[types[i]].count > actions[types[j]].count })
	heartbeats := actions["grpc_RecordActivityTaskHeartbeat"].count

	var report bytes.Buffer
	n := float64(started)
	fmt.Fprintf(&report, "fleet benchmark: %d trials × %d ms at concurrency %d; a control host and %d trial hosts (--slots %d each); "+
		"PostgreSQL, MinIO; %d rounds of stops under the load\n\n", trials, ms, trials, nHosts, slots, rounds)
	fmt.Fprintf(&report, "| | |\n|---|---|\n")
	fmt.Fprintf(&report, "| load trials completed, each once in results.json | %d of %d |\n", res.Counts["completed"], trials)
	fmt.Fprintf(&report, "| wall (ideal %.0f s) | %.1f s (the stops done at %.0f s) |\n", float64(ms)/1000, wall.Seconds(), stopsDone.Seconds())
	fmt.Fprintf(&report, "| most trainers at once (sampled every 5 s) | %d |\n", peak)
	fmt.Fprintf(&report, "| cancel: trainer's SIGTERM after the request, p50 / p99 / max (n) | %s |\n", latencies(cancels))
	fmt.Fprintf(&report, "| cancel: trainer's SIGTERM after the cancel's arrival in the trial, p50 / p99 / max (n) | %s |\n", latencies(cancelArrived))
	fmt.Fprintf(&report, "| prune: trainer's SIGTERM after the sweep's decision (its stop signal sent), p50 / p99 / max (n) | %s |\n", latencies(decided))
	fmt.Fprintf(&report, "| prune: trainer's SIGTERM after the stop signal's arrival in the trial, p50 / p99 / max (n) | %s |\n", latencies(prunes))
	fmt.Fprintf(&report, "| load trainers running at each stop | %s |\n", strings.Join(under, "; "))
	fmt.Fprintf(&report, "| Temporal actions (server's `action` counter), all sweeps | %.0f over %d trainers, %.2f trainer-hours |\n", total, started, hours)
	fmt.Fprintf(&report, "| actions per trial / per trainer-hour | %.1f / %.0f |\n", total/n, total/hours)
	fmt.Fprintf(&report, "| heartbeats per trainer-hour | %.1f |\n", heartbeats/hours)
	fmt.Fprintf(&report, "| CPU per trial: server + PostgreSQL / workers (all hosts) | %.1f + %.1f / %.1f ms |\n",
		serverCPU.Seconds()*1000/n, dbCPU.Seconds()*1000/n, workerCPU.Seconds()*1000/n)
	fmt.Fprintf(&report, "| PostgreSQL tables and indexes per 1,000 trials | %.1f MB |\n", float64(dbBytes)/1e6*1000/n)
	fmt.Fprintf(&report, "| memory at the most trainers: workers (all hosts) / per trainer with its supervisor | %.0f MB (%.2f MB per trainer) / %.1f MB |\n",
		workerMB, workerMB/float64(max(peak, 1)), trainerMB)
	// Where a stop waits under the load: the server's queues.
	fmt.Fprintf(&report, "\nthe server's queues over the run, mean wait (task_latency_queue by operation; task_schedule_to_start_latency by task type)\n\n| queue | tasks per trial | mean wait |\n|---|---|---|\n")
	queues := delta(before, after, "task_latency_queue", func(series string) string {
		if op := label(series, "operation"); strings.HasPrefix(op, "Transfer") {
			return op
		}
		return ""
	})
	for tt, st := range delta(before, after, "task_schedule_to_start_latency", func(series string) string {
		if label(series, "namespace") != "default" {
			return ""
		}
		return "schedule-to-start: " + strings.ToLower(label(series, "task_type")) + " task"
	}) {
		queues[tt] = st
	}
	var qs []string
	for k := range queues {
		qs = append(qs, k)
	}
	sort.Strings(qs)
	for _, k := range qs {
		if st := queues[k]; st.count > 0 {
			fmt.Fprintf(&report, "| %s | %.2f | %.0f ms |\n", k, st.count/n, st.sum/st.count*1000)
		}
	}
	fmt.Fprintf(&report, "\nactions by type, per trial of all %d:\n\n| action type | per trial |\n|---|---|\n", started)
	for _, k := range types {
		fmt.Fprintf(&report, "| %s | %.2f |\n", k, actions[k].count/n)
	}
	t.Logf("\n%s", report.String())
	if out := os.Getenv("RLSWEEP_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, report.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// withFlag returns argv with flag's value set to v: replaced where argv has it, appended otherwise.
func withFlag(argv []string, flag, v string) []string {
	out := append([]string(nil), argv...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == flag {
			out[i+1] = v
			return out
		}
	}
	return append(out, flag, v)
}

// submitSpec writes a spec of the scripted trainer (body: what follows its trainer's command) and
// submits it with the CLI (submitFile).
func submitSpec(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name+".yaml")
	spec := fmt.Sprintf("name: %s\ntrainer:\n  command: [%q]%s", name, trainerBin, body)
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return submitFile(t, p)
}

// fleetCancel starts 16 trials that train for minutes beside the load, cancels their sweep once every
// trainer runs and has announced itself, and returns each trainer's latency to its SIGTERM from the
// cancel request and from the cancel's arrival in its trial's history, in ms, and the load's trainers
// running at the cancel.
func fleetCancel(t *testing.T, c client.Client, dir string, round int, timeline string, load func() int) (fromRequest, fromArrival []float64, running int) {
	t.Helper()
	id := submitSpec(t, dir, fmt.Sprintf("fleet-cancel-%d", round), fmt.Sprintf(`
  total_steps: 200000
seeds: [%s]
parameters:
  sleep_ms: {value: 1000}
  step_size: {value: 1000}
  checkpoint_every: {value: 0}
  timeline: {value: %q}
probes: {enabled: false}
diagnostics: {enabled: false}
concurrency: 16
`, seedRange(16), timeline))
	waitFor(t, 5*time.Minute, "the cancel sweep's 16 trainers to run", func() bool { return len(fleetMarks(t, timeline)["start"]) == 16 })
	time.Sleep(3 * time.Second) // past every trainer's start: each segment attempt has announced itself
	running = load()
	t0 := time.Now()
	if err := c.CancelWorkflow(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "the cancel sweep's 16 trainers to get SIGTERM", func() bool { return len(fleetMarks(t, timeline)["term"]) == 16 })
	_ = c.GetWorkflow(context.Background(), id, "").Get(context.Background(), nil)
	for trial, at := range fleetMarks(t, timeline)["term"] {
		fromRequest = append(fromRequest, msBetween(t0, at))
		if arrived, ok := fleetEvent(t, c, workflows.TrialWorkflowID(id, trial), func(ev *historypb.HistoryEvent) bool {
			return ev.GetWorkflowExecutionCancelRequestedEventAttributes() != nil
		}); ok {
			fromArrival = append(fromArrival, msBetween(arrived, at))
		}
	}
	return fromRequest, fromArrival, running
}

// fleetPrune runs 16 configurations under asha in stop mode beside the load for 40 s, then cancels
// them, and returns for each trial the sweep stopped while its trainer ran the latency from the stop
// signal's arrival in the trial's history to its trainer's SIGTERM and from the sweep's decision (the
// signal's initiation in the sweep's history) to that SIGTERM, in ms, and the load's trainers running
// when the sweep was cancelled.
func fleetPrune(t *testing.T, c client.Client, dir string, round int, timeline string, load func() int) (arrived, decided []float64, running int) {
	t.Helper()
	qualities := make([]string, 16)
	for i := range qualities {
		qualities[i] = strconv.Itoa((i*7)%16 + 1)
	}
	id := submitSpec(t, dir, fmt.Sprintf("fleet-prune-%d", round), fmt.Sprintf(`
  total_steps: 1000000
metric: {name: reward, goal: maximize}
method: grid
parameters:
  quality: {values: [%s]}
  sleep_ms: {value: 250}
  step_size: {value: 1000}
  checkpoint_every: {value: 0}
  timeline: {value: %q}
early_terminate: {type: asha, min_steps: 10000, eta: 2, mode: stop}
order: listed
probes: {enabled: false}
diagnostics: {enabled: false}
concurrency: 16
`, strings.Join(qualities, ", "), timeline))
	time.Sleep(40 * time.Second)
	running = load()
	cancelled := time.Now()
	if err := c.CancelWorkflow(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_ = c.GetWorkflow(ctx, id, "").Get(ctx, nil)
	sent := map[string]time.Time{} // trial workflow → when the sweep sent it SignalStopTrial
	fleetEvent(t, c, id, func(ev *historypb.HistoryEvent) bool {
		if a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalStopTrial {
			if wid := a.GetWorkflowExecution().GetWorkflowId(); sent[wid].IsZero() {
				sent[wid] = ev.GetEventTime().AsTime()
			}
		}
		return false // every event
	})
	for trial, at := range fleetMarks(t, timeline)["term"] {
		if !at.Before(cancelled) {
			continue // stopped by the cancel
		}
		wid := workflows.TrialWorkflowID(id, trial)
		signalled, ok := fleetEvent(t, c, wid, func(ev *historypb.HistoryEvent) bool {
			a := ev.GetWorkflowExecutionSignaledEventAttributes()
			return a != nil && a.GetSignalName() == workflows.SignalStopTrial
		})
		if !ok || sent[wid].IsZero() {
			t.Fatalf("trial %s of %s got SIGTERM before the cancel without a stop signal", trial, id)
		}
		arrived = append(arrived, msBetween(signalled, at))
		decided = append(decided, msBetween(sent[wid], at))
	}
	if len(arrived) == 0 {
		t.Fatalf("sweep %s: no trial was stopped while its trainer ran", id)
	}
	return arrived, decided, running
}

// fleetEvent is the time of the first event of the workflow's history that is (is sees the events
// in order until it says true).
func fleetEvent(t *testing.T, c client.Client, workflowID string, is func(*historypb.HistoryEvent) bool) (time.Time, bool) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if is(ev) {
			return ev.GetEventTime().AsTime(), true
		}
	}
	return time.Time{}, false
}

// fleetMarks reads a scripted trainer's timeline ("EVENT <unix ns> TRIAL STEP" lines) into each
// event's first time per trial.
func fleetMarks(t *testing.T, path string) map[string]map[string]time.Time {
	t.Helper()
	out := map[string]map[string]time.Time{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) != 4 {
			continue
		}
		ns, err := strconv.ParseInt(fl[1], 10, 64)
		if err != nil {
			continue
		}
		if out[fl[0]] == nil {
			out[fl[0]] = map[string]time.Time{}
		}
		if _, seen := out[fl[0]][fl[2]]; !seen {
			out[fl[0]][fl[2]] = time.Unix(0, ns)
		}
	}
	return out
}

func seedRange(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ", ")
}

// msBetween is the time from a to b in ms.
func msBetween(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }

// latencies formats latencies in ms as "p50 / p99 / max ms (n)", nearest rank (it sorts ms).
func latencies(ms []float64) string {
	if len(ms) == 0 {
		return "none"
	}
	sort.Float64s(ms)
	q := func(p float64) float64 {
		i := int(p*float64(len(ms))+0.999999) - 1
		return ms[min(max(i, 0), len(ms)-1)]
	}
	return fmt.Sprintf("%.0f / %.0f / %.0f ms (%d)", q(0.5), q(0.99), ms[len(ms)-1], len(ms))
}
