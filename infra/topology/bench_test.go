//go:build topology

package topology

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// TestOrchestrationBenchmark runs the orchestration benchmark of docs/BENCHMARKS.md (N trials of the
// scripted trainer sleeping trial_ms, at concurrency C, one `rlsweep worker --slots C` process, submitted
// with `rlsweep submit`) on this topology's Temporal server (PostgreSQL) and on the pinned dev server
// (SQLite, with `rlsweep dev`'s settings), one after the other, and reads each server's own Prometheus
// metrics before and after: requests, persistence calls and latencies per trial, where the time goes.
// Both use the same artifact store (a local directory) and the same worker and trainer binaries, so the
// servers are the difference. It runs only with RLSWEEP_TOPOLOGY_BENCH=1:
//
//	RLSWEEP_TOPOLOGY_BENCH=1 make test-topology TOPOLOGY_RUN='^TestOrchestrationBenchmark$'
//
// RLSWEEP_BENCH_TRIALS (1000), RLSWEEP_BENCH_CONC (16) and RLSWEEP_BENCH_TRIAL_MS (1000) set the case,
// RLSWEEP_BENCH_ROUNDS (1) how many times the pair runs, in turns (topology, dev server, topology, …);
// RLSWEEP_BENCH_OUT names a file the report is also written to.
func TestOrchestrationBenchmark(t *testing.T) {
	if os.Getenv("RLSWEEP_TOPOLOGY_BENCH") != "1" {
		t.Skip("the orchestration benchmark runs only with RLSWEEP_TOPOLOGY_BENCH=1")
	}
	trials, conc, ms := envInt(t, "RLSWEEP_BENCH_TRIALS", 1000), envInt(t, "RLSWEEP_BENCH_CONC", 16), envInt(t, "RLSWEEP_BENCH_TRIAL_MS", 1000)
	rounds := envInt(t, "RLSWEEP_BENCH_ROUNDS", 1)
	var report bytes.Buffer
	fmt.Fprintf(&report, "orchestration benchmark: %d trials × %d ms at concurrency %d, one worker (--slots %d), local artifact store\n",
		trials, ms, conc, conc)

	dir := t.TempDir()
	metricsPort := freePort(t)
	devAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	bin, err := devserver.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "temporal.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin,
		DBFilename:   filepath.Join(dir, "temporal.db"),
		ExtraArgs: append(append(append(devserver.SQLiteArgs(), devserver.MatchingArgs()...), devserver.QueueArgs()...),
			"--metrics-port", strconv.Itoa(metricsPort)),
		ClientOptions:    &client.Options{HostPort: devAddr},
		SearchAttributes: workflows.SearchAttributes(),
		LogLevel:         "error",
		Stdout:           logf,
		Stderr:           logf,
	})
	cancel()
	if err != nil {
		t.Fatalf("start dev server: %v", err)
	}
	defer srv.Stop()
	var rs []benchResult
	for round := 1; round <= rounds; round++ {
		suffix := ""
		if rounds > 1 {
			suffix = fmt.Sprintf(" #%d", round)
		}
		rs = append(rs, benchSweep(t, "topology"+suffix, hostIP+":"+tempPort, "http://"+hostIP+":"+metricPort+"/metrics", trials, conc, ms))
		rs = append(rs, benchSweep(t, "dev server"+suffix, devAddr, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), trials, conc, ms))
	}

	writeReport(&report, rs, trials, conc, ms)
	t.Logf("\n%s", report.String())
	if out := os.Getenv("RLSWEEP_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, report.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s: got %q, want a positive whole number", name, v)
	}
	return n
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type benchResult struct {
	name                 string
	wall, lead, tail     time.Duration
	before, after        scraped
	serverCPU, workerCPU time.Duration
	dbCPU                time.Duration // PostgreSQL's processes (the topology only)
	dbBytes              int64         // growth of PostgreSQL's tables and indexes (the topology only)
	longestHistory       int64
	peakTrainers         int     // the most trainers running at once (sampled every 5 s)
	workerMB, trainerMB  float64 // at that moment: the worker's proportional set size, and per trainer its and its supervisor's
}

