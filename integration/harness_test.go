//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/proto"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

var (
	rlsweepBin string // the rlsweep binary under test
	trainerBin string // the scripted test trainer
	replayBin  string // a plain W&B or TensorBoard script replaying a real run (testdata/replay-trainer)
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rlsweep-it-")
	if err != nil {
		panic(err)
	}
	rlsweepBin, trainerBin = filepath.Join(dir, "rlsweep"), filepath.Join(dir, "scripted-trainer")
	replayBin = filepath.Join(dir, "replay-trainer")
	// RLSWEEP_IT_BINDIR: binaries built beforehand (rlsweep, scripted-trainer, replay-trainer), for a
	// machine without the Go toolchain, or to run one test binary against two builds of rlsweep.
	if pre := os.Getenv("RLSWEEP_IT_BINDIR"); pre != "" {
		rlsweepBin, trainerBin = filepath.Join(pre, "rlsweep"), filepath.Join(pre, "scripted-trainer")
		replayBin = filepath.Join(pre, "replay-trainer")
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	for bin, pkg := range map[string]string{rlsweepBin: "../cmd/rlsweep", trainerBin: "./testdata/scripted-trainer",
		replayBin: "./testdata/replay-trainer"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's world: a dev server, an artifact directory, and the workers it started.
type env struct {
	t       testing.TB
	dir     string
	addr    string
	server  *testsuite.DevServer
	client  client.Client
	store   *artifacts.Local
	workers []*exec.Cmd
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvArgs(t)
}

// newEnvArgs is newEnv with more dev server flags (e.g. --metrics-port).
func newEnvArgs(t testing.TB, serverArgs ...string) *env {
	t.Helper()
	bin, err := devserver.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: t.TempDir(), addr: freeAddr(t)}
	e.store, err = artifacts.NewLocal(filepath.Join(e.dir, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	e.startServer(bin, serverArgs...)
	t.Cleanup(e.close)
	return e
}

func (e *env) startServer(bin string, args ...string) {
	e.t.Helper()
	e.server = e.startDevServer(func(addr string) testsuite.DevServerOptions {
		return testsuite.DevServerOptions{
			ExistingPath:     bin,
			DBFilename:       dbFile(e.dir),
			ExtraArgs:        append(append(append(append(sqliteArgs(), matchingArgs()...), queueArgs()...), extraServerArgs()...), args...),
			ClientOptions:    &client.Options{HostPort: addr, Logger: quiet{}},
			SearchAttributes: workflows.SearchAttributes(),
			LogLevel:         "error",
		}
	})
	e.client = e.server.Client()
}

// startDevServer starts the pinned dev server with the options opts gives for an address, its output
// to the env's temporal.log, and sets e.addr. A server that exits during start-up because a port it
// binds was taken meanwhile (its gRPC port, picked free here, or the HTTP API port the CLI picks
// itself; the log says "address already in use") is started again on a fresh address, 3 times in
// all; a start that fails otherwise fails the test with the log's last line.
func (e *env) startDevServer(opts func(addr string) testsuite.DevServerOptions) *testsuite.DevServer {
	e.t.Helper()
	logPath := filepath.Join(e.dir, "temporal.log")
	for attempt := 1; ; attempt++ {
		var from int64
		if fi, err := os.Stat(logPath); err == nil {
			from = fi.Size()
		}
		o := opts(e.addr)
		o.Stdout, o.Stderr = logFile(e.t, logPath), logFile(e.t, logPath)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		// StartDevServer waits for the server to answer until ctx ends, even when it has exited: a
		// server whose port was taken is given up on as soon as its log says so.
		logged := func() []byte {
			b, _ := os.ReadFile(logPath)
			if int64(len(b)) >= from {
				b = b[from:]
			}
			return b
		}
		go func() {
			for ctx.Err() == nil {
				if bytes.Contains(logged(), []byte("address already in use")) {
					cancel()
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
		srv, err := testsuite.StartDevServer(ctx, o)
		cancel()
		if err == nil {
			return srv
		}
		b := logged()
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		last := lines[len(lines)-1]
		if attempt < 3 && strings.Contains(string(b), "address already in use") {
			e.t.Logf("dev server on %s exited during start-up (%s): starting it again on another address", e.addr, last)
			e.addr = freeAddr(e.t)
			continue
		}
		e.t.Fatalf("start dev server on %s: %v; its log ends: %s", e.addr, err, last)
	}
}

func (e *env) close() {
	for _, w := range e.workers {
		if w.ProcessState == nil {
			_ = w.Process.Signal(syscall.SIGTERM)
			_ = w.Wait()
		}
	}
	if e.server != nil {
		_ = e.server.Stop()
	}
}

// startWorker runs `rlsweep worker` as a process of its own and returns it.
func (e *env) startWorker(name string, args ...string) *exec.Cmd {
	e.t.Helper()
	return e.startWorkerVia(name, e.addr, args...)
}

// startWorkerVia is startWorker with the worker reaching the server at addr (a proxy in between).
func (e *env) startWorkerVia(name, addr string, args ...string) *exec.Cmd {
	e.t.Helper()
	argv := append([]string{"worker", "--address", addr, "--store", e.store.Root(),
		"--work-dir", filepath.Join(e.dir, "work-"+name)}, args...)
	cmd := exec.Command(rlsweepBin, argv...)
	log := logFile(e.t, filepath.Join(e.dir, "worker-"+name+".log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.workers = append(e.workers, cmd)
	return cmd
}

// waitForPollers waits until a worker polls queue for tasks of kind, for at most a minute.
func (e *env) waitForPollers(queue string, kind enums.TaskQueueType) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := e.client.DescribeTaskQueue(context.Background(), queue, kind)
		if err == nil && len(d.GetPollers()) > 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no worker polls %s (%s) after a minute (last error: %v)", queue, kind, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cli runs the rlsweep binary against this env and returns its output and exit code.
func (e *env) cli(args ...string) (string, int) {
	e.t.Helper()
	argv := append([]string{"--address", e.addr, "--store", e.store.Root()}, args...)
	cmd := exec.Command(rlsweepBin, argv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), code
}

// spec writes a sweep spec whose trainer is the scripted trainer; body is the rest of the YAML.
func (e *env) spec(name, body string) string {
	e.t.Helper()
	y := fmt.Sprintf("name: %s\ntrainer:\n  command: [%q]\n", name, trainerBin) + body
	p := filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// results reads a finished sweep's results.json.
func (e *env) results(sweepID string) results.SweepResults {
	e.t.Helper()
	var res results.SweepResults
	e.readJSON(artifacts.ResultsKey(sweepID), &res)
	return res
}

func (e *env) readJSON(key string, v any) {
	e.t.Helper()
	b, err := os.ReadFile(e.store.URL(key))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.t.Fatalf("%s: %v", key, err)
	}
}

// sweepIDFrom finds the sweep ID in submit's output.
func sweepIDFrom(t testing.TB, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "submitted" {
			return f[1]
		}
	}
	t.Fatalf("no sweep ID in submit output:\n%s", out)
	return ""
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func logFile(t testing.TB, path string) *os.File {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !eventually(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// eventually polls cond every 100 ms until it holds or the timeout passes, and tells whether it held.
// A test that reads eventually-consistent state (the visibility store, a log a worker stores in the
// background) reads it in cond, keeping what it read, then asserts on that last value, which its
// failure message names.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// dbFile is the dev server's SQLite file; RLSWEEP_TEST_MEMDB=1 keeps state in memory instead, to
// separate the cost of durable writes from the rest in benchmarks.
// sqliteArgs are the SQLite settings rlsweep dev uses, unless RLSWEEP_TEST_SQLITE=default asks for
// the CLI's own (for comparison in benchmarks).
func sqliteArgs() []string {
	if os.Getenv("RLSWEEP_TEST_MEMDB") == "1" || os.Getenv("RLSWEEP_TEST_SQLITE") == "default" {
		return nil
	}
	return devserver.SQLiteArgs()
}

// matchingArgs are the task queue settings rlsweep dev uses, unless RLSWEEP_TEST_MATCHING=default
// asks for the server's own (four partitions per task queue).
func matchingArgs() []string {
	if os.Getenv("RLSWEEP_TEST_MATCHING") == "default" {
		return nil
	}
	return devserver.MatchingArgs()
}

// queueArgs are the history queue reader rates rlsweep dev uses, unless RLSWEEP_TEST_QUEUES=default
// asks for the server's own (20 database polls a second per queue).
func queueArgs() []string {
	if os.Getenv("RLSWEEP_TEST_QUEUES") == "default" {
		return nil
	}
	return devserver.QueueArgs()
}

// extraServerArgs are more dev server flags for an experiment, from RLSWEEP_TEST_SERVER_ARGS (split on
// spaces), e.g. "--metrics-port 9191" to read the server's own metrics during a benchmark.
func extraServerArgs() []string {
	return strings.Fields(os.Getenv("RLSWEEP_TEST_SERVER_ARGS"))
}

func dbFile(dir string) string {
	if os.Getenv("RLSWEEP_TEST_MEMDB") == "1" {
		return ""
	}
	return filepath.Join(dir, "temporal.db")
}

// submit runs `rlsweep submit ARGS`, fails the test unless it exits 0, and returns the sweep ID it printed.
func (e *env) submit(args ...string) string {
	e.t.Helper()
	out, code := e.cli(append([]string{"submit"}, args...)...)
	if code != 0 {
		e.t.Fatalf("submit %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return sweepIDFrom(e.t, out)
}

// storedMetrics is a trial's stored metrics stream: its parts merged, as every reader sees them.
func storedMetrics(t testing.TB, s artifacts.Store, sweepID, trialID string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := artifacts.CopyMetrics(context.Background(), s, sweepID, trialID, metrics.LineStep, &b); err != nil {
		t.Fatalf("trial %s: stored metrics: %v", trialID, err)
	}
	return b.Bytes()
}

// runHistory is one workflow run of a sweep and its history as the wire bytes (payloads appear as the
// JSON the SDK encoded, not base64).
type runHistory struct {
	WorkflowID string
	History    string
}

// sweepHistories returns every workflow run the sweep search attribute names (the sweep's runs and its
// trials'), each with its whole history.
func (e *env) sweepHistories(t *testing.T, sweepID string) []runHistory {
	t.Helper()
	var out []runHistory
	for _, r := range e.sweepRuns(t, sweepID, true) {
		var h strings.Builder
		for _, ev := range r.events {
			b, err := proto.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		out = append(out, runHistory{r.info.Execution.WorkflowId, h.String()})
	}
	return out
}

// listedRun is one workflow run as the visibility store lists it, with the events of its history.
type listedRun struct {
	info   *workflowpb.WorkflowExecutionInfo
	events []*historypb.HistoryEvent
}

// sweepRuns lists the runs of the sweep's own workflow (WorkflowId), with its trials' when trials is
// set (the sweep search attribute), each with its history. The visibility store is written
// asynchronously, after the histories: the listing is read again, for up to a minute, until it agrees
// with them: the sweep's current run is listed, and so is every run a listed run continued from or
// into and, with trials, every child a listed run started; each listed run's status is the one its
// history ends with.
func (e *env) sweepRuns(t *testing.T, sweepID string, trials bool) []listedRun {
	t.Helper()
	query := fmt.Sprintf("WorkflowId = %q", sweepID)
	if trials {
		query = fmt.Sprintf("%s = %q", workflows.AttrSweepID.GetName(), sweepID)
	}
	var runs []listedRun
	var disagree []string
	if !eventually(time.Minute, func() bool {
		runs, disagree = e.listRuns(t, sweepID, query, trials)
		return len(disagree) == 0
	}) {
		t.Fatalf("the visibility store's %d runs for %s disagree with the histories a minute on:\n%s",
			len(runs), query, strings.Join(disagree, "\n"))
	}
	return runs
}

// listRuns reads the runs query lists, each with its history, and says where the listing disagrees
// with the histories (sweepRuns).
func (e *env) listRuns(t *testing.T, sweepID, query string, trials bool) (runs []listedRun, disagree []string) {
	t.Helper()
	ctx := context.Background()
	listed := map[string]bool{} // workflow ID and run ID
	var next []byte
	for {
		page, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: next})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range page.Executions {
			r := listedRun{info: ex}
			it := e.client.GetWorkflowHistory(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				r.events = append(r.events, ev)
			}
			runs = append(runs, r)
			listed[ex.Execution.WorkflowId+" "+ex.Execution.RunId] = true
		}
		if next = page.NextPageToken; len(next) == 0 {
			break
		}
	}
	want := func(workflowID, runID, why string) {
		if runID != "" && !listed[workflowID+" "+runID] {
			disagree = append(disagree, fmt.Sprintf("%s run %s (%s) is not listed", workflowID, runID, why))
		}
	}
	d, err := e.client.DescribeWorkflowExecution(ctx, sweepID, "")
	if err != nil {
		t.Fatal(err)
	}
	want(sweepID, d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the current run")
	for _, r := range runs {
		id := r.info.Execution.WorkflowId
		if got, hist := r.info.Status, historyStatus(r.events); got != hist {
			disagree = append(disagree, fmt.Sprintf("%s run %s is listed %s, its history ends %s", id, r.info.Execution.RunId, got, hist))
		}
		for _, ev := range r.events {
			if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
				want(id, a.GetContinuedExecutionRunId(), "the run it continued from")
			}
			if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				want(id, a.GetNewExecutionRunId(), "the run it continued into")
			}
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil && trials {
				want(a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId(), "a child of run "+r.info.Execution.RunId)
			}
		}
	}
	return runs, disagree
}

// historyStatus is the status a run's history closes it with, or running while it has not closed.
func historyStatus(events []*historypb.HistoryEvent) enums.WorkflowExecutionStatus {
	if len(events) == 0 {
		return enums.WORKFLOW_EXECUTION_STATUS_RUNNING
	}
	switch events[len(events)-1].GetEventType() {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
		return enums.WORKFLOW_EXECUTION_STATUS_COMPLETED
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
		return enums.WORKFLOW_EXECUTION_STATUS_FAILED
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
		return enums.WORKFLOW_EXECUTION_STATUS_CANCELED
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
		return enums.WORKFLOW_EXECUTION_STATUS_TERMINATED
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
		return enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT
	}
	return enums.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// A test's dev server whose port is taken by the time it binds it exits with "address already in
// use"; the harness starts it again on another address rather than failing the test after a minute.
func TestHarnessServerStartsAgainWhenItsPortIsTaken(t *testing.T) {
	bin, err := devserver.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: t.TempDir(), addr: freeAddr(t)}
	taken, err := net.Listen("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	first := e.addr
	e.startServer(bin)
	t.Cleanup(e.close)
	if e.addr == first {
		t.Fatalf("server on %s, the taken address", e.addr)
	}
	if _, err := e.client.CheckHealth(context.Background(), nil); err != nil {
		t.Fatalf("server on %s: %v", e.addr, err)
	}
}
