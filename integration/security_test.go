//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// `rlsweep dev` is closed to web pages: a cross-origin text/plain POST (no CORS preflight) to the
// frontend's HTTP API, and a DNS-rebinding page reaching the Web UI under a foreign Host header, both
// try to start a Sweep whose trainer is `/bin/touch FILE`; neither starts a workflow nor runs the
// command. The Web UI still serves its own origin, writes included (it starts a workflow there).
func TestDevRefusesForeignOrigins(t *testing.T) {
	dir := t.TempDir()
	port, uiPort := freePort(t), freePort(t)
	cmd := exec.Command(rlsweepBin, "dev", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
		"--state-dir", filepath.Join(dir, "state"), "--store", filepath.Join(dir, "artifacts"))
	cmd.Env = append(os.Environ(), "RLSWEEP_HOME="+filepath.Join(dir, "home"))
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitFor(t, 2*time.Minute, "dev to serve", func() bool { return strings.Contains(stderr.String(), "Ctrl-C stops the worker") })
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:" + strconv.Itoa(port), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// The attack's payload: a Sweep whose trainer touches a file, as a web page would send it (the
	// HTTP API and the UI take JSON payloads in shorthand).
	// payloads: "shorthand" JSON values (the HTTP API's form) or the proto JSON form (the Web UI's).
	sweepBody := func(file string, shorthand bool) string {
		spec := filepath.Join(dir, filepath.Base(file)+".yaml")
		y := fmt.Sprintf("name: pwn\ntrainer:\n  command: [/bin/touch, %q]\n  total_steps: 1000\nseeds: [1]\nparameters:\n  x: {value: 1}\nprobes: {enabled: false}\n", file)
		if err := os.WriteFile(spec, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := sweeps.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		in, err := json.Marshal(workflows.SweepInput{SweepID: "sweep/pwn/" + filepath.Base(file), Spec: *s, Submission: "x"})
		if err != nil {
			t.Fatal(err)
		}
		input := fmt.Sprintf(`[%s]`, in)
		if !shorthand {
			input = fmt.Sprintf(`{"payloads":[{"metadata":{"encoding":%q},"data":%q}]}`,
				base64.StdEncoding.EncodeToString([]byte("json/plain")), base64.StdEncoding.EncodeToString(in))
		}
		return fmt.Sprintf(`{"workflowType":{"name":"Sweep"},"taskQueue":{"name":%q},"input":%s}`, workflows.ControlQueue, input)
	}
	started := func(id string) bool {
		_, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			t.Fatalf("describe %s: %v", id, err)
		}
		return err == nil
	}

	// 1. The HTTP API, wherever the CLI put it: every port the server listens on besides the frontend's.
	apiFile := filepath.Join(dir, "touched-by-http-api")
	apiBody := sweepBody(apiFile, true)
	ports := listeningPorts(t, descendants(cmd.Process.Pid))
	hostNotAllowed := 0
	for _, p := range ports {
		if p == port || p == uiPort {
			continue
		}
		u := fmt.Sprintf("http://127.0.0.1:%d/api/v1/namespaces/default/workflows/%s", p, url.PathEscape("pwn-"+filepath.Base(apiFile)))
		req, _ := http.NewRequest("POST", u, strings.NewReader(apiBody))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Origin", "http://attacker.example")
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			continue // not HTTP
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			t.Errorf("cross-origin POST to the HTTP API on port %d: %s %s, want refused", p, resp.Status, b)
		}
		if resp.StatusCode == http.StatusForbidden && strings.Contains(string(b), "Host not allowed") {
			hostNotAllowed++
		}
	}
	if hostNotAllowed != 1 {
		t.Errorf("%d of the server's ports %v answered as the HTTP API refusing the Host, want 1", hostNotAllowed, ports)
	}

	// 2. The Web UI under a rebound name: the page reads a CSRF token, then starts the sweep.
	uiFile := filepath.Join(dir, "touched-by-web-ui")
	rebound := "rebind.attacker.example:" + strconv.Itoa(uiPort)
	if st, body := uiStart(t, uiPort, rebound, "http://"+rebound, "pwn-"+filepath.Base(uiFile), sweepBody(uiFile, false)); st != http.StatusForbidden {
		t.Errorf("Web UI under Host %s: start workflow answered %d %s, want 403", rebound, st, body)
	}
	// and a page of another origin calling the UI's own address.
	if st, body := uiStart(t, uiPort, "localhost:"+strconv.Itoa(uiPort), "http://attacker.example", "pwn-cross", sweepBody(uiFile, false)); st != http.StatusForbidden {
		t.Errorf("Web UI called from another origin: start workflow answered %d %s, want 403", st, body)
	}

	// 3. The Web UI's own origin works: the page, and a write (a workflow no worker serves).
	own := "localhost:" + strconv.Itoa(uiPort)
	resp, err := http.Get("http://" + own + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(string(page)), "<html") {
		t.Errorf("GET %s/: %s, want the Web UI's page", own, resp.Status)
	}
	okID := "ui-own-origin-check"
	okBody := `{"workflowType":{"name":"NoSuchWorkflow"},"taskQueue":{"name":"rlsweep-security-test-idle"}}`
	// The UI server's gRPC connection, first tried while the frontend was still starting, may wait out
	// a reconnect backoff: it answers 503 until then.
	var st int
	var body string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if st, body = uiStart(t, uiPort, own, "http://"+own, okID, okBody); st != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if st != http.StatusOK {
		t.Errorf("Web UI from its own origin: start workflow answered %d %s, want 200", st, body)
	}
	if !started(okID) {
		t.Logf("dev's output:\n%s", stderr.String())
		t.Errorf("the workflow started through the Web UI's own origin does not exist")
	}

	// Nothing of the attacks started or ran.
	time.Sleep(5 * time.Second) // a started sweep's trainer runs within a second or two on dev's worker
	for _, f := range []string{apiFile, uiFile} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the trainer command ran: %s exists", f)
		}
		if started("pwn-" + filepath.Base(f)) {
			t.Errorf("workflow pwn-%s was started", filepath.Base(f))
		}
	}
}

