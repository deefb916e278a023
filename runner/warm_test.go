package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain checks that the tests leave no process behind: no warm supervisor, no trainer.
func TestMain(m *testing.M) {
	code := m.Run()
	CloseIdle()
	if kids := children(); len(kids) > 0 && os.Getenv(playWorkerEnv) == "" {
		for _, pid := range kids {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			fmt.Fprintf(os.Stderr, "the tests left a child process: %q, %s\n", cmdline, stat)
		}
		code = 1
	}
	os.Exit(code)
}

// children lists this process's child processes, zombies included.
func children() []int {
	var kids []int
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				kids = append(kids, pid)
			}
		}
	}
	return kids
}

// useMode makes Start get its supervisors as mode says until the test ends, and then closes the one
// kept waiting.
func useMode(t testing.TB, mode int32) {
	old := startMode.Swap(mode)
	t.Cleanup(func() {
		startMode.Store(old)
		CloseIdle()
	})
}

// modes runs f with cold supervisors and with warm ones, under each isolation this machine allows.
func modes(t *testing.T, f func(t *testing.T)) {
	for _, iso := range isolations() {
		for _, m := range []struct {
			name string
			mode int32
		}{{"cold", coldOnly}, {"warm", warmAlways}} {
			t.Run(iso.String()+"/"+m.name, func(t *testing.T) {
				useIsolation(t, iso)
				useMode(t, m.mode)
				f(t)
			})
		}
	}
}

// isolations lists the isolations a supervisor can be started under here, Subreaper always.
func isolations() []Isolation {
	var l []Isolation
	for _, m := range []Isolation{PIDNamespace, UserPIDNamespace} {
		if probeIsolation(m) {
			l = append(l, m)
		}
	}
	return append(l, Subreaper)
}

// useIsolation starts supervisors under m until the test ends.
func useIsolation(t testing.TB, m Isolation) {
	CloseIdle() // one kept waiting was started under another
	old := forcedIsolation.Swap(int32(m))
	t.Cleanup(func() {
		forcedIsolation.Store(old)
		CloseIdle()
	})
}

// waitWarm waits until a warm supervisor is waiting, starting one if none is, and returns its PID.
func waitWarm(t testing.TB) int {
	t.Helper()
	for range 3 {
		refill()
		warm.Lock()
		var s *warmSupervisor
		if n := len(warm.idle); n > 0 {
			s = warm.idle[n-1]
		}
		starting := warm.starting
		warm.Unlock()
		if s != nil {
			return s.cmd.Process.Pid
		}
		if starting != nil {
			<-starting
		}
	}
	t.Fatal("no warm supervisor started")
	return 0
}

// The supervisor kept waiting holds none of the worker's environment, and the trainer it starts gets
// exactly the environment Start is given: not the worker's, and nothing added.
func TestWarmSupervisorHoldsNoWorkerEnvironment(t *testing.T) {
	t.Setenv("RLSWEEP_TEST_WORKER_SECRET", "hunter2")
	useMode(t, warmIfWaiting)
	pid := waitWarm(t)
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if len(environ) != 0 {
		t.Errorf("the warm supervisor's environment = %q, want none", environ)
	}
	dir := t.TempDir()
	log := trainerLog(t, dir)
	env := []string{"A=1", "B=two words", "C=$(touch pwned); `x`", "D=\xff"}
	p, err := Start([]string{"env"}, env, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if p.cmd.Process.Pid != pid {
		t.Errorf("the trainer ran under supervisor %d, want the warm one %d", p.cmd.Process.Pid, pid)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "log"))
	if want := strings.Join(env, "\n") + "\n"; string(out) != want || p.ExitCode() != 0 {
		t.Errorf("the trainer's environment = %q (exit %d), want exactly %q", out, p.ExitCode(), want)
	}
	// An empty environment stays empty.
	if err := log.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	pid = waitWarm(t)
	if p, err = Start([]string{"env"}, []string{}, dir, log); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if out, _ := os.ReadFile(filepath.Join(dir, "log")); len(out) != 0 || p.cmd.Process.Pid != pid {
		t.Errorf("the trainer given no environment printed %q under supervisor %d (warm %d), want nothing", out, p.cmd.Process.Pid, pid)
	}
}

