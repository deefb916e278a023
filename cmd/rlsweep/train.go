package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/trainer"
	"github.com/rlsweep/rlsweep/trainer/builtin"
	"github.com/rlsweep/rlsweep/trainer/envs"
	"github.com/rlsweep/rlsweep/trainer/ppo"
)

// trainOptions is everything `rlsweep train` acts on.
type trainOptions struct {
	Out, ErrOut io.Writer
	Getenv      func(string) string

	Env         string
	Steps       int64
	Seed        uint64
	Sets        []string
	SummaryJSON bool
	InjectBug   string
	stepsSet    bool
	seedSet     bool
}

func newTrainCmd(f *Factory) *cobra.Command {
	return newTrainCmdWith(f, runTrain)
}

// newTrainCmdWith builds the command around runF, so tests can inspect the parsed options.
func newTrainCmdWith(f *Factory, runF func(context.Context, *trainOptions) error) *cobra.Command {
	opts := &trainOptions{Out: f.Out, ErrOut: f.ErrOut, Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "train --env ENV [--steps N] [--seed S] [--set key=value ...]",
		Short: "Train PPO with the built-in trainer (standalone, or as a sweep's trainer process)",
		Long: `Train PPO on a built-in environment (` + strings.Join(envs.Names(), ", ") + `).

Standalone, progress goes to stderr. Under the trainer contract (RLSWEEP_METRICS_FILE set), one JSON
line per iteration is appended to the metrics file, checkpoints are written to RLSWEEP_CHECKPOINT_DIR
at the end of the segment (RLSWEEP_STOP_AT_STEP) and on SIGTERM, and RLSWEEP_RESUME_FROM,
RLSWEEP_TOTAL_STEPS, RLSWEEP_SEED and RLSWEEP_PARAMS are honoured. Flags given explicitly win over
the environment.

Hyperparameters (--set key=value, or keys of RLSWEEP_PARAMS): ` + strings.Join(trainer.PPOParamNames(), ", ") + `.
See docs/ppo.md for their defaults per environment.

--inject-bug is a test aid that breaks the trainer on purpose (` + strings.Join(ppo.BugNames(), ", ") + `),
so the probe checks can be shown to catch each bug. Never use it for real training.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.stepsSet, opts.seedSet = cmd.Flags().Changed("steps"), cmd.Flags().Changed("seed")
			if opts.Env == "" {
				return invalidInput(errors.New("--env: got nothing, want one of " + strings.Join(envs.Names(), ", ")))
			}
			return runF(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Env, "env", "", "environment: "+strings.Join(envs.Names(), ", "))
	fl.Int64Var(&opts.Steps, "steps", builtin.DefaultSteps, "total environment steps (default: RLSWEEP_TOTAL_STEPS, else 500000)")
	fl.Uint64Var(&opts.Seed, "seed", 1, "random seed (default: RLSWEEP_SEED, else 1)")
	fl.StringArrayVar(&opts.Sets, "set", nil, "hyperparameter key=value (repeatable)")
	fl.BoolVar(&opts.SummaryJSON, "summary-json", false, "print one JSON object with the final results to stdout")
	fl.StringVar(&opts.InjectBug, "inject-bug", "", "test aid: break the trainer on purpose ("+strings.Join(ppo.BugNames(), ", ")+")")
	return cmd
}

func runTrain(ctx context.Context, opts *trainOptions) error {
	bo := builtin.Options{Env: opts.Env, Sets: opts.Sets, InjectBug: opts.InjectBug, Getenv: opts.Getenv, Progress: opts.ErrOut}
	if opts.stepsSet {
		if opts.Steps <= 0 {
			return invalidInput(fmt.Errorf("--steps: got %d, want > 0", opts.Steps))
		}
		bo.Steps = opts.Steps
	}
	if opts.seedSet {
		bo.Seed = &opts.Seed
	}
	run, err := builtin.New(bo)
	if err != nil {
		return invalidInput(err)
	}
	sum, err := run.Train(ctx)
	if err != nil {
		return err
	}
	if opts.SummaryJSON {
		_, err = opts.Out.Write(sum.AppendJSON(nil))
	}
	return err
}
