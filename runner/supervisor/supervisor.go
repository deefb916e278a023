// Package supervisor is the process between the worker and a trainer: the worker's own binary
// re-executed with Arg, the leader of the trainer's process group and, where it can be, PID 1 of a PID
// namespace of its own. Its init runs the supervisor and exits before the packages this one does not
// import are initialized, so a supervisor's start costs only what the standard library's and
// golang.org/x/sys's initialization costs: the package imports nothing else, and must not.
package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// ProbeArg marks this binary re-executed to check that it runs as PID 1 of a new PID namespace
// (runner's isolation probe): it exits 0 there, 1 elsewhere.
const ProbeArg = "__rlsweep_isolation_probe"

// Arg marks the worker's own binary re-executed as a trainer's supervisor: the leader of the
// trainer's process group and, where it can be, PID 1 of a PID namespace of its own (runner/isolation.go).
// Any binary that links this package (rlsweep, a test binary) can therefore supervise the trainers it
// starts.
const Arg = "__rlsweep_supervise"

// What the worker sends a running supervisor on its socket: stop the trainer (SIGTERM, the grace
// period being the worker's).
const StopByte = 's'

func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(supervise(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == ProbeArg {
		if os.Getpid() != 1 {
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// supervise runs as `<binary> __rlsweep_supervise PATH ARGV...` (a cold supervisor) or as
// `<binary> __rlsweep_supervise` (a warm one, see warm.go), started by the worker as the leader of a new
// process group, in a new PID namespace unless the isolation is Subreaper, with fd 3 a unix socket whose
// other end only the worker holds. A warm one first writes a zero byte once it is ready, then waits for
// its trainer (path, directory, argv, environment and the log's descriptor); it ends quietly if the
// worker closes the socket first. Either starts the trainer and answers a zero byte once it runs, or a
// one byte and why it could not start.
//
// While the trainer runs, every catchable signal is left to the trainer. The socket carries the rest:
// a stop byte from the worker sends SIGTERM to every process of the trainer (all of the namespace, or
// the process group), and the end of the socket is the worker's death, on which the supervisor kills
// them all with SIGKILL (in a namespace, by exiting: the kernel kills everything in it). When the
// trainer exits on its own, what it left behind is killed at once (the namespace goes with the
// supervisor, the worker kills the group); after a stop the supervisor first waits until every process
// of the trainer has exited (it reaps the orphans of a wrapper such as `bash train.sh`, as namespace
// init or as subreaper), so the real trainer under a wrapper has the whole grace period, which the
// worker ends with SIGKILL. Last, it writes the trainer's wait status (4 bytes, little-endian) on the
// socket and exits.
func supervise(args []string) int {
	const sock = 3
	warm := len(args) == 0
	fail := func(format string, a ...any) int {
		_, _ = unix.Write(sock, append([]byte{1}, fmt.Sprintf(format, a...)...))
		return 127
	}
	if !warm && len(args) < 2 {
		return fail("supervisor: got %d arguments, want none or PATH ARGV...", len(args))
	}
	// Caught and dropped: as namespace init it would ignore them anyway; a group-wide signal is the
	// trainer's, and a stop or the worker's death come on the socket.
	signals := make(chan os.Signal, 16)
	signal.Notify(signals)
	go func() {
		for range signals {
		}
	}()
	inNamespace := os.Getpid() == 1
	if !inNamespace {
		// The wrapper's orphans become this process's children, so that a stop can wait for them.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	syscall.CloseOnExec(sock) // the trainer must not hold the socket open
	cmd := &exec.Cmd{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		// Killed if this supervisor is killed alone outside a namespace; the group is shared, so a stop
		// reaches both.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if warm {
		if _, err := unix.Write(sock, []byte{0}); err != nil {
			return 0
		}
		req, err := receive(sock)
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
		cmd.Path, cmd.Args = args[0], args[1:]
	}
	// Started, never waited for through cmd: the loop below reaps it with every orphan.
	if err := cmd.Start(); err != nil {
		return fail("%v", err)
	}
	pid := cmd.Process.Pid
	if _, err := unix.Write(sock, []byte{0}); err != nil {
		return gone(inNamespace)
	}
	var stopping atomic.Bool
	go func() {
		var b [1]byte
		for {
			n, err := unix.Read(sock, b[:])
			if err == unix.EINTR {
				continue
			}
			if n == 1 && b[0] == StopByte && !stopping.Swap(true) {
				if inNamespace {
					_ = unix.Kill(-1, unix.SIGTERM) // every process in the namespace but this one
				} else {
					_ = unix.Kill(0, unix.SIGTERM) // the group; this process drops its own
				}
			}
			if n == 1 {
				continue
			}
			os.Exit(gone(inNamespace))
		}
	}()
	var status unix.WaitStatus
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: every process of the trainer has exited
		}
		if got == pid {
			status = ws
			if !stopping.Load() {
				break // ended on its own: what it left behind is killed at once
			}
		}
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(status))
	_, _ = unix.Write(sock, b[:])
	switch {
	case status.Exited():
		return status.ExitStatus()
	case status.Signaled():
		return 128 + int(status.Signal())
	}
	return 1
}

// gone kills every process of the trainer once the worker is gone and returns the exit code: in a
// namespace, exiting is enough (the kernel kills what is left in it); otherwise the whole group is
// killed, this process included.
func gone(inNamespace bool) int {
	if !inNamespace {
		_ = syscall.Kill(0, syscall.SIGKILL)
	}
	return 137
}
