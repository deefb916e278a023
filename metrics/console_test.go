package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readFixture copies a testdata file into a fresh directory (the readers follow files that grow) and
// returns its path.
func readFixture(t *testing.T, name string) (string, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(t.TempDir(), name), b
}

func openFixture(t *testing.T, c ReaderConfig) Reader {
	t.Helper()
	r, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// sameFloat treats NaN as equal to NaN.
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func checkValues(t *testing.T, rec Record, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		got, ok := rec.Values[k]
		if !ok || !sameFloat(got, w) {
			t.Errorf("step %d: %s = %v (present %v), want %v", rec.Step, k, got, ok, w)
		}
	}
}

// rsl_rl 1.x (legged_gym) prints its table with ANSI codes in the header, no reward until episodes
// end, "Mean episode <key>" extras, and nan/-nan/inf values; the trainer's other output and a
// warning between blocks are not records, an unparsable "Mean reward" is counted, and the partial
// last block is held until it ends.
func TestRSLRLConsoleV1(t *testing.T) {
	path, data := readFixture(t, "rsl_rl_v1.log")
	r := openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl", StdoutFile: path})
	if recs, err := r.Poll(); err != nil || len(recs) != 0 {
		t.Fatalf("no file yet: Poll = %v, %v", recs, err)
	}
	writeFile(t, path, data)
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(recs); !equalSteps(got, []int64{24576, 49152, 73728, 98304, 122880, 147456}) {
		t.Fatalf("steps = %v, want Total timesteps of iterations 0-5", got)
	}
	checkValues(t, recs[0], map[string]float64{ValueLoss: 0.0213, PolicyLoss: -0.0012,
		ActionStd: 1, FPS: 52000, "Episode/rew_tracking_lin_vel": 0.0102, "Iteration time": 0.47})
	if _, ok := recs[0].Values[Reward]; ok {
		t.Errorf("iteration 0 has a reward %v; no episode had ended", recs[0].Values)
	}
	checkValues(t, recs[2], map[string]float64{Reward: -0.41, EpisodeLength: 21.5})
	checkValues(t, recs[3], map[string]float64{ValueLoss: math.NaN(), Reward: math.NaN()})
	checkValues(t, recs[4], map[string]float64{ValueLoss: math.Inf(1), Reward: math.Inf(-1)})
	if _, ok := recs[5].Values[Reward]; ok {
		t.Errorf("iteration 5: reward %v from %q", recs[5].Values[Reward], "oops")
	}
	st := r.Stats()
	if st.Records != 6 || st.Malformed != 1 || !strings.Contains(st.LastError, "Mean reward") || !strings.HasPrefix(st.Steps, StepsEnv) {
		t.Errorf("Stats = %+v, want 6 records, 1 malformed (the reward \"oops\"), environment steps", st)
	}
	// The last block is cut mid-line: its end, then the trainer's exit, complete it.
	appendFile(t, path, "ogate loss: -0.0040\n             Mean action noise std: 0.97\n")
	if recs, _ := r.Poll(); len(recs) != 0 {
		t.Fatalf("a block without its ETA line: got %v", recs)
	}
	recs = r.(Finisher).Finish()
	if len(recs) != 1 || recs[0].Step != 7*24576 {
		t.Fatalf("Finish = %v, want iteration 6 at step %d", recs, 7*24576)
	}
	checkValues(t, recs[0], map[string]float64{PolicyLoss: -0.004, ActionStd: 0.97})
}

// rsl_rl 2.x prints its loss dictionary as "Mean <key> loss" and Isaac Lab's extras under their own
// names.
func TestRSLRLConsoleV2(t *testing.T) {
	path, data := readFixture(t, "rsl_rl_v2.log")
	writeFile(t, path, data)
	r := openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl", StdoutFile: path})
	recs, _ := r.Poll()
	if got := steps(recs); !equalSteps(got, []int64{98304, 196608, 294912, 393216}) {
		t.Fatalf("steps = %v", got)
	}
	checkValues(t, recs[1], map[string]float64{ValueLoss: 0.0398, PolicyLoss: -0.0072,
		Entropy: 8.4977, ActionStd: 1, Reward: -0.92, FPS: 48124,
		"Episode_Reward/track_lin_vel_xy_exp": 0.1034, "Metrics/base_velocity/error_vel_xy": 0.5012})
	if st := r.Stats(); st.Malformed != 0 {
		t.Errorf("Stats = %+v", st)
	}
}

