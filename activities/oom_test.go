package activities_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/runner"
)

// oomMessages are the frameworks' out-of-memory errors as a trainer prints them dying (exit status 1,
// a Python exception), in each framework's wording.
var oomMessages = map[string]string{
	"pytorch":    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free.",
	"pytorch 1":  "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.71 GiB already allocated; 5.56 MiB free; 9.82 GiB reserved in total by PyTorch)",
	"cudnn":      "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
	"driver":     "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:764] failed to alloc 2740606464 bytes unified memory; result: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
	"jax":        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.",
	"tensorflow": "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[4096,4096] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
	"physx":      "PxgCudaDeviceMemoryAllocator fail to allocate memory 100663296 bytes!! Result = 2",
}

// oomTrainer writes a record, prints msg to stderr and exits 1, counting its starts in count.
func oomTrainer(count, msg string) []string {
	return shellTrainer(`echo run >> ` + count + `
printf '{"step":500,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"
echo 'Traceback (most recent call last):' >&2
echo '  File "train.py", line 88, in <module>' >&2
printf '%s\n' '` + msg + `' >&2
exit 1`)
}

// A trainer that dies out of memory ends the segment TrainerOOM at once: not retried although
// retries.max_attempts is 3, not counted as a trainer failure, its message naming the trial, the
// line that matched and the fix.
func TestTrainSegmentOOMNotRetried(t *testing.T) {
	for name, msg := range oomMessages {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			in := f.input(1000, nil)
			in.MaxTrainerFailures, in.MaxInfraRetries = 3, 5
			count := filepath.Join(t.TempDir(), "runs")
			in.Trainer.Command = oomTrainer(count, msg)
			_, err := f.retried(in)
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != activities.ErrTrainerOOM || !app.NonRetryable() {
				t.Fatalf("segment ended with %v, want a non-retryable %s", err, activities.ErrTrainerOOM)
			}
			if n := runs(t, count); n != 1 {
				t.Errorf("trainer started %d times, want 1: an OOM is not retried", n)
			}
			for _, want := range []string{"trial 0-s1: out of memory", msg[:40], "fix: lower num_envs or the batch size", "resources.gpus", "not retried"} {
				if !strings.Contains(app.Message(), want) {
					t.Errorf("message lacks %q:\n%s", want, app.Message())
				}
			}
			var hb activities.Heartbeat
			if err := app.Details(&hb); err != nil {
				t.Fatal(err)
			}
			if hb.TrainerFailures != 0 || hb.Step != 500 || hb.Hardware == nil || hb.Hardware.Host == "" {
				t.Errorf("details = %+v, want no trainer failure counted, step 500 and where it ran", hb)
			}
		})
	}
}