// Many trainers running at once each run under a supervisor of their own, the warm one kept waiting
// for one of them, with their own arguments and output.
func TestConcurrentStartsHaveTheirOwnSupervisors(t *testing.T) {
	useMode(t, warmIfWaiting)
	const n = 16
	for round := range 3 {
		warmPID := waitWarm(t)
		dir := t.TempDir()
		procs := make([]*Process, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				log, err := os.Create(filepath.Join(dir, fmt.Sprintf("log.%d", i)))
				if err != nil {
					errs[i] = err
					return
				}
				defer log.Close()
				// Each runs until every one has started.
				procs[i], errs[i] = Start([]string{"/bin/sh", "-c", `echo "$1 $PPID"; while [ ! -e go ]; do sleep 0.01; done`,
					"sh", strconv.Itoa(i)}, []string{}, dir, log)
			})
		}
		wg.Wait()
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var sups []int
		for i, p := range procs {
			if errs[i] != nil {
				t.Fatalf("round %d, start %d: %v", round, i, errs[i])
			}
			<-p.Done()
			out, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("log.%d", i)))
			sup := p.cmd.Process.Pid
			parent := sup // as the trainer sees it: PID 1 of its namespace, if it has one
			if TrainerIsolation() != Subreaper {
				parent = 1
			}
			if want := fmt.Sprintf("%d %d\n", i, parent); string(out) != want || p.ExitCode() != 0 {
				t.Errorf("round %d, trainer %d printed %q (exit %d), want %q", round, i, out, p.ExitCode(), want)
			}
			sups = append(sups, sup)
		}
		slices.Sort(sups)
		if distinct := len(slices.Compact(slices.Clone(sups))); distinct != n {
			t.Errorf("round %d: %d trainers running at once ran under %d supervisors, want one each", round, n, distinct)
		}
		if !slices.Contains(sups, warmPID) {
			t.Errorf("round %d: no trainer ran under the warm supervisor %d", round, warmPID)
		}
	}
}

// A warm supervisor that died while it waited is not used: the trainer starts under a cold one.
func TestKilledWarmSupervisorFallsBackToCold(t *testing.T) {
	useMode(t, warmIfWaiting)
	dir := t.TempDir()
	log := trainerLog(t, dir)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
		pid := waitWarm(t)
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		if sig == syscall.SIGKILL {
			waitGone(t, pid)
		}
		p, err := Start([]string{"/bin/sh", "-c", "exit 3"}, []string{}, dir, log)
		if err != nil {
			t.Fatalf("start after %v to the warm supervisor: %v", sig, err)
		}
		<-p.Done()
		if p.ExitCode() != 3 {
			t.Errorf("after %v to the warm supervisor: exit code %d, want 3", sig, p.ExitCode())
		}
		// A signal other than SIGKILL leaves it running and it still serves, as a cold one would.
		if usedWarm := p.cmd.Process.Pid == pid; usedWarm == (sig == syscall.SIGKILL) {
			t.Errorf("after %v: trainer under supervisor %d, warm one %d", sig, p.cmd.Process.Pid, pid)
		}
		// Killed, it is reaped; one that served waits for the next trainer in a namespace, and is reaped
		// elsewhere (it serves one trainer).
		kept := idlePID(pid)
		if want := sig != syscall.SIGKILL && TrainerIsolation() != Subreaper; kept != want {
			t.Errorf("after %v: supervisor %d kept waiting %v, want %v", sig, pid, kept, want)
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil && !kept {
			t.Errorf("the warm supervisor %d, sent %v, is still there (not reaped)", pid, sig)
		}
		CloseIdle()
	}
}

