package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// BaselineSetOptions are `baseline set`'s inputs.
type BaselineSetOptions struct {
	Sweep string
	Name  string // default: the sweep's spec name
}

func newBaselineCmd(f *Factory, runF func(*BaselineSetOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Store a sweep's results as the baseline nightly regressions compare with",
	}
	opts := &BaselineSetOptions{}
	set := &cobra.Command{
		Use:   "set SWEEP",
		Short: "Copy SWEEP's results.json to baselines/<name>.json in the artifact store",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sweep = args[0]
			if runF != nil {
				return runF(opts)
			}
			store, err := f.Store()
			if err != nil {
				return err
			}
			return runBaselineSet(cmd.Context(), store, f.Out, opts)
		},
	}
	set.Flags().StringVar(&opts.Name, "name", "", "name of the baseline (default: the sweep's name)")
	cmd.AddCommand(set)
	argsAreInput(set)
	return cmd
}

// namePattern is what schedule and baseline names may hold: they become artifact keys and IDs.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func checkName(flag, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%s: got %q, want letters, digits, '_', '.' or '-', starting with a letter or digit", flag, name)
	}
	return nil
}

func runBaselineSet(ctx context.Context, store artifacts.Store, out io.Writer, opts *BaselineSetOptions) error {
	sweepID, trialID, err := workflows.ParseSweepRef(opts.Sweep)
	if err == nil && trialID != "" {
		err = fmt.Errorf("sweep: got %q, want a sweep, not a trial", opts.Sweep)
	}
	if err != nil {
		return invalidInput(err)
	}
	ss := sweepstore.New(store)
	res, err := ss.ReadResults(ctx, sweepID)
	if errors.Is(err, artifacts.ErrNotFound) {
		return fmt.Errorf("baseline from %s (has the sweep finished?): %w", sweepID, err)
	}
	if err != nil {
		return err
	}
	name := opts.Name
	if name == "" {
		name = res.Name
	}
	if err := checkName("--name", name); err != nil {
		return invalidInput(err)
	}
	dst, err := ss.WriteBaseline(ctx, name, sweepID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "baseline %s: %s (%d trials) stored as %s\n", name, sweepID, len(res.Trials), dst)
	return nil
}