// rsl_rl's later Logger prints "Total steps", "Steps per second", "Mean action std" and durations as
// h:mm:ss, which are not values.
func TestRSLRLConsoleV4(t *testing.T) {
	path, data := readFixture(t, "rsl_rl_v4.log")
	writeFile(t, path, data)
	r := openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl", StdoutFile: path})
	recs, _ := r.Poll()
	if got := steps(recs); !equalSteps(got, []int64{98304, 196608, 294912}) {
		t.Fatalf("steps = %v", got)
	}
	checkValues(t, recs[2], map[string]float64{ValueLoss: 0.031, Entropy: 11.302,
		ActionStd: 0.99, Reward: 1.25, FPS: 51002, "Episode_Reward/track_ang_vel_z_exp": 0.0712})
	if _, ok := recs[0].Values["Time elapsed"]; ok {
		t.Errorf("a duration h:mm:ss read as a value: %v", recs[0].Values)
	}
	if st := r.Stats(); st.Malformed != 0 || st.Records != 3 {
		t.Errorf("Stats = %+v", st)
	}
}

// The step axis: Total timesteps counts from the trainer process's start, so a process resumed at
// iteration 100 continues the axis; without Total timesteps, steps_per_iteration converts the
// iteration, and without either the iteration itself is the step and Stats says so.
func TestRSLRLConsoleStepAxis(t *testing.T) {
	block := func(it, total int64) string {
		s := "################################################################################\n" +
			"                      \x1b[1m Learning iteration " + itoa(it) + "/200 \x1b[0m \n\n" +
			"             Mean action noise std: 0.80\n"
		if total > 0 {
			s += "                   Total timesteps: " + itoa(total) + "\n"
		}
		return s + "                               ETA: 12.0s\n"
	}
	dir := t.TempDir()
	resumed := filepath.Join(dir, "resumed.log")
	appendFile(t, resumed, block(100, 1000)+block(101, 2000))
	r := openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl", StdoutFile: resumed})
	if recs, _ := r.Poll(); !equalSteps(steps(recs), []int64{101000, 102000}) {
		t.Errorf("resumed at iteration 100: steps = %v, want [101000 102000]", steps(recs))
	}

	bare := filepath.Join(dir, "bare.log")
	appendFile(t, bare, block(0, 0)+block(1, 0))
	r = openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl", StdoutFile: bare})
	if recs, _ := r.Poll(); !equalSteps(steps(recs), []int64{0, 1}) || r.Stats().Steps != StepsIterations {
		t.Errorf("no Total timesteps: steps = %v, Stats.Steps = %q; want iterations", steps(recs), r.Stats().Steps)
	}
	r = openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl", StdoutFile: bare, StepsPerIteration: 24576})
	if recs, _ := r.Poll(); !equalSteps(steps(recs), []int64{24576, 49152}) {
		t.Errorf("steps_per_iteration 24576: steps = %v, want [24576 49152]", steps(recs))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// SB3's console tables: one record per table, its step time/total_timesteps, keys through the sb3
// preset; other output is ignored, a table without a step is counted, the partial last table waits.
func TestSB3Console(t *testing.T) {
	path, data := readFixture(t, "sb3_stdout.log")
	writeFile(t, path, data)
	r := openFixture(t, ReaderConfig{Source: SourceStdout, Preset: "sb3", StdoutFile: path})
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(recs); !equalSteps(got, []int64{2048, 4096, 6144, 8192}) {
		t.Fatalf("steps = %v", got)
	}
	checkValues(t, recs[0], map[string]float64{Reward: 22.4, EpisodeLength: 22.4, FPS: 1830})
	checkValues(t, recs[1], map[string]float64{ValueLoss: 7.93, Entropy: 0.686,
		ApproxKL: 0.00871, PolicyLoss: -0.0132, ExplainedVariance: 0.0031,
		LearningRate: 0.0003, "train/n_updates": 10})
	checkValues(t, recs[2], map[string]float64{ValueLoss: math.NaN()})
	checkValues(t, recs[3], map[string]float64{Reward: math.Inf(1), ValueLoss: math.Inf(-1)})
	st := r.Stats()
	if st.Records != 4 || st.Malformed != 1 || !strings.Contains(st.LastError, "time/total_timesteps") {
		t.Errorf("Stats = %+v, want 4 records and the table without a step counted", st)
	}
	appendFile(t, path, "       |\n| time/              |          |\n|    total_timesteps | 10240    |\n---------------------------------\n")
	recs, _ = r.Poll()
	if len(recs) != 1 || recs[0].Step != 10240 || recs[0].Values[Reward] != 44 {
		t.Errorf("the completed last table: got %v", recs)
	}
}

// SB3's progress.csv: empty cells are not values, nan/inf are, a row that is not CSV or has no step is
// counted, the partial last row waits for its newline.
func TestSB3ProgressCSV(t *testing.T) {
	path, data := readFixture(t, "sb3_progress.csv")
	writeFile(t, path, data)
	r := openFixture(t, ReaderConfig{Source: SourceCSV, Preset: "sb3", MetricsFile: path})
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(recs); !equalSteps(got, []int64{2048, 4096, 6144, 8192}) {
		t.Fatalf("steps = %v", got)
	}
	if _, ok := recs[0].Values[ValueLoss]; ok || recs[0].Values[Reward] != -1245.3 {
		t.Errorf("first row = %v: want the reward and no value loss (an empty cell)", recs[0].Values)
	}
	checkValues(t, recs[1], map[string]float64{ValueLoss: 10402.7, ActionStd: 0.998, Entropy: 1.42})
	checkValues(t, recs[2], map[string]float64{ValueLoss: math.NaN()})
	checkValues(t, recs[3], map[string]float64{ValueLoss: math.Inf(-1), "train/loss": math.Inf(1)})
	st := r.Stats()
	if st.Records != 4 || st.Malformed != 2 || !strings.Contains(st.LastError, "time/total_timesteps") || !strings.HasPrefix(st.Steps, StepsEnv) {
		t.Errorf("Stats = %+v, want 4 records, 2 malformed", st)
	}
	appendFile(t, path, "12,0.2,-1.39,0.0301,0.0003,1.1,50,-0.0037,0.98,1.1\n")
	if recs, _ := r.Poll(); len(recs) != 1 || recs[0].Step != 12288 {
		t.Errorf("the completed last row: got %v", recs)
	}
}

// SB3 rewrites progress.csv with a longer header when a key first appears: the rows returned already
// are not returned again, and the new columns are read.
func TestCSVRewrittenHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.csv")
	appendFile(t, path, "rollout/ep_rew_mean,time/total_timesteps\n10,2048\n")
	r := openFixture(t, ReaderConfig{Source: SourceCSV, Preset: "sb3", MetricsFile: path})
	if recs, _ := r.Poll(); !equalSteps(steps(recs), []int64{2048}) {
		t.Fatalf("steps = %v", steps(recs))
	}
	// Rewritten in place, as SB3 does: same file, new header, old rows padded.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("rollout/ep_rew_mean,time/total_timesteps,train/value_loss\n10,2048,\n12,4096,0.5\n"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs, _ := r.Poll()
	if !equalSteps(steps(recs), []int64{4096}) || recs[0].Values[ValueLoss] != 0.5 {
		t.Errorf("after the rewrite: %v, want only step 4096 with its value loss", recs)
	}
	if st := r.Stats(); st.Malformed != 0 || st.Records != 2 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestParseConsoleNumber(t *testing.T) {
	for in, want := range map[string]float64{"1.5": 1.5, "-3e+05": -3e5, "nan": math.NaN(), "-nan": math.NaN(),
		"NaN": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1), "0.47s": 0.47, "2345 steps/s (x)": 2345, "1e999": math.Inf(1)} {
		if got, ok := parseConsoleNumber([]byte(in)); !ok || !sameFloat(got, want) {
			t.Errorf("parseConsoleNumber(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "0:00:12", "oops", "--1", "0x10", "1_000", "s", "nans"} {
		if got, ok := parseConsoleNumber([]byte(in)); ok {
			t.Errorf("parseConsoleNumber(%q) = %v, want no number", in, got)
		}
	}
}

// SB3's Monitor files hold one row per finished episode under a "#{...}" metadata line: each episode is
// a record at the step that sums the episode lengths so far; a partial last row waits, a bad length is
// counted.
func TestSB3MonitorCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.monitor.csv")
	writeFile(t, path, []byte("#{\"t_start\": 1620000000.5, \"env_id\": \"BreakoutNoFrameskip-v4\"}\n"+
		"r,l,t\n3.0,231,2102.953\n5.0,300,2200.1\n2.0,x,2300\n7.5,120,24"))
	r := openFixture(t, ReaderConfig{Source: SourceCSV, Preset: "sb3", MetricsFile: path})
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(recs); !equalSteps(got, []int64{231, 531}) {
		t.Fatalf("steps = %v, want the running sum of the lengths", got)
	}
	checkValues(t, recs[1], map[string]float64{Reward: 5, EpisodeLength: 300})
	if _, ok := recs[0].Values["t"]; ok {
		t.Errorf("record %v holds the wall-clock column", recs[0].Values)
	}
	appendFile(t, path, "00.7\n")
	recs, _ = r.Poll()
	if len(recs) != 1 || recs[0].Step != 651 || recs[0].Values[Reward] != 7.5 {
		t.Errorf("the completed last row: got %v", recs)
	}
	if st := r.Stats(); st.Records != 3 || st.Malformed != 1 || !strings.HasPrefix(st.Steps, StepsEnv) {
		t.Errorf("Stats = %+v, want 3 records, 1 malformed, environment steps", st)
	}
}

// A hand-rolled SB3-style logger writes "time/total timesteps" (a space for the underscore): it is the
// step column all the same, matched without regard to case, spaces or hyphens.
func TestCSVStepColumnSpelledLoosely(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.csv")
	appendFile(t, path, "train/value_loss,Progress,rollout/ep_rew_mean,time/total timesteps\n0.05,1.15%,0.96,12800\n0.04,2.43%,1.43,25600\n")
	r := openFixture(t, ReaderConfig{Source: SourceCSV, Preset: "sb3", MetricsFile: path})
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if !equalSteps(steps(recs), []int64{12800, 25600}) || recs[1].Values[Reward] != 1.43 {
		t.Errorf("records = %v, want steps 12800 and 25600 with their rewards", recs)
	}
	if st := r.Stats(); st.Malformed != 0 {
		t.Errorf("Stats = %+v, want no malformed row", st)
	}
}

// A reader opened without metrics.preset tells the preset from the tags, as `rlsweep diagnose` does: an
// SB3 progress.csv has its reward, value loss and entropy read as such, each column keeping its own
// name too, and metrics.tags keeps its mapping (here the reward comes from an evaluation column).
func TestPresetToldFromTheTags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.csv")
	appendFile(t, path, "rollout/ep_rew_mean,eval/mean_reward,time/total_timesteps,time/iterations,train/value_loss,train/entropy_loss\n"+
		"10,12,2048,1,0.5,-1.2\n20,25,4096,2,0.4,-1.1\n")
	r := openFixture(t, ReaderConfig{Source: SourceCSV, MetricsFile: path})
	recs, err := r.Poll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("records = %v, want 2", recs)
	}
	checkValues(t, recs[1], map[string]float64{Reward: 20, ValueLoss: 0.4, Entropy: 1.1, "rollout/ep_rew_mean": 20, "train/value_loss": 0.4})
	if st := r.Stats(); st.Preset != PresetSB3 {
		t.Errorf("Stats().Preset = %q, want %q", st.Preset, PresetSB3)
	}
	r2 := openFixture(t, ReaderConfig{Source: SourceCSV, MetricsFile: path, Tags: map[string]string{"eval/mean_reward": Reward}})
	recs, _ = r2.Poll()
	if len(recs) != 2 || recs[1].Values[Reward] != 25 || recs[1].Values["rollout/ep_rew_mean"] != 20 {
		t.Errorf("with metrics.tags eval/mean_reward: reward: %v, want 25 from the evaluation column and the rollout mean kept under its tag", recs)
	}
	plain := filepath.Join(t.TempDir(), "metrics.csv")
	appendFile(t, plain, "step,my_return\n1,3\n")
	r3 := openFixture(t, ReaderConfig{Source: SourceCSV, MetricsFile: plain})
	if recs, _ := r3.Poll(); len(recs) != 1 || recs[0].Values["my_return"] != 3 || r3.Stats().Preset != "" {
		t.Errorf("a CSV of no framework: %v, preset %q; want its own names and no preset", recs, r3.Stats().Preset)
	}
}
