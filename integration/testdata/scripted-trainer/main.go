// Command scripted-trainer is a test trainer that speaks the rlsweep trainer contract (docs/trainer-contract.md) and
// misbehaves on request. Its script comes from RLSWEEP_PARAMS:
//
//	step_size         environment steps per record (default 1000)
//	sleep_ms          wall time per record (default 5)
//	checkpoint_every  records between checkpoints (default 10; 0 disables)
//	quality           the reward plateau (default: derived from lr, so configurations differ)
//	tau_exponent      the reward is quality·(1 − e^(−step/τ)) with τ = 20000·(quality/200)^tau_exponent
//	                  (default 0: τ 20000): above 0, a lower plateau is reached sooner
//	noise             reward noise amplitude (default 0)
//	collapse_at       from this step on, the reward falls to collapse_to (default 0.05) times its plateau
//	                  (a policy that collapses late in its run)
//	nan_at            from this step on, reward and value_loss are NaN
//	std_zero_at       from this step on, action_std_min is 0
//	grad_at           from this step on, grad_norm is 1e5
//	crash_at          exit 3 on reaching this step, once per trial (a marker file remembers)
//	oom, oom_at       on reaching step oom_at, die out of memory as framework oom does (oomDeaths): 1–7
//	                  print that framework's error to stderr and exit 1, as a Python exception does; 8
//	                  is the host's OOM killer: it adds one to the oom_kill counter of the memory.events
//	                  file $FAKE_MEMORY_EVENTS names and SIGKILLs itself
//	oom_from          with num_envs at or above it, die out of memory as PyTorch does (oom 1) on reaching oom_at
//	hang_at           stop writing and sleep on reaching this step
//	ignore_term       1: ignore SIGTERM (the worker must escalate to SIGKILL)
//	term_delay_ms     on SIGTERM, take this long before writing the checkpoint (a real trainer's save)
//	fault, fault_at   from step fault_at on: fault 1 = NaN reward and value loss (as nan_at), 2 =
//	                  action_std_min 0 (as std_zero_at), 3 = grad_norm 1e5 (as grad_at); 0 = healthy
//	fault_env         (a string NAME=value) the fault applies only when the environment has NAME=value:
//	                  a trainer whose numerics break under one precision setting (TF32 matmuls, say)
//	pid_dir           write <pid_dir>/<trial>.pid while running: the process ID as /proc names it, which
//	                  is not os.Getpid() when the trainer runs in a PID namespace of its own
//	timeline          append "start <unix ns> <trial> <step>" to this file when the process starts and
//	                  "exit <unix ns> <trial> <step>" when it exits after training (the boundary benchmark)
//	ignore_stop       1: a trainer that knows nothing of segments: it trains to RLSWEEP_TOTAL_STEPS
//	                  whatever RLSWEEP_STOP_AT_STEP says, and writes no checkpoint (but on SIGTERM)
//	console           1: print each record as a block of rsl_rl's console table to stdout (ANSI
//	                  codes included) and write no metrics file and no checkpoint
//	vf_inf_at         from this step on, value_loss is +Inf
//	ckpt_dir          1: save each checkpoint as a directory ckpt-<step>/ of several files (state.json,
//	                  weights/part-0.bin, weights/part-1.bin, a relative symbolic link latest.json to
//	                  state.json), as orbax, torch DCP or save_pretrained do; a resume from a directory
//	                  checks every file before it reads its step from state.json
//	bad_ckpt          (a string) announce one bad checkpoint at the first checkpoint instead: missing (a
//	                  name not on disk), outside (../<name>), socket (a Unix socket), abslink (a directory
//	                  holding an absolute symbolic link to /etc/hostname)
//	term_train_ms     on SIGTERM, train on this long (records, no checkpoint) before the checkpoint
//	                  and exit, as a trainer finishing its iteration: a grace period shorter than it
//	                  kills the trainer with records past its last checkpoint (timeline: "term" line)
//
// Every record carries wall_ns, the Unix time in nanoseconds at which it was appended, so latency
// from a record to its consequences can be measured.
//
// It resumes from RLSWEEP_RESUME_FROM, stops at RLSWEEP_STOP_AT_STEP with a checkpoint, and checkpoints
// and exits 0 on SIGTERM.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type script map[string]float64

