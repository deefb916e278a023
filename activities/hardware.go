package activities

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/runner"
)

// PrecisionEnv are the environment variables that change a trainer's numerics, which the hardware
// record copies from its environment when set: TF32 in cuBLAS and cuDNN (NVIDIA_TF32_OVERRIDE,
// TORCH_ALLOW_TF32_CUBLAS_OVERRIDE), XLA's flags, JAX's matmul precision and 64-bit mode. No other
// variable of the environment is copied, so no credential can reach the record.
var PrecisionEnv = []string{"NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "XLA_FLAGS",
	"JAX_DEFAULT_MATMUL_PRECISION", "JAX_ENABLE_X64"}

// smiTimeout bounds each nvidia-smi call: a driver in a bad state can hang it.
const smiTimeout = 10 * time.Second

// smiGPU is one GPU as nvidia-smi lists it.
type smiGPU struct {
	index, uuid, name string
	memoryMiB         int
}

// machine is what the hardware record tells of the worker's machine: asked once per worker process.
type machine struct {
	host, worker, cpu string
	gpus              []smiGPU
	driver, cuda      string
}

var (
	machineOnce sync.Once
	machineInfo machine
)

// thisMachine is the worker's machine, found on the first call: its host name, CPU model and, when
// nvidia-smi is on PATH and answers within smiTimeout, its GPUs, driver and CUDA version. Nothing in it
// can fail a segment: what cannot be told stays empty.
func thisMachine() machine {
	machineOnce.Do(func() {
		host, _ := os.Hostname()
		machineInfo = machine{host: host, worker: fmt.Sprintf("%d@%s", os.Getpid(), host), cpu: cpuModel("/proc/cpuinfo")}
		machineInfo.gpus, machineInfo.driver, machineInfo.cuda = querySMI()
	})
	return machineInfo
}

// cpuModel is the first "model name" of a /proc/cpuinfo file; "" when it has none (ARM kernels may
// not print one).
func cpuModel(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// querySMI asks nvidia-smi for the GPUs (index, UUID, model, memory in MiB) and the driver's version, and
// reads the CUDA version from its plain output's header, which is the only place it prints it (no
// --query-gpu field holds it). Empty when nvidia-smi is not on PATH, fails or times out.
func querySMI() (gpus []smiGPU, driver, cuda string) {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, "", ""
	}
	out, err := runSMI(path, "--query-gpu=index,uuid,name,memory.total,driver_version", "--format=csv,noheader,nounits")
	if err != nil {
		return nil, "", ""
	}
	gpus, driver = parseSMIQuery(out)
	if head, err := runSMI(path); err == nil {
		cuda = parseCUDAVersion(head)
	}
	return gpus, driver, cuda
}

func runSMI(path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), smiTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = runner.WithoutSecrets(os.Environ()) // the worker's credentials never reach a helper program
	cmd.WaitDelay = time.Second
	return cmd.Output()
}

// parseSMIQuery reads `nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version
// --format=csv,noheader,nounits`: one GPU a line, "0, GPU-…, NVIDIA H100 80GB HBM3, 81559, 550.54.15".
func parseSMIQuery(out []byte) (gpus []smiGPU, driver string) {
	r := csv.NewReader(bytes.NewReader(out))
	r.TrimLeadingSpace, r.FieldsPerRecord = true, -1
	rows, _ := r.ReadAll()
	for _, row := range rows {
		if len(row) < 5 {
			continue
		}
		mem, _ := strconv.Atoi(strings.TrimSpace(row[3]))
		gpus = append(gpus, smiGPU{index: strings.TrimSpace(row[0]), uuid: strings.TrimSpace(row[1]),
			name: strings.TrimSpace(row[2]), memoryMiB: mem})
		if driver == "" {
			driver = strings.TrimSpace(row[4])
		}
	}
	return gpus, driver
}

// cudaVersionRe finds the CUDA version in nvidia-smi's header: "CUDA Version: 12.4", or "CUDA UMD
// Version: 13.3" where newer drivers print it so.
var cudaVersionRe = regexp.MustCompile(`CUDA (?:UMD )?Version:\s*([0-9][0-9.]*)`)

func parseCUDAVersion(out []byte) string {
	if m := cudaVersionRe.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return ""
}

// hardware is the record of a segment attempt on this machine: the GPUs of devices (its
// CUDA_VISIBLE_DEVICES, each entry an index or a UUID as nvidia-smi lists them; "" is none) and the
// precision settings of its environment env.
func hardware(m machine, devices string, env []string) *results.Hardware {
	h := &results.Hardware{Worker: m.worker, Host: m.host, CPU: m.cpu, Driver: m.driver, CUDA: m.cuda}
	for id := range strings.SplitSeq(devices, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		g := results.GPU{ID: id}
		for _, s := range m.gpus {
			if s.index == id || s.uuid == id || strings.HasPrefix(id, "GPU-") && strings.HasPrefix(s.uuid, id) {
				g.Name, g.MemoryMiB = s.name, s.memoryMiB
				break
			}
		}
		h.GPUs = append(h.GPUs, g)
	}
	// The last setting of a name is the one the process sees.
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		for _, p := range PrecisionEnv {
			if k == p {
				if h.Precision == nil {
					h.Precision = map[string]string{}
				}
				h.Precision[k] = v
			}
		}
	}
	return h
}
