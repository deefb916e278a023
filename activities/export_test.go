package activities

import (
	"sync"
	"time"
)

// SetUploadRetry sets the background uploader's wait between tries, for a test; it returns the undo.
func SetUploadRetry(d time.Duration) (undo func()) {
	lo, hi := uploadRetryMin, uploadRetryMax
	uploadRetryMin, uploadRetryMax = d, d
	return func() { uploadRetryMin, uploadRetryMax = lo, hi }
}

// NearestMetric is nearestMetric, for a test.
var NearestMetric = nearestMetric

// ForgetMachine drops the cached hardware of this machine, so that the next segment asks nvidia-smi
// again (a test that puts a fake one on PATH).
func ForgetMachine() { machineOnce = sync.Once{}; machineInfo = machine{} }

// CPUModel, ParseSMIQuery's and ParseCUDAVersion's results, for a test.
var CPUModel = cpuModel

func ParseCUDAVersion(out []byte) string { return parseCUDAVersion(out) }

// LeaseOf is the lease of a whole-GPU trial (resources.gpus 1) on GPUs gpus of s, for a test that
// releases by GPU.
func LeaseOf(s *Slots, gpus ...string) Lease { return Lease{GPUs: gpus, units: s.wholeUnits()} }

// XLAMemoryEnv is xlaMemoryEnv, for a test.
var XLAMemoryEnv = xlaMemoryEnv
