//go:build unix

package ppo

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user+system CPU time. On a shared machine it measures the work
// done, where wall-clock steps/s also measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchmarkTraining reports environment steps per second of the whole training loop (collection,
// GAE, update), one Iterate per benchmark iteration. Run with GOMAXPROCS=1 for per-core numbers.
func benchmarkTraining(b *testing.B, env string, edit func(*Config)) {
	newEnv := mustMake(b, env)
	cfg := Defaults(newEnv().Spec())
	cfg.TotalSteps = 1 << 40
	if edit != nil {
		edit(&cfg)
	}
	tr, err := New(cfg, newEnv, 1)
	if err != nil {
		b.Fatal(err)
	}
	tr.Iterate() // warm up
	start, cpu := tr.Steps(), cpuTime()
	for b.Loop() {
		tr.Iterate()
	}
	steps := float64(tr.Steps() - start)
	b.ReportMetric(steps/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(steps/(cpuTime()-cpu).Seconds(), "steps/cpu-s")
}

func BenchmarkCartPoleCleanRL(b *testing.B) { benchmarkTraining(b, "CartPole-v1", nil) }
func BenchmarkCartPole64Envs(b *testing.B) {
	benchmarkTraining(b, "CartPole-v1", func(c *Config) { c.NumEnvs = 64 })
}
func BenchmarkPendulum(b *testing.B) { benchmarkTraining(b, "Pendulum-v1", nil) }
