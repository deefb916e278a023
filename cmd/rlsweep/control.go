package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/rlsweep/rlsweep/workflows"
)

// CancelOptions are cancel's inputs.
type CancelOptions struct {
	Sweep string
	Wait  bool
}

func newCancelCmd(f *Factory, runF func(*CancelOptions) error) *cobra.Command {
	opts := &CancelOptions{}
	cmd := &cobra.Command{
		Use:   "cancel SWEEP",
		Short: "Cancel a sweep: every running trial's trainer is stopped, finished results are kept",
		Long: "Cancel a running sweep: every running trial's trainer is stopped, finished results are kept.\n" +
			"A sweep that has already ended, or does not exist, is an error (exit 1) that says so.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sweep = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runCancel(cmd, f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until the sweep has ended")
	return cmd
}

func runCancel(cmd *cobra.Command, f *Factory, opts *CancelOptions) error {
	sweepID, _, err := parseSweepRef(f, opts.Sweep)
	if err != nil {
		return err
	}
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	// Temporal accepts a cancel request for a workflow that has ended, and does nothing with it.
	desc, err := c.DescribeWorkflowExecution(cmd.Context(), sweepID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("cancel %s: the sweep does not exist; list the sweeps with: %s", sweepID, f.commandLine("list"))
	}
	if err != nil {
		return fmt.Errorf("cancel %s: %w", sweepID, err)
	}
	if info := desc.WorkflowExecutionInfo; info.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		ended := ""
		if t := info.GetCloseTime(); t != nil {
			ended = " at " + t.AsTime().UTC().Format(time.RFC3339)
		}
		return fmt.Errorf("cancel %s: the sweep already ended%s, %s: nothing to cancel", sweepID, ended, workflowState(info.Status))
	}
	if err := c.CancelWorkflow(cmd.Context(), sweepID, ""); err != nil {
		return fmt.Errorf("cancel %s: %w", sweepID, err)
	}
	fmt.Fprintf(f.Out, "cancel requested for %s\n", sweepID)
	if !opts.Wait {
		return nil
	}
	// A cancelled sweep is what was asked for: finishWatch's "not completed" exit code does not apply.
	_ = finishWatch(cmd.Context(), f, c, sweepID, &reconnect{w: f.ErrOut})
	return nil
}

func newPauseCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "pause SWEEP",
		Short: "Start no new trials until resumed; running trials go on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUpdate(cmd, f, args[0], workflows.UpdatePause)
		},
	}
}

func newResumeCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "resume SWEEP",
		Short: "Start trials again after a pause",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUpdate(cmd, f, args[0], workflows.UpdateResume)
		},
	}
}

func newConcurrencyCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "set-concurrency SWEEP N",
		Short: "Change how many trials of a running sweep run at once",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 || n > workflows.MaxConcurrency {
				return invalidInput(fmt.Errorf("set-concurrency N: got %q, want an integer from 1 to %d", args[1], workflows.MaxConcurrency))
			}
			return runUpdate(cmd, f, args[0], workflows.UpdateConcurrency, n)
		},
	}
}

func runUpdate(cmd *cobra.Command, f *Factory, ref, name string, args ...any) error {
	sweepID, _, err := parseSweepRef(f, ref)
	if err != nil {
		return err
	}
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	h, err := c.UpdateWorkflow(cmd.Context(), client.UpdateWorkflowOptions{
		WorkflowID: sweepID, UpdateName: name, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, sweepError(cmd.Context(), f, c, sweepID, err))
	}
	var st workflows.SweepStatus
	if err := h.Get(cmd.Context(), &st); err != nil {
		return fmt.Errorf("%s %s: %w", name, sweepID, err)
	}
	fmt.Fprintln(f.Out, progressLine(&st, nil))
	return nil
}