// benchSweep runs one sweep of the benchmark on the server at addr and returns its times and the
// server's metrics before and after.
func benchSweep(t *testing.T, name, addr, metricsURL string, trials, conc, ms int) benchResult {
	t.Helper()
	dir := t.TempDir()
	store := filepath.Join(dir, "artifacts")
	rlsweep := planned["rlsweep-control"].argv[0]
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	logPath := filepath.Join(dir, "worker.log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	w := exec.Command(rlsweep, "worker", "--address", addr, "--store", store, "--work-dir", filepath.Join(dir, "work"),
		"--slots", strconv.Itoa(conc))
	w.Env, w.Stdout, w.Stderr = env, lf, lf
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Process.Signal(os.Interrupt); _ = w.Wait() }()
	waitFor(t, time.Minute, name+": the worker to start", func() bool {
		b, _ := os.ReadFile(logPath)
		return bytes.Contains(b, []byte("worker: control="))
	})
	spec := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(`name: bench
trainer:
  command: [%q]
  total_steps: 1000
seeds: [%s]
parameters:
  sleep_ms: {value: %d}
  step_size: {value: 1000}
  checkpoint_every: {value: 0}
probes: {enabled: false}
diagnostics: {enabled: false}
concurrency: %d
`, trainerBin, seedRange(trials), ms, conc)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quietLog{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := benchResult{name: name, before: scrape(t, metricsURL)}
	serverCPU0 := cpuOf(listener(addr))
	dbCPU0, dbBytes0 := postgresCPU(), postgresBytes()
	mem := sampleTrainers(w.Process.Pid)
	workerCPU0 := cpuOf(w.Process.Pid)
	start := time.Now()
	sub := exec.Command(rlsweep, "--address", addr, "--store", store, "submit", spec)
	sub.Env = env
	out, err := sub.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: submit: %v\n%s", name, err, out)
	}
	var id string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "submitted" {
			id = f[1]
		}
	}
	if id == "" {
		t.Fatalf("%s: no sweep ID in submit's output:\n%s", name, out)
	}
	var res workflows.SweepResult
	if err := c.GetWorkflow(context.Background(), id, "").Get(context.Background(), &res); err != nil {
		t.Fatalf("%s: sweep %s: %v", name, id, err)
	}
	r.wall = time.Since(start)
	r.serverCPU = cpuOf(listener(addr)) - serverCPU0
	r.workerCPU = cpuOf(w.Process.Pid) - workerCPU0
	if addr == hostIP+":"+tempPort {
		r.dbCPU = postgresCPU() - dbCPU0
		r.dbBytes = postgresBytes() - dbBytes0
	}
	r.peakTrainers, r.workerMB, r.trainerMB = mem.stop()
	r.after = scrape(t, metricsURL)
	if res.Counts["completed"] != trials {
		t.Fatalf("%s: sweep finished with %v, want %d completed", name, res.Counts, trials)
	}
	resultsOnce(t, name, store, id, trials)
	var first, last time.Time
	var token []byte
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("%s = %q", workflows.AttrSweepID.GetName(), id), NextPageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range resp.Executions {
			r.longestHistory = max(r.longestHistory, ex.HistoryLength)
			if !strings.Contains(ex.Execution.GetWorkflowId(), "/trial/") {
				continue
			}
			if st := ex.StartTime.AsTime(); first.IsZero() || st.Before(first) {
				first = st
			}
			if ct := ex.CloseTime.AsTime(); ct.After(last) {
				last = ct
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	r.lead, r.tail = first.Sub(start), start.Add(r.wall).Sub(last)
	t.Logf("%s: sweep %s: %s (lead %s, tail %s)", name, id, r.wall.Round(100*time.Millisecond),
		r.lead.Round(10*time.Millisecond), r.tail.Round(10*time.Millisecond))
	return r
}

type quietLog struct{}

func (quietLog) Debug(string, ...any) {}
func (quietLog) Info(string, ...any)  {}
func (quietLog) Warn(string, ...any)  {}
func (quietLog) Error(string, ...any) {}

// listener returns the pid of the process listening on addr's TCP port (the server), or 0.
func listener(addr string) int {
	_, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("ss", "-Hltnp", "sport = :"+port).Output()
	if err != nil {
		return 0
	}
	s := string(out)
	if i := strings.Index(s, "pid="); i >= 0 {
		n, _ := strconv.Atoi(strings.FieldsFunc(s[i+4:], func(r rune) bool { return r < '0' || r > '9' })[0])
		return n
	}
	return 0
}

// resultsOnce checks the sweep's results.json in a local store: every trial once, each completed.
func resultsOnce(t *testing.T, name, store, id string, trials int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(artifacts.ResultsKey(id))))
	if err != nil {
		t.Fatalf("%s: results.json: %v", name, err)
	}
	var res results.SweepResults
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%s: results.json: %v", name, err)
	}
	eachOnce(t, name, res, trials)
}

