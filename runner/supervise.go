package runner

import (
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

// supervise runs as `<binary> __rlsweep_supervise WORKER_PID PATH ARGV...`, started by startProcess in
// a new process group with SIGTERM as its parent-death signal and the write end of a pipe as fd 3. It
// starts PATH with ARGV in its own group, writes why on fd 3 if that fails, and closes fd 3 once the
// trainer runs. Every catchable signal is left to the trainer (a SIGTERM to the group is a graceful
// stop and the trainer has its grace period). Once the worker is gone (its parent is no longer
// WORKER_PID: the death signal says so at once, a poll as a backstop) it kills its whole process
// group with SIGKILL, so nothing the trainer started outlives the worker. Otherwise it ends as the
// trainer ended: the same exit code, or killed by the same signal.
func supervise(args []string) int {
	report := os.NewFile(3, "start-report")
	fail := func(format string, a ...any) int {
		if report != nil {
			fmt.Fprintf(report, format, a...)
			report.Close()
		}
		return 127
	}
	if len(args) < 3 {
		return fail("supervisor: got %d arguments, want WORKER_PID PATH ARGV...", len(args))
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
	syscall.CloseOnExec(3) // the trainer must not hold the report pipe open
	cmd := &exec.Cmd{
		Path:   args[1],
		Args:   args[2:],
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		// Killed if this supervisor is killed alone; the group is shared, so a stop reaches both.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if err := cmd.Start(); err != nil {
		return fail("%v", err)
	}
	report.Close()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-exited:
			if workerGone() {
				// Nobody is left to clear the group of what the trainer left behind.
				_ = syscall.Kill(0, syscall.SIGKILL)
			}
			return endAs(cmd.ProcessState)
		case <-signals:
		case <-poll.C:
		}
		if workerGone() {
			_ = syscall.Kill(0, syscall.SIGKILL) // the whole group, this process included
		}
	}
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