func (s script) get(k string, def float64) float64 {
	if v, ok := s[k]; ok {
		return v
	}
	return def
}

func (s script) has(k string) bool { _, ok := s[k]; return ok }

// hasEnv reports whether the environment holds kv, "NAME=value", exactly.
func hasEnv(kv string) bool {
	name, value, _ := strings.Cut(kv, "=")
	v, ok := os.LookupEnv(name)
	return ok && v == value
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scripted-trainer:", err)
		os.Exit(1)
	}
}

func run() error {
	raw := map[string]any{}
	if p := os.Getenv("RLSWEEP_PARAMS"); p != "" {
		if err := json.Unmarshal([]byte(p), &raw); err != nil {
			return fmt.Errorf("RLSWEEP_PARAMS: %w", err)
		}
	}
	s := script{}
	var pidDir, timeline, badCkpt, faultEnv string
	for k, v := range raw {
		switch v := v.(type) {
		case float64:
			s[k] = v
		case string:
			switch k {
			case "pid_dir":
				pidDir = v
			case "timeline":
				timeline = v
			case "bad_ckpt":
				badCkpt = v
			case "fault_env":
				faultEnv = v
			}
		}
	}
	trial := os.Getenv("RLSWEEP_TRIAL_ID")
	mark := func(event string, step int64) {
		if timeline == "" {
			return
		}
		// One short write with O_APPEND: lines of concurrent trainers do not interleave.
		if f, err := os.OpenFile(timeline, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintf(f, "%s %d %s %d\n", event, time.Now().UnixNano(), trial, step)
			f.Close()
		}
	}
	if pidDir != "" {
		pidFile := filepath.Join(pidDir, trial+".pid")
		_ = os.WriteFile(pidFile, []byte(procPID()), 0o644)
		defer os.Remove(pidFile)
	}
	seed, _ := strconv.ParseInt(os.Getenv("RLSWEEP_SEED"), 10, 64)
	stopAt, _ := strconv.ParseInt(os.Getenv("RLSWEEP_STOP_AT_STEP"), 10, 64)
	total, _ := strconv.ParseInt(os.Getenv("RLSWEEP_TOTAL_STEPS"), 10, 64)
	ckptDir := os.Getenv("RLSWEEP_CHECKPOINT_DIR")
	ignoreStop := s.get("ignore_stop", 0) == 1
	if ignoreStop {
		stopAt = total
		s["checkpoint_every"] = 0
	}
	step := int64(0)
	if from := os.Getenv("RLSWEEP_RESUME_FROM"); from != "" {
		b, err := readCheckpoint(from)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		var ck struct{ Step int64 }
		if err := json.Unmarshal(b, &ck); err != nil {
			return fmt.Errorf("resume %s: %w", from, err)
		}
		step = ck.Step
	}
	console := s.get("console", 0) == 1
	dirs := s.get("ckpt_dir", 0) == 1
	var out *os.File
	if !console {
		f, err := os.OpenFile(os.Getenv("RLSWEEP_METRICS_FILE"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}

	term := make(chan os.Signal, 1)
	if s.get("ignore_term", 0) == 1 {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	if faultEnv != "" && !hasEnv(faultEnv) {
		delete(s, "fault")
	}
	if f, at := s.get("fault", 0), s.get("fault_at", 0); f > 0 {
		s[[]string{"", "nan_at", "std_zero_at", "grad_at"}[int(f)%4]] = at
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(step)))
	stepSize := int64(s.get("step_size", 1000))
	quality := s.get("quality", 100*(1-math.Abs(math.Log10(s.get("lr", 1e-3))+3)/3))
	records := 0
	fmt.Printf("scripted-trainer %s: from step %d to %d\n", trial, step, stopAt)
	mark("start", step)
	var stopping <-chan time.Time // set on SIGTERM with term_train_ms: when to checkpoint and exit
	for step < stopAt {
		select {
		case <-term:
			mark("term", step)
			if ms := s.get("term_train_ms", 0); ms > 0 && !console {
				fmt.Println("SIGTERM: training on for", ms, "ms, then checkpoint and exit")
				stopping = time.After(time.Duration(ms) * time.Millisecond)
				s["checkpoint_every"] = 0
				continue
			}
			fmt.Println("SIGTERM: checkpoint and exit")
			time.Sleep(time.Duration(s.get("term_delay_ms", 0)) * time.Millisecond)
			if console {
				return nil
			}
			return checkpoint(out, ckptDir, step, dirs)
		case <-stopping:
			return checkpoint(out, ckptDir, step, dirs)
		case <-time.After(time.Duration(s.get("sleep_ms", 5)) * time.Millisecond):
		}
		step += stepSize
		if s.has("oom_at") && step >= int64(s["oom_at"]) && (s.get("oom", 0) > 0 || s.has("oom_from") && s.get("num_envs", 0) >= s["oom_from"]) {
			dieOutOfMemory(max(1, int(s.get("oom", 0))))
		}
		if s.has("crash_at") && step >= int64(s["crash_at"]) && firstTime(trial) {
			fmt.Println("crashing on purpose at step", step)
			os.Exit(3)
		}
		if s.has("hang_at") && step >= int64(s["hang_at"]) {
			fmt.Println("hanging on purpose at step", step)
			select {}
		}
		reward := quality * (1 - math.Exp(-float64(step)/(20000*math.Pow(quality/200, s.get("tau_exponent", 0)))))
		if s.has("collapse_at") && step >= int64(s["collapse_at"]) {
			reward = quality * s.get("collapse_to", 0.05)
		}
		rec := map[string]any{
			"step":           step,
			"reward":         reward + s.get("noise", 0)*rng.NormFloat64(),
			"value_loss":     1 / (1 + float64(step)/1e4),
			"policy_loss":    -0.01,
			"entropy":        0.6,
			"action_std":     0.5,
			"action_std_min": 0.4,
			"grad_norm":      0.5 + 0.1*rng.Float64(),
			"approx_kl":      0.01,
			"clip_fraction":  0.1,
		}
		if s.has("vf_inf_at") && step >= int64(s["vf_inf_at"]) {
			rec["value_loss"] = math.Inf(1)
		}
		if console {
			printRSLRLBlock(step/stepSize-1, max(total, stopAt)/stepSize, step, rec)
			continue
		}
		line, _ := json.Marshal(rec)
		text := string(line[:len(line)-1])
		if s.has("nan_at") && step >= int64(s["nan_at"]) {
			text += `,"reward":NaN,"value_loss":NaN`
			text = replaceKey(text, "reward")
		}
		if s.has("std_zero_at") && step >= int64(s["std_zero_at"]) {
			text = replaceKey(text, "action_std_min") + `,"action_std_min":0`
		}
		if s.has("grad_at") && step >= int64(s["grad_at"]) {
			text = replaceKey(text, "grad_norm") + `,"grad_norm":1e5`
		}
		records++
		if every := int(s.get("checkpoint_every", 10)); !ignoreStop && (step >= stopAt || every > 0 && records%every == 0) {
			name, err := saveCheckpoint(ckptDir, step, dirs)
			if badCkpt != "" {
				name, err = badCheckpoint(ckptDir, badCkpt, step)
				badCkpt = ""
			}
			if err != nil {
				return err
			}
			text += fmt.Sprintf(`,"checkpoint":%q`, name)
		}
		text += fmt.Sprintf(`,"wall_ns":%d`, time.Now().UnixNano())
		if _, err := fmt.Fprintln(out, text+"}"); err != nil {
			return err
		}
	}
	mark("exit", step)
	return nil
}

// printRSLRLBlock prints a record as rsl_rl's OnPolicyRunner prints an iteration: a line of '#', the
// centred bold header, right-aligned "label: value" lines, the footer with the total timesteps.
func printRSLRLBlock(it, of, step int64, rec map[string]any) {
	num := func(k string) float64 { v, _ := rec[k].(float64); return v }
	header := fmt.Sprintf(" \033[1m Learning iteration %d/%d \033[0m ", it, of)
	pad := (80 - len(header)) / 2
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s%s%s\n\n", strings.Repeat("#", 80), strings.Repeat(" ", pad), header, strings.Repeat(" ", 80-pad-len(header)))
	line := func(label, value string) { fmt.Fprintf(&b, "%35s %s\n", label+":", value) }
	line("Computation", "41234 steps/s (collection: 0.412s, learning 0.061s)")
	line("Value function loss", pyFloat(num("value_loss"), 4))
	line("Surrogate loss", pyFloat(num("policy_loss"), 4))
	line("Mean action noise std", pyFloat(num("action_std"), 2))
	line("Mean reward", pyFloat(num("reward"), 2))
	line("Mean episode length", "200.00")
	b.WriteString(strings.Repeat("-", 80) + "\n")
	line("Total timesteps", strconv.FormatInt(step, 10))
	line("Iteration time", "0.47s")
	line("Total time", fmt.Sprintf("%.2fs", 0.47*float64(it+1)))
	line("ETA", fmt.Sprintf("%.1fs", 0.47*float64(of-it)))
	fmt.Println(b.String())
}

// pyFloat formats v as Python's f"{v:.Nf}" does, "inf" and "nan" included.
func pyFloat(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// replaceKey drops a key from the flat JSON object text (keys appear once, values are numbers), so it
// can be written again with another value.
func replaceKey(text, key string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text+"}"), &m); err != nil {
		return text // already holds bare NaN: leave it
	}
	delete(m, key)
	b, _ := json.Marshal(m)
	return string(b[:len(b)-1])
}

func writeCheckpoint(dir string, step int64) error {
	name := filepath.Join(dir, fmt.Sprintf("ckpt-%d.json", step))
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf(`{"Step":%d}`, step)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// checkpoint writes a final checkpoint and announces it in a record of its own.
func checkpoint(out *os.File, dir string, step int64, dirs bool) error {
	name, err := saveCheckpoint(dir, step, dirs)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "{\"step\":%d,\"checkpoint\":%q}\n", step, name)
	return err
}

// saveCheckpoint writes the checkpoint of step, a file or a directory, and returns the name to announce.
func saveCheckpoint(dir string, step int64, dirs bool) (string, error) {
	if !dirs {
		return fmt.Sprintf("ckpt-%d.json", step), writeCheckpoint(dir, step)
	}
	name := fmt.Sprintf("ckpt-%d", step)
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.MkdirAll(filepath.Join(tmp, "weights"), 0o755); err != nil {
		return "", err
	}
	files := map[string][]byte{"state.json": []byte(fmt.Sprintf(`{"Step":%d}`, step))}
	for i := range 2 {
		files[fmt.Sprintf("weights/part-%d.bin", i)] = weights(step, i)
	}
	for rel, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, rel), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Symlink("state.json", filepath.Join(tmp, "latest.json")); err != nil {
		return "", err
	}
	return name, os.Rename(tmp, filepath.Join(dir, name))
}

