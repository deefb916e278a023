package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/results"
)

// TestReportScreenshots renders the report of an asha, a bayes and a pbt sweep, of a sweep over
// num_envs and precision on two GPU classes, and of a sweep with three objectives, in headless Chromium: the DOM must hold each feature's
// figure with a drawn <svg> and its caption, and the screenshot must be a drawn page. Set RLSWEEP_TEST_ARTIFACTS=DIR to keep the pages and screenshots
// (DIR/TestReportScreenshots/<case>/report.{html,png}).
func TestReportScreenshots(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not found: scripts/install-tools.sh chromium installs it; the report's screenshots are not checked")
	}
	cases := []struct {
		method  string
		in      func(*testing.T) *Input
		figures []string // each must hold an <svg>
		text    []string
	}{
		{"asha", ashaInput,
			[]string{FigureEarlyCurves, "plot-learning-curves", "plot-parallel-coordinates", "plot-sensitivity-lr", "plot-rungs"},
			[]string{"zoomed to the first", "pruned: last windowed value at its rung", "dashed orange",
				"Pruned trials (4) count by the last windowed value at the rung", "pruned (value at its rung)"}},
		{"bayes", bayesInput,
			[]string{FigureHistory, "plot-parallel-coordinates", "plot-sensitivity-lr"},
			[]string{"Configurations 0–2 are the start-up draws", "start-up draw (random)", "TPE proposal", "best so far", "TPE starts"}},
		{"pbt", pbtInput,
			[]string{"plot-lineage", "plot-parallel-coordinates", "plot-sensitivity-lr", "plot-sensitivity-opt"},
			[]string{`id="sensitivity-note"`, "counts with the parameters it trained under over its whole schedule",
				"A population-based training member's line goes through the parameters it trained under over its whole schedule"}},
		{"gpu", gpuConfirmInput,
			[]string{FigureThroughput, "plot-parallel-coordinates", "plot-sensitivity-num_envs"},
			[]string{`id="confirm-table"`, "Confirmed on other GPU classes", "NVIDIA GeForce RTX 4090",
				"Throughput against num_envs by GPU class", "OOM at num_envs ≥ 8192 on NVIDIA A100-SXM4-80GB",
				"ran out of memory", "NVIDIA H100 80GB HBM3", "Pick num_envs at the knee", `id="hardware-table"`,
				"diverges under tf32 on NVIDIA A100-SXM4-80GB, tf32 on NVIDIA H100 80GB HBM3; trains under fp32 on NVIDIA A100-SXM4-80GB, fp32 on NVIDIA H100 80GB HBM3"}},
		{"pareto", func(t *testing.T) *Input { return paretoInput(t, threeObjectives, 12) },
			[]string{ParetoPairFigure(0, 1), ParetoPairFigure(0, 2), ParetoPairFigure(1, 2), FigureHypervolume, "plot-parallel-coordinates"},
			[]string{`id="pareto-table"`, `id="threshold-table"`, "Several objectives: the Pareto front", "One plot per pair of the 3 objectives",
				"never on the front", "episode_return (higher is better)", "env_steps_to_target (lower is better)",
				"seed_failure_rate (lower is better)", "target never reached (at the axis end)", "tick labelled never",
				"reference point 1.1", "1 (front)", "2 of 5 seeds", results.WhyDiverged, results.WhyPruned}},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			t.Parallel() // a browser each: the five take the time of one
			dir := artifactDir(t)
			var b bytes.Buffer
			if err := Render(&b, c.in(t)); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, "report.html")
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			shot := filepath.Join(dir, "report.png")
			dom := runChromium(t, chromium, page, "--dump-dom", "--screenshot="+shot)
			for _, id := range c.figures {
				i := strings.Index(dom, `<figure id="`+id+`">`)
				if i < 0 {
					t.Errorf("rendered DOM lacks figure %q", id)
					continue
				}
				if end := strings.Index(dom[i:], "</figure>"); end < 0 || !strings.Contains(dom[i:i+end], "<svg") || !strings.Contains(dom[i:i+end], "<path") {
					t.Errorf("figure %q holds no drawn <svg>", id)
				}
			}
			for _, want := range c.text {
				if !strings.Contains(dom, want) {
					t.Errorf("rendered DOM lacks %q", want)
				}
			}
			st, err := os.Stat(shot)
			if err != nil || st.Size() < 20000 {
				t.Fatalf("screenshot %s: %v (size %v), want a drawn page", shot, err, st)
			}
			t.Logf("%s: %s (%d bytes)", c.method, shot, st.Size())
		})
	}
}

// artifactDir is where the test keeps the pages and screenshots: $RLSWEEP_TEST_ARTIFACTS/<test name>
// when set, else the test's temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("RLSWEEP_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runChromium opens file in headless Chromium with the given flags (--dump-dom, --screenshot=...) and
// returns its stdout.
func runChromium(t *testing.T, bin, file string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1400,4000"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+abs)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(flags, " "), err, errOut.String())
	}
	return out.String()
}

// gpuConfirmInput is gpuInput with configuration 0 re-run on an rtx4090 class (confirm).
func gpuConfirmInput(t *testing.T) *Input {
	in := gpuInput(t)
	for seed := int64(1); seed <= 2; seed++ {
		tr := gpuTrial(0, seed, 3e-4, 256, "fp32")
		tr.TrialID, tr.GPUClass = tr.TrialID+"-rtx4090", "rtx4090"
		tr.Hardware = &results.Hardware{Host: "desk", GPUs: []results.GPU{{ID: "0", Name: "NVIDIA GeForce RTX 4090", MemoryMiB: 24564}}}
		in.Results.Trials = append(in.Results.Trials, tr)
	}
	return in
}
