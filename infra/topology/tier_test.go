//go:build topology

package topology

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/results"
)

// The tier's network: a bridge on the host holding the services' address, and one veth pair per worker
// host, its far end alone in a network namespace. Workers reach the services only over their veth.
const (
	bridge = "rlstopo0"
	// bridgeMAC is the bridge's own address, set explicitly: a bridge left to choose takes the lowest
	// address among its ports, and when the link whose address it took is deleted, every other
	// namespace, whose neighbour entry for the services names that address, is cut off from the server
	// and MinIO until the entry is resolved again (tens of seconds). TestBridgeKeepsAddress.
	bridgeMAC  = "02:72:6c:73:74:30"
	subnet     = "10.231.7"
	hostIP     = subnet + ".1"
	minioIP    = subnet + ".254" // MinIO's own address, so that a route can cut one worker off MinIO alone
	nsPrefix   = "rlstopo-"
	pgPort     = "25432"
	tempPort   = "27233"
	minioPort  = "29000"
	metricPort = "29090"
	uiPort     = "28233"
	recordStep = 1000 // the scripted trainer's steps per record
)

var (
	currentSweep string             // the sweep the running test submitted last
	stateDir     string             // the topology's state directory
	trainerBin   string             // the scripted test trainer
	planned      map[string]service // scripts/topology.sh plan, as the tier runs it
	settings     []string           // the environment scripts/topology.sh runs with
	cliEnv       []string           // the environment of the plain CLI on the host: docker-compose.yml's x-rlsweep-env
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "the topology tier needs root: it creates network namespaces and runs PostgreSQL as user postgres")
		return 1
	}
	var err error
	if stateDir, err = os.MkdirTemp("", "rlsweep-topology-"); err != nil {
		panic(err)
	}
	failed := true
	defer func() {
		if failed {
			fmt.Fprintf(os.Stderr, "topology tier failed: state, service and worker logs kept in %s\n", stateDir)
			return
		}
		os.RemoveAll(stateDir)
	}()
	_ = os.Chmod(stateDir, 0o755) // PostgreSQL's user must reach its data directory inside
	trainerBin = filepath.Join(stateDir, "scripted-trainer")
	if out, err := exec.Command("go", "build", "-o", trainerBin, "../../integration/testdata/scripted-trainer").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the scripted trainer: %v\n%s", err, out)
		return 1
	}
	cleanupNet()
	defer cleanupNet()
	for _, c := range [][]string{
		{"link", "add", bridge, "address", bridgeMAC, "type", "bridge"},
		{"addr", "add", hostIP + "/24", "dev", bridge},
		{"addr", "add", minioIP + "/24", "dev", bridge},
		{"link", "set", bridge, "up"},
	} {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "ip %s: %v\n%s", strings.Join(c, " "), err, out)
			return 1
		}
	}
	settings = []string{"RLSWEEP_TOPOLOGY_DIR=" + stateDir, "TOPOLOGY_HOST=" + hostIP, "TOPOLOGY_MINIO_HOST=" + minioIP,
		"TOPOLOGY_PG_PORT=" + pgPort, "TOPOLOGY_TEMPORAL_PORT=" + tempPort, "TOPOLOGY_MEMBERSHIP_PORT=26933", "TOPOLOGY_MINIO_PORT=" + minioPort,
		"TOPOLOGY_MINIO_CONSOLE_PORT=29001", "TOPOLOGY_METRICS_PORT=" + metricPort, "TOPOLOGY_UI_PORT=" + uiPort,
		"TOPOLOGY_GPU_WORKERS=2", "TOPOLOGY_SLOTS=2", "TOPOLOGY_START_WORKERS=0"}
	defer func() {
		if err := topology("down"); err != nil {
			fmt.Fprintf(os.Stderr, "scripts/topology.sh down: %v\n", err)
		}
	}()
	start := time.Now()
	if err := topology("up"); err != nil {
		fmt.Fprintf(os.Stderr, "scripts/topology.sh up: %v\n", err)
		dumpLogs()
		return 1
	}
	fmt.Fprintf(os.Stderr, "topology up in %s\n", time.Since(start).Round(100*time.Millisecond))
	out, err := topologyOutput("plan")
	if err != nil {
		fmt.Fprintf(os.Stderr, "scripts/topology.sh plan: %v\n", err)
		return 1
	}
	_, planned = parsePlan(out)
	for k, v := range planned["rlsweep-control"].env {
		cliEnv = append(cliEnv, k+"="+v)
		_ = os.Setenv(k, v) // the test reads the store and the server as the CLI does
	}
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	failed = code != 0
	return code
}

func topology(cmd string) error {
	c := exec.Command("../../scripts/topology.sh", cmd)
	c.Env = append(os.Environ(), settings...)
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	return c.Run()
}

func topologyOutput(cmd string) ([]byte, error) {
	c := exec.Command("../../scripts/topology.sh", cmd)
	c.Env = append(os.Environ(), settings...)
	c.Stderr = os.Stderr
	return c.Output()
}

// dumpLogs prints the tail of every service log, for a failure's post-mortem.
func dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(stateDir, "logs", "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 1500 {
			b = b[len(b)-1500:]
		}
		fmt.Fprintf(os.Stderr, "==== %s (tail)\n%s\n", l, b)
	}
}