// idlePID says whether the supervisor pid waits for a trainer (given back after its last one).
func idlePID(pid int) bool {
	warm.Lock()
	defer warm.Unlock()
	return slices.ContainsFunc(warm.idle, func(s *warmSupervisor) bool { return s.cmd.Process.Pid == pid })
}

// waitGone waits until pid has exited (a zombie counts).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// CloseIdle ends and reaps the supervisor kept waiting; a later Start keeps one again.
func TestCloseIdle(t *testing.T) {
	useMode(t, warmIfWaiting)
	pid := waitWarm(t)
	CloseIdle()
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("the warm supervisor %d is still there after CloseIdle", pid)
	}
	if again := waitWarm(t); again == pid {
		t.Errorf("the closed supervisor %d is kept waiting again", pid)
	}
	// One still starting is ended too, without waiting for it to be ready.
	CloseIdle()
	for range 20 {
		refill()
		CloseIdle()
		warm.Lock()
		left := len(warm.idle) > 0 || warm.starting != nil
		warm.Unlock()
		if kids := children(); left || len(kids) > 0 {
			t.Fatalf("after CloseIdle: a supervisor kept %v, children %v", left, kids)
		}
	}
}

// Without a directory the trainer runs in the worker's, and a log that is not a file gets the output
// too (through a cold supervisor).
func TestStartDirAndWriterLog(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	modes(t, func(t *testing.T) {
		log := trainerLog(t, t.TempDir())
		p, err := Start([]string{"pwd"}, []string{}, "", log)
		if err != nil {
			t.Fatal(err)
		}
		<-p.Done()
		if out, _ := os.ReadFile(log.Name()); string(out) != wd+"\n" {
			t.Errorf("trainer without a directory ran in %q, want %q", out, wd)
		}
		var buf strings.Builder
		if p, err = Start([]string{"echo", "to a writer"}, []string{}, "", &buf); err != nil {
			t.Fatal(err)
		}
		<-p.Done()
		if buf.String() != "to a writer\n" {
			t.Errorf("output to a writer = %q, want %q", buf.String(), "to a writer\n")
		}
	})
}

// BenchmarkStart times Start of /bin/true through to Done, with the supervisor started cold and with
// the warm one (ready before each start, as it is at a segment boundary); start-ns/op is the time Start
// itself took, which ends once the trainer runs.
func BenchmarkStart(b *testing.B) {
	for _, m := range []struct {
		name string
		mode int32
	}{{"cold", coldOnly}, {"warm", warmIfWaiting}} {
		b.Run(m.name, func(b *testing.B) {
			useMode(b, m.mode)
			dir := b.TempDir()
			log, err := os.Create(filepath.Join(dir, "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			var starting time.Duration
			for b.Loop() {
				if m.mode != coldOnly {
					b.StopTimer()
					waitWarm(b)
					b.StartTimer()
				}
				t0 := time.Now()
				p, err := Start([]string{"/bin/true"}, []string{}, dir, log)
				starting += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				<-p.Done()
			}
			b.ReportMetric(float64(starting.Nanoseconds())/float64(b.N), "start-ns/op")
		})
	}
}

// What cannot run is an error from Start, with a cold supervisor or a warm one alike, and the supervisor
// is not left behind.
func TestStartErrorsColdAndWarm(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		for _, c := range []struct {
			argv, env []string
			dir, want string
		}{
			{[]string{"/bin/true"}, []string{}, filepath.Join(dir, "missing"), "no such file"},
			{[]string{"/bin/true", "a\x00b"}, []string{}, dir, "invalid argument"},
			{[]string{"/bin/true"}, []string{"A=a\x00b"}, dir, "contains NUL"},
		} {
			p, err := Start(c.argv, c.env, c.dir, log)
			if err == nil {
				<-p.Done()
				t.Errorf("Start(%q, %q, %q) = nil error, want one saying %q", c.argv, c.env, c.dir, c.want)
				continue
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Start(%q, %q, %q) = %v, want an error saying %q", c.argv, c.env, c.dir, err, c.want)
			}
		}
	})
}

