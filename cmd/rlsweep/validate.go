package main

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/sweeps"
)

// ValidateOptions are validate's inputs.
type ValidateOptions struct {
	Files   []string
	Explain bool // also print what each file becomes (sweeps.Explain)
	// HeartbeatTimeout is the --heartbeat-timeout the sweeps are to be submitted with (0: the
	// default): trainer.grace_period must fit in it (sweeps.CheckGracePeriod).
	HeartbeatTimeout time.Duration
	// AllowTrainers: refuse a spec whose trainer program a worker with these --allow-trainer
	// programs would refuse.
	AllowTrainers []string
}

func newValidateCmd(f *Factory, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{}
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check sweep specs (rlsweep's or W&B sweep configs) and show how many trials each plans; exit 2 on any problem",
		Long: `Check sweep specs and show how many trials each plans; exit 2 on any problem.

A file may be an rlsweep spec or a W&B sweep config (program/command, no trainer; docs/spec.md).
With --explain, each valid file is followed by what it becomes: the argv of its first trial (each
argument quoted on its own), where its metrics come from, its objective and the number of trials.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return runValidate(f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Explain, "explain", false, "print what each file becomes: first trial's argv, metrics source, objective, number of trials")
	cmd.Flags().DurationVar(&opts.HeartbeatTimeout, "heartbeat-timeout", 0,
		"the heartbeat timeout the sweeps are to be submitted with (default 2m): trainer.grace_period must end 2s before it")
	cmd.Flags().StringArrayVar(&opts.AllowTrainers, "allow-trainer", nil, "check each spec's trainer program (trainer.command[0], probes.command[0]) against a worker's --allow-trainer list, resolved on this machine as that worker resolves it; repeat for several (adds to "+envAllowTrainer+")")
	return cmd
}

func runValidate(f *Factory, opts *ValidateOptions) error {
	if opts.HeartbeatTimeout < 0 || opts.HeartbeatTimeout > 0 && opts.HeartbeatTimeout < time.Second {
		return invalidInput(fmt.Errorf("--heartbeat-timeout: got %s, want at least 1s (or 0 for the default)", opts.HeartbeatTimeout))
	}
	allow, err := allowTrainers(opts.AllowTrainers)
	if err != nil {
		return invalidInput(err)
	}
	bad := false
	for _, file := range opts.Files {
		spec, trials, _, err := loadPlanAndCheck(file)
		if err == nil {
			if gerr := sweeps.CheckGracePeriod(opts.HeartbeatTimeout, spec.Trainer.GracePeriod); gerr != nil {
				err = invalidInput(fmt.Errorf("%s: %w", file, gerr))
			}
		}
		if err != nil {
			bad = true
			fmt.Fprintln(f.ErrOut, err)
			continue
		}
		if msgs := refusedTrainers(spec, allow); len(msgs) > 0 {
			bad = true
			for _, m := range msgs {
				fmt.Fprintf(f.ErrOut, "%s: %s\n", file, m)
			}
			continue
		}
		count := fmt.Sprintf("%d trials", len(trials))
		if spec.Method == sweeps.MethodBayes {
			count = fmt.Sprintf("up to %d trials", spec.Budget())
		}
		fmt.Fprintf(f.Out, "%s: ok: sweep %q, %s, %s\n", file, spec.Name, spec.Method, count)
		for _, n := range spec.Notices() {
			fmt.Fprintf(f.ErrOut, "%s: note: %s\n", file, n)
		}
		for _, w := range spec.Warnings() {
			fmt.Fprintf(f.ErrOut, "%s: warning: %s\n", file, w)
		}
		if opts.Explain {
			lines, err := sweeps.Explain(spec, trials)
			if err != nil {
				bad = true
				fmt.Fprintln(f.ErrOut, file+": explain:", err)
				continue
			}
			for _, l := range lines {
				fmt.Fprintln(f.Out, "  "+l)
			}
		}
	}
	if bad {
		return withExitCode(exitInvalid, nil)
	}
	return nil
}

// loadAndPlan reads, validates and plans a spec, and returns the bytes it read (the spec as written,
// read once); an invalid spec comes back as invalid input (exit 2). LoadSource validates it, so it is
// planned without validating it again (sweeps.PlanValid).
func loadAndPlan(file string) (*sweeps.Spec, []sweeps.Trial, []byte, error) {
	spec, raw, err := sweeps.LoadSource(file)
	if err == nil {
		var trials []sweeps.Trial
		if trials, err = sweeps.PlanValid(spec); err == nil {
			return spec, trials, raw, nil
		}
	}
	var errs sweeps.Errors
	if errors.As(err, &errs) || errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, invalidInput(err)
	}
	return nil, nil, nil, err
}

// loadPlanAndCheck is loadAndPlan, then the trainer's program checked on this machine
// (Spec.CheckTrainerPath): validate and submit refuse a trainer path that is missing or not executable,
// or a program name not on PATH, as invalid input (exit 2), and a relative path is made absolute
// (Spec.ResolveTrainerPath), so the worker runs the file the spec names.
func loadPlanAndCheck(file string) (*sweeps.Spec, []sweeps.Trial, []byte, error) {
	spec, trials, raw, err := loadAndPlan(file)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := spec.CheckTrainerPath(); err != nil {
		return nil, nil, nil, invalidInput(err)
	}
	spec.ResolveTrainerPath()
	return spec, trials, raw, nil
}
