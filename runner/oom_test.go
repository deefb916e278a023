package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each framework's out-of-memory death as the end of a trainer's log: the message in the framework's
// own wording (the numbers and paths are made up).
var oomTails = []struct {
	name, framework, tail, line string
}{
	{"torch 2.x", "PyTorch (CUDA)", `  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 76.30 GiB is allocated by PyTorch, and 1.22 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
`, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."},
	{"torch 2.0", "PyTorch (CUDA)", `Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 23.65 GiB total capacity; 21.90 GiB already allocated; 301.06 MiB free; 22.41 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF
`, "torch.cuda.OutOfMemoryError: CUDA out of memory."},
	{"torch 1.x", "PyTorch (CUDA)", `RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.71 GiB already allocated; 5.56 MiB free; 9.82 GiB reserved in total by PyTorch)
`, "RuntimeError: CUDA out of memory."},
	{"torch CUDA error", "CUDA runtime", `RuntimeError: CUDA error: out of memory
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
`, "RuntimeError: CUDA error: out of memory"},
	{"carb cudainterop", "CUDA runtime", `2025-02-13 12:01:23 [10,436ms] [Error] [carb.cudainterop.plugin] CUDA error 2: cudaErrorMemoryAllocation - out of memory)
`, "cudaErrorMemoryAllocation - out of memory"},
	{"cuDNN in torch", "cuDNN", `    return F.conv2d(input, weight, bias, self.stride,
RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED
`, "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED"},
	{"cuDNN in tensorflow", "cuDNN", `2020-06-03 10:12:01.123456: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED
`, "Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED"},
	{"CUDA driver", "CUDA driver", `2021-10-15 15:01:44.577626: E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_driver.cc:764] failed to alloc 2740606464 bytes unified memory; result: CUDA_ERROR_OUT_OF_MEMORY: out of memory
`, "CUDA_ERROR_OUT_OF_MEMORY: out of memory"},
	{"numba driver", "CUDA driver", `numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY
`, "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"},
	{"jax", "JAX/XLA", `Traceback (most recent call last):
  File "ppo.py", line 301, in <module>
    state, metrics = update(state, batch)
jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.
BufferAssignment OOM Debugging.
BufferAssignment stats:
             parameter allocation:  372.76MiB
`, "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes."},
	{"jax allocating", "JAX/XLA", `jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.
`, "RESOURCE_EXHAUSTED: Out of memory allocating"},
	{"old jaxlib", "JAX/XLA", `RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.
`, "RuntimeError: RESOURCE_EXHAUSTED: Out of memory"},
	{"tensorflow", "TensorFlow", `Traceback (most recent call last):
  File "train.py", line 40, in <module>
tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[16,1,892800,8] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
`, "ResourceExhaustedError: OOM when allocating tensor with shape[16,1,892800,8]"},
	{"tensorflow kernel", "TensorFlow", `2018-06-08 17:26:00.908130: W tensorflow/core/framework/op_kernel.cc:1202] OP_REQUIRES failed at tile_ops.cc:123 : Resource exhausted: OOM when allocating tensor with shape[16,1,892800,8,4,2,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
`, "Resource exhausted: OOM when allocating tensor"},
	{"physx", "PhysX (Isaac)", `[Info] [carb] Logging to file: /root/.local/share/ov/data/Kit/Isaac-Sim/4.2/kit_20250315_150710.log
+++ Using GPU PhysX
PxgCudaDeviceMemoryAllocator fail to allocate memory 100663296 bytes!! Result = 2
PxgCudaDeviceMemoryAllocator fail to allocate memory 100663296 bytes!! Result = 2
`, "PxgCudaDeviceMemoryAllocator fail to allocate memory 100663296 bytes!! Result = 2"},
	{"isaac vulkan", "Isaac Sim (Vulkan)", `2024-06-05 01:29:43 [8,172ms] [Error] [carb.graphics-vulkan.plugin] Out of GPU memory allocating resource 'MemoryManager-allocate' [size: unknown]
2024-06-05 01:29:43 [8,172ms] [Error] [carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY
`, "VkResult: ERROR_OUT_OF_DEVICE_MEMORY"},
}

func TestDetectOOM(t *testing.T) {
	for _, c := range oomTails {
		t.Run(c.name, func(t *testing.T) {
			got := DetectOOM(c.tail)
			if got == nil {
				t.Fatalf("DetectOOM: nil, want %s", c.framework)
			}
			if got.Framework != c.framework || !strings.Contains(got.Line, c.line) {
				t.Errorf("DetectOOM = %+v, want framework %q, a line with %q", got, c.framework, c.line)
			}
		})
	}
}

// Errors that look like running out of memory and are not: the trainer's own, a configuration's, a
// warning the trainer survives, a hint.
func TestDetectOOMLookalikes(t *testing.T) {
	for name, tail := range map[string]string{
		"illegal access":       "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n",
		"cudnn not supported":  "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.\n",
		"cudnn internal":       "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n",
		"cudnn execution":      "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n",
		"physx buffer":         "/buildAgent/work/99bede84aa0a52c2/source/gpunarrowphase/src/PxgNarrowphaseCore.cpp (2185) : internal error : PxgDynamicsMemoryConfig::collisionStackSize buffer overflow detected, please increase its size to at least 1484688128 in the scene desc!\n",
		"physx pinned warning": "/buildAgent/work/99bede84aa0a52c2/source/gpucommon/src/PxgCudaMemoryAllocator.cpp (59) : warning : Failed to allocate pinned memory.\n",
		"xla compile":          "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Executable expected shape f32[64,8] for argument 0 but got incompatible shape f32[32,8]\n",
		"tf resource other":    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Could not allocate ndarray\n",
		"a hint":               "tip: if you see CUDA out of memory, lower num_envs\nValueError: bad learning rate\n",
		"nan":                  "ValueError: Expected parameter loc (Tensor of shape (4096, 12)) of distribution Normal(loc: torch.Size([4096, 12])) to satisfy the constraint Real(), but found invalid values\n",
		"empty":                "",
	} {
		if got := DetectOOM(tail); got != nil {
			t.Errorf("%s: DetectOOM = %+v, want nil", name, got)
		}
	}
}

// The last match is the one reported, and a long line is clipped.
func TestDetectOOMLastLine(t *testing.T) {
	tail := "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n" + "RuntimeError: CUDA out of memory. " + strings.Repeat("x", 1000) + "\n"
	got := DetectOOM(tail)
	if got == nil || got.Framework != "PyTorch (CUDA)" || len(got.Line) > maxOOMLine+len("…") {
		t.Errorf("DetectOOM = %+v, want the PyTorch line clipped to %d bytes", got, maxOOMLine)
	}
}

func TestHostOOM(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "memory.events")
	write := func(n string) {
		if err := os.WriteFile(events, []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill "+n+"\noom_group_kill 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvOOMEvents, events)
	write("1")
	before, ok := OOMKills()
	if !ok || before != 1 {
		t.Fatalf("OOMKills = %d, %v, want 1, true", before, ok)
	}
	if got := HostOOM(true, false, before, ok); got != nil {
		t.Errorf("SIGKILL without a rise of oom_kill: HostOOM = %+v, want nil", got)
	}
	write("2")
	if got := HostOOM(true, false, before, ok); got == nil || !strings.Contains(got.Line, "rose from 1 to 2") {
		t.Errorf("SIGKILL with oom_kill risen: HostOOM = %+v, want the counter's rise", got)
	}
	if got := HostOOM(true, true, before, ok); got != nil {
		t.Errorf("the worker's own SIGKILL: HostOOM = %+v, want nil", got)
	}
	if got := HostOOM(false, false, before, ok); got != nil {
		t.Errorf("no SIGKILL: HostOOM = %+v, want nil", got)
	}
	// No counter: a SIGKILL the worker did not send is taken for the OOM killer's.
	t.Setenv(EnvOOMEvents, "none")
	before, ok = OOMKills()
	if ok {
		t.Fatal("OOMKills with RLSWEEP_CGROUP_MEMORY_EVENTS=none: ok")
	}
	if got := HostOOM(true, false, before, ok); got == nil || got.Framework != "host OOM killer" {
		t.Errorf("SIGKILL, no counter: HostOOM = %+v, want the host OOM killer", got)
	}
	if got := HostOOM(true, true, before, ok); got != nil {
		t.Errorf("the worker's SIGKILL, no counter: HostOOM = %+v, want nil", got)
	}
}

// The worker's own cgroup is found and read where the machine has one (the test passes without).
func TestOOMKillsOwnCgroup(t *testing.T) {
	t.Setenv(EnvOOMEvents, "")
	n, ok := OOMKills()
	t.Logf("oom_kill of this process's cgroup (%s): %d, %v", cgroupMemoryEvents(), n, ok)
	if ok && n < 0 {
		t.Errorf("OOMKills = %d", n)
	}
}
