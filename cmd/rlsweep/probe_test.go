package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/trainer/probes"
)

func TestProbeBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"probe", "--action-space", "multi"}, `--action-space: got "multi", want discrete or continuous`},
		{[]string{"probe", "--inject-bug", "off-by-one"}, `--inject-bug: got "off-by-one", want one of no-discount`},
		{[]string{"probe", "--output", "yaml"}, `--output: got "yaml", want text or json`},
		{[]string{"probe", "--inject-bug", "no-discount", "--", "python3", "train.py"}, "--inject-bug: got a value with an external command"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, c.args...)
			if code != exitInvalid || !strings.Contains(stderr, c.want) {
				t.Errorf("got exit %d, stderr %q; want exit 2 naming %q", code, stderr, c.want)
			}
		})
	}
}

// TestProbeExitCodes runs the built-in ladder healthy and with a bug caught by probe 1.
func TestProbeExitCodes(t *testing.T) {
	code, out, stderr := runCLI(t, "probe", "--inject-bug", "detach-value", "--output", "json")
	var rep probes.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s%s", err, out, stderr)
	}
	if code != exitProbeFailed || rep.Failed != "1" {
		t.Errorf("detach-value: got exit %d, failed %q; want exit 1, probe 1", code, rep.Failed)
	}
	if testing.Short() {
		return
	}
	code, out, _ = runCLI(t, "probe")
	if code != 0 || !strings.Contains(out, "all 5 probes pass") {
		t.Errorf("healthy: got exit %d, output %q; want 0 and all 5 probes pass", code, out)
	}
}

// TestProbeExternalParamsObject runs `probe -- CMD` with a real child process that writes its
// environment: without sweep parameters, RLSWEEP_PARAMS is the empty JSON object, never null.
func TestProbeExternalParamsObject(t *testing.T) {
	dir := t.TempDir()
	// The worker's Temporal credentials stay with it, as for trials.
	t.Setenv("TEMPORAL_API_KEY", "probe-must-not-see-this")
	// Exit 3 declines every probe: the test needs only the environment each probe run was given.
	code, out, stderr := runCLI(t, "probe", "--", "sh", "-c", `env > "$0/$RLSWEEP_PROBE.env"; exit 3`, dir)
	if code != exitProbeFailed {
		t.Fatalf("got exit %d, want %d (every probe declined)\n%s%s", code, exitProbeFailed, out, stderr)
	}
	for _, id := range probes.IDs() {
		b, err := os.ReadFile(filepath.Join(dir, string(id)+".env"))
		if err != nil {
			t.Fatalf("probe %s: the trainer did not run: %v", id, err)
		}
		if !slices.Contains(strings.Split(string(b), "\n"), "RLSWEEP_PARAMS={}") {
			t.Errorf("probe %s: environment has no line RLSWEEP_PARAMS={}:\n%s", id, b)
		}
		if strings.Contains(string(b), "probe-must-not-see-this") {
			t.Errorf("probe %s: the trainer got the worker's TEMPORAL_API_KEY", id)
		}
	}
}
