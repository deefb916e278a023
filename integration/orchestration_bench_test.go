//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// BenchmarkOrchestration measures what rlsweep adds on top of the trainers: N trials of a trainer that
// sleeps TRIAL_MS and writes one record, at concurrency C, on a real dev server with one worker
// process. It reports the wall time, the overhead against the ideal N/C × trial time, scheduling
// throughput, and the longest history of any workflow run of the sweep (continue-as-new keeps it
// bounded). Run with -benchtime 1x; see docs/BENCHMARKS.md.
func BenchmarkOrchestration(b *testing.B) {
	for _, c := range []struct{ trials, conc, sleepMS, segments int }{
		{1000, 16, 1000, 1},
		{1000, 16, 0, 1},
		{10000, 64, 0, 1},      // the history bound: every run of the sweep stays under 10,240 events
		{10000, 16, 1000, 1},   // Ray Tune's published anchor: 10,000 × 1 s on 16 CPUs, 715 s against 625 s
		{200, 16, 1000, 4},     // segment boundaries: each 1 s trial in 4 segments that resume from checkpoints
		{2000, 2000, 60000, 1}, // thousands at once: the largest concurrency a spec may ask for
		{500, 500, 30000, 1},   // hundreds at once: the worker's CPU per trainer-second
	} {
		name := fmt.Sprintf("trials=%d/conc=%d/trial_ms=%d", c.trials, c.conc, c.sleepMS)
		if c.segments > 1 {
			name += fmt.Sprintf("/segments=%d", c.segments)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchSweep(b, c.trials, c.conc, c.sleepMS, c.segments)
			}
		})
	}
}

func benchSweep(b *testing.B, trials, conc, sleepMS, segments int) {
	e := newEnv(b)
	w := e.startWorker("a", "--slots", fmt.Sprint(conc))
	timeline := filepath.Join(e.dir, "timeline")
	spec := benchSpec(e, "bench", trials, conc, sleepMS, segments, timeline)
	// A sweep is submitted to workers that are up: the clock starts once the worker polls both queues.
	e.waitForPollers(workflows.ControlQueue, enums.TASK_QUEUE_TYPE_WORKFLOW)
	e.waitForPollers(sweeps.DefaultTaskQueue, enums.TASK_QUEUE_TYPE_ACTIVITY)
	mem := sampleMemory(w.Process.Pid)
	b.ResetTimer()
	start := time.Now()
	sweepID := e.submit(spec)
	var res workflows.SweepResult
	if err := e.client.GetWorkflow(context.Background(), sweepID, "").Get(context.Background(), &res); err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	b.StopTimer()
	peak := mem.stop()
	// The worker's CPU (user + system, from /proc) per trial and per trainer-second.
	if cpu := workerCPU(w.Process.Pid); cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1000/float64(trials), "worker-cpu-ms/trial")
		if sleepMS > 0 {
			b.ReportMetric(cpu.Seconds()*1000/(float64(trials)*float64(sleepMS)/1000), "worker-cpu-ms/trainer-s")
		}
	}
	// Memory when the most trainers ran under the worker (proportional set sizes): the worker's own,
	// and per trainer (a trainer and its supervisor) what the worker's descendants held.
	b.ReportMetric(peak.workerMB, "worker-pss-mb")
	if peak.trainers > 0 {
		b.ReportMetric(peak.descendantsMB/float64(peak.trainers), "pss-per-trainer-mb")
	}
	b.ReportMetric(float64(peakTrainers(b, timeline)), "peak-trainers")
	if res.Counts["completed"] != trials {
		b.Fatalf("sweep finished with %v, want %d completed", res.Counts, trials)
	}
	ideal := time.Duration(float64(trials) / float64(conc) * float64(sleepMS) * float64(time.Millisecond))
	b.ReportMetric(wall.Seconds(), "wall-s")
	if ideal > 0 {
		b.ReportMetric(100*(wall.Seconds()-ideal.Seconds())/ideal.Seconds(), "overhead-%")
	}
	b.ReportMetric(float64(trials)/wall.Seconds(), "trials/s")
	sp := sweepExtent(b, e, sweepID)
	b.ReportMetric(float64(sp.longest), "max-history-events")
	// What is spent outside the trials' own cycles: from submit to the first trial's start (the CLI,
	// the plan) and from the last trial's end to the sweep's result (results, report).
	b.ReportMetric(sp.firstStart.Sub(start).Seconds(), "lead-s")
	b.ReportMetric(start.Add(wall).Sub(sp.lastClose).Seconds(), "tail-s")
	b.ReportMetric(float64(sweepRuns(b, e, sweepID)), "sweep-runs")
	// From a trainer's exit to the next trainer's start: at a segment boundary of the same trial, and
	// from a trial's last trainer to the first trainer of the trial that took its slot.
	boundary, refill := timelineGaps(b, timeline, conc)
	for _, g := range []struct {
		name string
		ms   []float64
	}{{"boundary", boundary}, {"refill", refill}} {
		if len(g.ms) == 0 {
			continue
		}
		sort.Float64s(g.ms)
		b.ReportMetric(g.ms[len(g.ms)/2], g.name+"-p50-ms")
		b.ReportMetric(g.ms[min(len(g.ms)-1, len(g.ms)*99/100)], g.name+"-p99-ms")
		sum := 0.0
		for _, ms := range g.ms {
			sum += ms
		}
		b.ReportMetric(sum/float64(len(g.ms)), g.name+"-mean-ms")
	}
	// RLSWEEP_BENCH_LEGS=1: where a refill's time goes, from the released trials' histories.
	if os.Getenv("RLSWEEP_BENCH_LEGS") != "" {
		for _, l := range refillLegs(b, e, sweepID, timeline) {
			sort.Float64s(l.ms)
			if len(l.ms) > 0 {
				b.ReportMetric(l.ms[len(l.ms)/2], "leg-"+l.name+"-p50-ms")
			}
		}
	}
	// RLSWEEP_BENCH_TIMELINE: keep the trainers' timeline there, to look at the gaps one by one.
	if keep := os.Getenv("RLSWEEP_BENCH_TIMELINE"); keep != "" {
		if raw, err := os.ReadFile(timeline); err == nil {
			_ = os.WriteFile(keep, raw, 0o644)
		}
	}
}