// weights is the content of a directory checkpoint's weights file i at step: 64 KiB that differ by step.
func weights(step int64, i int) []byte {
	b := make([]byte, 64<<10)
	for j := range b {
		b[j] = byte(int64(j*(i+1)) + step/1000)
	}
	return b
}

// readCheckpoint returns the state of the checkpoint at path: the file, or a directory's state.json
// once every file of the directory is there as saveCheckpoint wrote it.
func readCheckpoint(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return os.ReadFile(path)
	}
	b, err := os.ReadFile(filepath.Join(path, "state.json"))
	if err != nil {
		return nil, err
	}
	var ck struct{ Step int64 }
	if err := json.Unmarshal(b, &ck); err != nil {
		return nil, fmt.Errorf("%s/state.json: %w", path, err)
	}
	for i := range 2 {
		w, err := os.ReadFile(filepath.Join(path, fmt.Sprintf("weights/part-%d.bin", i)))
		if err != nil {
			return nil, err
		}
		if string(w) != string(weights(ck.Step, i)) {
			return nil, fmt.Errorf("%s: weights/part-%d.bin is not the one saved at step %d", path, i, ck.Step)
		}
	}
	if l, err := os.ReadFile(filepath.Join(path, "latest.json")); err != nil || string(l) != string(b) {
		return nil, fmt.Errorf("%s: latest.json %q (%v), want state.json's content", path, l, err)
	}
	fmt.Printf("resumed from directory %s at step %d\n", path, ck.Step)
	return b, nil
}

