package runner

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rlsweep/rlsweep/runner/supervisor"
)

// A warm supervisor is a supervisor started before its trainer: the worker keeps one waiting, so that
// Start hands it the trainer over a unix socket instead of executing this binary on the trainer's path.
// It is started as a cold one is (its own process group and, where it can be, PID namespace), with an
// empty environment: the worker's credentials never reach it, and the trainer gets exactly the
// environment Start is given. Once one is taken, the next is started in the background. The socket
// stays open while the trainer runs: it carries the stop, and its end tells the supervisor that the
// worker is gone.
//
// One in a PID namespace whose trainer exited on its own serves again (supervisor.Reusable): once it has
// killed and reaped everything the trainer left, the worker gives it back (giveBack) and it waits
// beside the others for the next trainer, up to maxIdle of them; a trainer that ends hands its place to
// the next one without a supervisor's start.
type warmSupervisor struct {
	cmd  *exec.Cmd
	sock int // the worker's end of the socket; the Process's once the trainer runs, closed otherwise
}

// How Start gets its supervisor: a warm one if one is waiting (the product), always cold, or always warm
// (waiting for one to start if none is waiting). Tests switch it.
const (
	warmIfWaiting int32 = iota
	coldOnly
	warmAlways
)

var startMode atomic.Int32

// warm holds the supervisors kept waiting (the most recently given back last), and the start of the
// next in flight.
var warm struct {
	sync.Mutex
	idle     []*warmSupervisor
	starting chan struct{}   // closed when the start in flight has ended; nil when none is
	readying *warmSupervisor // the one in flight once started, until it is ready or has failed
}

// maxIdle bounds the supervisors kept waiting: one given back beyond it is ended. A worker's trainers
// end and start one at a time, so a few cover the hand-overs of many places.
const maxIdle = 8

// popIdle takes the supervisor given back last; nil if none waits. The caller holds warm's lock.
func popIdle() *warmSupervisor {
	n := len(warm.idle)
	if n == 0 {
		return nil
	}
	s := warm.idle[n-1]
	warm.idle = warm.idle[:n-1]
	return s
}

// giveBack keeps the supervisor cmd, whose trainer has ended (supervisor.Reusable), waiting for the next
// trainer on sock, and tells it so (supervisor.NextByte). False: it is not kept (maxIdle supervisors
// wait already, Start runs cold, or it is gone); the caller closes sock and reaps it.
func giveBack(cmd *exec.Cmd, sock int) bool {
	warm.Lock()
	defer warm.Unlock()
	if len(warm.idle) >= maxIdle || startMode.Load() == coldOnly {
		return false
	}
	if unix.Sendto(sock, []byte{supervisor.NextByte}, unix.MSG_NOSIGNAL, nil) != nil {
		return false
	}
	warm.idle = append(warm.idle, &warmSupervisor{cmd: cmd, sock: sock})
	return true
}

// startWarm starts a supervisor that waits on fd 3, a unix socket, for its trainer.
func startWarm() (*warmSupervisor, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	theirs := os.NewFile(uintptr(fds[1]), "trainer-socket")
	cmd := &exec.Cmd{
		Path: "/proc/self/exe", // as in Start
		Args: []string{os.Args[0], supervisor.Arg},
		// Empty, not nil (which would be the worker's own): /proc/PID/environ of the supervisor, which
		// any process of the same user reads, holds nothing of the worker's.
		Env: []string{},
		// It holds no directory busy while it waits; the trainer's directory comes with the trainer.
		Dir:         "/",
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: supervisorAttr(TrainerIsolation()),
	}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		unix.Close(fds[0])
		return nil, err
	}
	return &warmSupervisor{cmd: cmd, sock: fds[0]}, nil
}

// ready waits until s is ready (its runtime started, its signals caught), so that a
// trainer handed to it starts at once. It fails if s exits first, or the socket is shut down.
func (s *warmSupervisor) ready() error {
	var b [1]byte
	for {
		n, err := unix.Read(s.sock, b[:])
		if err == unix.EINTR {
			continue
		}
		if err == nil && (n != 1 || b[0] != 0) {
			err = errors.New("it ended before it was ready")
		}
		return err
	}
}

