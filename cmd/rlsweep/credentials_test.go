package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// credentialsHelperEnv runs TestCredentialsHelper as the process a worker is: it hides its
// credentials (re-executing this test binary), takes them back, and prints its environment block and
// what os.Getenv sees as JSON.
const credentialsHelperEnv = "RLSWEEP_TEST_CREDENTIALS_HELPER"

func TestCredentialsHelper(t *testing.T) {
	if os.Getenv(credentialsHelperEnv) == "" {
		t.Skip("run by TestWorkerKeepsCredentialsOutOfItsEnvironmentBlock")
	}
	if err := restoreCredentials(); err != nil {
		fmt.Println("restore:", err)
		os.Exit(1)
	}
	if err := hideCredentials([]string{"FLAG_MARKED"}); err != nil {
		fmt.Println("hide:", err)
		os.Exit(1)
	}
	if os.Getenv(credentialsHelperEnv) == "protect" {
		if err := notDumpable(); err != nil {
			fmt.Println("protect:", err)
			os.Exit(1)
		}
	}
	block, _ := os.ReadFile("/proc/self/environ")
	fds, _ := os.ReadDir("/proc/self/fd")
	var links []string
	for _, fd := range fds {
		l, _ := os.Readlink("/proc/self/fd/" + fd.Name())
		links = append(links, l)
	}
	got := map[string]any{"block": string(block), "fds": links, "pid": os.Getpid()}
	for _, k := range []string{"AWS_SECRET_ACCESS_KEY", "TEMPORAL_GRPC_META_AUTHORIZATION", "ENV_MARKED", "FLAG_MARKED", "PLAIN", envCredentialsFD} {
		v, ok := os.LookupEnv(k)
		got[k] = []any{v, ok}
	}
	b, _ := json.Marshal(got)
	fmt.Println("RESULT " + string(b))
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test is done with this process
	os.Exit(0)
}

// The worker re-executes itself without its credentials in its environment block (the same PID), and
// takes them back from a descriptor it closes: /proc/PID/environ holds none of them, os.Getenv all,
// values with '=' and newlines whole.
func TestWorkerKeepsCredentialsOutOfItsEnvironmentBlock(t *testing.T) {
	secrets := map[string]string{
		"AWS_SECRET_ACCESS_KEY":            "aws-secret=with/equals+and\nnewline",
		"TEMPORAL_GRPC_META_AUTHORIZATION": "Bearer grpc-meta-token-123",
		"ENV_MARKED":                       "marked-by-RLSWEEP_SECRET_ENV",
		"FLAG_MARKED":                      "marked-by-secret-env-flag",
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCredentialsHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), credentialsHelperEnv+"=1", "PLAIN=plain-value", "RLSWEEP_SECRET_ENV=ENV_MARKED")
	for k, v := range secrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	_, line, ok := strings.Cut(stdout.String(), "RESULT ")
	if !ok {
		t.Fatalf("the helper printed no result:\n%s", stdout.String())
	}
	var got struct {
		Block string
		FDs   []string
		PID   int
	}
	raw := map[string]json.RawMessage{}
	line, _, _ = strings.Cut(line, "\n")
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw["block"], &got.Block)
	_ = json.Unmarshal(raw["fds"], &got.FDs)
	_ = json.Unmarshal(raw["pid"], &got.PID)
	if got.PID != cmd.Process.Pid {
		t.Errorf("the re-executed worker runs as PID %d, want its own %d", got.PID, cmd.Process.Pid)
	}
	if !strings.Contains(got.Block, "PLAIN=plain-value\x00") {
		t.Errorf("the environment block lacks PLAIN: %q", got.Block)
	}
	var leaked []string
	for k, v := range secrets {
		if strings.Contains(got.Block, k+"=") || strings.Contains(got.Block, strings.Split(v, "\n")[0]) {
			leaked = append(leaked, k)
		}
		var lookup []any
		_ = json.Unmarshal(raw[k], &lookup)
		if len(lookup) != 2 || lookup[0] != v || lookup[1] != true {
			t.Errorf("os.LookupEnv(%s) = %v, want %q, true", k, lookup, v)
		}
	}
	if len(leaked) > 0 {
		t.Errorf("the environment block holds %s:\n%q", strings.Join(leaked, ", "), got.Block)
	}
	var fdVar []any
	_ = json.Unmarshal(raw[envCredentialsFD], &fdVar)
	if len(fdVar) != 2 || fdVar[1] != false {
		t.Errorf("os.LookupEnv(%s) = %v, want it unset once read", envCredentialsFD, fdVar)
	}
	for _, l := range got.FDs {
		if strings.Contains(l, "rlsweep-credentials") {
			t.Errorf("the descriptor of the credentials stays open: %q", got.FDs)
		}
	}
}

// The worker is not dumpable: a process of the same user can read neither its environment block nor
// its memory (/proc/PID/mem), whatever Yama allows; without it, the same reader can. Run as root, which
// starts both the worker and the reader as nobody.
func TestWorkerIsNotDumpable(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a worker and a reader as another user")
	}
	dir, err := os.MkdirTemp("", "rlsweep-dumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "worker")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	for _, mode := range []string{"hide", "protect"} {
		cmd := exec.Command(bin, "-test.run=^TestCredentialsHelper$", "-test.count=1")
		cmd.Dir = dir
		cmd.Env = []string{credentialsHelperEnv + "=" + mode, "AWS_SECRET_ACCESS_KEY=aws-secret-canary-89abcdef", "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = nobody
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := false
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			if strings.HasPrefix(sc.Text(), "RESULT ") {
				ready = true
				break
			}
		}
		if !ready {
			stdin.Close()
			_ = cmd.Wait()
			t.Fatalf("%s: the helper ended without a result", mode)
		}
		pid := cmd.Process.Pid
		for _, file := range []string{"environ", "mem"} {
			reader := exec.Command("/bin/dd", fmt.Sprintf("if=/proc/%d/%s", pid, file), "of=/dev/null", "count=1")
			reader.SysProcAttr = nobody
			out, err := reader.CombinedOutput()
			switch {
			case mode == "protect" && err == nil:
				t.Errorf("a process of the worker's user opened /proc/%d/%s of the protected worker:\n%s", pid, file, out)
			case mode == "hide" && file == "environ" && err != nil:
				t.Errorf("a process of the worker's user could not open /proc/%d/environ of a dumpable worker (the test proves nothing): %v\n%s", pid, err, out)
			}
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: the helper: %v", mode, err)
		}
	}
}
