// Package runner runs a trainer process for rlsweep without Temporal: the environment the trainer
// contract (docs/trainer-contract.md) gives it, start under a supervisor, graceful stop and the kill of its
// whole process group, the masking of the worker's secrets in what it prints.
package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Process is a trainer under its supervisor (see supervise), which leads the trainer's own process
// group: a stop reaches every process the trainer started, and so does the worker's death.
type Process struct {
	cmd  *exec.Cmd // the supervisor; its exit status is the trainer's
	done chan struct{}
	err  error // the Wait result, valid once done is closed
}

// Start runs argv directly (never through a shell) with env, in dir, writing stdout and stderr to log.
// It runs argv under a supervisor, this binary re-executed, which passes the trainer's exit status
// through and kills the trainer's whole process group if the worker dies. When log is a file and env is
// not nil, the supervisor is the warm one the worker keeps waiting (warm.go), if there is one, and the
// next one is started in the background; otherwise, or if that one has died, it is started here. Start
// is safe for concurrent use: each trainer has a supervisor of its own.
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
	report, reportW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start trainer %q: %w", argv[0], err)
	}
	defer report.Close()
	// /proc/self/exe, not os.Executable: it still runs after the binary on disk is replaced.
	args := append([]string{os.Args[0], superviseArg, strconv.Itoa(os.Getpid()), path}, argv...)
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Env: env, Dir: dir, Stdout: log, Stderr: log}
	cmd.ExtraFiles = []*os.File{reportW}
	// Its own process group, so a stop reaches everything it started; SIGTERM when the worker dies,
	// which the supervisor tells from a stop by its parent having changed, and then kills the group, so
	// a killed worker leaves no trainer holding a GPU (the retry runs elsewhere from the checkpoint).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	reportW.Close()
	if err != nil {
		return nil, fmt.Errorf("start trainer %q: %w", argv[0], err)
	}
	// Empty once the trainer runs; why it could not start otherwise.
	why, _ := io.ReadAll(report)
	if len(why) > 0 {
		_ = cmd.Wait()
		return nil, fmt.Errorf("start trainer %q: %s", argv[0], why)
	}
	return watch(cmd), nil
}

// watch returns the Process of a started supervisor.
func watch(cmd *exec.Cmd) *Process {
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		// Wait for the supervisor to exit without reaping it: while it is a zombie its PID, which is the
		// process group's ID, cannot be reused, so the SIGKILL below reaches only what the trainer left
		// behind in its group (a data loader, a stray subprocess holding the GPU) and nothing else.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// Done is closed once the trainer has exited and everything left in its group has been killed.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop asks the process group to stop with SIGTERM and sends SIGKILL after grace. It returns once the
// trainer has exited and everything left in its group has been killed.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.done:
		return // exited already; its group was killed then
	default:
	}
	pgid := p.cmd.Process.Pid // the supervisor is not reaped before done closes: the ID is still its group's
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// ExitCode is the trainer's exit status; -1 when a signal ended it.
func (p *Process) ExitCode() int {
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
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
