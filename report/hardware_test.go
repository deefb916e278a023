package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

const (
	h100 = "NVIDIA H100 80GB HBM3"
	a100 = "NVIDIA A100-SXM4-80GB"
)

// gpuNumEnvs are the gpu sweep's values of num_envs.
var gpuNumEnvs = []int{256, 512, 1024, 2048, 4096, 8192, 16384}

// gpuInput is a sweep over lr (3e-4, 3e-3) × num_envs (256 … 16384) × precision (fp32, tf32), seed 1
// on an H100 and seed 2 on an A100. Throughput saturates with num_envs, the H100 at 40 000 steps per
// second, the A100 at 25 000. On the A100, num_envs 8192 ran out of memory and 16384 was not started
// for it (recorded as the sweep records such a trial). lr 3e-3 with num_envs 1024 diverges under tf32
// on both GPUs and trains under fp32.
func gpuInput(t *testing.T) *Input {
	spec := decodeSpec(t, `name: gpu
trainer: {command: [python, t.py], total_steps: 1000000}
metric: {name: reward, goal: maximize}
parameters:
  lr: {values: [0.0003, 0.003]}
  num_envs: {values: [256, 512, 1024, 2048, 4096, 8192, 16384]}
`)
	in := &Input{Results: &results.SweepResults{SweepID: "sweep/gpu/abc", Name: "gpu", Status: "completed",
		Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}, Params: []string{"lr", "num_envs"}}, Spec: spec}
	cfg := 0
	for _, lr := range []float64{3e-4, 3e-3} {
		for _, n := range gpuNumEnvs {
			for _, precision := range []string{"fp32", "tf32"} {
				for seed := int64(1); seed <= 2; seed++ {
					in.Results.Trials = append(in.Results.Trials, gpuTrial(cfg, seed, lr, n, precision))
				}
				cfg++
			}
		}
	}
	return in
}

// gpuTrial is one trial of gpuInput.
func gpuTrial(cfg int, seed int64, lr float64, numEnvs int, precision string) results.TrialSummary {
	gpu, peak := h100, 40000.0
	if seed == 2 {
		gpu, peak = a100, 25000.0
	}
	id := sweeps.TrialID(cfg, seed)
	tr := results.TrialSummary{TrialID: id, Config: cfg, Seed: seed, Precision: precision,
		Params: map[string]any{"lr": lr, "num_envs": numEnvs}, Outcome: results.OutcomeCompleted, Objective: ptr(400 + 1e4*lr),
		Hardware: &results.Hardware{Host: "box", CPU: "AMD EPYC 9654 96-Core Processor",
			GPUs: []results.GPU{{ID: "0", Name: gpu, MemoryMiB: 81559}}}}
	if precision == "fp32" {
		tr.Hardware.Precision = map[string]string{"NVIDIA_TF32_OVERRIDE": "0"}
	}
	sps := peak * float64(numEnvs) / float64(numEnvs+2048) * (1 + 0.03*float64(cfg%3))
	tr.Steps = 1000000
	switch {
	case gpu == a100 && numEnvs == 16384:
		return results.TrialSummary{TrialID: id, Config: cfg, Seed: seed, Precision: precision, Params: tr.Params,
			Outcome: results.OutcomeOOM, Error: fmt.Sprintf("trial %s: not started: num_envs 16384 ≥ 8192, which ran out of memory on %s (trial 11-s2) on queue rlsweep-gpu", id, a100)}
	case gpu == a100 && numEnvs == 8192:
		tr.Outcome, tr.Objective, tr.Steps = results.OutcomeOOM, nil, 0
		tr.Error = "CUDA out of memory. Tried to allocate 2.00 GiB"
	case lr == 3e-3 && numEnvs == 1024 && precision == "tf32":
		tr.Outcome, tr.Objective, tr.StopRule, tr.Steps = results.OutcomeDiverged, nil, "non_finite", 300000
		tr.Stop = &results.Verdict{Rule: "non_finite", Step: 300000, Detail: "loss = NaN", Advice: "lower the learning rate"}
	}
	tr.WallSeconds = math.Max(float64(tr.Steps)/sps, 30)
	return tr
}