func cleanupNet() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], nsPrefix) {
			_ = exec.Command("ip", "netns", "del", f[0]).Run()
		}
	}
	out, _ = exec.Command("ip", "-o", "link", "show").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], "rlstopo") {
			_ = exec.Command("ip", "link", "del", strings.TrimSuffix(strings.Split(f[1], "@")[0], ":")).Run()
		}
	}
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// workerHost is a network namespace with one veth link to the host's bridge and one rlsweep worker.
type workerHost struct {
	name, ns, veth, addr string
	cmd                  *exec.Cmd
	done                 chan struct{} // closed when cmd has exited
	log                  string
}

// hosts are the worker hosts of the running test, by namespace, for explain.
var (
	hostsMu sync.Mutex
	hosts   = map[string]*workerHost{}
)

// cmdOutput runs a command and returns its combined output, or the error after it.
func cmdOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s(%s: %v)", out, strings.Join(append([]string{name}, args...), " "), err)
	}
	return string(out)
}

// netState is what explains a host that cannot reach the services: its namespace's neighbours,
// routes, links and TCP connections, the host side's neighbour entry and connections for its address,
// and the tail of its worker's log.
func (h *workerHost) netState() string {
	var b strings.Builder
	for _, c := range [][]string{
		{"ip", "-n", h.ns, "neigh"},
		{"ip", "-n", h.ns, "route"},
		{"ip", "-n", h.ns, "link"},
		{"ip", "netns", "exec", h.ns, "ss", "-tnp"},
		{"ip", "neigh", "show", "to", h.addr},
		{"ip", "link", "show", h.veth},
		{"ss", "-tnp", "dst", h.addr},
	} {
		fmt.Fprintf(&b, "$ %s\n%s", strings.Join(c, " "), cmdOutput(c[0], c[1:]...))
	}
	if l, err := os.ReadFile(h.log); err == nil {
		if len(l) > 3000 {
			l = l[len(l)-3000:]
		}
		fmt.Fprintf(&b, "$ tail %s\n%s", h.log, l)
	}
	return b.String()
}

// hostConns returns the TCP connections established on the host (the server's, MinIO's) with addr.
func hostConns(addr string) string {
	out, _ := exec.Command("ss", "-Htn", "state", "established", "dst", addr).Output()
	return strings.TrimSpace(string(out))
}

// reach dials addr (host:port) from inside namespace ns, within 2 s.
func reach(ns, addr string) error {
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command("ip", "netns", "exec", ns, "timeout", "2", "bash", "-c",
		fmt.Sprintf("exec 3<>/dev/tcp/%s/%s", host, port)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// startHost creates namespace n (its address subnet.10+n) and starts in it the worker that
// scripts/topology.sh plans as service svc, with that service's command and environment.
func startHost(t *testing.T, n int, svc string, extraEnv ...string) *workerHost {
	t.Helper()
	return startHostWith(t, n, svc, "", extraEnv...)
}

// startHostWith is startHost with the worker's binary replaced by bin (unless empty).
func startHostWith(t *testing.T, n int, svc, bin string, extraEnv ...string) *workerHost {
	t.Helper()
	p, ok := planned[svc]
	if !ok {
		t.Fatalf("scripts/topology.sh plan has no service %s", svc)
	}
	if bin != "" {
		p.argv = append([]string{bin}, p.argv[1:]...)
	}
	return startHostAs(t, n, svc, p, extraEnv...)
}

// startHostAs creates namespace n and starts in it, under the name svc, the worker p describes (its
// argv and environment).
func startHostAs(t *testing.T, n int, svc string, p service, extraEnv ...string) *workerHost {
	t.Helper()
	h := makeHost(t, n, svc, "")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + stateDir}
	for k, v := range p.env {
		env = append(env, k+"="+v)
	}
	env = append(env, extraEnv...)
	argv := append([]string{"netns", "exec", h.ns}, p.argv...)
	f, err := os.Create(h.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.stop(t); f.Close() })
	// A worker that cannot reach the server at start exits; compose and Kubernetes start it again
	// (restart: unless-stopped, a Deployment), and so does this.
	for attempt := 1; ; attempt++ {
		h.cmd = exec.Command("ip", argv...) // ip netns exec execs the worker: h.cmd's process is the worker
		h.cmd.Env = env
		h.cmd.Stdout, h.cmd.Stderr = f, f
		if err := h.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h.done = make(chan struct{})
		go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(h.cmd, h.done)
		ready := false
		deadline := time.Now().Add(time.Minute)
		for !ready && time.Now().Before(deadline) {
			select {
			case <-h.done:
				deadline = time.Now()
			case <-time.After(200 * time.Millisecond):
				b, _ := os.ReadFile(h.log)
				ready = bytes.Count(b, []byte("worker: control=")) == attempt
			}
		}
		if ready {
			return h
		}
		if attempt == 5 {
			t.Fatalf("worker %s on %s did not start in 5 attempts; see %s\n%s", svc, h.ns, h.log, h.netState())
		}
		_ = h.cmd.Process.Kill()
		<-h.done
		t.Logf("worker %s on %s exited or hung at start (attempt %d); starting it again", svc, h.ns, attempt)
		time.Sleep(2 * time.Second)
	}
}

