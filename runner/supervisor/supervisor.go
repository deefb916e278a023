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

// What the worker sends a supervisor on its socket: stop the trainer (SIGTERM, the grace period being
// the worker's); take the next trainer (after a Reusable end, see supervise).
const (
	StopByte = 's'
	NextByte = 'n'
)

// What a supervisor sends after the trainer's wait status (StatusLen bytes in all): Reusable when
// every process of the trainer is gone and it waits for NextByte and the next trainer's request, Exiting
// when it exits.
const (
	Exiting   = 0
	Reusable  = 1
	StatusLen = 5
)

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
// trainer exits on its own, what it left behind is killed at once; after a stop the supervisor first
// waits until every process of the trainer has exited (it reaps the orphans of a wrapper such as
// `bash train.sh`, as namespace init or as subreaper), so the real trainer under a wrapper has the whole
// grace period, which the worker ends with SIGKILL. Last, it writes the trainer's wait status (4 bytes,
// little-endian) and what comes next (one byte, StatusLen in all) on the socket.
//
// A warm supervisor in a namespace whose trainer exited on its own serves again (Reusable): it kills
// what the trainer left (SIGKILL to every process of the namespace but itself), reaps them all, and then
// waits for NextByte and the next trainer's request, so that a worker's trainers do not each pay for a
// supervisor's start (11 ms of CPU for the worker's 62 MB binary). Otherwise (a cold one, one outside a
// namespace, one whose trainer was stopped) it exits (Exiting), as it does when the worker closes the
// socket instead of sending NextByte.
func supervise(args []string) int {
	warm := len(args) == 0
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
	if warm {
		if _, err := unix.Write(sock, []byte{0}); err != nil {
			return 0
		}
	}
	for {
		cmd := &exec.Cmd{
			Stdin:  os.Stdin,
			Stdout: os.Stdout,
			Stderr: os.Stderr,
			// Killed if this supervisor is killed alone outside a namespace; the group is shared, so a
			// stop reaches both.
			SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
		}
		if warm {
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
		next, code := serve(cmd, inNamespace, warm && inNamespace)
		if !next {
			return code
		}
	}
}

// sock is the supervisor's end of its socket to the worker.
const sock = 3

// fail answers a trainer's start with why it did not start, and returns the supervisor's exit code.
func fail(format string, a ...any) int {
	_, _ = unix.Write(sock, append([]byte{1}, fmt.Sprintf(format, a...)...))
	return 127
}

// serve starts the trainer cmd, follows it to its end and reports the end on the socket (supervise).
// next: the supervisor serves another trainer (reusable, the trainer exited on its own and the worker
// sent NextByte); otherwise code is the supervisor's exit code.
func serve(cmd *exec.Cmd, inNamespace, reusable bool) (next bool, code int) {
	// Started, never waited for through cmd: the loop below reaps it with every orphan.
	if err := cmd.Start(); err != nil {
		return false, fail("%v", err)
	}
	pid := cmd.Process.Pid
	if _, err := unix.Write(sock, []byte{0}); err != nil {
		return false, gone(inNamespace)
	}
	var stopping atomic.Bool
	taken := make(chan struct{}) // NextByte came: the socket is the next request's
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
			if n == 1 && b[0] == NextByte {
				close(taken)
				return
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
	end := byte(Exiting)
	if reusable && !stopping.Load() {
		killAll()
		releaseLog()
		end = Reusable
	}
	var b [StatusLen]byte
	binary.LittleEndian.PutUint32(b[:4], uint32(status))
	b[4] = end
	if _, err := unix.Write(sock, b[:]); err != nil {
		return false, gone(inNamespace)
	}
	if end == Reusable {
		<-taken // or the worker closes the socket, and the reader exits this process
		return true, 0
	}
	switch {
	case status.Exited():
		return false, status.ExitStatus()
	case status.Signaled():
		return false, 128 + int(status.Signal())
	}
	return false, 1
}

// killAll kills every process of the namespace but this one, and reaps them all: SIGKILL again after
// each one reaped, for a child forked as the last signal went out.
func killAll() {
	for {
		_ = unix.Kill(-1, unix.SIGKILL)
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return // ECHILD: none is left
		}
	}
}

// releaseLog points this process's output at /dev/null, so that it does not hold the last trainer's
// log open while it waits for the next trainer.
func releaseLog() {
	null, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_ = unix.Dup3(null, 1, 0)
	_ = unix.Dup3(null, 2, 0)
	unix.Close(null)
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
