package runner

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// OOM is a trainer's death by running out of memory, as its log tail or its exit tells it.
type OOM struct {
	// Framework names what ran out: "PyTorch (CUDA)", "JAX/XLA", "host OOM killer", ….
	Framework string
	// Line is the line of the log that matched, trimmed (at most 300 bytes); for the host OOM killer,
	// what told it (the cgroup's oom_kill counter, or the SIGKILL rlsweep did not send).
	Line string
}

// oomPattern is one framework's out-of-memory message.
type oomPattern struct {
	framework string
	re        *regexp.Regexp
}

// oomPatterns are the out-of-memory messages of the frameworks trainers run on, as they print them.
// Each is an error the process dies of (or a message printed as it dies), never a warning it trains
// on after: an allocator that retries (TensorFlow's BFC allocator logs CUDA_ERROR_OUT_OF_MEMORY while
// it falls back to smaller chunks) is only looked for in the tail of a trainer that exited non-zero.
var oomPatterns = []oomPattern{
	// PyTorch ≥ 1.13: torch.cuda.OutOfMemoryError (torch.OutOfMemoryError from 2.5 on), "CUDA out of
	// memory. Tried to allocate 20.00 MiB (GPU 0; …)"; before it the same text as a RuntimeError.
	{"PyTorch (CUDA)", regexp.MustCompile(`(?:OutOfMemoryError|RuntimeError):\s*CUDA out of memory`)},
	// PyTorch's and other runtimes' CUDA runtime error cudaErrorMemoryAllocation, as
	// "CUDA error: out of memory" (torch's RuntimeError; Isaac Sim's carb.cudainterop logs
	// "CUDA error 2: cudaErrorMemoryAllocation - out of memory").
	{"CUDA runtime", regexp.MustCompile(`CUDA error: out of memory|cudaErrorMemoryAllocation`)},
	// The CUDA driver API: CUDA_ERROR_OUT_OF_MEMORY ("failed to alloc … : CUDA_ERROR_OUT_OF_MEMORY:
	// out of memory" from XLA and TensorFlow's stream executor, numba's "Call to cuMemAlloc results in
	// CUDA_ERROR_OUT_OF_MEMORY").
	{"CUDA driver", regexp.MustCompile(`CUDA_ERROR_OUT_OF_MEMORY`)},
	// cuDNN: CUDNN_STATUS_ALLOC_FAILED ("cuDNN error: CUDNN_STATUS_ALLOC_FAILED" in PyTorch,
	// "Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED" in TensorFlow). Its other statuses
	// (CUDNN_STATUS_NOT_SUPPORTED, CUDNN_STATUS_INTERNAL_ERROR, CUDNN_STATUS_EXECUTION_FAILED) are not
	// out of memory.
	{"cuDNN", regexp.MustCompile(`(?i)CUDNN_STATUS_ALLOC_FAILED`)},
	// JAX/XLA: "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying
	// to allocate 4770354232 bytes." (also "Out of memory allocating N bytes"; older jaxlib raised it as
	// RuntimeError).
	{"JAX/XLA", regexp.MustCompile(`RESOURCE_EXHAUSTED: Out of memory`)},
	// TensorFlow: "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when
	// allocating tensor with shape[…]" (and the kernel's "Resource exhausted: OOM when allocating
	// tensor").
	{"TensorFlow", regexp.MustCompile(`(?:ResourceExhaustedError|Resource exhausted).*OOM when allocating tensor`)},
	// PhysX (Isaac Gym, Isaac Sim, Isaac Lab): the GPU simulation's device allocator, "PxgCudaDeviceMemoryAllocator
	// fail to allocate memory 100663296 bytes!! Result = 2".
	{"PhysX (Isaac)", regexp.MustCompile(`PxgCuda\w*MemoryAllocator fail to allocate memory`)},
	// Isaac Sim's renderer (cameras in Isaac Lab): "[carb.graphics-vulkan.plugin] Out of GPU memory
	// allocating resource …", "VkResult: ERROR_OUT_OF_DEVICE_MEMORY".
	{"Isaac Sim (Vulkan)", regexp.MustCompile(`Out of GPU memory allocating resource|ERROR_OUT_OF_DEVICE_MEMORY`)},
}

// maxOOMLine bounds OOM.Line.
const maxOOMLine = 300