// makeHost creates namespace n (its address subnet.10+n) with its veth link into the bridge (the
// host's end with address mac unless empty), for service svc's worker, and waits until the namespace
// reaches the frontend and MinIO. It starts no worker; the host goes at the test's end.
func makeHost(t *testing.T, n int, svc, mac string) *workerHost {
	t.Helper()
	h := &workerHost{name: svc, ns: fmt.Sprintf("%s%d", nsPrefix, n), veth: fmt.Sprintf("rlstopo%dh", n),
		addr: fmt.Sprintf("%s.%d", subnet, 10+n), done: make(chan struct{})}
	close(h.done) // no worker yet
	// A namespace's links go with it only once the kernel's asynchronous cleanup gets to it: delete the
	// host's end of the pair (which takes the far end with it) before and after. Whatever an earlier
	// run left of this host goes first: its namespace, its link, the host's neighbour entry for its
	// address (the MAC of a link that is gone).
	_ = exec.Command("ip", "link", "del", h.veth).Run()
	_ = exec.Command("ip", "netns", "del", h.ns).Run()
	_ = exec.Command("ip", "neigh", "flush", "to", h.addr).Run()
	ip(t, "netns", "add", h.ns)
	t.Cleanup(func() {
		// The worker has exited (the cleanup below runs first). A connection of its that the server
		// still holds open keeps the worker's last polls open at the server, which then hands the next
		// test's first tasks (a sweep's Plan) to a worker that is gone, where they wait out their
		// timeouts. The closing packets can be lost: deleting the link at once drops those still in
		// the host's backlog, and even with the link kept, a server connection sometimes outlives the
		// worker. So the link stays until the host has no connection with the worker's address left,
		// and what is left after 5 s the host's kernel destroys (ss -K), which the server sees at once.
		deadline := time.Now().Add(5 * time.Second)
		for hostConns(h.addr) != "" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if c := hostConns(h.addr); c != "" {
			t.Logf("%s: connections with %s still established on the host 5 s after its worker exited, destroyed:\n%s\n$ ss -tani dst %s\n%s$ ip netns exec %s ss -tanpi\n%s",
				h.ns, h.addr, c, h.addr, cmdOutput("ss", "-tani", "dst", h.addr), h.ns, cmdOutput("ip", "netns", "exec", h.ns, "ss", "-tanpi"))
			if out, err := exec.Command("ss", "-K", "-Htn", "state", "established", "dst", h.addr).CombinedOutput(); err != nil {
				t.Errorf("ss -K dst %s: %v\n%s", h.addr, err, out)
			}
			if c := hostConns(h.addr); c != "" {
				t.Errorf("%s: connections with %s still established after ss -K:\n%s", h.ns, h.addr, c)
			}
		}
		_ = exec.Command("ip", "link", "del", h.veth).Run()
		_ = exec.Command("ip", "netns", "del", h.ns).Run()
		_ = exec.Command("ip", "neigh", "flush", "to", h.addr).Run()
		hostsMu.Lock()
		delete(hosts, h.ns)
		hostsMu.Unlock()
	})
	link := []string{"link", "add", h.veth}
	if mac != "" {
		link = append(link, "address", mac)
	}
	ip(t, append(link, "type", "veth", "peer", "name", "eth0", "netns", h.ns)...)
	ip(t, "link", "set", h.veth, "master", bridge, "up")
	ip(t, "-n", h.ns, "addr", "add", h.addr+"/24", "dev", "eth0")
	ip(t, "-n", h.ns, "link", "set", "eth0", "up")
	ip(t, "-n", h.ns, "link", "set", "lo", "up")
	h.log = filepath.Join(stateDir, "logs", fmt.Sprintf("%s-%s.log", t.Name(), svc))
	hostsMu.Lock()
	hosts[h.ns] = h
	hostsMu.Unlock()
	// The worker starts once the namespace reaches the frontend and MinIO over its link.
	for _, addr := range []string{hostIP + ":" + tempPort, minioIP + ":" + minioPort} {
		start := time.Now()
		err := reach(h.ns, addr)
		for err != nil && time.Since(start) < 20*time.Second {
			time.Sleep(250 * time.Millisecond)
			err = reach(h.ns, addr)
		}
		if err != nil {
			t.Fatalf("%s cannot reach %s after %s: %v\n%s", h.ns, addr, time.Since(start).Round(100*time.Millisecond), err, h.netState())
		}
	}
	return h
}

func (h *workerHost) stop(t *testing.T) {
	select {
	case <-h.done:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(3 * time.Minute):
		t.Errorf("worker %s still running 3 minutes after SIGTERM; killed", h.name)
		_ = h.cmd.Process.Kill()
		<-h.done
	}
}

// startWorkers starts the control worker and the two GPU-class workers, each on a host of its own.
func startWorkers(t *testing.T) (control, gpu1, gpu2 *workerHost) {
	return startHost(t, 1, "rlsweep-control"), startHost(t, 2, "rlsweep-gpu"), startHost(t, 3, "rlsweep-gpu-2")
}

