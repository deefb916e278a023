// Command argv-echo is a test trainer that shows what the worker handed it: it writes its argv and
// the rlsweep variables of its environment as JSON to the file named by the "argv_file" parameter in
// RLSWEEP_PARAMS (with the W&B variables and the run config WANDB_SWEEP_PARAM_PATH names, when set),
// then appends one metrics record at RLSWEEP_STOP_AT_STEP and exits 0.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Echo is what argv-echo writes.
type Echo struct {
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"` // RLSWEEP_*, TEMPORAL_*, WANDB_* and CUDA_VISIBLE_DEVICES
	// WandBConfig is the file WANDB_SWEEP_PARAM_PATH names, as the trainer found it.
	WandBConfig string `json:"wandb_config,omitempty"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "argv-echo:", err)
		os.Exit(1)
	}
}

func run() error {
	var params map[string]any
	if err := json.Unmarshal([]byte(os.Getenv("RLSWEEP_PARAMS")), &params); err != nil {
		return fmt.Errorf("RLSWEEP_PARAMS: %w", err)
	}
	file, _ := params["argv_file"].(string)
	if file == "" {
		return fmt.Errorf("RLSWEEP_PARAMS: no argv_file")
	}
	e := Echo{Args: os.Args, Env: map[string]string{}}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "RLSWEEP_") || strings.HasPrefix(k, "TEMPORAL_") || strings.HasPrefix(k, "WANDB_") || k == "CUDA_VISIBLE_DEVICES" {
			e.Env[k] = v
		}
	}
	if p := os.Getenv("WANDB_SWEEP_PARAM_PATH"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		e.WandBConfig = string(b)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(os.Getenv("RLSWEEP_METRICS_FILE"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "{\"step\":%s,\"reward\":1}\n", os.Getenv("RLSWEEP_STOP_AT_STEP")); err != nil {
		return err
	}
	return f.Close()
}
