// Package runner runs a trainer process for rlsweep without Temporal: the environment the trainer
// contract (docs/trainer-contract.md) gives it, start under a supervisor, graceful stop and the kill of its
// whole process group, the masking of the worker's secrets in what it prints.
package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/rlsweep/rlsweep/runner/supervisor"
)

// Process is a trainer under its supervisor (package supervisor), which leads the trainer's own process
// group and, where it can be, a PID namespace of its own (TrainerIsolation): a stop reaches every process
// the trainer started, and so does the worker's death.
type Process struct {
	cmd  *exec.Cmd // the supervisor
	done chan struct{}
	err  error // the Wait result, valid once done is closed

	mu   sync.Mutex
	sock int // the worker's end of the supervisor's socket; -1 once closed

	// status is the trainer's wait status as the supervisor reported it, valid once done is closed
	// and if reported is true (not when the supervisor was killed).
	status   syscall.WaitStatus
	reported bool
	// stopped: Stop was called, so a SIGKILL that ended the trainer may be the worker's own.
	stopped atomic.Bool
}

// Start runs argv directly (never through a shell) with env, in dir, writing stdout and stderr to log.
// It runs argv under a supervisor, this binary re-executed, which reports the trainer's exit status,
// gives a stopped trainer its grace period even through a wrapper, and kills every process of the
// trainer if the worker dies. When log is a file and env is not nil, the supervisor is the warm one the
// worker keeps waiting (warm.go), if there is one, and the next one is started in the background;
// otherwise, or if that one has died, it is started here. Start is safe for concurrent use: each
// trainer has a supervisor of its own.
func Start(argv, env []string, dir string, log io.Writer) (*Process, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("trainer command: got an empty argv, want a program and its arguments")
	}
	// Resolved here, against the worker's PATH, so a missing program is reported by the worker itself.
	trainer := exec.Command(argv[0], argv[1:]...)
	if trainer.Err != nil {
		return nil, fmt.Errorf("start trainer %q: %w", argv[0], trainer.Err)
	}
	if f, ok := log.(*os.File); ok && env != nil && f.Fd() != ^uintptr(0) && startMode.Load() != coldOnly {
		defer refill()
		if s := takeWarm(); s != nil {
			abs, err := warmDir(dir)
			if err != nil {
				s.close()
			} else if p, handed, err := s.run(trainer.Path, argv, env, abs, f); handed {
				if err != nil {
					return nil, fmt.Errorf("start trainer %q: %w", argv[0], err)
				}
				return p, nil
			}
		}
	}
	return startCold(trainer.Path, argv, env, dir, log)
}

// startCold starts a supervisor for the trainer at path, with the trainer's argv, env and dir.
func startCold(path string, argv, env []string, dir string, log io.Writer) (*Process, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("start trainer %q: %w", argv[0], err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "supervisor-socket")
	// /proc/self/exe, not os.Executable: it still runs after the binary on disk is replaced.
	args := append([]string{os.Args[0], supervisor.Arg, path}, argv...)
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Env: env, Dir: dir, Stdout: log, Stderr: log}
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = supervisorAttr(TrainerIsolation())
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("start trainer %q: %w", argv[0], err)
	}
	started, why := startReply(fds[0])
	if !started {
		unix.Close(fds[0])
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // not reaped yet: the group is still its own
		_ = cmd.Wait()
		if why == "" {
			why = "its supervisor ended before the trainer started"
		}
		return nil, fmt.Errorf("start trainer %q: %s", argv[0], why)
	}
	return watch(cmd, fds[0]), nil
}