func TestThroughput(t *testing.T) {
	in := gpuInput(t)
	classes, notStarted := Throughput(in.Results.Trials, "num_envs")
	if len(classes) != 2 || classes[0].Class != a100 || classes[1].Class != h100 {
		t.Fatalf("classes %+v, want the A100's and the H100's", classes)
	}
	if notStarted != 4 {
		t.Errorf("notStarted = %d, want 4 (num_envs 16384 on the A100: 2 lr × 2 precisions)", notStarted)
	}
	a, h := classes[0], classes[1]
	if len(a.OOM) != 4 || a.OOM[0] != 8192 || len(h.OOM) != 0 {
		t.Errorf("OOM values: A100 %v, H100 %v; want four 8192 on the A100, none on the H100", a.OOM, h.OOM)
	}
	// The A100 trained with num_envs 256 … 4096 (5 values × 4 trials), the H100 with all 7 (× 4).
	if len(a.Points) != 20 || len(h.Points) != 28 || len(a.Medians) != 5 || len(h.Medians) != 7 {
		t.Errorf("A100 %d points, %d medians; H100 %d points, %d medians; want 20, 5, 28, 7", len(a.Points), len(a.Medians), len(h.Points), len(h.Medians))
	}
	for i := 1; i < len(h.Medians); i++ {
		if h.Medians[i].X <= h.Medians[i-1].X || h.Medians[i].Y <= h.Medians[i-1].Y {
			t.Errorf("H100 medians %v: want increasing num_envs and throughput", h.Medians)
			break
		}
	}
	// The diverged trial's throughput is its steps over its time: 300 000 steps at the same rate.
	want := 40000.0 * 1024 / (1024 + 2048)
	found := false
	for _, p := range h.Points {
		if p.X == 1024 && math.Abs(p.Y-want) < 0.06*want {
			found = true
		}
	}
	if !found {
		t.Errorf("H100 points %v lack num_envs 1024 near %.0f steps/s", h.Points, want)
	}
}

func TestThroughputLeavesOutUntimed(t *testing.T) {
	trials := []results.TrialSummary{
		{TrialID: "a", Params: map[string]any{"num_envs": 64}, Outcome: results.OutcomeCompleted, Steps: 100, WallSeconds: 0, Hardware: &results.Hardware{}},
		{TrialID: "b", Params: map[string]any{"num_envs": 64}, Outcome: results.OutcomeFailed, Steps: 0, WallSeconds: 5, Hardware: &results.Hardware{}},
		{TrialID: "c", Params: map[string]any{"num_envs": 128}, Outcome: results.OutcomeCompleted, Steps: 600, WallSeconds: 2, Hardware: &results.Hardware{}},
		{TrialID: "d", Params: map[string]any{"lr": 1}, Outcome: results.OutcomeCompleted, Steps: 600, WallSeconds: 2},
		{TrialID: "e", Params: map[string]any{"num_envs": 128}, Outcome: results.OutcomeCompleted, Steps: 600, StartStep: 400, WallSeconds: 2, Hardware: &results.Hardware{}},
	}
	classes, notStarted := Throughput(trials, "num_envs")
	if notStarted != 0 || len(classes) != 1 || classes[0].Class != "no GPU" {
		t.Fatalf("classes %+v, notStarted %d; want one class, no GPU", classes, notStarted)
	}
	if got, want := classes[0].Points, (plotter.XYs{{X: 128, Y: 300}, {X: 128, Y: 100}}); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("points %v, want %v (no steps or no time left out; a trial started at step 400 trained 200)", got, want)
	}
	if drawThroughput(classes) {
		t.Error("drawThroughput with one value of num_envs: want no plot")
	}
}