// DetectOOM looks for an out-of-memory death in tail, the end of the log of a trainer that exited
// non-zero: the last line that matches one of oomPatterns. Nil when none does.
func DetectOOM(tail string) *OOM {
	var found *OOM
	sc := bufio.NewScanner(strings.NewReader(tail))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range oomPatterns {
			if p.re.MatchString(line) {
				found = &OOM{Framework: p.framework, Line: clip(strings.TrimSpace(line), maxOOMLine)}
				break
			}
		}
	}
	return found
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // not in the middle of a character
		n--
	}
	return s[:n] + "…"
}

// Killed says whether the trainer was killed by SIGKILL: its own process ended by the signal, or a
// wrapper (`bash train.sh`, whose child was killed) exited with status 137 (128 + 9).
func (p *Process) Killed() bool {
	ws := p.waitStatus() // 0 (exited 0) while the trainer runs
	if ws.Signaled() {
		return ws.Signal() == syscall.SIGKILL
	}
	return ws.Exited() && ws.ExitStatus() == 128+int(syscall.SIGKILL)
}

// Signal is the signal that ended the trainer's own process; 0 when it exited.
func (p *Process) Signal() syscall.Signal {
	if ws := p.waitStatus(); ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// EnvOOMEvents names the memory.events file of the cgroup the worker's trainers run in, where it is
// not where /proc/self/cgroup says (a cgroup file system mounted elsewhere in a container); "none"
// tells that no cgroup counts the kills.
const EnvOOMEvents = "RLSWEEP_CGROUP_MEMORY_EVENTS"

// OOMKills reads the oom_kill counter of the memory cgroup the worker runs in, and so its trainers
// (memory.events under cgroup v2, memory.oom_control under v1): the processes of the cgroup (and of
// the cgroups below it) the kernel's OOM killer killed, the cgroup's own limit or the host's memory
// exhausted alike. ok is false when there is no such file to read (no cgroup file system mounted, a
// kernel without the counter, a file the worker may not read).
func OOMKills() (n int64, ok bool) {
	path := os.Getenv(EnvOOMEvents)
	if path == "none" {
		return 0, false
	}
	if path == "" {
		path = cgroupMemoryEvents()
	}
	if path == "" {
		return 0, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if rest, found := bytes.CutPrefix(line, []byte("oom_kill ")); found {
			v, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// cgroupMemoryEvents is the file of the worker's memory cgroup that holds its oom_kill counter:
// memory.events under cgroup v2 ("0::/path" in /proc/self/cgroup), memory.oom_control under v1's
// memory controller ("4:memory:/path"); "" when neither is there.
func cgroupMemoryEvents() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var v1 string
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			if p := filepath.Join("/sys/fs/cgroup", rest, "memory.events"); exists(p) {
				return p
			}
			continue
		}
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && slices.Contains(strings.Split(f[1], ","), "memory") {
			v1 = filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.oom_control")
		}
	}
	if v1 != "" && exists(v1) {
		return v1
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// HostOOM tells whether a trainer killed by SIGKILL (killed) was killed by the kernel's OOM killer:
// where the cgroup's oom_kill counter can be read before the start (before, beforeOK) and after the
// exit, by its rise; where it cannot, a SIGKILL the worker did not send (stopped: the worker stopped the
// trainer itself) is taken for one, the OOM killer being what sends SIGKILL to a trainer on its own.
// Nil when it was not.
func HostOOM(killed, stopped bool, before int64, beforeOK bool) *OOM {
	if !killed || stopped {
		return nil
	}
	if beforeOK {
		if after, ok := OOMKills(); ok {
			if after > before {
				return &OOM{Framework: "host OOM killer", Line: "killed by SIGKILL; the oom_kill counter of the worker's cgroup rose from " +
					strconv.FormatInt(before, 10) + " to " + strconv.FormatInt(after, 10) + " while it ran"}
			}
			return nil
		}
	}
	return &OOM{Framework: "host OOM killer", Line: "killed by SIGKILL, which rlsweep did not send (no cgroup oom_kill counter to confirm the OOM killer sent it)"}
}

// Stopped says whether the worker stopped the trainer (Stop): its SIGKILL may be the worker's.
func (p *Process) Stopped() bool { return p.stopped.Load() }
