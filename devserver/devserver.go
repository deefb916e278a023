// Package devserver starts the pinned Temporal CLI dev server that `rlsweep dev` and the integration
// tests run on: a SQLite file for state, the Web UI, and rlsweep's search attributes registered. It is
// closed to web pages (docs/security.md): the frontend's HTTP API refuses every request
// (ClosedHTTPArgs) and the Web UI is served behind a guard that refuses foreign Host and Origin headers.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Version is the pinned Temporal CLI release; scripts/install-tools.sh builds it.
const Version = "v1.5.1"

// SQLiteArgs are the dev server flags rlsweep uses with a SQLite file: write-ahead logging with
// synchronous=NORMAL. A commit is then one append to the log instead of a journal and two fsyncs: it
// survives the server process being killed (the log is in the OS's hands) and may be lost only to an
// OS crash or a power cut. A sweep's scheduling rate is bound by these commits (docs/BENCHMARKS.md).
func SQLiteArgs() []string {
	return []string{"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"}
}

// MatchingArgs give every task queue one partition. The server's default of four suits a cluster; on
// a single dev server a task written to a partition no poller is waiting on is forwarded to another,
// which costs tens of milliseconds per workflow and activity task.
func MatchingArgs() []string {
	return []string{"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1"}
}

// QueueArgs lift the history service's task-queue reader rates. The dev server runs one history shard,
// and each of its queue readers (transfer: workflow and activity tasks, child starts, child results;
// timer: timeouts and sleeps) polls the database at most 20 times a second by default. Every hop of a
// trial's cycle waits for such a poll, so the limit, meant to protect a shared database from many
// shards, adds tens of milliseconds per hop on a single machine.
func QueueArgs() []string {
	return []string{"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		"--dynamic-config-value", "history.timerProcessorMaxPollRPS=1000"}
}

// EnsureSearchAttributes registers on namespace every attribute of attrs it lacks, and returns their
// names, sorted. The dev server registers its --search-attribute flags only when it creates its
// database, so a state directory from an older rlsweep lacks the attributes added since; this brings it
// up to date without touching what is there. An attribute registered with another type is an error.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string, attrs temporal.SearchAttributes) ([]string, error) {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, err
	}
	missing := map[string]enumspb.IndexedValueType{}
	var names []string
	for k := range attrs.GetUntypedValues() {
		want := enumspb.IndexedValueType(k.GetValueType())
		got, ok := have.GetCustomAttributes()[k.GetName()]
		switch {
		case !ok:
			missing[k.GetName()] = want
			names = append(names, k.GetName())
		case got != want:
			return nil, fmt.Errorf("search attribute %s: registered as %s, rlsweep needs %s", k.GetName(), got, want)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	sort.Strings(names)
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// Options configures a dev server.
type Options struct {
	Binary           string // the temporal executable; "" finds it with FindBinary
	DBFile           string // SQLite file; "" keeps state in memory
	IP               string // default 127.0.0.1
	Port             int    // frontend port; default 7233
	UIPort           int    // default Port+1000; negative disables the Web UI
	Namespace        string // default "default"
	SearchAttributes temporal.SearchAttributes
	Log              io.Writer // the server's output; nil discards it
	// Env is the server's environment; nil gives it this process's.
	Env []string
}

// Server is a running dev server this process started.
type Server struct {
	cmd   *exec.Cmd
	done  chan struct{}
	guard *uiGuard // serves the Web UI on UIPort; nil when headless
	Addr  string   // host:port of the frontend
	UI    string   // Web UI base URL, "" when disabled
}

// FindBinary returns the temporal executable: $RLSWEEP_TEMPORAL_BIN, the pinned build in
// $(go env GOPATH)/bin, or temporal on PATH.
func FindBinary() (string, error) {
	if p := os.Getenv("RLSWEEP_TEMPORAL_BIN"); p != "" {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	pinned := filepath.Join(gopath, "bin", "temporal-"+Version)
	if _, err := os.Stat(pinned); err == nil {
		return pinned, nil
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("temporal CLI %s not found: run scripts/install-tools.sh temporal, or set RLSWEEP_TEMPORAL_BIN", Version)
}

func (o *Options) defaults() error {
	if o.Binary == "" {
		b, err := FindBinary()
		if err != nil {
			return err
		}
		o.Binary = b
	}
	if o.IP == "" {
		o.IP = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 7233
	}
	if o.UIPort == 0 {
		o.UIPort = o.Port + 1000
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Running reports whether something already answers on the frontend address.
func Running(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// startAttempts bounds the starts of a dev server that exits during start-up because a port it binds
// was taken: besides the ports it is given, it binds ports of its own (its services', the HTTP API's,
// the Web UI's inner one), each picked free and then taken by the time it binds, now and then, by
// another process of the same machine picking ports the same way.
const startAttempts = 3

// Start launches the dev server and waits until its frontend answers health checks. A server that
// exits during start-up with a port taken ("address already in use" in its log) is started again, at
// most startAttempts times in all.
func Start(ctx context.Context, o Options) (*Server, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(o.IP, strconv.Itoa(o.Port))
	for attempt := 1; ; attempt++ {
		if Running(addr) {
			return nil, fmt.Errorf("dev server: %s is already in use", addr)
		}
		tail := &logTail{}
		s, err := startOnce(ctx, o, io.MultiWriter(o.Log, tail))
		if err == nil || !errors.Is(err, errExited) {
			return s, err
		}
		last := tail.lastLine()
		if attempt < startAttempts && strings.Contains(last, "address already in use") {
			continue
		}
		if last != "" {
			return nil, fmt.Errorf("%w; its log ends: %s", err, last)
		}
		return nil, err
	}
}

// startOnce starts the server once, its output to log.
func startOnce(ctx context.Context, o Options, log io.Writer) (*Server, error) {
	args := []string{"server", "start-dev", "--ip", o.IP, "--port", strconv.Itoa(o.Port),
		"--namespace", o.Namespace, "--log-level", "warn",
		"--dynamic-config-value", "frontend.enableServerVersionCheck=false"}
	args = append(args, ClosedHTTPArgs()...)
	args = append(args, MatchingArgs()...)
	args = append(args, QueueArgs()...)
	if o.DBFile != "" {
		if err := os.MkdirAll(filepath.Dir(o.DBFile), 0o755); err != nil {
			return nil, fmt.Errorf("dev server state: %w", err)
		}
		args = append(args, "--db-filename", o.DBFile)
		args = append(args, SQLiteArgs()...)
	}
	s := &Server{Addr: net.JoinHostPort(o.IP, strconv.Itoa(o.Port)), done: make(chan struct{})}
	if o.UIPort > 0 {
		// The UI server runs on a loopback port of its own, behind the guard on UIPort (uiGuard).
		inner, err := freeLoopbackPort("127.0.0.1")
		if err != nil {
			return nil, fmt.Errorf("dev server Web UI: %w", err)
		}
		if s.guard, err = startUIGuard(o.IP, o.UIPort, fmt.Sprintf("http://127.0.0.1:%d", inner)); err != nil {
			return nil, fmt.Errorf("dev server: %w", err)
		}
		args = append(args, "--ui-ip", "127.0.0.1", "--ui-port", strconv.Itoa(inner))
		s.UI = fmt.Sprintf("http://localhost:%d", o.UIPort)
	} else {
		args = append(args, "--headless")
	}
	for k := range o.SearchAttributes.GetUntypedValues() {
		args = append(args, "--search-attribute", k.GetName()+"="+k.GetValueType().String())
	}
	s.cmd = exec.Command(o.Binary, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.Env = o.Env
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := s.cmd.Start(); err != nil {
		s.closeGuard()
		return nil, fmt.Errorf("start dev server %s: %w", o.Binary, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := waitReady(ctx, s, o.Namespace); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// errExited: the server exited before its frontend answered.
var errExited = errors.New("dev server exited during start-up (is the port free? see its log)")

// logTail keeps the end of what the server wrote, for the error of a server that exited.
type logTail struct {
	mu  sync.Mutex
	buf []byte
}

const logTailBytes = 8 << 10

func (t *logTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if n := len(t.buf); n > logTailBytes {
		t.buf = append(t.buf[:0], t.buf[n-logTailBytes:]...)
	}
	return len(p), nil
}

// lastLine is the last line that holds more than white space, or the line that says a port was taken
// when one does (the server may log more after it as it shuts down).
func (t *logTail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(string(t.buf), "\n")
	last := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.Contains(l, "address already in use"):
			return l
		case l != "":
			last = l
		}
	}
	return last
}

func waitReady(ctx context.Context, s *Server, ns string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		c, err := client.Dial(client.Options{HostPort: s.Addr, Namespace: ns, Logger: quietLogger{}})
		if err != nil {
			continue
		}
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		c.Close()
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("dev server on %s not ready after 2 minutes", s.Addr)
}

// Stop asks the server to shut down (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (s *Server) Stop() {
	s.closeGuard()
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-s.done
	}
}

// Kill stops the server at once with SIGKILL, as a crash would.
func (s *Server) Kill() {
	s.closeGuard()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

func (s *Server) closeGuard() {
	if s.guard != nil {
		s.guard.close()
	}
}

// Signal sends sig to the server's process group: SIGSTOP and SIGCONT freeze and resume it, as a
// stalled host or a long garbage-collection pause would look to its clients.
func (s *Server) Signal(sig syscall.Signal) error {
	return syscall.Kill(-s.cmd.Process.Pid, sig)
}

// Pid is the server process's ID (the leader of its process group).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Done is closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