// uiStart starts a workflow through the Web UI's API as a browser page would: it reads the CSRF token
// the UI sets, then POSTs with it, under the given Host and Origin headers. It returns the POST's
// status and body (or the refused GET's).
func uiStart(t *testing.T, uiPort int, host, origin, id, body string) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	base := fmt.Sprintf("http://127.0.0.1:%d", uiPort)
	req, _ := http.NewRequest("GET", base+"/api/v1/settings", nil)
	req.Host = host
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(b)
	}
	var token string
	for _, ck := range resp.Cookies() {
		if ck.Name == "_csrf" {
			token = ck.Value
		}
	}
	req, _ = http.NewRequest("POST", base+"/api/v1/namespaces/default/workflows/"+url.PathEscape(id), strings.NewReader(body))
	req.Host = host
	req.Header.Set("Origin", origin)
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("X-CSRF-TOKEN", token)
	req.AddCookie(&http.Cookie{Name: "_csrf", Value: token})
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", out[i]))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, s := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(s); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// listeningPorts returns the TCP ports the processes pids listen on.
func listeningPorts(t *testing.T, pids []int) []int {
	t.Helper()
	inodes := map[string]bool{}
	for _, pid := range pids {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != "0A" || !inodes[fl[9]] { // 0A: LISTEN
				continue
			}
			i := strings.LastIndex(fl[1], ":")
			b, err := hex.DecodeString(fl[1][i+1:])
			if err == nil && len(b) == 2 {
				ports = append(ports, int(b[0])<<8|int(b[1]))
			}
		}
		f.Close()
	}
	if len(ports) == 0 {
		t.Fatalf("found no listening ports of processes %v", pids)
	}
	return ports
}

