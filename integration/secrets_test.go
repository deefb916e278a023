//go:build integration

package integration

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A worker holding AWS keys, a Temporal API key and a marked secret runs trainers and probes that print
// their environment and the worker's credentials, then crash, stall or diverge: the canaries appear in
// no workflow history, no stored object but the trainers' own stdout logs, and no output of status,
// results, watch or report.
func TestCanariesNeverLeaveTheWorker(t *testing.T) {
	e := newEnv(t)
	canaries := map[string]string{
		"AWS_ACCESS_KEY_ID":     "AKIACANARY7AWSKEYID1",
		"AWS_SECRET_ACCESS_KEY": "canary-aws-secret/wJalrXUtnFEMI+K7MDENG",
		"AWS_SESSION_TOKEN":     "canary-aws-sts-token-FwoGZXIvYXdzEJr",
		"TEMPORAL_API_KEY":      "canary-temporal-api-key-eyJhbGciOiJFUzI1NiJ9",
		"MY_MARKED_TOKEN":       "canary-marked-token-hf_abcdefgh",
	}
	var lines []string
	for k, v := range canaries {
		t.Setenv(k, v) // the worker's environment (and the CLI's)
		lines = append(lines, k+"="+v)
	}
	t.Setenv("TEMPORAL_TLS", "false") // the dev server speaks plain TCP; the API key rides along unused
	t.Setenv("RLSWEEP_SECRET_ENV", "MY_MARKED_TOKEN")
	file := filepath.Join(e.dir, "canaries")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.startWorker("a", "--slots", "3")

	// The trainer prints its environment and the worker's credentials (as one that read its parent's
	// would), then crashes, stalls or diverges as its mode parameter says.
	const script = `env; cat "$CANARY_FILE"; printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"
case "$1" in
crash) exit 3;;
stall) sleep 60;;
diverge) printf '{"step":2000,"value_loss":NaN}\n' >> "$RLSWEEP_METRICS_FILE"; sleep 60;;
esac`
	writeSpec := func(name, body string) string {
		p := filepath.Join(e.dir, name+".yaml")
		y := fmt.Sprintf(`name: %s
trainer:
  command: ["/bin/sh", "-c", %q, "sh", "{{.Params.mode}}"]
  environment: {CANARY_FILE: %q}
  total_steps: 10000
  stall_timeout: 2s
  grace_period: 1s
metric: {name: reward, goal: maximize}
method: grid
seeds: [1]
retries: {max_attempts: 1}
`, name, script, file) + body
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trials := writeSpec("canary-trials", "parameters:\n  mode: {values: [crash, stall, diverge]}\nprobes: {enabled: false}\nconcurrency: 3\n")
	probed := writeSpec("canary-probes", "parameters:\n  mode: {value: crash}\nprobes:\n  command: [\"/bin/sh\", \"-c\", \"env; cat \\\"$CANARY_FILE\\\"; exit 1\"]\n")

	var outputs strings.Builder
	var sweeps []string
	for _, spec := range []string{trials, probed} {
		out, _ := e.cli("submit", spec, "--watch")
		outputs.WriteString(out)
		id := sweepIDFrom(t, out)
		sweeps = append(sweeps, id)
		for _, args := range [][]string{{"status", id}, {"results", id}, {"results", "-o", "json", id}, {"results", "-o", "csv", id},
			{"report", "-o", filepath.Join(e.dir, "report-"+filepath.Base(id)+".html"), id}, {"list"}} {
			out, _ := e.cli(args...)
			outputs.WriteString(out)
		}
	}
	o := outputs.String()
	for _, want := range []string{"[secret AWS_SECRET_ACCESS_KEY]", "status 3", "the trainer crashed on probe 1"} {
		if !strings.Contains(o, want) {
			t.Errorf("the CLI's output lacks %q: the search would prove nothing\n%s", want, o)
		}
	}
	check := func(where, s string) {
		t.Helper()
		for k, v := range canaries {
			if strings.Contains(s, v) {
				t.Errorf("%s holds the canary %s", where, k)
			}
		}
	}
	check("the CLI's output", o)

	// Every run of both sweeps and their trials, as the wire bytes (payloads as the JSON the SDK wrote).
	runs := 0
	for _, id := range sweeps {
		for _, r := range e.sweepHistories(t, id) {
			runs++
			check("the history of "+r.WorkflowID, r.History)
		}
	}
	if runs < 5 {
		t.Errorf("found %d workflow runs, want both sweeps and 3 trials", runs)
	}

	logs, objects := 0, 0
	err := filepath.WalkDir(e.store.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == "logs" {
			logs++ // the trainer's own stdout log keeps what it printed
			return nil
		}
		objects++
		check("stored "+strings.TrimPrefix(p, e.store.Root()), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if logs < 3 || objects == 0 {
		t.Errorf("the store holds %d trainer logs and %d other objects, want at least 3 and some", logs, objects)
	}
	t.Logf("searched %d runs, %d stored objects and %d bytes of CLI output", runs, objects, len(o))
}