func TestLog2Axis(t *testing.T) {
	tests := []struct {
		xs   []float64
		want bool
	}{
		{[]float64{256, 512, 1024}, true},
		{[]float64{8, 16}, true},
		{[]float64{10, 200}, true},
		{[]float64{100, 300}, false},
		{[]float64{0, 512, 1024}, false},
		{[]float64{512}, false},
	}
	for _, tt := range tests {
		if got := log2Axis(tt.xs); got != tt.want {
			t.Errorf("log2Axis(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

func TestRenderHardware(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, gpuInput(t)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	i := strings.Index(html, `<figure id="`+FigureThroughput+`">`)
	if i < 0 || !strings.HasPrefix(html[i+len(`<figure id="`+FigureThroughput+`">`):], "<svg") {
		t.Fatalf("report lacks figure %q with an inline <svg>", FigureThroughput)
	}
	fig := html[i : i+strings.Index(html[i:], "</figure>")]
	plot, caption, _ := strings.Cut(fig, "</svg>")
	for _, want := range []string{
		"> OOM at num_envs ≥ 8192 on " + a100 + " </text>", // the boundary's label beside its line
		">ran out of memory</text>", ">" + h100 + "</text>", ">" + a100 + "</text>",
		">16384</text>", ">256</text>", // the log axis's ticks at the values
	} {
		if !strings.Contains(plot, want) {
			t.Errorf("throughput plot lacks %q", want)
		}
	}
	for _, want := range []string{"(OOM at num_envs ≥ 8192 on " + a100 + ")", "4 trials not started", "Pick num_envs at the knee"} {
		if !strings.Contains(caption, want) {
			t.Errorf("throughput caption lacks %q", want)
		}
	}
	if strings.Contains(fig, "on "+h100+" (") || strings.Contains(fig, "OOM at num_envs ≥ 8192 on "+h100) {
		t.Error("throughput figure marks an OOM bound on the H100, which never ran out of memory")
	}
	for _, want := range []string{
		`id="hardware-table"`,
		// tf32 on the A100: 12 trials ran (16384 not started): 1 diverged, 9 completed, 2 oom.
		`<tr><td>` + a100 + `</td><td>tf32</td><td class="n">12</td><td class="n">1</td><td class="n">9</td><td class="n">0</td><td class="n">2</td><td class="n">0</td>`,
		`<tr><td>` + h100 + `</td><td>fp32</td><td class="n">14</td><td class="n">0</td><td class="n">14</td>`,
		`id="hardware-sensitive"`,
		"config 18, 19 (lr=0.003 num_envs=1024) diverges under tf32 on " + a100 + ", tf32 on " + h100 + "; trains under fp32 on " + a100 + ", fp32 on " + h100,
		`href="#hardware-sensitive"><b>hardware-sensitive</b>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, "<li><b>hardware-sensitive</b>"); n != 1 {
		t.Errorf("%d configurations flagged hardware-sensitive, want 1", n)
	}
}

// Without a memory parameter, or with one value of it among the trials that ran, there is no
// throughput plot; trials in one group without a precision setting get no hardware table.
func TestRenderHardwareOmitted(t *testing.T) {
	render := func(in *Input) string {
		var b bytes.Buffer
		if err := Render(&b, in); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	html := render(sampleInput())
	for _, id := range []string{FigureThroughput, "hardware-table", "hardware"} {
		if strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("report of a sweep without num_envs or hardware records holds %q", id)
		}
	}
	// One value of num_envs ran on the A100 (4096); the other (16384) was never started.
	in := gpuInput(t)
	var kept []results.TrialSummary
	for _, tr := range in.Results.Trials {
		n := tr.Params["num_envs"].(int)
		if tr.Seed == 2 && (n == 4096 || n == 16384) {
			tr.Precision = ""
			kept = append(kept, tr)
		}
	}
	in.Results.Trials = kept
	html = render(in)
	if strings.Contains(html, `id="`+FigureThroughput+`"`) {
		t.Error("throughput plot drawn with one value of num_envs among the trials that ran")
	}
	if strings.Contains(html, `id="hardware-table"`) {
		t.Error("hardware table drawn for trials on one GPU class without a precision setting")
	}
	// With a precision setting the table is drawn, even for one group.
	for i := range in.Results.Trials {
		in.Results.Trials[i].Precision = "fp32"
	}
	if html = render(in); !strings.Contains(html, `id="hardware-table"`) {
		t.Error("no hardware table for trials in one group with a precision setting")
	}
	// On two GPU classes it is drawn without a precision setting.
	in = gpuInput(t)
	for i := range in.Results.Trials {
		in.Results.Trials[i].Precision = ""
	}
	if html = render(in); !strings.Contains(html, `id="hardware-table"`) {
		t.Error("no hardware table for trials on two GPU classes")
	}
}
