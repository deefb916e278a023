package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// LogsOptions are logs's inputs.
type LogsOptions struct {
	Ref     string
	Segment int   // -1: the last segment with a stored log
	Attempt int32 // 0: the segment's last attempt
	All     bool
	// Timeout bounds the wait for the artifact store (defaultStoreTimeout unless --timeout).
	Timeout time.Duration
}

func newLogsCmd(f *Factory, runF func(*LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{}
	cmd := &cobra.Command{
		Use:   "logs SWEEP/TRIAL",
		Short: "Print a trial's trainer log (stdout and stderr) from the artifact store",
		Long: "Print the log of one segment attempt of a trial from the artifact store, as stored so far: by default\n" +
			"the last attempt of the last segment. --segment and --attempt pick another; --all prints every attempt\n" +
			"(of --segment, if given) in the order they ran, each after a header line.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if opts.Segment < -1 {
				return invalidInput(fmt.Errorf("--segment: got %d, want a segment number ≥ 0", opts.Segment))
			}
			if opts.Attempt < 0 {
				return invalidInput(fmt.Errorf("--attempt: got %d, want an attempt number ≥ 1", opts.Attempt))
			}
			if opts.Timeout <= 0 {
				return invalidInput(fmt.Errorf("--timeout: got %s, want a positive duration, such as 30s", opts.Timeout))
			}
			if opts.All && opts.Attempt != 0 {
				return invalidInput(fmt.Errorf("--attempt: got %d with --all, want one or the other", opts.Attempt))
			}
			if runF != nil {
				return runF(opts)
			}
			return runLogs(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Segment, "segment", -1, "the segment (from 0; default: the last one with a stored log)")
	fl.Int32Var(&opts.Attempt, "attempt", 0, "the attempt (from 1; default: the segment's last)")
	fl.BoolVar(&opts.All, "all", false, "every attempt in order, each after a header line")
	fl.DurationVar(&opts.Timeout, "timeout", defaultStoreTimeout, "how long to wait for the artifact store before giving up")
	return cmd
}

func runLogs(cmd *cobra.Command, f *Factory, opts *LogsOptions) error {
	sweepID, trialID, err := parseSweepRef(f, opts.Ref)
	if err != nil {
		return err
	}
	if trialID == "" {
		return invalidInput(fmt.Errorf("logs: got %q, want SWEEP/TRIAL (a trial, e.g. cartpole/1e114cb9/0-s1)", opts.Ref))
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	// The whole read is bounded: a store that does not answer (an outage, a wrong endpoint) fails the
	// command after --timeout, naming the store, instead of hanging.
	parent := cmd.Context()
	ctx, cancel := context.WithTimeout(parent, opts.Timeout)
	defer cancel()
	err = printLogs(ctx, f, store, opts, sweepID, trialID)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		where := store.URL(artifacts.LogsDir(sweepID, trialID) + "/")
		return fmt.Errorf("artifact store %s did not answer within %s reading trial %s's logs (raise it with --timeout, or check the store): %w",
			where, opts.Timeout, trialID, err)
	}
	return err
}

// printLogs prints the attempt logs opts picks.
func printLogs(ctx context.Context, f *Factory, store artifacts.Store, opts *LogsOptions, sweepID, trialID string) error {
	logs, err := artifacts.ListLogs(ctx, store, sweepID, trialID)
	if err != nil {
		return fmt.Errorf("trial %s: %w", trialID, err)
	}
	if len(logs) == 0 {
		return noLogs(ctx, f, store, sweepID, trialID)
	}
	seg := opts.Segment
	if seg < 0 {
		seg = logs[len(logs)-1].Segment
	}
	var picked []artifacts.LogRef
	for _, l := range logs {
		if l.Segment == seg {
			picked = append(picked, l)
		}
	}
	if len(picked) == 0 {
		return invalidInput(fmt.Errorf("--segment: got %d, want one of %s (the segments of trial %s with a stored log)",
			seg, segmentList(logs), trialID))
	}
	if opts.All {
		if opts.Segment < 0 {
			picked = logs
		}
		for _, l := range picked {
			fmt.Fprintf(f.Out, "==> segment %d attempt %d (%s) <==\n", l.Segment, l.Attempt,
				store.URL(artifacts.LogDir(sweepID, trialID, l.Segment, l.Attempt)))
			if err := artifacts.ReadLog(ctx, store, sweepID, trialID, l.Segment, l.Attempt, f.Out); err != nil {
				return err
			}
		}
		return nil
	}
	l := picked[len(picked)-1]
	if opts.Attempt != 0 {
		i := -1
		for j, p := range picked {
			if p.Attempt == opts.Attempt {
				i = j
			}
		}
		if i < 0 {
			var have []string
			for _, p := range picked {
				have = append(have, strconv.Itoa(int(p.Attempt)))
			}
			return invalidInput(fmt.Errorf("--attempt: got %d, want one of %s (the stored attempts of segment %d)",
				opts.Attempt, strings.Join(have, ", "), seg))
		}
		l = picked[i]
	}
	return artifacts.ReadLog(ctx, store, sweepID, trialID, l.Segment, l.Attempt, f.Out)
}

// segmentList names the segments with a stored log, each once.
func segmentList(logs []artifacts.LogRef) string {
	var out []string
	for i, l := range logs {
		if i == 0 || l.Segment != logs[i-1].Segment {
			out = append(out, strconv.Itoa(l.Segment))
		}
	}
	return strings.Join(out, ", ")
}

// noLogs says why a trial has no stored log: the store holds nothing of the sweep, the sweep has no
// such trial (naming those it has), or the trial has not started a segment yet.
func noLogs(ctx context.Context, f *Factory, store artifacts.Store, sweepID, trialID string) error {
	ss := sweepstore.New(store)
	holds, err := ss.HoldsSweep(ctx, sweepID)
	if err != nil {
		return err
	}
	if !holds {
		return fmt.Errorf("sweep %s: %s holds nothing of it: the sweep does not exist, or --store (or RLSWEEP_STORE) is not the store its workers write to; list the sweeps with: %s",
			sweepID, ss.SweepURL(sweepID), f.commandLine("list"))
	}
	ids, err := storedTrials(ctx, store, sweepID)
	if err != nil {
		return err
	}
	if !slices.Contains(ids, trialID) {
		if len(ids) == 0 {
			return fmt.Errorf("trial %s of sweep %s: no trial of the sweep has stored anything yet (%s follows it)",
				trialID, sweepID, f.commandLine("watch", sweepID))
		}
		return fmt.Errorf("trial %s of sweep %s has nothing in %s; want one of its %d trials with stored files: %s",
			trialID, sweepID, ss.TrialsURL(sweepID), len(ids), listTrialIDs(f, sweepID, ids))
	}
	return fmt.Errorf("trial %s of %s: no log stored under %s (has a segment of it started?)", trialID, sweepID,
		store.URL(artifacts.LogsDir(sweepID, trialID)))
}