// peakTrainers is the most trainers the timeline shows running at once.
func peakTrainers(b *testing.B, path string) int {
	evs := readTimeline(b, path)
	// At equal times an exit counts first: a place handed over is not two trainers.
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].at.Equal(evs[j].at) {
			return evs[i].at.Before(evs[j].at)
		}
		return evs[i].event == "exit" && evs[j].event == "start"
	})
	n, most := 0, 0
	for _, ev := range evs {
		switch ev.event {
		case "start":
			n++
		case "exit":
			n--
		}
		most = max(most, n)
	}
	return most
}

// workerCPU is the CPU time (user + system) process pid has used.
func workerCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// memSample is the worker's memory and its descendants' (supervisors and trainers), proportional set
// sizes in MB, when the most trainers ran.
type memSample struct {
	workerMB, descendantsMB float64
	trainers                int // descendants that are trainers (not supervisors)
}

type memSampler struct {
	done chan struct{}
	out  chan memSample
}

// sampleMemory samples the process tree under pid every 5 s until stop, keeping the sample with the
// most trainers.
func sampleMemory(pid int) *memSampler {
	m := &memSampler{done: make(chan struct{}), out: make(chan memSample, 1)}
	go func() {
		var best memSample
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			if s := treeMemory(pid); s.trainers >= best.trainers {
				best = s
			}
			select {
			case <-m.done:
				m.out <- best
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *memSampler) stop() memSample {
	close(m.done)
	return <-m.out
}

// treeMemory reads /proc: the proportional set size of pid and of every process below it.
func treeMemory(pid int) memSample {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, ent := range ents {
		p, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
		rest := string(raw)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	// The proportional set size: shared pages (the binaries' text) split among the processes mapping
	// them, so that the sum over many trainers is what they take.
	rss := func(p int) float64 {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
		return 0
	}
	s := memSample{workerMB: rss(pid)}
	queue := append([]int(nil), children[pid]...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		s.descendantsMB += rss(p)
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); err == nil && strings.HasPrefix(string(comm), "scripted-") {
			s.trainers++
		}
		queue = append(queue, children[p]...)
	}
	return s
}

// timelineGaps reads the scripted trainers' timeline ("start|exit <unix ns> <trial> <step>" lines) and
// returns, in milliseconds, every boundary gap (a trainer's exit to the start of the same trial's next
// trainer) and every refill gap: after the first conc trials, each trial's first start is matched with
// the earliest last exit of a trial not matched yet (the slot it freed).
func timelineGaps(b *testing.B, path string, conc int) (boundary, refill []float64) {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	type event struct {
		start bool
		at    int64
		trial string
	}
	var evs []event
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			b.Fatalf("timeline line %q", line)
		}
		at, _ := strconv.ParseInt(f[1], 10, 64)
		evs = append(evs, event{f[0] == "start", at, f[2]})
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	lastExit := map[string]int64{}
	started := map[string]bool{}
	for _, ev := range evs {
		if !ev.start {
			lastExit[ev.trial] = ev.at
		}
	}
	var exits []int64 // last exits, in time order
	for _, ev := range evs {
		if !ev.start && lastExit[ev.trial] == ev.at {
			exits = append(exits, ev.at)
		}
	}
	prevExit := map[string]int64{}
	firsts := 0
	for _, ev := range evs {
		switch {
		case !ev.start:
			prevExit[ev.trial] = ev.at
		case started[ev.trial]:
			boundary = append(boundary, float64(ev.at-prevExit[ev.trial])/1e6)
		default:
			started[ev.trial] = true
			if firsts++; firsts <= conc || len(exits) == 0 || exits[0] > ev.at {
				continue
			}
			refill = append(refill, float64(ev.at-exits[0])/1e6)
			exits = exits[1:]
		}
	}
	return boundary, refill
}

// extent is what the visibility store says of a sweep's workflows: the largest history length of any
// run of the sweep and its trials, the first trial's start and the last trial's close.
type extent struct {
	longest               int64
	firstStart, lastClose time.Time
}

func sweepExtent(b *testing.B, e *env, sweepID string) extent {
	ctx := context.Background()
	var sp extent
	var token []byte
	for {
		resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("%s = %q", workflows.AttrSweepID.GetName(), sweepID),
			NextPageToken: token,
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, ex := range resp.Executions {
			sp.longest = max(sp.longest, ex.HistoryLength)
			if !strings.Contains(ex.Execution.GetWorkflowId(), "/trial/") {
				continue
			}
			if st := ex.StartTime.AsTime(); sp.firstStart.IsZero() || st.Before(sp.firstStart) {
				sp.firstStart = st
			}
			if ct := ex.CloseTime.AsTime(); ct.After(sp.lastClose) {
				sp.lastClose = ct
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return sp
		}
	}
}

// sweepRuns counts the runs of the sweep's own workflow (1 + continue-as-new count).
func sweepRuns(b *testing.B, e *env, sweepID string) int {
	resp, err := e.client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowId = %q", sweepID),
	})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, ex := range resp.Executions {
		if ex.Status == enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW || ex.Status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			n++
		}
		// RLSWEEP_BENCH_HISTORY: keep each run's history there (JSON), to see where a run's time went.
		if dir := os.Getenv("RLSWEEP_BENCH_HISTORY"); dir != "" {
			writeHistory(b, e, sweepID, ex.Execution.RunId, filepath.Join(dir, ex.Execution.RunId+".json"))
		}
	}
	return n
}