// A supervisor in a PID namespace whose trainer exited on its own serves the next trainer: the next one
// runs with its own environment, directory and log, nothing the first left behind is alive, the first's
// log is no longer held open, and both exit codes come through. One whose trainer was stopped is not
// kept; outside a namespace none is.
func TestSupervisorServesTrainersInTurn(t *testing.T) {
	useMode(t, warmIfWaiting)
	for _, iso := range isolations() {
		t.Run(iso.String(), func(t *testing.T) {
			useIsolation(t, iso)
			first, second := t.TempDir(), t.TempDir()
			log1, log2 := trainerLog(t, first), trainerLog(t, second)
			waitWarm(t)
			script := `(` + writePID("left.pid") + `; exec sleep 60) & while [ ! -e left.pid ]; do sleep 0.01; done; echo "$ONE$TWO"; exit 3`
			p1, err := Start([]string{"/bin/sh", "-c", script}, []string{"ONE=first"}, first, log1)
			if err != nil {
				t.Fatal(err)
			}
			<-p1.Done()
			left, _ := strconv.Atoi(waitFile(t, filepath.Join(first, "left.pid")))
			sup := p1.cmd.Process.Pid
			if kept, want := idlePID(sup), iso != Subreaper; kept != want {
				t.Fatalf("after its trainer exited: supervisor %d kept waiting %v, want %v", sup, kept, want)
			}
			if alive(left) && iso != Subreaper {
				t.Errorf("the first trainer's leftover %d is alive after Done", left)
			}
			p2, err := Start([]string{"/bin/sh", "-c", `pwd; echo "$ONE$TWO"; exit 4`}, []string{"TWO=second"}, second, log2)
			if err != nil {
				t.Fatal(err)
			}
			<-p2.Done()
			if again := p2.cmd.Process.Pid == sup; again != (iso != Subreaper) {
				t.Errorf("second trainer under supervisor %d, the first's %d", p2.cmd.Process.Pid, sup)
			}
			out1, _ := os.ReadFile(log1.Name())
			out2, _ := os.ReadFile(log2.Name())
			if string(out1) != "first\n" || p1.ExitCode() != 3 {
				t.Errorf("first trainer printed %q, exit %d; want %q, 3", out1, p1.ExitCode(), "first\n")
			}
			if string(out2) != second+"\nsecond\n" || p2.ExitCode() != 4 {
				t.Errorf("second trainer printed %q, exit %d; want %q, 4", out2, p2.ExitCode(), second+"\nsecond\n")
			}
			if iso == Subreaper {
				return
			}
			fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", sup))
			for _, fd := range fds {
				if target, _ := os.Readlink(fd); target == log1.Name() || target == log2.Name() {
					t.Errorf("the supervisor waiting for its next trainer holds %s open (%s)", target, fd)
				}
			}
			// Stopped, its trainer leaves it ended, not kept.
			p3, err := Start([]string{"/bin/sh", "-c", `echo up; exec sleep 60`}, []string{}, second, log2)
			if err != nil {
				t.Fatal(err)
			}
			if p3.cmd.Process.Pid != sup {
				t.Fatalf("third trainer under supervisor %d, want the kept %d", p3.cmd.Process.Pid, sup)
			}
			p3.Stop(time.Second)
			if idlePID(sup) {
				t.Errorf("the supervisor %d of a stopped trainer is kept waiting", sup)
			}
			if _, err := os.Stat("/proc/" + strconv.Itoa(sup)); err == nil {
				t.Errorf("the supervisor %d of a stopped trainer is still there (not reaped)", sup)
			}
		})
	}
}