// runCLI runs the plain rlsweep CLI on the host with the environment of docker-compose.yml's workers.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	c := exec.Command(planned["rlsweep-control"].argv[0], args...)
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + stateDir}, cliEnv...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("rlsweep %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

type sweepRun struct {
	id, pidDir string
	trials     int
	total      int64
	submitted  time.Time
}

// submit writes a spec of trials × seconds-long scripted-trainer trials, checkpointing every second, and
// submits it with the CLI.
func submit(t *testing.T, name string, trials int, seconds int) *sweepRun {
	t.Helper()
	return submitSegments(t, name, trials, seconds, 2)
}

// submitSegments is submit with each trial in the given number of segments.
func submitSegments(t *testing.T, name string, trials, seconds, segments int) *sweepRun {
	t.Helper()
	dir := filepath.Join(stateDir, t.Name())
	pidDir := filepath.Join(dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	const recordMS = 100
	total := int64(seconds*1000/recordMS) * recordStep
	var seeds []string
	for i := 1; i <= trials; i++ {
		seeds = append(seeds, strconv.Itoa(i))
	}
	spec := fmt.Sprintf(`name: %s
trainer:
  command: [%q]
  total_steps: %d
  segment_steps: %d
  grace_period: 3s
seeds: [%s]
parameters:
  sleep_ms: {value: %d}
  checkpoint_every: {value: 10}
  pid_dir: {value: %q}
probes: {enabled: false}
concurrency: %d
retries: {max_attempts: 6}
`, name, trainerBin, total, total/int64(segments), strings.Join(seeds, ", "), recordMS, pidDir, trials)
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	id := submitFile(t, p, "--heartbeat-timeout", "10s")
	return &sweepRun{id: id, pidDir: pidDir, trials: trials, total: total, submitted: time.Now()}
}

// submitFile submits the spec at p with the CLI (more flags in args) and returns the sweep's ID; a
// test that fails midway leaves no sweep behind for the next test's workers.
func submitFile(t *testing.T, p string, args ...string) string {
	t.Helper()
	out := runCLI(t, append([]string{"submit", p}, args...)...)
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "submitted" {
			currentSweep = f[1]
			t.Cleanup(func() {
				c := exec.Command(planned["rlsweep-control"].argv[0], "cancel", f[1])
				c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + stateDir}, cliEnv...)
				_ = c.Run()
			})
			return f[1]
		}
	}
	t.Fatalf("no sweep ID in submit's output:\n%s", out)
	return ""
}

func dial(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: hostIP + ":" + tempPort})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// wait waits for the sweep to end and returns how long it took from its submission.
func (s *sweepRun) wait(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	c := dial(t)
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.GetWorkflow(ctx, s.id, "").Get(ctx, nil)
		cancel()
		if err == nil {
			d := time.Since(s.submitted)
			t.Logf("sweep %s done %s after its submission", s.id, d.Round(100*time.Millisecond))
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweep %s not done after %s: %v", s.id, timeout, err)
		}
		time.Sleep(time.Second) // the server may be away
	}
}

// check asserts what every fault must leave: results for every trial, completed at its budget; every
// trial's stored metrics with strictly increasing steps, no duplicate and no gap over one record; no
// trainer left running.
func (s *sweepRun) check(t *testing.T) (trials []string) {
	t.Helper()
	ctx := context.Background()
	store := topologyStore(t)
	res := storedResults(t, store, s.id)
	if len(res.Trials) != s.trials {
		t.Errorf("results.json: %d trials, want %d", len(res.Trials), s.trials)
	}
	for _, tr := range res.Trials {
		trials = append(trials, tr.TrialID)
		if tr.Outcome != results.OutcomeCompleted || tr.Steps != s.total {
			t.Errorf("trial %s: %s at step %d, want completed at %d", tr.TrialID, tr.Outcome, tr.Steps, s.total)
		}
		var m bytes.Buffer
		if err := artifacts.CopyMetrics(ctx, store, s.id, tr.TrialID, metrics.LineStep, &m); err != nil {
			t.Errorf("trial %s: metrics: %v", tr.TrialID, err)
			continue
		}
		last, n := int64(0), 0
		sc := bufio.NewScanner(&m)
		for sc.Scan() {
			rec, err := metrics.ParseJSONLine(sc.Bytes())
			if err != nil {
				t.Errorf("trial %s: metrics line %q: %v", tr.TrialID, sc.Text(), err)
				break
			}
			if rec.Step <= last || rec.Step-last > recordStep {
				t.Errorf("trial %s: metrics step %d after %d: want strictly increasing, no gap over %d", tr.TrialID, rec.Step, last, recordStep)
				break
			}
			last, n = rec.Step, n+1
		}
		if last != s.total {
			t.Errorf("trial %s: metrics end at step %d (%d records), want %d", tr.TrialID, last, n, s.total)
		}
	}
	time.Sleep(2 * time.Second)
	if left := trainerProcs(); len(left) > 0 {
		t.Errorf("trainers still running after the sweep: %v", left)
	}
	return trials
}