// listening keeps the sockets bad_ckpt made open.
var listening []net.Listener

// badCheckpoint makes what the bad_ckpt script asks for and returns the name to announce.
func badCheckpoint(dir, kind string, step int64) (string, error) {
	switch kind {
	case "missing":
		return fmt.Sprintf("ckpt-%d-never-written.json", step), nil
	case "outside":
		return fmt.Sprintf("../ckpt-%d.json", step), writeCheckpoint(filepath.Dir(dir), step)
	case "socket":
		name := fmt.Sprintf("ckpt-%d.sock", step)
		// Bound by a relative name: a socket's path may not exceed 107 bytes.
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		if err := os.Chdir(dir); err != nil {
			return "", err
		}
		l, err := net.Listen("unix", name)
		if cerr := os.Chdir(wd); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
		listening = append(listening, l) // open, and so on disk, while the trainer runs
		return name, nil
	case "abslink":
		name := fmt.Sprintf("ckpt-%d", step)
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name, "state.json"), []byte(fmt.Sprintf(`{"Step":%d}`, step)), 0o644); err != nil {
			return "", err
		}
		return name, os.Symlink("/etc/hostname", filepath.Join(dir, name, "host"))
	}
	return "", fmt.Errorf("bad_ckpt: got %q, want missing, outside, socket or abslink", kind)
}