// close ends a supervisor that has been handed no trainer, and reaps it.
func (s *warmSupervisor) close() {
	unix.Close(s.sock)
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // not reaped yet: the group is still its own
	_ = s.cmd.Wait()
}

// takeWarm returns a supervisor kept waiting, nil if there is none (the caller starts cold).
func takeWarm() *warmSupervisor {
	warm.Lock()
	s, starting := popIdle(), warm.starting
	warm.Unlock()
	if s != nil || startMode.Load() != warmAlways {
		return s
	}
	if s = afterStart(starting); s != nil {
		return s
	}
	s, err := startWarm()
	if err != nil {
		return nil
	}
	if s.ready() != nil {
		s.close()
		return nil
	}
	return s
}

// refill starts the next warm supervisor in the background, unless one is waiting or starting.
func refill() {
	if startMode.Load() == coldOnly {
		return
	}
	warm.Lock()
	defer warm.Unlock()
	if len(warm.idle) > 0 || warm.starting != nil {
		return
	}
	done := make(chan struct{})
	warm.starting = done
	go func() {
		defer close(done)
		s, err := startWarm()
		if err == nil {
			warm.Lock()
			warm.readying = s
			warm.Unlock()
			err = s.ready()
		}
		warm.Lock()
		warm.starting, warm.readying = nil, nil
		if err == nil && len(warm.idle) == 0 && startMode.Load() != coldOnly {
			warm.idle, s = append(warm.idle, s), nil
		}
		warm.Unlock()
		if s != nil {
			s.close() // on an error the next Start starts cold and tries again
		}
	}()
}

// CloseIdle ends the supervisors the worker keeps waiting for its next trainers, and the one being
// started if any; a later Start keeps one again. Running trainers are not touched. An idle supervisor
// also ends by itself when the worker exits.
func CloseIdle() {
	warm.Lock()
	idle, starting := warm.idle, warm.starting
	warm.idle = nil
	if warm.readying != nil {
		// Not closed before readying is cleared: its ready ends at once, and the start with it.
		_ = unix.Shutdown(warm.readying.sock, unix.SHUT_RDWR)
	}
	warm.Unlock()
	for _, s := range idle {
		s.close()
	}
	if s := afterStart(starting); s != nil {
		s.close()
	}
}

// afterStart waits for the start in flight (starting, nil: none) to end and takes a supervisor kept
// waiting, if any.
func afterStart(starting chan struct{}) *warmSupervisor {
	if starting == nil {
		return nil
	}
	<-starting
	warm.Lock()
	defer warm.Unlock()
	return popIdle()
}

// run hands a trainer to s. handed is false when s was gone before the trainer started (killed, or
// out of memory): s is reaped then and the caller starts the trainer cold. Otherwise err is why the
// trainer could not start, or nil and p runs it.
func (s *warmSupervisor) run(path string, argv, env []string, dir string, log *os.File) (p *Process, handed bool, err error) {
	msg := supervisor.EncodeRequest(path, dir, argv, env)
	err = sendAll(s.sock, msg, unix.UnixRights(int(log.Fd())))
	runtime.KeepAlive(log)
	started, why := false, ""
	if err == nil {
		started, why = startReply(s.sock)
	}
	if started {
		return watch(s.cmd, s.sock), true, nil
	}
	unix.Close(s.sock)
	// Not reaped yet, so its ID is still its group's: kill what it may have started, and reap it.
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	if err != nil || why == "" {
		return nil, false, nil // it died before its answer
	}
	return nil, true, errors.New(why)
}

// warmDir is dir made absolute against the worker's working directory, which a cold supervisor starts
// in and a warm one does not.
func warmDir(dir string) (string, error) {
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, dir), nil
}

func sendAll(fd int, b, oob []byte) error {
	for len(b) > 0 {
		n, err := unix.SendmsgN(fd, b, oob, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b, oob = b[n:], nil // the descriptor went with the first bytes
	}
	return nil
}

func readAll(fd int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}
