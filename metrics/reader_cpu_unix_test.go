//go:build unix

package metrics

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user + system CPU time, so benchmarks on a shared machine can
// report throughput per CPU-second as well as per wall-clock second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
