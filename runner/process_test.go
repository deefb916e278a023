package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if got := TailFile(p, 10, nil); got != "" {
		t.Errorf("tail of a missing file = %q, want \"\"", got)
	}
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 4, nil); got != "6789" {
		t.Errorf("TailFile(4) = %q, want 6789", got)
	}
	if got := TailFile(p, 100, nil); got != "0123456789" {
		t.Errorf("TailFile(100) = %q, want the whole file", got)
	}
	// The tail ends up in a failure message, a protobuf string: it must be valid UTF-8 even when the cut
	// falls inside a character or the trainer printed raw bytes.
	if err := os.WriteFile(p, []byte("ééé\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	for n := int64(1); n <= 8; n++ {
		if got := TailFile(p, n, nil); !utf8.ValidString(got) {
			t.Errorf("TailFile(%d) = %q, want valid UTF-8", n, got)
		}
	}
}

// alive reports whether the process exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// writePID is a shell command writing the PID of the shell that runs it to file, as seen from outside
// the trainer's PID namespace ($$ is the PID inside; the builtin read opens /proc/self in the shell itself).
func writePID(file string) string {
	return `read -r p _ < /proc/self/stat; echo $p > ` + file + `.tmp; mv ` + file + `.tmp ` + file
}

// nested escapes a shell command to go inside double quotes.
func nested(cmd string) string { return strings.ReplaceAll(cmd, "$", `\$`) }

func waitFile(t *testing.T, p string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", p)
	return ""
}

// A trainer that ignores SIGTERM is killed after the grace period, and so is the child it started.
func TestProcessStopEscalatesToSIGKILL(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		script := `trap '' TERM; sh -c "` + nested(writePID("child.pid")) + `; exec sleep 60" & ` + writePID("parent.pid") + `; wait; wait; echo survived`
		p, err := Start([]string{"/bin/sh", "-c", script}, os.Environ(), dir, log)
		if err != nil {
			t.Fatal(err)
		}
		child, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "child.pid")))
		parent, _ := strconv.Atoi(waitFile(t, filepath.Join(dir, "parent.pid")))
		if pgid, _ := syscall.Getpgid(parent); pgid != p.cmd.Process.Pid || !alive(child) {
			t.Fatalf("parent %d in group %d (want %d), child %d alive %v", parent, pgid, p.cmd.Process.Pid, child, alive(child))
		}
		const grace = 300 * time.Millisecond
		start := time.Now()
		p.Stop(grace)
		took := time.Since(start)
		if took < grace || took > grace+2*time.Second {
			t.Errorf("stop took %s, want the %s grace period and a little", took, grace)
		}
		if p.ExitCode() != -1 {
			t.Errorf("exit code = %d, want -1 (killed by a signal)", p.ExitCode())
		}
		deadline := time.Now().Add(2 * time.Second)
		for alive(child) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if alive(child) {
			t.Errorf("grandchild %d outlived the stop", child)
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
	})
}

// A trainer that honours SIGTERM is not made to wait for the grace period.
func TestProcessStopGraceful(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		log := trainerLog(t, dir)
		p, err := Start([]string{"/bin/sh", "-c", `trap 'exit 0' TERM; echo ready > ready; while :; do sleep 0.01; done`}, os.Environ(), dir, log)
		if err != nil {
			t.Fatal(err)
		}
		waitFile(t, filepath.Join(dir, "ready"))
		start := time.Now()
		p.Stop(5 * time.Second)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("stop of a process that honours SIGTERM took %s, want well under the 5s grace", took)
		}
		if _, err := Start(nil, nil, dir, log); err == nil {
			t.Errorf("Start(nil argv) = nil error, want one")
		}
	})
}
