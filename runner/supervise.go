package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// superviseArg marks the worker's own binary re-executed as a trainer's supervisor: the leader of the
// trainer's process group, which kills that whole group when the worker dies. Any binary that links
// this package (rlsweep, a test binary) can therefore supervise the trainers it starts.
const superviseArg = "__rlsweep_supervise"

func init() {
	if len(os.Args) > 1 && os.Args[1] == superviseArg {
		os.Exit(supervise(os.Args[2:]))
	}
}

// supervise runs as `<binary> __rlsweep_supervise WORKER_PID PATH ARGV...`, started by Start in a new
// process group with SIGTERM as its parent-death signal and the write end of a pipe as fd 3. It starts
// PATH with ARGV in its own group, writes why on fd 3 if that fails, and closes fd 3 once the trainer
// runs. Run as `<binary> __rlsweep_supervise WORKER_PID`, it is a warm supervisor (see warm.go): fd 3 is
// a unix socket on which it writes a zero byte once it is ready, then waits for its trainer (path,
// directory, argv, environment and the log's descriptor), and answers a zero byte once the trainer runs
// or a one byte and why it could not start; it ends quietly if the worker closes the socket first. Every catchable signal is
// left to the trainer (a SIGTERM to the group is a graceful stop and the trainer has its grace period).
// Once the worker is gone (its parent is no longer WORKER_PID: the death signal says so at once, a poll
// as a backstop) it kills its whole process group with SIGKILL, so nothing the trainer started outlives
// the worker. Otherwise it ends as the trainer ended: the same exit code, or killed by the same signal.
func supervise(args []string) int {
	report := os.NewFile(3, "start-report")
	warm := len(args) == 1
	fail := func(format string, a ...any) int {
		if report != nil {
			if warm {
				_, _ = report.Write([]byte{1})
			}
			fmt.Fprintf(report, format, a...)
			report.Close()
		}
		return 127
	}
	if !warm && len(args) < 3 {
		return fail("supervisor: got %d arguments, want WORKER_PID [PATH ARGV...]", len(args))
	}
	worker, err := strconv.Atoi(args[0])
	if err != nil || worker <= 1 {
		return fail("supervisor: worker pid: got %q, want a process ID above 1", args[0])
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals) // before the check below: a death signal from now on is seen
	workerGone := func() bool { return os.Getppid() != worker }
	if workerGone() {
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	syscall.CloseOnExec(3) // the trainer must not hold the report pipe or the socket open
	go func() {
		poll := time.NewTicker(500 * time.Millisecond)
		for {
			select {
			case <-signals:
			case <-poll.C:
			}
			if workerGone() {
				_ = syscall.Kill(0, syscall.SIGKILL) // the whole group, this process included
			}
		}
	}()
	cmd := &exec.Cmd{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		// Killed if this supervisor is killed alone; the group is shared, so a stop reaches both.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if warm {
		// Ready: from now on a signal is the trainer's and the worker's death is seen.
		if _, err := report.Write([]byte{0}); err != nil {
			return 0
		}
		req, err := receive(3)
		if errors.Is(err, errNoTrainer) {
			return 0
		}
		if err != nil {
			return fail("supervisor: %v", err)
		}
		// The log becomes this process's output too, as when the worker starts a supervisor cold.
		for _, fd := range []int{1, 2} {
			if err := unix.Dup3(req.log, fd, 0); err != nil {
				return fail("supervisor: log: %v", err)
			}
		}
		unix.Close(req.log)
		// Exactly the environment given: an empty one stays empty, not this process's own.
		cmd.Path, cmd.Args, cmd.Dir, cmd.Env = req.path, req.argv, req.dir, req.env
	} else {
		cmd.Path, cmd.Args = args[1], args[2:]
	}
	if err := cmd.Start(); err != nil {
		return fail("%v", err)
	}
	if warm {
		_, _ = report.Write([]byte{0})
	}
	report.Close()
	_ = cmd.Wait()
	if workerGone() {
		// Nobody is left to clear the group of what the trainer left behind.
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	return endAs(cmd.ProcessState)
}

// endAs returns the exit code to exit with, or, when a signal ended the trainer, kills this process with
// the same signal so that the worker sees exactly the trainer's status.
func endAs(st *os.ProcessState) int {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return st.ExitCode()
	}
	sig := ws.Signal()
	// The Go runtime catches some signals itself (SIGSEGV, SIGABRT, ...) and would turn a raised one
	// into a panic or ignore it: restore the default action directly, unblock it on this thread, and
	// send it to this thread. Not dumpable, so a core-dumping signal leaves no core of the supervisor.
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	var dfl [4]uint64 // a kernel sigaction of SIG_DFL, no flags, no mask
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	var set unix.Sigset_t
	set.Val[(int(sig)-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
	time.Sleep(time.Second) // not reached for a terminating signal
	return 128 + int(sig)
}