// topologyStore is the topology's artifact store (MinIO), as the CLI and the workers reach it.
func topologyStore(t *testing.T) *artifacts.S3 {
	t.Helper()
	store, err := artifacts.NewS3(context.Background(), planned["rlsweep-control"].env["RLSWEEP_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// storedResults is the sweep's results.json in store.
func storedResults(t *testing.T, store *artifacts.S3, id string) results.SweepResults {
	t.Helper()
	r, err := store.Get(context.Background(), artifacts.ResultsKey(id))
	if err != nil {
		t.Fatalf("results.json: %v", err)
	}
	defer r.Close()
	var res results.SweepResults
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	return res
}

// trainerProc is one running scripted trainer: its process, its trial and the network namespace it runs in.
type trainerProc struct {
	pid                 int
	sweep, trial, netns string
}

func trainerProcs() []trainerProc {
	var out []trainerProc
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		comm, err := os.ReadFile(p)
		if err != nil || strings.TrimSpace(string(comm)) != "scripted-traine" {
			continue
		}
		dir := filepath.Dir(p)
		if exe, _ := os.Readlink(filepath.Join(dir, "exe")); !strings.HasPrefix(exe, stateDir+"/") {
			continue // another test's trainer on this machine
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		tp := trainerProc{pid: pid}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("RLSWEEP_TRIAL_ID=")); ok {
				tp.trial = string(v)
			}
			if v, ok := bytes.CutPrefix(kv, []byte("RLSWEEP_SWEEP_ID=")); ok {
				tp.sweep = string(v)
			}
		}
		tp.netns, _ = os.Readlink(filepath.Join(dir, "ns", "net"))
		out = append(out, tp)
	}
	return out
}

// twiceWatch samples the running trainers and records every moment a trial had trainers on two hosts.
type twiceWatch struct {
	mu    sync.Mutex
	twice map[string][]time.Time // trial → sample times at which it ran twice
	stop  chan struct{}
	done  chan struct{}
}

func watchTwice() *twiceWatch {
	w := &twiceWatch{twice: map[string][]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			now := time.Now()
			byTrial := map[string]int{}
			for _, p := range trainerProcs() {
				if p.trial != "" {
					byTrial[p.sweep+" "+p.trial]++
				}
			}
			w.mu.Lock()
			for trial, n := range byTrial {
				if n > 1 {
					w.twice[trial] = append(w.twice[trial], now)
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// end stops sampling and returns, for each trial that ran twice after since, the span it did; it logs
// every trial that ran twice at all, relative to since.
func (w *twiceWatch) end(t *testing.T, since time.Time) map[string]string {
	close(w.stop)
	<-w.done
	out := map[string]string{}
	for trial, ts := range w.twice {
		t.Logf("trial %s ran on two hosts at once from %s to %s relative to %s (%d samples of 250 ms)", trial,
			ts[0].Sub(since).Round(100*time.Millisecond), ts[len(ts)-1].Sub(since).Round(100*time.Millisecond),
			since.Format(time.TimeOnly), len(ts))
		var after []time.Time
		for _, ts := range ts {
			if ts.After(since) {
				after = append(after, ts)
			}
		}
		if len(after) > 0 {
			out[trial] = fmt.Sprintf("%s to %s after", after[0].Sub(since).Round(100*time.Millisecond), after[len(after)-1].Sub(since).Round(100*time.Millisecond))
		}
	}
	return out
}

// waitFor polls cond every 250 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			explain(t)
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// explain logs, for a test that timed out waiting, where the sweep last submitted stands: every
// running trainer and its network namespace, and each open workflow's pending activities (state,
// attempt, the worker that took it last, its last failure).
func explain(t *testing.T) {
	t.Helper()
	for _, p := range trainerProcs() {
		t.Logf("trainer pid %d: sweep %s trial %s in %s", p.pid, p.sweep, p.trial, p.netns)
	}
	for _, n := range []int{1, 2, 3} {
		t.Logf("%s%d is %s", nsPrefix, n, nsOf(fmt.Sprintf("%s%d", nsPrefix, n)))
	}
	hostsMu.Lock()
	var hs []*workerHost
	for _, h := range hosts {
		hs = append(hs, h)
	}
	hostsMu.Unlock()
	sort.Slice(hs, func(i, j int) bool { return hs[i].ns < hs[j].ns })
	for _, h := range hs {
		t.Logf("%s (%s, %s):\n%s", h.ns, h.name, h.addr, h.netState())
	}
	if currentSweep == "" {
		return
	}
	c, err := client.Dial(client.Options{HostPort: hostIP + ":" + tempPort})
	if err != nil {
		t.Logf("explain: %v", err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("RlsweepSweepId = %q AND ExecutionStatus = 'Running'", currentSweep),
	})
	if err != nil {
		t.Logf("explain: list the sweep's workflows: %v", err)
		return
	}
	t.Logf("sweep %s: %d open workflows", currentSweep, len(resp.Executions))
	for _, ex := range resp.Executions {
		d, err := c.DescribeWorkflowExecution(ctx, ex.Execution.GetWorkflowId(), ex.Execution.GetRunId())
		if err != nil {
			t.Logf("explain: describe %s: %v", ex.Execution.GetWorkflowId(), err)
			continue
		}
		if len(d.PendingActivities) == 0 {
			t.Logf("%s: no pending activity (%d pending children)", ex.Execution.GetWorkflowId(), len(d.PendingChildren))
		}
		for _, a := range d.PendingActivities {
			t.Logf("%s: %s %s attempt %d, scheduled %s, last started %s by %q, last heartbeat %s, last failure %q",
				ex.Execution.GetWorkflowId(), a.ActivityType.GetName(), a.State, a.Attempt,
				a.ScheduledTime.AsTime().Format(time.TimeOnly), a.LastStartedTime.AsTime().Format(time.TimeOnly),
				a.LastWorkerIdentity, a.LastHeartbeatTime.AsTime().Format(time.TimeOnly), a.LastFailure.GetMessage())
		}
	}
}

// running returns the trials of the sweep last submitted whose trainers run in h's namespace.
func (h *workerHost) running() []string {
	want := nsOf(h.ns)
	var trials []string
	for _, p := range trainerProcs() {
		if p.netns == want && strings.HasSuffix(currentSweep, p.sweep) && p.sweep != "" {
			trials = append(trials, p.trial)
		}
	}
	sort.Strings(trials)
	return trials
}

// nsOf returns the net:[inode] link name of the named network namespace.
func nsOf(name string) string {
	var st syscall.Stat_t
	if err := syscall.Stat("/var/run/netns/"+name, &st); err != nil {
		return ""
	}
	return fmt.Sprintf("net:[%d]", st.Ino)
}

// baseline is the fault-free sweep's duration, which each fault's cost is measured against.
var baseline time.Duration

const (
	faultTrials  = 8
	faultSeconds = 60
)

// The bridge keeps its own address while worker hosts come and go: a host whose link has a lower
// address than any (which a bridge left to choose takes for its own) joins the bridge, then leaves it,
// and another host reaches the frontend and MinIO throughout, with the neighbour entries it resolved
// before.
func TestBridgeKeepsAddress(t *testing.T) {
	h := makeHost(t, 1, "first", "")
	check := func(when string) {
		t.Helper()
		if b, _ := os.ReadFile("/sys/class/net/" + bridge + "/address"); strings.TrimSpace(string(b)) != bridgeMAC {
			t.Errorf("%s: the bridge's address is %s, want %s", when, bytes.TrimSpace(b), bridgeMAC)
		}
		for _, addr := range []string{hostIP + ":" + tempPort, minioIP + ":" + minioPort} {
			if err := reach(h.ns, addr); err != nil {
				t.Errorf("%s: %s cannot reach %s: %v\n%s", when, h.ns, addr, err, h.netState())
			}
		}
	}
	check("with one host")
	low := makeHost(t, 2, "lowest", "02:00:00:00:00:01")
	check("after a link with the lowest address joined the bridge")
	ip(t, "link", "del", low.veth)
	check("after that link left the bridge")
}

// A sweep submitted with the plain CLI (TEMPORAL_ADDRESS at the frontend) completes on GPU-class workers
// in two network namespaces, the control worker in a third.
func TestSweepAcrossHosts(t *testing.T) {
	_, g1, g2 := startWorkers(t)
	s := submit(t, "across", faultTrials, faultSeconds)
	seen := map[string]bool{}
	waitFor(t, 2*time.Minute, "trainers on both GPU-class hosts", func() bool {
		seen[g1.ns] = seen[g1.ns] || len(g1.running()) > 0
		seen[g2.ns] = seen[g2.ns] || len(g2.running()) > 0
		return seen[g1.ns] && seen[g2.ns]
	})
	baseline = s.wait(t, 10*time.Minute)
	s.check(t)
	t.Logf("fault-free sweep of %d trials × %d s on 2 hosts × 2 slots: %s", faultTrials, faultSeconds, baseline.Round(100*time.Millisecond))

	// The Web UI answers on the host and reads the server: it lists the sweep's workflows. The list
	// comes from the visibility store, which lags the sweep's end: poll it to a deadline.
	var uiLast string
	listed := func() bool {
		resp, err := http.Get("http://127.0.0.1:" + uiPort + "/api/v1/namespaces/default/workflows?query=" +
			url.QueryEscape(fmt.Sprintf("RlsweepSweepId = %q", s.id)))
		if err != nil {
			uiLast = err.Error()
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		uiLast = fmt.Sprintf("%s: %.500s", resp.Status, body)
		return resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(s.id))
	}
	for deadline := time.Now().Add(time.Minute); !listed(); time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Errorf("Web UI: the sweep's workflows for a minute after it ended: %s, want 200 naming %s", uiLast, s.id)
			break
		}
	}

	// The built-in trainer too: the README's quickstart, probes included, every trial completed.
	out := runCLI(t, "submit", "../../examples/quickstart.yaml", "--watch")
	if !strings.Contains(out, "completed: 4 trials (4 completed)") {
		t.Errorf("quickstart on the topology: want 4 trials completed, got\n%s", out)
	}
}

func logCost(t *testing.T, d time.Duration) {
	if baseline > 0 {
		t.Logf("the fault cost %s (sweep %s, fault-free %s)", (d - baseline).Round(100*time.Millisecond), d.Round(100*time.Millisecond), baseline.Round(100*time.Millisecond))
	} else {
		t.Logf("sweep %s (run TestSweepAcrossHosts first for the fault-free time)", d.Round(100*time.Millisecond))
	}
}

// A GPU-class worker host cut off the network for 2 minutes (its link down), then restored. Its two
// trials, one 4-minute segment each, fail over to an idle host from their last checkpoint once the
// heartbeat timeout (10 s) passes; the cut-off host, which cannot reach the server for as long, stops its
// own trainers once the server has gone 10 s - 3 s grace period - 2 s without a heartbeat, so their grace
// period ends before the retry, no trial trains on two hosts at once (past a few seconds of sampling),
// and the stored metrics hold every step once.
func TestWorkerHostPartition(t *testing.T) {
	startHost(t, 1, "rlsweep-control")
	g1 := startHost(t, 2, "rlsweep-gpu")
	s := submitSegments(t, "partition", 2, 240, 1)
	waitFor(t, 2*time.Minute, "both trials training on "+g1.ns, func() bool { return len(g1.running()) == 2 })
	g2 := startHost(t, 3, "rlsweep-gpu-2") // idle: where the trials fail over to
	time.Sleep(5 * time.Second)            // past a few checkpoints
	w := watchTwice()
	cut := time.Now()
	ip(t, "link", "set", g1.veth, "down")
	t.Logf("host %s cut off, running %v", g1.ns, g1.running())
	waitFor(t, 90*time.Second, "the cut-off host to stop its trainers", func() bool { return len(g1.running()) == 0 })
	t.Logf("%s stopped its trainers %s after the cut", g1.ns, time.Since(cut).Round(100*time.Millisecond))
	waitFor(t, 90*time.Second, "the trials to fail over to "+g2.ns, func() bool { return len(g2.running()) == 2 })
	t.Logf("failover: both trials train on %s %s after the cut", g2.ns, time.Since(cut).Round(100*time.Millisecond))
	time.Sleep(time.Until(cut.Add(2 * time.Minute)))
	ip(t, "link", "set", g1.veth, "up")
	back := time.Now()
	t.Logf("host %s back after %s, running %v; %s runs %v", g1.ns, back.Sub(cut).Round(100*time.Millisecond), g1.running(), g2.ns, g2.running())
	d := s.wait(t, 10*time.Minute)
	if twice := w.end(t, cut.Add(15*time.Second)); len(twice) > 0 {
		t.Errorf("trials run on two hosts at once more than 15 s after the cut (heartbeat timeout 10 s): %v", twice)
	}
	s.check(t)
	t.Logf("sweep of 2 × 240 s trials with a 2-minute partition: %s (fault-free: about 240 s plus start-up)", d.Round(100*time.Millisecond))
}

// PostgreSQL stopped for 30 s mid-sweep, then started again.
func TestPostgresRestart(t *testing.T) {
	_, g1, g2 := startWorkers(t)
	s := submit(t, "pgrestart", faultTrials, faultSeconds)
	waitFor(t, 2*time.Minute, "trainers on both hosts", func() bool { return len(g1.running()) > 0 && len(g2.running()) > 0 })
	time.Sleep(5 * time.Second)
	pgctl := func(args ...string) {
		bin, err := exec.Command("../../scripts/install-tools.sh", "postgresql").Output()
		if err != nil {
			t.Fatal(err)
		}
		argv := append([]string{"-u", "postgres", "--", filepath.Join(strings.TrimSpace(string(bin)), "pg_ctl"), "-D", filepath.Join(stateDir, "postgresql")}, args...)
		if out, err := exec.Command("runuser", argv...).CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	pgctl("-m", "fast", "-w", "stop")
	down := time.Now()
	time.Sleep(30 * time.Second)
	pgctl("-l", filepath.Join(stateDir, "logs", "postgresql.log"), "-w", "-o", "-p "+pgPort+" -c listen_addresses="+hostIP+" -k "+filepath.Join(stateDir, "postgresql"), "start")
	t.Logf("PostgreSQL down for %s", time.Since(down).Round(100*time.Millisecond))
	d := s.wait(t, 10*time.Minute)
	s.check(t)
	logCost(t, d)
}

// The Temporal server SIGKILLed mid-sweep and started again by scripts/topology.sh up.
func TestTemporalServerKill(t *testing.T) {
	_, g1, g2 := startWorkers(t)
	s := submit(t, "serverkill", faultTrials, faultSeconds)
	waitFor(t, 2*time.Minute, "trainers on both hosts", func() bool { return len(g1.running()) > 0 && len(g2.running()) > 0 })
	time.Sleep(5 * time.Second)
	b, err := os.ReadFile(filepath.Join(stateDir, "run", "temporal.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitFor(t, 10*time.Second, "the server to die", func() bool { return syscall.Kill(pid, 0) != nil })
	time.Sleep(3 * time.Second)
	if err := topology("up"); err != nil {
		t.Fatalf("scripts/topology.sh up after the kill: %v", err)
	}
	t.Logf("server killed, back (namespace and search attributes answering) after %s", time.Since(killed).Round(100*time.Millisecond))
	d := s.wait(t, 10*time.Minute)
	s.check(t)
	logCost(t, d)
}

// MinIO unreachable from one GPU-class host for 60 s while its trainers checkpoint. The host keeps its
// link (and Temporal): a blackhole route to MinIO's own address drops every packet to MinIO alone.
func TestMinioUnreachableFromOneHost(t *testing.T) {
	_, g1, g2 := startWorkers(t)
	s := submit(t, "minio", faultTrials, faultSeconds)
	waitFor(t, 2*time.Minute, "trainers on both hosts", func() bool { return len(g1.running()) > 0 && len(g2.running()) > 0 })
	time.Sleep(5 * time.Second)
	ip(t, "-n", g1.ns, "route", "add", "blackhole", minioIP+"/32")
	cut := time.Now()
	t.Logf("MinIO cut off from %s, which runs %v", g1.ns, g1.running())
	time.Sleep(60 * time.Second)
	ip(t, "-n", g1.ns, "route", "del", "blackhole", minioIP+"/32")
	t.Logf("MinIO reachable again from %s after %s", g1.ns, time.Since(cut).Round(100*time.Millisecond))
	d := s.wait(t, 10*time.Minute)
	s.check(t)
	logCost(t, d)
}

// skewedBuild builds pkg into out with a time package whose time.Now adds $FAKE_WALL_SKEW_S seconds to
// the wall clock (the monotonic clock untouched), as on a host whose clock is set wrong. The kernel
// cannot do this per process: time namespaces offset CLOCK_MONOTONIC and CLOCK_BOOTTIME only, never
// CLOCK_REALTIME, and libfaketime's LD_PRELOAD does not reach Go's static binaries, which read the
// clock through the vDSO.
func skewedBuild(t *testing.T, pkg, out string) {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(strings.TrimSpace(string(goroot)), "src", "time", "time.go")
	src, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	const now = "func Now() Time {\n\tsec, nsec, mono := runtimeNow()\n"
	const imp = "import (\n"
	if !bytes.Contains(src, []byte(now)) || !bytes.Contains(src, []byte(imp)) {
		t.Fatalf("%s: no %q to patch: this Go's time.Now differs from the one the clock test knows", orig, now)
	}
	src = bytes.Replace(src, []byte(now), []byte(now+"\tsec += wallSkew\n"), 1)
	src = bytes.Replace(src, []byte(imp), []byte(imp+"\t\"syscall\"\n"), 1)
	src = append(src, []byte(`
var wallSkew = func() int64 {
	v, _ := syscall.Getenv("FAKE_WALL_SKEW_S")
	n, neg := int64(0), false
	for i, c := range v {
		if i == 0 && c == '-' {
			neg = true
			continue
		}
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}()
`)...)
	dir := t.TempDir()
	patched := filepath.Join(dir, "time.go")
	if err := os.WriteFile(patched, src, 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{orig: patched}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if b, err := exec.Command("go", "build", "-overlay", ov, "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build -overlay %s: %v\n%s", pkg, err, b)
	}
	t.Logf("built %s with a skewable wall clock in %s", pkg, time.Since(start).Round(100*time.Millisecond))
}

// A GPU-class worker host whose wall clock is 5 minutes ahead: its worker and its trainers read a
// clock 300 s off (checked through a trainer's records), the control worker's and the server's are right.
func TestWorkerHostClockSkew(t *testing.T) {
	bin := filepath.Join(stateDir, "skewed", "rlsweep")
	skewedTrainer := filepath.Join(stateDir, "skewed", "scripted-trainer")
	skewedBuild(t, "../../cmd/rlsweep", bin)
	skewedBuild(t, "../../integration/testdata/scripted-trainer", skewedTrainer)
	// Every host runs the skewed trainer build; only where FAKE_WALL_SKEW_S is set does it read a wrong clock.
	orig := trainerBin
	trainerBin = skewedTrainer
	defer func() { trainerBin = orig }()
	startHost(t, 1, "rlsweep-control")
	startHost(t, 2, "rlsweep-gpu")
	g2 := startHostWith(t, 3, "rlsweep-gpu-2", bin, "FAKE_WALL_SKEW_S=300")
	s := submit(t, "clock", faultTrials, faultSeconds)
	waitFor(t, 2*time.Minute, "trainers on the skewed host", func() bool { return len(g2.running()) > 0 })
	d := s.wait(t, 10*time.Minute)
	end := time.Now()
	trials := s.check(t)
	logCost(t, d)
	// The skew reached the skewed host's trainers: their records carry wall_ns from 5 minutes ahead. A
	// record written on a right clock is at most end; one written on the skewed clock at least
	// submitted + 300 s, which is later as long as the sweep took under 300 s.
	if end.Sub(s.submitted) >= 250*time.Second {
		t.Fatalf("the sweep took %s: too long to tell records on the skewed clock (5 min ahead) from the others", end.Sub(s.submitted))
	}
	store := topologyStore(t)
	ahead, total := 0, 0
	future := float64(end.Add(25 * time.Second).UnixNano())
	for _, trial := range trials {
		var m bytes.Buffer
		if err := artifacts.CopyMetrics(context.Background(), store, s.id, trial, metrics.LineStep, &m); err != nil {
			t.Fatalf("trial %s: %v", trial, err)
		}
		sc := bufio.NewScanner(&m)
		for sc.Scan() {
			rec, _ := metrics.ParseJSONLine(sc.Bytes())
			total++
			if rec.Values["wall_ns"] > future {
				ahead++
			}
		}
	}
	t.Logf("%d of %d records written on the skewed host's clock (after the sweep's end + 25 s)", ahead, total)
	if ahead == 0 {
		t.Errorf("no record carries the skewed host's clock: the skew did not take effect, the test proves nothing")
	}
}