// startReply reads a supervisor's answer to a trainer's start on the socket fd: started, or why not
// ("" when the supervisor ended without an answer).
func startReply(fd int) (started bool, why string) {
	var b [1]byte
	for {
		n, err := unix.Read(fd, b[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false, ""
		}
		if b[0] == 0 {
			return true, ""
		}
		rest, _ := readAll(fd)
		return false, string(rest)
	}
}

// watch returns the Process of a started supervisor, whose socket is sock.
func watch(cmd *exec.Cmd, sock int) *Process {
	p := &Process{cmd: cmd, done: make(chan struct{}), sock: sock}
	go func() {
		// The trainer's end: its wait status, and whether the supervisor serves another trainer
		// (supervisor.Reusable: every process of the trainer is gone already) or exits.
		var b [supervisor.StatusLen]byte
		n := readFull(sock, b[:])
		if n == len(b) && b[len(b)-1] == supervisor.Reusable {
			p.mu.Lock()
			p.status, p.reported = syscall.WaitStatus(binary.LittleEndian.Uint32(b[:4])), true
			p.sock = -1 // a Stop from now on waits for done: the supervisor is not this trainer's any more
			p.mu.Unlock()
			// A stopped trainer's supervisor is not reused: the stop's SIGKILL to its group may follow.
			if !p.stopped.Load() && giveBack(cmd, sock) {
				close(p.done)
				return
			}
			unix.Close(sock) // it exits on the socket's end
		}
		// Wait for the supervisor to exit without reaping it: while it is a zombie its PID, which is the
		// process group's ID, cannot be reused, so the SIGKILL below reaches only what the trainer left
		// behind in its group (a data loader, a stray subprocess holding the GPU) and nothing else. In a
		// PID namespace nothing is left: the namespace ended with the supervisor.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		p.mu.Lock()
		if n >= 4 && !p.reported {
			p.status, p.reported = syscall.WaitStatus(binary.LittleEndian.Uint32(b[:4])), true
		}
		if p.sock >= 0 {
			unix.Close(p.sock)
			p.sock = -1
		}
		p.mu.Unlock()
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// readFull reads from fd until b is full or the other end is closed (or fails), and returns how many
// bytes it read.
func readFull(fd int, b []byte) int {
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return n
}

// Done is closed once the trainer has exited and everything left of it has been killed.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop asks every process of the trainer to stop with SIGTERM (through its supervisor) and kills them
// all with SIGKILL after grace, unless they have all exited by then: a wrapper (`bash train.sh`) that
// dies at once leaves the trainer it started its grace period. It returns once the trainer has exited
// and everything left of it has been killed.
func (p *Process) Stop(grace time.Duration) {
	p.stopped.Store(true)
	select {
	case <-p.done:
		return // exited already; what it left behind was killed then
	default:
	}
	pgid := p.cmd.Process.Pid // the supervisor is not reaped before done closes: the ID is still its group's
	p.mu.Lock()
	if p.sock < 0 {
		// The trainer has ended: everything of it is killed by the time done closes, and the supervisor
		// may be serving the next trainer already.
		p.mu.Unlock()
		<-p.done
		return
	}
	told := unix.Sendto(p.sock, []byte{supervisor.StopByte}, unix.MSG_NOSIGNAL, nil) == nil
	p.mu.Unlock()
	if !told {
		_ = syscall.Kill(-pgid, syscall.SIGTERM) // the supervisor is ending: signal the group itself
	}
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	// The supervisor leads the group: killing it ends its namespace too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// waitStatus is the trainer's wait status: as its supervisor reported it, or, if the supervisor was
// killed before it could, the supervisor's own.
func (p *Process) waitStatus() syscall.WaitStatus {
	if p.reported {
		return p.status
	}
	if p.cmd.ProcessState == nil {
		return 0
	}
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws
}

// ExitCode is the trainer's exit status; -1 when a signal ended it.
func (p *Process) ExitCode() int {
	if !p.reported && p.cmd.ProcessState == nil {
		return -1
	}
	ws := p.waitStatus()
	if !ws.Exited() {
		return -1
	}
	return ws.ExitStatus()
}

// TailFile returns up to the last n bytes of the file at path, with the secrets m knows masked (m may
// be nil). A secret cut by where the tail begins is masked too: the tail is masked from further back.
func TailFile(path string, n int64, m *Masker) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	back := int64(m.longest())
	off := st.Size() - n - back
	if off < 0 {
		off = 0
	}
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	b = m.Mask(b)
	if off > 0 {
		// What a secret starting before off left at the start is at most back-1 bytes long, and
		// masking moves nothing before it.
		b = b[min(int64(len(b)), back):]
	}
	cut := off > 0
	if int64(len(b)) > n {
		b, cut = b[int64(len(b))-n:], true
	}
	// The tail goes into failure messages, protobuf strings that must be valid UTF-8: drop a character
	// cut by the offset and replace whatever invalid bytes the trainer printed.
	for cut && len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