// procPID is this process's ID in /proc: os.Getpid() is the ID in the trainer's PID namespace, if the
// worker gave it one, and /proc, which the worker does not remount, names processes by their ID outside.
func procPID() string {
	if self, err := os.Readlink("/proc/self"); err == nil {
		return self
	}
	return strconv.Itoa(os.Getpid())
}

// firstTime reports whether this trial has not crashed on purpose before (across attempts and workers
// on this machine), and remembers that it now has.
func firstTime(trial string) bool {
	sweep := strings.NewReplacer("/", "_").Replace(os.Getenv("RLSWEEP_SWEEP_ID"))
	marker := filepath.Join(os.TempDir(), "scripted-trainer-crashed-"+sweep+"-"+trial)
	if _, err := os.Stat(marker); err == nil {
		return false
	}
	_ = os.WriteFile(marker, nil, 0o644)
	return true
}

// oomDeaths are the last lines frameworks print dying out of memory, in their wording (oom 1–7).
var oomDeaths = []string{
	1: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free.",
	2: "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
	3: "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.",
	4: "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[4096,4096] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
	5: "PxgCudaDeviceMemoryAllocator fail to allocate memory 100663296 bytes!! Result = 2",
	6: "failed to alloc 2740606464 bytes unified memory; result: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
	7: "RuntimeError: CUDA error: out of memory",
}

// dieOutOfMemory ends the trainer as framework kind does when it runs out of memory.
func dieOutOfMemory(kind int) {
	if kind < len(oomDeaths) {
		fmt.Fprintln(os.Stderr, "Traceback (most recent call last):")
		fmt.Fprintln(os.Stderr, `  File "train.py", line 88, in <module>`)
		fmt.Fprintln(os.Stderr, oomDeaths[kind])
		os.Exit(1)
	}
	// The host's OOM killer: the kernel counts the kill in the cgroup, then the process gets SIGKILL.
	if p := os.Getenv("FAKE_MEMORY_EVENTS"); p != "" {
		b, _ := os.ReadFile(p)
		n := int64(0)
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				n, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		_ = os.WriteFile(p, fmt.Appendf(nil, "oom %d\noom_kill %d\n", n+1, n+1), 0o644)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
