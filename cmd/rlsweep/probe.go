package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/trainer/builtin"
	"github.com/rlsweep/rlsweep/trainer/ppo"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// exitProbeFailed is probe's exit status when a probe fails (documented in docs/probes.md).
const exitProbeFailed = 1

// ProbeOptions are probe's inputs.
type ProbeOptions struct {
	ActionSpace string
	InjectBug   string
	Output      string
	Seed        uint64
	// Command is an external trainer to probe over the protocol (the arguments after --); empty
	// probes the built-in PPO.
	Command []string
}

func newProbeCmd(f *Factory) *cobra.Command {
	opts := &ProbeOptions{}
	cmd := &cobra.Command{
		Use:   "probe [flags] [-- COMMAND ARGS...]",
		Short: "Run the probe checks on the built-in PPO (or an external trainer); exit 0 when all pass, 1 when one fails",
		Long: `probe trains the built-in PPO on the five probe environments of its action space (1–5, or the
Gaussian 1c–5c) and judges its value and policy; with a command after --, it runs that trainer on every
probe over the probe protocol (docs/probes.md), skipping the probes it declines with exit 3.

Exit status: 0 all probes pass, 1 a probe fails (the lowest failing one is diagnosed), 2 bad flags.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Command = args
			if err := opts.check(); err != nil {
				return invalidInput(err)
			}
			return runProbe(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ActionSpace, "action-space", "discrete", "built-in trainer: discrete (probes 1–5) or continuous (1c–5c)")
	fl.StringVar(&opts.InjectBug, "inject-bug", "", "test aid: break the built-in trainer on purpose ("+strings.Join(ppo.BugNames(), ", ")+")")
	fl.StringVar(&opts.Output, "output", "text", "text or json")
	fl.Uint64Var(&opts.Seed, "seed", 1, "seed of the probe runs")
	return cmd
}

func (o *ProbeOptions) check() error {
	var errs []string
	if o.ActionSpace != "discrete" && o.ActionSpace != "continuous" {
		errs = append(errs, fmt.Sprintf("--action-space: got %q, want discrete or continuous", o.ActionSpace))
	}
	if _, err := ppo.ParseBug(o.InjectBug); err != nil {
		errs = append(errs, "--"+err.Error())
	}
	if o.Output != "text" && o.Output != "json" {
		errs = append(errs, fmt.Sprintf("--output: got %q, want text or json", o.Output))
	}
	if len(o.Command) > 0 && o.InjectBug != "" {
		errs = append(errs, "--inject-bug: got a value with an external command, want it only for the built-in trainer")
	}
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func runProbe(ctx context.Context, f *Factory, opts *ProbeOptions) error {
	var rep probes.Report
	var err error
	if len(opts.Command) > 0 {
		rep, err = probeExternal(ctx, opts)
	} else {
		bug, _ := ppo.ParseBug(opts.InjectBug)
		rep, err = probes.Run(ctx, builtin.ProbeTrainer(bug), probes.Options{ActionSpace: opts.ActionSpace, Seed: opts.Seed})
	}
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(f.Out, string(b))
	} else {
		for _, r := range rep.Results {
			fmt.Fprintf(f.Out, "%-40s %5.1fs\n", r, r.Seconds)
		}
		fmt.Fprintln(f.Out, rep.Diagnosis)
	}
	if !rep.Passed {
		return withExitCode(exitProbeFailed, nil)
	}
	return nil
}

// probeExternal runs the command on every probe, two at a time, over the probe protocol.
func probeExternal(ctx context.Context, opts *ProbeOptions) (probes.Report, error) {
	dir, err := os.MkdirTemp("", "rlsweep-probe-")
	if err != nil {
		return probes.Report{}, err
	}
	defer os.RemoveAll(dir)
	cwd, err := os.Getwd()
	if err != nil {
		return probes.Report{}, err
	}
	ids := probes.IDs()
	results := make([]probes.Result, len(ids))
	errs := make([]error, len(ids))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := probes.Lookup(id)
			if err != nil {
				errs[i] = err
				return
			}
			r, err := runner.ExternalProbe{Command: opts.Command, Environ: os.Environ(), SweepID: "probe",
				Seed: int64(opts.Seed), WorkDir: dir, Dir: cwd, Mask: runner.NewMasker(runner.WorkerSecrets(os.Environ()))}.Run(ctx, p)
			results[i] = r
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return probes.Report{}, err
		}
	}
	return probes.Diagnose(results), nil
}
