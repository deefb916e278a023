package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchLine is a typical 20-key metrics record, as the built-in trainer writes it.
func benchLine(step int) string {
	return fmt.Sprintf(`{"step": %d, "reward": 123.456789, "episode_length": 200, "value_loss": 0.0123456, `+
		`"policy_loss": -0.00456789, "entropy": 0.6789, "action_std": 0.456, "action_std_min": 0.123, `+
		`"approx_kl": 0.0098765, "clip_fraction": 0.1234, "explained_variance": 0.8765, "grad_norm": 0.56789, `+
		`"learning_rate": 0.0003, "fps": 123456, "advantage_mean": 1.2e-9, "advantage_std": 1.0001, `+
		`"advantage_abs_max": 4.5678, "custom/a": NaN, "custom/b": 1, "custom/c": -Infinity, "checkpoint": "c/%d.pt"}`,
		step, step)
}

func BenchmarkParseJSONLine(b *testing.B) {
	line := []byte(benchLine(123456))
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSONLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONLTail reads a 10,000-record file through a fresh tail per iteration and reports
// records/s.
func BenchmarkJSONLTail(b *testing.B) {
	const n = 10000
	var sb strings.Builder
	for i := range n {
		sb.WriteString(benchLine(i * 2048))
		sb.WriteByte('\n')
	}
	path := filepath.Join(b.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		t := NewJSONLTail(path)
		recs, err := t.Poll()
		if err != nil || len(recs) != n {
			b.Fatalf("got %d records, %v", len(recs), err)
		}
		t.Close()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
	reportCPU(b, cpu0, n)
}

// reportCPU reports records per CPU-second of the process, which a loaded shared machine does not
// distort the way it distorts wall-clock time.
func reportCPU(b *testing.B, cpu0 time.Duration, perOp int) {
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(perOp*b.N)/cpu.Seconds(), "records/cpu-s")
	}
}

// BenchmarkTensorBoardTail reads 10,000 steps of 16 scalars each (one event per scalar, as
// torch.utils.tensorboard writes them) and reports records (steps) and events per second.
func BenchmarkTensorBoardTail(b *testing.B) {
	const steps, tags = 10000, 16
	data := fileVersionRecord()
	for s := range steps {
		for k := range tags {
			data = append(data, tfrecord(eventBytes(int64(s*2048), simpleValue(fmt.Sprintf("Loss/metric_%d", k), float32(s)+0.5)))...)
		}
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.out.tfevents.1"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		t := NewTensorBoardTail(dir)
		recs, err := t.Poll()
		more := t.Finish()
		if err != nil || len(recs)+len(more) != steps {
			b.Fatalf("got %d records, %v", len(recs)+len(more), err)
		}
		t.Close()
	}
	b.ReportMetric(float64(steps*b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(steps*tags*b.N)/b.Elapsed().Seconds(), "events/s")
	reportCPU(b, cpu0, steps)
}

// benchText reads a file written n times over with one block from a fresh reader per iteration.
func benchText(b *testing.B, c ReaderConfig, block func(i int) string, n int) {
	var sb strings.Builder
	for i := range n {
		sb.WriteString(block(i))
	}
	path := filepath.Join(b.TempDir(), "log")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	c.StdoutFile, c.MetricsFile = path, path
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		r, err := Open(c)
		if err != nil {
			b.Fatal(err)
		}
		recs, err := r.Poll()
		if err != nil || len(recs) != n {
			b.Fatalf("got %d records, %v", len(recs), err)
		}
		r.Close()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
	reportCPU(b, cpu0, n)
}

// BenchmarkRSLRLConsoleTail reads 10,000 iteration blocks of rsl_rl 2.x's console table.
func BenchmarkRSLRLConsoleTail(b *testing.B) {
	benchText(b, ReaderConfig{Source: SourceStdout, Preset: "rsl_rl"}, func(i int) string {
		return fmt.Sprintf("%s\n                      \x1b[1m Learning iteration %d/10000 \x1b[0m \n\n"+
			"%40s 48123 steps/s (collection: 1.734s, learning 0.310s)\n%40s 0.98\n%40s 0.0451\n%40s -0.0072\n"+
			"%40s 8.5121\n%40s 12.34\n%40s 31.20\n%40s 0.1034\n%40s -0.0021\n%s\n%40s %d\n%40s 2.04s\n%40s 20.40s\n%40s 123.4s\n\n",
			strings.Repeat("#", 80), i, "Computation:", "Mean action noise std:", "Mean value_function loss:",
			"Mean surrogate loss:", "Mean entropy loss:", "Mean reward:", "Mean episode length:",
			"Episode_Reward/track_lin_vel_xy_exp:", "Episode_Reward/undesired_contacts:", strings.Repeat("-", 80),
			"Total timesteps:", (i+1)*98304, "Iteration time:", "Total time:", "ETA:")
	}, 10000)
}

// BenchmarkSB3ProgressCSV reads 10,000 rows of SB3's progress.csv.
func BenchmarkSB3ProgressCSV(b *testing.B) {
	header := "rollout/ep_len_mean,rollout/ep_rew_mean,time/fps,time/iterations,time/time_elapsed,time/total_timesteps," +
		"train/approx_kl,train/clip_fraction,train/clip_range,train/entropy_loss,train/explained_variance," +
		"train/learning_rate,train/loss,train/n_updates,train/policy_gradient_loss,train/std,train/value_loss\n"
	benchText(b, ReaderConfig{Source: SourceCSV, Preset: "sb3"}, func(i int) string {
		row := fmt.Sprintf("17.2,-1198.6,1502,%d,%d,%d,0.0041,0.0312,0.2,-1.42,-0.0081,0.0003,5120.4,%d,-0.0031,0.998,10402.7\n",
			i+1, i, (i+1)*2048, i*10)
		if i == 0 {
			return header + row
		}
		return row
	}, 10000)
}