// A trainer killed by SIGKILL the worker did not send: the host's OOM killer when the cgroup's
// oom_kill counter rose meanwhile, or when there is no counter to read; a crash (retried, counted)
// when the counter stayed.
func TestTrainSegmentHostOOM(t *testing.T) {
	events := filepath.Join(t.TempDir(), "memory.events")
	write := func(n string) {
		if err := os.WriteFile(events, []byte("low 0\nhigh 0\nmax 0\noom 0\noom_kill "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, events, script string
		want                 string
		starts               int
	}{
		{"counter rose", events, `echo "oom_kill 1" > ` + events + `; kill -9 $$`, activities.ErrTrainerOOM, 1},
		{"wrapper exits 137", events, `echo "oom_kill 1" > ` + events + `; exit 137`, activities.ErrTrainerOOM, 1},
		{"no counter", "none", `kill -9 $$`, activities.ErrTrainerOOM, 1},
		{"counter stayed", events, `kill -9 $$`, activities.ErrTrainerCrashed, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			write("0")
			t.Setenv(runner.EnvOOMEvents, c.events)
			f := newFixture(t)
			in := f.input(1000, nil)
			in.MaxTrainerFailures, in.MaxInfraRetries = 3, 5
			count := filepath.Join(t.TempDir(), "runs")
			in.Trainer.Command = shellTrainer(`echo run >> ` + count + `
printf '{"step":500,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"
` + c.script)
			_, err := f.retried(in)
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != c.want {
				t.Fatalf("segment ended with %v, want %s", err, c.want)
			}
			if n := runs(t, count); n != c.starts {
				t.Errorf("trainer started %d times, want %d", n, c.starts)
			}
			if c.want == activities.ErrTrainerOOM && !strings.Contains(app.Message(), "host OOM killer") {
				t.Errorf("message lacks the host OOM killer:\n%s", app.Message())
			}
		})
	}
}

// With a fake nvidia-smi on PATH, each segment's result records the worker's machine, the GPU the trial
// was given with its memory, the driver and CUDA versions, and the precision variables of the trainer's
// environment, and nothing else of it. nvidia-smi is asked once per worker process.
func TestTrainSegmentHardwareRecord(t *testing.T) {
	smi, err := filepath.Abs("testdata/nvidia-smi")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		machine, gpu, name string
		mem                int
		driver, cuda       string
	}{
		{"h100", "1", "NVIDIA H100 80GB HBM3", 81559, "550.54.15", "12.4"},
		{"a100", "0", "NVIDIA A100-SXM4-80GB", 81920, "535.129.03", "12.2"},
		{"rtx4090", "0", "NVIDIA GeForce RTX 4090", 24564, "550.163.01", "12.4"},
	} {
		t.Run(c.machine, func(t *testing.T) {
			activities.ForgetMachine()
			t.Cleanup(activities.ForgetMachine)
			calls := filepath.Join(t.TempDir(), "calls")
			t.Setenv("PATH", smi+string(os.PathListSeparator)+os.Getenv("PATH"))
			t.Setenv("RLSWEEP_FAKE_SMI", filepath.Join(smi, c.machine))
			t.Setenv("RLSWEEP_FAKE_SMI_CALLS", calls)
			smiEnv := filepath.Join(t.TempDir(), "env")
			t.Setenv("RLSWEEP_FAKE_SMI_ENV", smiEnv)
			t.Setenv("NVIDIA_TF32_OVERRIDE", "0")              // the worker's own, passed on to the trainer
			t.Setenv("AWS_SECRET_ACCESS_KEY", "worker-secret") // never passed on, never recorded
			f := newFixture(t)
			slots, err := activities.NewSlots([]string{c.gpu}, 1)
			if err != nil {
				t.Fatal(err)
			}
			f.acts.Slots = slots
			in := f.input(1000, nil)
			in.Trainer.Command = shellTrainer(`printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`)
			in.Trainer.Environment["XLA_FLAGS"] = "--xla_gpu_deterministic_ops=true"
			in.Trainer.Environment["WANDB_API_KEY"] = "spec-secret"
			for range 2 {
				res, err := f.run(in)
				if err != nil {
					t.Fatal(err)
				}
				h := res.Hardware
				if h == nil {
					t.Fatal("no hardware record")
				}
				if len(h.GPUs) != 1 || h.GPUs[0].ID != c.gpu || h.GPUs[0].Name != c.name || h.GPUs[0].MemoryMiB != c.mem ||
					h.Driver != c.driver || h.CUDA != c.cuda {
					t.Errorf("record = %+v, want GPU %s %s (%d MiB), driver %s, CUDA %s", h, c.gpu, c.name, c.mem, c.driver, c.cuda)
				}
				if want := activities.CPUModel("/proc/cpuinfo"); h.CPU != want || h.Host == "" || h.Worker == "" {
					t.Errorf("record = %+v, want CPU %q, the host and the worker", h, want)
				}
				if len(h.Precision) != 2 || h.Precision["NVIDIA_TF32_OVERRIDE"] != "0" || h.Precision["XLA_FLAGS"] != "--xla_gpu_deterministic_ops=true" {
					t.Errorf("precision = %v, want NVIDIA_TF32_OVERRIDE and XLA_FLAGS", h.Precision)
				}
				b, _ := json.Marshal(h)
				if strings.Contains(string(b), "secret") {
					t.Errorf("the record holds a credential: %s", b)
				}
			}
			if b, _ := os.ReadFile(smiEnv); len(b) == 0 || strings.Contains(string(b), "worker-secret") {
				t.Errorf("nvidia-smi's environment (%d bytes) is empty or holds the worker's credential", len(b))
			}
			b, _ := os.ReadFile(calls)
			if n := strings.Count(string(b), "\n"); n != 2 {
				t.Errorf("nvidia-smi ran %d times for two segments, want 2 (the query and the header, once):\n%s", n, b)
			}
		})
	}
}

// Without nvidia-smi, or with one that fails, the segment runs as ever and records what it can.
func TestTrainSegmentHardwareWithoutNvidiaSMI(t *testing.T) {
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "nvidia-smi"), []byte("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2\nexit 9\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"absent": t.TempDir() + string(os.PathListSeparator) + "/usr/bin:/bin", "broken": broken + string(os.PathListSeparator) + "/usr/bin:/bin"} {
		t.Run(name, func(t *testing.T) {
			activities.ForgetMachine()
			t.Cleanup(activities.ForgetMachine)
			t.Setenv("PATH", path)
			f := newFixture(t)
			in := f.input(1000, nil)
			in.Trainer.Command = shellTrainer(`printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`)
			res, err := f.run(in)
			if err != nil {
				t.Fatal(err)
			}
			if h := res.Hardware; h == nil || len(h.GPUs) != 0 || h.Driver != "" || h.CUDA != "" || h.Host == "" {
				t.Errorf("record = %+v, want the host and no GPU", h)
			}
		})
	}
}

func TestParseCUDAVersion(t *testing.T) {
	for head, want := range map[string]string{
		"| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |": "12.4",
		"| NVIDIA-SMI 610.57.04              KMD Version: 610.57.04     CUDA UMD Version: 13.3     |": "13.3",
		"| NVIDIA-SMI 580.105.06   Driver Version: 580.105.06   CUDA Version: N/A |":                  "",
	} {
		if got := activities.ParseCUDAVersion([]byte(head)); got != want {
			t.Errorf("ParseCUDAVersion(%q) = %q, want %q", head, got, want)
		}
	}
}
