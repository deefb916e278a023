//go:build !unix

package metrics

import "time"

// cpuTime is unknown here; benchmarks then report wall-clock throughput only.
func cpuTime() time.Duration { return 0 }