// benchSpec writes the sweep the benchmarks run: trials seeds of the scripted trainer, each sleeping
// sleepMS and writing one record, concurrency conc, no probes or diagnostics.
func benchSpec(e *env, name string, trials, conc, sleepMS, segments int, timeline string) string {
	seeds := make([]string, trials)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i + 1)
	}
	// One record per segment, each sleeping its share of the trial's time, a checkpoint at each.
	return e.spec(name, fmt.Sprintf(`
  total_steps: %d
  segment_steps: 1000
seeds: [%s]
parameters:
  sleep_ms: {value: %d}
  step_size: {value: 1000}
  checkpoint_every: {value: %d}
  timeline: {value: %q}
probes: {enabled: false}
diagnostics: {enabled: false}
concurrency: %d
`, 1000*segments, strings.Join(seeds, ", "), sleepMS/segments, min(segments-1, 1), timeline, conc))
}

// leg is one stretch of a refill, in ms, over the trials measured.
type leg struct {
	name string
	ms   []float64
}

// refillLegs splits the refill of each trial released by a hand-off (its history took SignalRelease)
// into its stretches: the latest trainer exit before the release to the release's arrival (the
// worker's hand-off signal), the release to the trial's workflow task starting and completing, that
// task to the segment's activity starting, and the activity's start to its trainer's first line.
func refillLegs(b *testing.B, e *env, sweepID, timeline string) []leg {
	evs := readTimeline(b, timeline)
	var exits []time.Time
	firstStart := map[string]time.Time{}
	for _, ev := range evs {
		switch ev.event {
		case "exit":
			exits = append(exits, ev.at)
		case "start":
			if _, ok := firstStart[ev.trial]; !ok {
				firstStart[ev.trial] = ev.at
			}
		}
	}
	sort.Slice(exits, func(i, j int) bool { return exits[i].Before(exits[j]) })
	legs := []leg{{name: "exit>release"}, {name: "release>task"}, {name: "task"}, {name: "task>activity"}, {name: "activity>trainer"}}
	ms := func(a, z time.Time) float64 { return float64(z.Sub(a).Microseconds()) / 1000 }
	for trial, trainer := range firstStart {
		it := e.client.GetWorkflowHistory(context.Background(), workflows.TrialWorkflowID(sweepID, trial), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var release, taskStarted, taskDone, activity time.Time
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			at := ev.EventTime.AsTime()
			switch {
			case release.IsZero():
				if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalRelease {
					release = at
				}
			case taskStarted.IsZero() && ev.EventType == enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				taskStarted = at
			case taskDone.IsZero() && ev.EventType == enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				taskDone = at
			case activity.IsZero() && ev.EventType == enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				activity = at
			}
		}
		if activity.IsZero() {
			continue // started plainly, not released
		}
		i := sort.Search(len(exits), func(i int) bool { return !exits[i].Before(release) })
		if i == 0 {
			continue
		}
		for k, d := range []float64{ms(exits[i-1], release), ms(release, taskStarted), ms(taskStarted, taskDone), ms(taskDone, activity), ms(activity, trainer)} {
			legs[k].ms = append(legs[k].ms, d)
		}
	}
	return legs
}
