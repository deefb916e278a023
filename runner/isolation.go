package runner

import (
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rlsweep/rlsweep/runner/supervisor"
)

// Isolation is how a trainer's processes are bound to their supervisor.
type Isolation int32

const (
	// PIDNamespace: each supervisor is PID 1 of a PID namespace of its own (CLONE_NEWPID, a privileged
	// worker). When it dies, for any reason, SIGKILL included, the kernel kills every process in the
	// namespace: no process of the trainer can outlive it, whether it left its process group or not.
	PIDNamespace Isolation = iota + 1
	// UserPIDNamespace: as PIDNamespace, for a worker without privileges where unprivileged user
	// namespaces are allowed (CLONE_NEWUSER|CLONE_NEWPID; the worker's user and group map to themselves).
	UserPIDNamespace
	// Subreaper: where no namespace can be created, each supervisor leads the trainer's process group and
	// is a child subreaper (PR_SET_CHILD_SUBREAPER). A supervisor that sees its worker die kills the group;
	// a supervisor killed together with its worker leaves what the trainer started running, but for the
	// trainer's own process (its parent-death signal).
	Subreaper
)

func (i Isolation) String() string {
	switch i {
	case PIDNamespace:
		return "pid-namespace"
	case UserPIDNamespace:
		return "user+pid-namespace"
	case Subreaper:
		return "subreaper"
	}
	return "unknown"
}

// Guarantee says in a sentence what i guarantees, for the worker's log.
func (i Isolation) Guarantee() string {
	if i == Subreaper {
		return "each trainer runs in its own process group under a supervisor; no PID namespace could be created, so a trainer's " +
			"children survive if the worker and the supervisors are killed together (docs/deploy.md, \"Trainer processes\")"
	}
	return "each trainer runs in a PID namespace of its own: no trainer process outlives its supervisor, even if the worker " +
		"and the supervisors are killed together"
}

// WithoutNamespaces makes every trainer started from now on run under Subreaper isolation, as where no
// PID namespace can be created: for trainers that need their PIDs to be the machine's (the worker's
// --trainer-pid-namespace=false).
func WithoutNamespaces() { forcedIsolation.Store(int32(Subreaper)) }

// isolation holds the mode found by the first TrainerIsolation; forcedIsolation, when not zero,
// replaces it (tests).
var (
	isolationOnce   sync.Once
	isolationFound  Isolation
	forcedIsolation atomic.Int32
)

// TrainerIsolation returns the isolation trainers started by this process get: the first of
// PIDNamespace, UserPIDNamespace and Subreaper that works here, found once by starting this binary in
// each namespace mode in turn.
func TrainerIsolation() Isolation {
	if f := Isolation(forcedIsolation.Load()); f != 0 {
		return f
	}
	isolationOnce.Do(func() {
		isolationFound = Subreaper
		for _, m := range []Isolation{PIDNamespace, UserPIDNamespace} {
			if probeIsolation(m) {
				isolationFound = m
				return
			}
		}
	})
	return isolationFound
}

// probeIsolation reports whether a process started in mode m runs as PID 1 of a new PID namespace.
func probeIsolation(m Isolation) bool {
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{os.Args[0], supervisor.ProbeArg}, Env: []string{}, Dir: "/",
		SysProcAttr: supervisorAttr(m)}
	return cmd.Run() == nil
}

// supervisorAttr is how a supervisor is started under isolation m: the leader of a new process group,
// in a new PID namespace unless m is Subreaper.
func supervisorAttr(m Isolation) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	switch m {
	case PIDNamespace:
		a.Cloneflags = unix.CLONE_NEWPID
	case UserPIDNamespace:
		a.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWPID
		uid, gid := os.Geteuid(), os.Getegid()
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	return a
}