// eachOnce checks a sweep's results: every one of its trials once, each completed.
func eachOnce(t *testing.T, name string, res results.SweepResults, trials int) {
	t.Helper()
	seen := map[string]int{}
	for _, tr := range res.Trials {
		if seen[tr.TrialID]++; tr.Outcome != results.OutcomeCompleted {
			t.Errorf("%s: trial %s: %s, want completed", name, tr.TrialID, tr.Outcome)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s: trial %s recorded %d times in results.json, want once", name, id, n)
		}
	}
	if len(seen) != trials {
		t.Errorf("%s: results.json holds %d trials, want %d", name, len(seen), trials)
	}
}

// postgresBytes is the size of the topology's PostgreSQL tables and indexes: its data directory's
// base/, without the write-ahead log.
func postgresBytes() int64 {
	var n int64
	_ = filepath.WalkDir(filepath.Join(stateDir, "postgresql", "base"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// trainerSampler samples, every 5 s until stop, the scripted trainers running and the memory of the
// workers (summed) and of each trainer with its supervisor (its parent), keeping the sample with the most
// trainers. Memory is the proportional set size: the binaries' shared pages split among the processes
// that map them, so that a sum over trainers is what they take.
type trainerSampler struct {
	done chan struct{}
	out  chan [3]float64
}

func sampleTrainers(workers ...int) *trainerSampler {
	m := &trainerSampler{done: make(chan struct{}), out: make(chan [3]float64, 1)}
	go func() {
		var best [3]float64 // trainers, worker MB, MB per trainer
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			var n, mb float64
			comms, _ := filepath.Glob("/proc/[0-9]*/comm")
			for _, c := range comms {
				b, err := os.ReadFile(c)
				if err != nil || !strings.HasPrefix(string(b), "scripted-") {
					continue
				}
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(c)))
				n++
				mb += pssMB(pid) + pssMB(parentOf(pid))
			}
			if n >= best[0] && n > 0 {
				var wmb float64
				for _, w := range workers {
					wmb += pssMB(w)
				}
				best = [3]float64{n, wmb, mb / n}
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

func (m *trainerSampler) stop() (trainers int, workerMB, perTrainerMB float64) {
	close(m.done)
	b := <-m.out
	return int(b[0]), b[1], b[2]
}

// pssMB is process pid's proportional set size in MB (0 if it is gone).
func pssMB(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
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

// parentOf is process pid's parent (0 if it is gone).
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// postgresCPU returns the CPU time the topology's PostgreSQL has used: the postmaster, its children
// running now, and the children it has reaped.
func postgresCPU() time.Duration {
	b, err := os.ReadFile(filepath.Join(stateDir, "postgresql", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pm, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	total := cpuOf(pm) + reapedCPU(pm)
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if ppid, _ := strconv.Atoi(f[1]); ppid == pm {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			total += cpuOf(pid)
		}
	}
	return total
}

// reapedCPU returns the CPU time of the children process pid has waited for (cutime + cstime).
func reapedCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	cu, _ := strconv.ParseInt(f[13], 10, 64)
	cs, _ := strconv.ParseInt(f[14], 10, 64)
	return time.Duration(cu+cs) * 10 * time.Millisecond
}

// cpuOf returns the CPU time (user + system) process pid has used, from /proc.
func cpuOf(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// metrics is one scrape of a Prometheus text endpoint: every sample by its series (name and labels).
type scraped map[string]float64

func scrape(t *testing.T, url string) scraped {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("metrics %s: %v", url, err)
	}
	defer resp.Body.Close()
	m := scraped{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] += v
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return m
}

// label returns the value of label k in a series name{a="x",k="y"}.
func label(series, k string) string {
	i := strings.Index(series, k+`="`)
	if i < 0 {
		return ""
	}
	rest := series[i+len(k)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// stat is what one histogram or counter grew by between two scrapes, summed over the series selected.
type stat struct{ count, sum float64 }

// delta sums, over every series of the metric name whose labels pass keep, the growth of its _count
// and _sum (a histogram), or of the metric itself (a counter: count only), grouped by key(series).
func delta(before, after scraped, name string, key func(series string) string) map[string]stat {
	out := map[string]stat{}
	for series, v := range after {
		base, _, _ := strings.Cut(series, "{")
		var isSum bool
		switch base {
		case name + "_count", name:
		case name + "_sum":
			isSum = true
		default:
			continue
		}
		k := key(series)
		if k == "" {
			continue
		}
		d := v - before[series]
		s := out[k]
		if isSum {
			s.sum += d
		} else {
			s.count += d
		}
		out[k] = s
	}
	return out
}

func writeReport(w io.Writer, rs []benchResult, trials, conc, ms int) {
	ideal := time.Duration(float64(trials) / float64(conc) * float64(ms) * float64(time.Millisecond))
	n := float64(trials)
	cycles := float64(trials) / float64(conc)
	fmt.Fprintf(w, "\n| | %s |\n|---|%s\n", joinNames(rs), strings.Repeat("---|", len(rs)))
	row := func(what string, f func(r benchResult) string) {
		var cells []string
		for _, r := range rs {
			cells = append(cells, f(r))
		}
		fmt.Fprintf(w, "| %s | %s |\n", what, strings.Join(cells, " | "))
	}
	row("wall", func(r benchResult) string { return fmt.Sprintf("%.1f s", r.wall.Seconds()) })
	row(fmt.Sprintf("overhead over the ideal %.1f s", ideal.Seconds()), func(r benchResult) string {
		return fmt.Sprintf("%+.1f%%", 100*(r.wall.Seconds()-ideal.Seconds())/ideal.Seconds())
	})
	row("lead (submit to the first trial's start) / tail (last trial's end to the result)", func(r benchResult) string {
		return fmt.Sprintf("%.2f / %.2f s", r.lead.Seconds(), r.tail.Seconds())
	})
	row(fmt.Sprintf("per %d-trial cycle beyond %d ms ((wall − lead − tail) / %.1f cycles)", conc, ms, cycles), func(r benchResult) string {
		return fmt.Sprintf("%.0f ms", ((r.wall-r.lead-r.tail).Seconds()/cycles-float64(ms)/1000)*1000)
	})
	row("CPU per trial: server (+ PostgreSQL) / worker", func(r benchResult) string {
		db := ""
		if r.dbCPU > 0 {
			db = fmt.Sprintf(" + %.1f", r.dbCPU.Seconds()*1000/n)
		}
		return fmt.Sprintf("%.1f%s / %.1f ms", r.serverCPU.Seconds()*1000/n, db, r.workerCPU.Seconds()*1000/n)
	})
	row("longest history (events)", func(r benchResult) string { return strconv.FormatInt(r.longestHistory, 10) })
	row("most trainers at once (sampled every 5 s)", func(r benchResult) string { return strconv.Itoa(r.peakTrainers) })
	row("memory then: worker / per trainer with its supervisor (proportional set size)", func(r benchResult) string {
		return fmt.Sprintf("%.0f / %.1f MB", r.workerMB, r.trainerMB)
	})
	row("PostgreSQL tables and indexes per 1,000 trials", func(r benchResult) string {
		if r.dbBytes == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f MB", float64(r.dbBytes)/1e6*1000/n)
	})
	row("recorded heartbeats per trial-hour", func(r benchResult) string {
		s := delta(r.before, r.after, "service_requests", func(series string) string {
			if label(series, "operation") == "RecordActivityTaskHeartbeat" && (label(series, "service_name") == "frontend" || label(series, "service_name") == "") {
				return "hb"
			}
			return ""
		})["hb"]
		return fmt.Sprintf("%.0f", s.count/n/(float64(ms)/3.6e6))
	})

	// Frontend requests: how many per trial and their mean service latency.
	ops := []string{"StartWorkflowExecution", "PollWorkflowTaskQueue", "RespondWorkflowTaskCompleted", "PollActivityTaskQueue",
		"RespondActivityTaskCompleted", "RecordActivityTaskHeartbeat"}
	fmt.Fprintf(w, "\nfrontend requests (service_latency, operation): per trial, mean latency (a poll's includes its long-poll wait)\n\n| operation | %s |\n|---|%s\n", joinNames(rs), strings.Repeat("---|", len(rs)))
	for _, op := range ops {
		fmt.Fprintf(w, "| %s |", op)
		for _, r := range rs {
			s := delta(r.before, r.after, "service_latency", func(series string) string {
				if label(series, "operation") == op && (label(series, "service_name") == "frontend" || label(series, "service_name") == "") {
					return op
				}
				return ""
			})[op]
			fmt.Fprintf(w, " %s |", perTrial(s, n))
		}
		fmt.Fprintln(w)
	}

	// Matching: how long tasks waited for a poller.
	fmt.Fprintf(w, "\ntask schedule-to-start (task_schedule_to_start_latency, by task type): per trial, mean wait\n\n| task type | %s |\n|---|%s\n", joinNames(rs), strings.Repeat("---|", len(rs)))
	for _, tt := range []string{"Workflow", "Activity"} {
		fmt.Fprintf(w, "| %s |", tt)
		for _, r := range rs {
			s := delta(r.before, r.after, "task_schedule_to_start_latency", func(series string) string {
				if strings.EqualFold(label(series, "task_type"), tt) && label(series, "namespace") == "default" {
					return tt
				}
				return ""
			})[tt]
			fmt.Fprintf(w, " %s |", perTrial(s, n))
		}
		fmt.Fprintln(w)
	}

	// Persistence: every operation, by total time spent per trial.
	per := make([]map[string]stat, len(rs))
	total := map[string]float64{}
	for i, r := range rs {
		per[i] = delta(r.before, r.after, "persistence_latency", func(series string) string { return label(series, "operation") })
		for op, s := range per[i] {
			total[op] += s.sum
		}
	}
	var pops []string
	for op := range total {
		pops = append(pops, op)
	}
	sort.Slice(pops, func(i, j int) bool { return total[pops[i]] > total[pops[j]] })
	fmt.Fprintf(w, "\npersistence (persistence_latency, by operation): per trial, mean latency, time per trial\n\n| operation | %s |\n|---|%s\n", joinNames(rs), strings.Repeat("---|", len(rs)))
	var sums = make([]float64, len(rs))
	for _, op := range pops {
		if total[op] == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s |", op)
		for i := range rs {
			s := per[i][op]
			sums[i] += s.sum
			fmt.Fprintf(w, " %s, %.2f ms |", perTrial(s, n), s.sum*1000/n)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| all |")
	for i := range rs {
		var calls float64
		for _, s := range per[i] {
			calls += s.count
		}
		fmt.Fprintf(w, " %.1f calls, %.1f ms of database time per trial |", calls/n, sums[i]*1000/n)
	}
	fmt.Fprintln(w)
}

func joinNames(rs []benchResult) string {
	var names []string
	for _, r := range rs {
		names = append(names, r.name)
	}
	return strings.Join(names, " | ")
}

func perTrial(s stat, n float64) string {
	if s.count == 0 {
		return "—"
	}
	if s.sum == 0 {
		return fmt.Sprintf("%.2f", s.count/n)
	}
	return fmt.Sprintf("%.2f, %.2f ms", s.count/n, s.sum/s.count*1000)
}
