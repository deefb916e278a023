//go:build integration

package integration

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// credentialNames are the worker's credential variables the tests below set.
var credentialNames = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "TEMPORAL_API_KEY", "MY_MARKED_TOKEN"}

// A worker on MinIO holding AWS keys, a Temporal API key and a marked secret: each trainer walks its
// parent chain up to the worker (trainer → supervisor → worker) and copies every ancestor's
// /proc/PID/environ. None holds a credential: the supervisors get the trainer's environment (or none)
// and the worker keeps its credentials out of its environment block; the store works all the same.
func TestTrainersReadNoCredentialsFromTheirAncestors(t *testing.T) {
	e := newS3Env(t, "creds")
	canaries := map[string]string{
		"AWS_ACCESS_KEY_ID":     e.minio.user,
		"AWS_SECRET_ACCESS_KEY": e.minio.key,
		"TEMPORAL_API_KEY":      "canary-temporal-api-key-eyJhbGciOiJFUzI1NiJ9",
		"MY_MARKED_TOKEN":       "canary-marked-token-hf_abcdefgh",
	}
	t.Setenv("TEMPORAL_API_KEY", canaries["TEMPORAL_API_KEY"])
	t.Setenv("TEMPORAL_TLS", "false") // the dev server speaks plain TCP; the API key rides along unused
	t.Setenv("MY_MARKED_TOKEN", canaries["MY_MARKED_TOKEN"])
	t.Setenv("RLSWEEP_SECRET_ENV", "MY_MARKED_TOKEN")
	worker := e.startWorker("a", "--slots", "1")
	out := filepath.Join(e.dir, "ancestors")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each ancestor's environment block goes to OUT_DIR/TRAINER-ANCESTOR.environ, its command line
	// beside it; the walk stops at the worker (beyond it is this test, which holds the credentials).
	// A trainer in a PID namespace has a $$ of the namespace's; /proc (the machine's), opened by the
	// shell itself, tells its PID there.
	const script = `while read -r k v; do [ "$k" = Pid: ] && me=$v; done < /proc/self/status
pid=$me
while :; do
  ppid=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$pid/status)
  if [ -z "$ppid" ] || [ "$ppid" -le 1 ]; then echo "reached $pid without passing $WORKER_PID" > "$OUT_DIR/$me.lost"; exit 5; fi
  cat /proc/$ppid/environ > "$OUT_DIR/$me-$ppid.environ" 2>"$OUT_DIR/$me-$ppid.unreadable" && rm "$OUT_DIR/$me-$ppid.unreadable"
  tr '\0' ' ' < /proc/$ppid/cmdline > "$OUT_DIR/$me-$ppid.cmdline"
  [ "$ppid" = "$WORKER_PID" ] && break
  pid=$ppid
done
printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`
	spec := filepath.Join(e.dir, "ancestors.yaml")
	y := fmt.Sprintf(`name: ancestors
trainer:
  command: ["/bin/sh", "-c", %q]
  environment: {OUT_DIR: %q, WORKER_PID: "%d"}
  total_steps: 1000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1, 2, 3]
retries: {max_attempts: 1}
probes: {enabled: false}
concurrency: 1
`, script, out, worker.Process.Pid)
	if err := os.WriteFile(spec, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	o, code := e.cli("submit", spec, "--watch", "--store", e.url)
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, o)
	}

	files, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	chains := map[string][]string{} // trainer PID → its ancestors' PIDs
	for _, f := range files {
		name := f.Name()
		if strings.HasSuffix(name, ".lost") {
			b, _ := os.ReadFile(filepath.Join(out, name))
			t.Errorf("a trainer did not find the worker among its ancestors: %s", b)
			continue
		}
		if trainer, ancestor, ok := strings.Cut(strings.TrimSuffix(name, ".unreadable"), "-"); ok && strings.HasSuffix(name, ".unreadable") {
			// The worker is not dumpable: a trainer of its user without CAP_SYS_PTRACE cannot open its
			// environment block (a root one can). Every trainer can open its supervisor's.
			b, _ := os.ReadFile(filepath.Join(out, name))
			if ancestor != strconv.Itoa(worker.Process.Pid) || os.Getuid() == 0 {
				t.Errorf("trainer %s could not read /proc/%s/environ: %s", trainer, ancestor, b)
			}
			chains[trainer] = append(chains[trainer], ancestor)
			continue
		}
		trainer, ancestor, ok := strings.Cut(strings.TrimSuffix(name, ".environ"), "-")
		if !ok || !strings.HasSuffix(name, ".environ") {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, strings.TrimSuffix(name, ".environ")+".unreadable")); err == nil {
			continue // an empty copy, judged with the .unreadable file
		}
		chains[trainer] = append(chains[trainer], ancestor)
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		cmdline, _ := os.ReadFile(filepath.Join(out, strings.TrimSuffix(name, ".environ")+".cmdline"))
		environ := string(b)
		// The marked secret is the trainer's own (the worker hands its environment on), so its
		// supervisor may hold it; the worker's block holds none of the four.
		isWorker := ancestor == strconv.Itoa(worker.Process.Pid)
		for k, v := range canaries {
			if strings.Contains(environ, v) && (k != "MY_MARKED_TOKEN" || isWorker) {
				t.Errorf("/proc/%s/environ (%s), an ancestor of trainer %s, holds the value of %s", ancestor, cmdline, trainer, k)
			}
		}
		for _, kv := range strings.Split(environ, "\x00") {
			if k, _, _ := strings.Cut(kv, "="); (k != "MY_MARKED_TOKEN" || isWorker) && containsString(credentialNames, k) {
				t.Errorf("/proc/%s/environ (%s), an ancestor of trainer %s, sets %s", ancestor, cmdline, trainer, k)
			}
		}
		if isWorker && !strings.Contains(environ, "AWS_ENDPOINT_URL_S3=") {
			t.Errorf("/proc/%s/environ, the worker's, lacks AWS_ENDPOINT_URL_S3 (what it copied is not the worker's environment):\n%q", ancestor, environ)
		}
	}
	if len(chains) != 3 {
		t.Errorf("found the ancestors of %d trainers, want 3 (one per trial)", len(chains))
	}
	for trainer, anc := range chains {
		if len(anc) < 2 || !containsString(anc, strconv.Itoa(worker.Process.Pid)) {
			t.Errorf("trainer %s: ancestors %v, want its supervisor and the worker %d", trainer, anc, worker.Process.Pid)
		}
	}
	res := e.results(sweepIDFrom(t, o))
	for _, tr := range res.Trials {
		if tr.Outcome != "completed" {
			t.Errorf("trial %s: outcome %s, want completed (the worker stores on MinIO with the credentials it handed itself)", tr.TrialID, tr.Outcome)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A trainer uses a marked secret as a metric name and as its checkpoint's name, over two segments (the
// second resumes from that checkpoint): the secret appears in no CLI output (status, results, report),
// no stored object nor object key, and no workflow history; its masked form is what is stored.
func TestSecretNamesAreMasked(t *testing.T) {
	e := newEnv(t)
	const secret = "canary-marked-token-hf_ijklmnop"
	t.Setenv("MY_MARKED_TOKEN", secret)
	t.Setenv("RLSWEEP_SECRET_ENV", "MY_MARKED_TOKEN")
	e.startWorker("a", "--slots", "1")
	// The trainer starts at RLSWEEP_RESUME_FROM's step, if any, and runs to the stop step, checkpointing
	// there under a name holding the secret, with a metric named by it.
	const script = `step=0
if [ -n "$RLSWEEP_RESUME_FROM" ]; then step=$(cat "$RLSWEEP_RESUME_FROM"); fi
[ "$step" -lt "$RLSWEEP_STOP_AT_STEP" ] || exit 0
step=$RLSWEEP_STOP_AT_STEP
mkdir -p "$RLSWEEP_CHECKPOINT_DIR/run-$MY_MARKED_TOKEN"
echo "$step" > "$RLSWEEP_CHECKPOINT_DIR/run-$MY_MARKED_TOKEN/ckpt-$MY_MARKED_TOKEN-$step.txt"
printf '{"step":%d,"reward":%d,"%s":7,"checkpoint":"run-%s/ckpt-%s-%d.txt"}\n' "$step" "$step" "$MY_MARKED_TOKEN" "$MY_MARKED_TOKEN" "$MY_MARKED_TOKEN" "$step" >> "$RLSWEEP_METRICS_FILE"`
	spec := filepath.Join(e.dir, "secret-names.yaml")
	y := fmt.Sprintf(`name: secret-names
trainer:
  command: ["/bin/sh", "-c", %q]
  total_steps: 2000
  segment_steps: 1000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
retries: {max_attempts: 1}
probes: {enabled: false}
`, script)
	if err := os.WriteFile(spec, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	var outputs strings.Builder
	o, code := e.cli("submit", spec, "--watch")
	outputs.WriteString(o)
	if code != 0 {
		t.Fatalf("submit --watch exited %d:\n%s", code, o)
	}
	id := sweepIDFrom(t, o)
	for _, args := range [][]string{{"status", id}, {"results", id}, {"results", "-o", "json", id}, {"results", "-o", "csv", id},
		{"report", "-o", filepath.Join(e.dir, "report.html"), id}} {
		out, _ := e.cli(args...)
		outputs.WriteString(out)
	}
	if report, err := os.ReadFile(filepath.Join(e.dir, "report.html")); err == nil {
		outputs.Write(report)
	} else {
		t.Errorf("report: %v", err)
	}
	if strings.Contains(outputs.String(), secret) {
		t.Errorf("the CLI's output (status, results, report) holds the secret:\n%s", outputs.String())
	}
	runs := 0
	for _, r := range e.sweepHistories(t, id) {
		runs++
		if strings.Contains(r.History, secret) {
			t.Errorf("the history of %s holds the secret", r.WorkflowID)
		}
	}
	if runs < 2 {
		t.Errorf("found %d workflow runs, want the sweep's and its trial's", runs)
	}

	var keys []string
	masked := 0
	err := filepath.WalkDir(e.store.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		key := filepath.ToSlash(strings.TrimPrefix(p, e.store.Root()+string(filepath.Separator)))
		keys = append(keys, key)
		if strings.Contains(key, secret) {
			t.Errorf("stored object key %q holds the secret", key)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("stored object %s holds the secret:\n%.2000s", key, b)
		}
		if strings.Contains(string(b), `"[secret MY_MARKED_TOKEN]":7`) {
			masked++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ckpts []string
	for _, k := range keys {
		if strings.Contains(k, "/checkpoints/run-[secret MY_MARKED_TOKEN]/ckpt-[secret MY_MARKED_TOKEN]-") {
			ckpts = append(ckpts, k)
		}
	}
	if len(ckpts) != 2 {
		t.Errorf("checkpoint keys %q, want the two segments' under the masked name; stored keys:\n%s", ckpts, strings.Join(keys, "\n"))
	}
	if masked == 0 {
		t.Errorf("no stored object holds the masked metric name [secret MY_MARKED_TOKEN]; stored keys:\n%s", strings.Join(keys, "\n"))
	}
	res := e.results(id)
	if len(res.Trials) != 1 || res.Trials[0].Outcome != "completed" || res.Trials[0].Steps != 2000 {
		t.Errorf("trials %+v, want one completed at step 2000 (its second segment resumed from the masked checkpoint)", res.Trials)
	}
}

// rlsweep dev holding credentials (a Temporal API key, which it ignores, and AWS keys): a trainer that
// searches every process's environment block for them finds none — neither dev's nor the Temporal
// server's it started.
func TestDevProcessesHoldNoCredential(t *testing.T) {
	dir := t.TempDir()
	port, uiPort := freePort(t), freePort(t)
	const apiKey, awsKey = "rlsweep-dev-api-key-canary-0123", "rlsweep-dev-aws-secret-canary-4567"
	found := filepath.Join(dir, "found")
	script := fmt.Sprintf(`for f in /proc/[0-9]*/environ; do
  if grep -qa -e %s -e %s "$f" 2>/dev/null; then echo "$f $(tr '\0' ' ' < "${f%%environ}cmdline")" >> %q; fi
done
printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`, apiKey, awsKey, found)
	spec := filepath.Join(dir, "scan.yaml")
	y := fmt.Sprintf(`name: scan
trainer:
  command: ["/bin/sh", "-c", %q]
  total_steps: 1000
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
probes: {enabled: false}
`, script)
	if err := os.WriteFile(spec, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rlsweepBin, "dev", "--exit", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
		"--state-dir", filepath.Join(dir, "state"), "--store", filepath.Join(dir, "artifacts"), spec)
	cmd.Env = append(os.Environ(), "RLSWEEP_HOME="+filepath.Join(dir, "home"), "TEMPORAL_API_KEY="+apiKey,
		"AWS_SECRET_ACCESS_KEY="+awsKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rlsweep dev: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "completed: 1 trials (1 completed)") {
		t.Fatalf("dev output lacks the finished sweep (the trainer's search proves nothing):\n%s", out)
	}
	if b, err := os.ReadFile(found); err == nil {
		t.Errorf("processes whose environment block holds a credential, as a trainer finds them:\n%s", b)
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
