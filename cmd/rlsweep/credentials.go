package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rlsweep/rlsweep/runner"
)

// envCredentialsFD names, in the environment of a worker re-executed without its credentials, the
// inherited descriptor that holds them (see hideCredentials). It is read and closed at start.
const envCredentialsFD = "RLSWEEP_CREDENTIALS_FD"

// credentialsMemfd names the memory file the credentials are handed over in.
const credentialsMemfd = "rlsweep-credentials"

// maxCredentials bounds what restoreCredentials reads: environment variables, never this much.
const maxCredentials = 16 << 20

// protectMemory makes a worker (or dev) non-dumpable once its trainers' isolation is known, so that no
// process of its user without CAP_SYS_PTRACE may read its memory (/proc/PID/mem, ptrace), its
// environment block or its descriptors, whatever Yama's ptrace_scope. Its children (supervisors,
// trainers) are dumpable again: exec resets the flag. Under user+pid-namespace isolation it stays
// dumpable, and says so: a non-dumpable process cannot write the user namespace's ID maps of the
// supervisors it starts.
func protectMemory(f *Factory, who string) error {
	if !f.ProtectCredentials {
		return nil
	}
	if iso := runner.TrainerIsolation(); iso == runner.UserPIDNamespace {
		fmt.Fprintf(f.ErrOut, "%s: note: trainer isolation %s keeps this process dumpable: where Yama's ptrace_scope is 0, a trainer may read its memory (docs/deploy.md, \"Credentials and trainers\")\n", who, iso)
		return nil
	}
	return notDumpable()
}

// notDumpable makes this process non-dumpable (prctl PR_SET_DUMPABLE 0).
func notDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("credentials: make the process non-dumpable (prctl PR_SET_DUMPABLE): %w", err)
	}
	return nil
}

// hideCredentials keeps the worker's credentials out of its environment block, which any process of
// the same user — a trainer among them — reads at /proc/PID/environ: when that block holds a secret
// variable (runner.SecretEnvNames of it and extra), the process re-executes itself (the same PID and
// arguments) with an environment without them, handing them over in an anonymous memory file
// (memfd) that restoreCredentials reads and closes at start; they are never written to disk nor put on
// the command line. It returns nil at once when the block holds none, as in the re-executed process,
// and does not return when it re-executes.
func hideCredentials(extra []string) error {
	block, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("credentials: read /proc/self/environ to keep them out of it: %w", err)
	}
	names := runner.SecretEnvNames(strings.Split(strings.TrimRight(string(block), "\x00"), "\x00"), extra...)
	if len(names) == 0 {
		return nil
	}
	var pairs [][2]string
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case slices.Contains(names, k):
			pairs = append(pairs, [2]string{k, v})
		case k != envCredentialsFD:
			env = append(env, kv)
		}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	fd, err := credentialsFile(b)
	if err != nil {
		return fmt.Errorf("credentials: hand %s over to the re-executed worker: %w", strings.Join(names, ", "), err)
	}
	env = append(env, envCredentialsFD+"="+strconv.Itoa(fd))
	// /proc/self/exe, as the supervisors are started: the binary running, even if replaced on disk.
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	unix.Close(fd)
	return fmt.Errorf("credentials: re-execute /proc/self/exe without %s in the environment: %w", strings.Join(names, ", "), err)
}

// credentialsFile returns a descriptor, inherited across exec, of a sealed memfd holding b, read from
// its start.
func credentialsFile(b []byte) (int, error) {
	fd, err := unix.MemfdCreate(credentialsMemfd, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("memfd_create: %w", err)
	}
	fail := func(what string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", what, err)
	}
	for off := 0; off < len(b); {
		n, err := unix.Write(fd, b[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail("write memfd", err)
		}
		off += n
	}
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return fail("seek memfd", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return fail("seal memfd", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil { // inherited by the exec alone
		return fail("clear close-on-exec", err)
	}
	return fd, nil
}

// restoreCredentials takes the credentials a worker handed over to itself (hideCredentials) into this
// process's environment as the libraries read it (os.Getenv), which is not its environment block:
// /proc/PID/environ keeps the block the process was started with. The descriptor is closed, so no child
// inherits it. It does nothing when RLSWEEP_CREDENTIALS_FD is not set.
func restoreCredentials() error {
	v, ok := os.LookupEnv(envCredentialsFD)
	if !ok {
		return nil
	}
	os.Unsetenv(envCredentialsFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("%s: got %q, want the descriptor a worker hands its credentials over in (a number above 2); unset it", envCredentialsFD, v)
	}
	if link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil || !strings.HasPrefix(link, "/memfd:"+credentialsMemfd+" ") {
		return fmt.Errorf("%s: descriptor %d is not the memory file a worker hands its credentials over in (%q); it is set only by a worker for itself: unset it", envCredentialsFD, fd, link)
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "credentials")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentials))
	if err != nil {
		return fmt.Errorf("%s: read descriptor %d: %w; it is set only by a worker for itself: unset it", envCredentialsFD, fd, err)
	}
	var pairs [][2]string
	if err := json.Unmarshal(b, &pairs); err != nil {
		return fmt.Errorf("%s: descriptor %d holds no credentials a worker handed over: %w; unset it", envCredentialsFD, fd, err)
	}
	for _, p := range pairs {
		if err := os.Setenv(p[0], p[1]); err != nil {
			return fmt.Errorf("%s: %w", envCredentialsFD, err)
		}
	}
	return nil
}