// A worker started with --allow-trainer runs the programs on its list and refuses any other at once:
// the trial fails on its first attempt (none retried, none charged to the trainer) with a message
// naming the program and the flag; with probes on, the first probe is refused and the sweep fails with
// that message before any trial. validate --allow-trainer says the same before submitting.
func TestWorkerAllowTrainer(t *testing.T) {
	e := newEnv(t)
	e.startWorker("w", "--slots", "2", "--allow-trainer", trainerBin)
	waitFor(t, time.Minute, "the worker to say which trainers it allows", func() bool {
		b, _ := os.ReadFile(filepath.Join(e.dir, "worker-w.log"))
		return strings.Contains(string(b), "worker: trainers allowed: "+trainerBin+" (--allow-trainer)")
	})
	// Another program that would train just as well: a copy of the allowed one (not a link to it).
	other := filepath.Join(e.dir, "other-trainer")
	b, err := os.ReadFile(trainerBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, b, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "  total_steps: 2000\nmethod: grid\nseeds: [1, 2]\nparameters:\n  sleep_ms: {value: 1}\nprobes: {enabled: false}\n"
	write := func(name, y string) string {
		p := filepath.Join(e.dir, name+".yaml")
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	allowed := write("allowed", fmt.Sprintf("name: allowed\ntrainer:\n  command: [%q]\n", trainerBin)+body)
	refused := write("refused", fmt.Sprintf("name: refused\ntrainer:\n  command: [%q]\n", other)+body)
	probed := write("probed", fmt.Sprintf("name: probed\ntrainer:\n  command: [%q]\n", other)+
		strings.Replace(body, "probes: {enabled: false}\n", "", 1))

	wantMsg := func(out string) bool {
		return strings.Contains(out, fmt.Sprintf("trainer program %q refused by this worker's --allow-trainer list", other)) &&
			strings.Contains(out, "--allow-trainer "+other)
	}
	if out, code := e.cli("validate", "--allow-trainer", trainerBin, refused); code != 2 || !wantMsg(out) {
		t.Errorf("validate --allow-trainer of the refused spec exited %d, want 2 and the refusal:\n%s", code, out)
	}
	if out, code := e.cli("validate", "--allow-trainer", trainerBin, allowed); code != 0 {
		t.Errorf("validate --allow-trainer of the allowed spec exited %d, want 0:\n%s", code, out)
	}

	out, code := e.cli("submit", "--watch", allowed)
	if code != 0 || !strings.Contains(out, "2 completed") {
		t.Errorf("the allowed trainer's sweep exited %d, want 0 and 2 trials completed:\n%s", code, out)
	}

	start := time.Now()
	out, code = e.cli("submit", "--watch", refused)
	took := time.Since(start)
	if code == 0 || !wantMsg(out) {
		t.Errorf("the refused trainer's sweep exited %d, want a failure naming the program and the flag:\n%s", code, out)
	}
	if took > 30*time.Second {
		t.Errorf("the refused sweep took %s to end, want it refused at once", took)
	}
	res := e.results(sweepIDFrom(t, out))
	for _, tr := range res.Trials {
		if tr.Outcome != "failed" || !wantMsg(tr.Error) || tr.TrainerFailures != 0 || tr.InfraRetries != 0 {
			t.Errorf("trial %s: outcome %s, error %q, trainer_failures %d, infra_retries %d; want failed with the refusal, nothing charged",
				tr.TrialID, tr.Outcome, tr.Error, tr.TrainerFailures, tr.InfraRetries)
		}
		// Its segment ran one attempt: the server retried nothing.
		it := e.client.GetWorkflowHistory(context.Background(), workflows.TrialWorkflowID(res.SweepID, tr.TrialID), "", false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() != 1 {
				t.Errorf("trial %s: a segment activity ran attempt %d, want 1 only", tr.TrialID, a.GetAttempt())
			}
		}
	}
	if len(res.Trials) != 2 {
		t.Errorf("refused sweep: %d trials in results, want 2", len(res.Trials))
	}

	out, code = e.cli("submit", "--watch", probed)
	if code == 0 || !wantMsg(out) {
		t.Errorf("the refused trainer's sweep with probes exited %d, want the sweep failed with the refusal:\n%s", code, out)
	}
}
