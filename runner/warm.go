package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// A warm supervisor is a supervisor started before its trainer: the worker keeps one waiting, so that
// Start hands it the trainer over a unix socket instead of executing this binary on the trainer's path.
// It is started as a cold one is (its own process group and, where it can be, PID namespace), with an
// empty environment: the worker's credentials never reach it, and the trainer gets exactly the
// environment Start is given. Each one starts one trainer; once one is taken, the next is started in the
// background. The socket stays open while the trainer runs: it carries the stop, and its end tells the
// supervisor that the worker is gone.
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

// warm holds the one supervisor kept waiting, and the start of the next in flight.
var warm struct {
	sync.Mutex
	waiting  *warmSupervisor
	starting chan struct{}   // closed when the start in flight has ended; nil when none is
	readying *warmSupervisor // the one in flight once started, until it is ready or has failed
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
		Args: []string{os.Args[0], superviseArg},
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

// takeWarm returns the supervisor kept waiting, nil if there is none (the caller starts cold).
func takeWarm() *warmSupervisor {
	warm.Lock()
	s, starting := warm.waiting, warm.starting
	warm.waiting = nil
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
	if warm.waiting != nil || warm.starting != nil {
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
		if err == nil && warm.waiting == nil && startMode.Load() != coldOnly {
			warm.waiting, s = s, nil
		}
		warm.Unlock()
		if s != nil {
			s.close() // on an error the next Start starts cold and tries again
		}
	}()
}

// CloseIdle ends the supervisor the worker keeps waiting for its next trainer, and the one being started
// if any; a later Start keeps one again. Running trainers are not touched. An idle supervisor also ends
// by itself when the worker exits.
func CloseIdle() {
	warm.Lock()
	s, starting := warm.waiting, warm.starting
	warm.waiting = nil
	if warm.readying != nil {
		// Not closed before readying is cleared: its ready ends at once, and the start with it.
		_ = unix.Shutdown(warm.readying.sock, unix.SHUT_RDWR)
	}
	warm.Unlock()
	if s != nil {
		s.close()
	}
	if s = afterStart(starting); s != nil {
		s.close()
	}
}

// afterStart waits for the start in flight (starting, nil: none) to end and takes the supervisor it
// left waiting, if any.
func afterStart(starting chan struct{}) *warmSupervisor {
	if starting == nil {
		return nil
	}
	<-starting
	warm.Lock()
	defer warm.Unlock()
	s := warm.waiting
	warm.waiting = nil
	return s
}

// run hands a trainer to s. handed is false when s was gone before the trainer started (killed, or
// out of memory): s is reaped then and the caller starts the trainer cold. Otherwise err is why the
// trainer could not start, or nil and p runs it.
func (s *warmSupervisor) run(path string, argv, env []string, dir string, log *os.File) (p *Process, handed bool, err error) {
	msg := encodeRequest(path, dir, argv, env)
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

// A trainer request on the socket: its length (4 bytes, little-endian), then two lists, [path, dir,
// argv...] and the environment, each a count and then every string as its length and its bytes. The
// strings go as they are, whatever bytes they hold: no shell and no text encoding between the worker
// and the trainer. The log's descriptor goes with the first bytes.
func encodeRequest(path, dir string, argv, env []string) []byte {
	b := make([]byte, 4, 4096)
	b = appendList(b, append([]string{path, dir}, argv...))
	b = appendList(b, env)
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func appendList(b []byte, l []string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(l)))
	for _, s := range l {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// maxRequest bounds a request's length: argv and environment together are far below it (the kernel's
// own limit on them is a quarter of the stack limit).
const maxRequest = 64 << 20

// errNoTrainer is the worker closing a warm supervisor's socket without a trainer.
var errNoTrainer = errors.New("no trainer")

type request struct {
	path, dir string
	argv, env []string
	log       int
}

// receive reads one trainer request from the socket fd.
func receive(fd int) (request, error) {
	var data, oob []byte
	buf := make([]byte, 64<<10)
	oobBuf := make([]byte, unix.CmsgSpace(4*4))
	for len(data) < 4 || len(data)-4 < int(binary.LittleEndian.Uint32(data)) {
		if len(data) >= 4 && binary.LittleEndian.Uint32(data) > maxRequest {
			return request{}, fmt.Errorf("request of %d bytes, want at most %d", binary.LittleEndian.Uint32(data), maxRequest)
		}
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oobBuf, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return request{}, err
		}
		oob = append(oob, oobBuf[:oobn]...)
		if n == 0 {
			if len(data) == 0 && len(oob) == 0 {
				return request{}, errNoTrainer
			}
			return request{}, errors.New("request cut short")
		}
		data = append(data, buf[:n]...)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if r, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, r...)
			}
		}
	}
	if len(fds) != 1 {
		for _, f := range fds {
			unix.Close(f)
		}
		return request{}, fmt.Errorf("log: got %d descriptors, want 1", len(fds))
	}
	rest := data[4:]
	first, rest, ok1 := readList(rest)
	env, rest, ok2 := readList(rest)
	if !ok1 || !ok2 || len(rest) != 0 || len(first) < 3 {
		unix.Close(fds[0])
		return request{}, errors.New("malformed request")
	}
	return request{path: first[0], dir: first[1], argv: first[2:], env: env, log: fds[0]}, nil
}

// readList reads a list appendList wrote; the list is never nil.
func readList(b []byte) ([]string, []byte, bool) {
	if len(b) < 4 {
		return nil, b, false
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(n) > uint64(len(b))/4 {
		return nil, b, false
	}
	l := make([]string, 0, n)
	for range n {
		if len(b) < 4 {
			return nil, b, false
		}
		m := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(m) > uint64(len(b)) {
			return nil, b, false
		}
		l = append(l, string(b[:m]))
		b = b[m:]
	}
	return l, b, true
}
