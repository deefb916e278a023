package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// SubmitOptions are submit's inputs.
type SubmitOptions struct {
	File  string
	ID    string // short ID; random when empty
	Watch bool
	// HeartbeatTimeout is how long a silent trial attempt is trusted before it is retried (0: one
	// minute): the time a dead worker's trials wait before resuming elsewhere.
	HeartbeatTimeout time.Duration

	inDev   bool   // submitted by rlsweep dev (see WatchOptions.inDev)
	sweepID string // set once the sweep has started
}

func newSubmitCmd(f *Factory, runF func(*SubmitOptions) error) *cobra.Command {
	opts := &SubmitOptions{}
	cmd := &cobra.Command{
		Use:   "submit FILE",
		Short: "Validate a sweep spec and start it; prints the sweep ID and its Web UI page",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runSubmit(cmd, f, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Watch, "watch", "w", false, "follow the sweep until it ends")
	cmd.Flags().StringVar(&opts.ID, "id", "", "short ID of the sweep (default: random)")
	cmd.Flags().DurationVar(&opts.HeartbeatTimeout, "heartbeat-timeout", 0,
		"how long a silent trial attempt is trusted before it is retried, e.g. on another worker (default 2m)")
	return cmd
}

// shortIDRe is what --id may be: one path segment of the sweep's workflow ID and artifact prefix. A
// slash would make the sweep unreachable by status and cancel (they read sweep/<name>/<id>/<trial>),
// and characters the artifact store replaces would let two sweeps share a prefix ("x y" and "x_y").
var shortIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`)

func runSubmit(cmd *cobra.Command, f *Factory, opts *SubmitOptions) error {
	if opts.ID != "" && !shortIDRe.MatchString(opts.ID) {
		return invalidInput(fmt.Errorf("--id: got %q, want 1 to 40 letters, digits, '_' or '-', starting with a letter or digit", opts.ID))
	}
	spec, trials, raw, err := loadPlanAndCheck(opts.File)
	if err != nil {
		return err
	}
	explicitID := opts.ID != ""
	if !explicitID {
		opts.ID = newShortID()
	}
	if opts.HeartbeatTimeout < 0 || opts.HeartbeatTimeout > 0 && opts.HeartbeatTimeout < time.Second {
		return invalidInput(fmt.Errorf("--heartbeat-timeout: got %s, want at least 1s (or 0 for the default)", opts.HeartbeatTimeout))
	}
	if err := sweeps.CheckGracePeriod(opts.HeartbeatTimeout, spec.Trainer.GracePeriod); err != nil {
		return invalidInput(fmt.Errorf("%s: %w", opts.File, err))
	}
	sweepID := workflows.SweepWorkflowID(spec.Name, opts.ID)
	if explicitID {
		if err := checkStoreFree(cmd.Context(), f, sweepID); err != nil {
			return err
		}
	}
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	_, err = c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{
		ID:        sweepID,
		TaskQueue: workflows.ControlQueue,
		// A sweep ID names one sweep forever: the server refuses an ID it has seen, running or closed,
		// atomically, so two submissions cannot both start.
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.AttrSweepID.ValueSet(sweepID),
			workflows.AttrSweepName.ValueSet(spec.Name), workflows.AttrKind.ValueSet("sweep")),
		// The server carries the memo over a continue-as-new, so list shows when the sweep began.
		Memo: map[string]any{"file": opts.File, workflows.MemoTrials: len(trials), "method": spec.Method,
			workflows.MemoSubmitted: time.Now().UTC()},
		StaticSummary: fmt.Sprintf("sweep %s: %d trials (%s), objective %s %s", spec.Name, len(trials), spec.Method, spec.Metric.Goal, spec.Metric.Name),
	}, workflows.Sweep, workflows.SweepInput{SweepID: sweepID, Spec: *spec, SpecYAML: string(raw),
		HeartbeatTimeout: opts.HeartbeatTimeout, Submission: newSubmissionID()})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return sweepIDTaken(opts.ID, sweepID, "the Temporal server has a sweep with this ID, running or ended")
	}
	if err != nil {
		return fmt.Errorf("start sweep %s: %w", sweepID, err)
	}
	opts.sweepID = sweepID
	for _, n := range spec.Notices() {
		fmt.Fprintf(f.ErrOut, "note: %s\n", n)
	}
	for _, w := range spec.Warnings() {
		fmt.Fprintf(f.ErrOut, "warning: %s\n", w)
	}
	count := fmt.Sprintf("%d trials", len(trials))
	if spec.Method == sweeps.MethodBayes { // the plan holds the start-up configurations only
		count = fmt.Sprintf("up to %d trials", spec.Budget())
	}
	fmt.Fprintf(f.Out, "submitted %s (%s)\n", sweepID, count)
	fmt.Fprintf(f.Out, "web ui:   %s\n", f.WorkflowURL(sweepID))
	if !opts.Watch {
		fmt.Fprintf(f.Out, "follow:   rlsweep watch %s\n", sweepID)
		return nil
	}
	return watchToEnd(cmd, f, sweepID, opts.inDev)
}

// watchToEnd is the end of submit --watch: it follows the sweep until it ends, then prints how it ended
// and its best configurations.
func watchToEnd(cmd *cobra.Command, f *Factory, sweepID string, inDev bool) error {
	err := runWatch(cmd, f, &WatchOptions{Sweep: sweepID, Interval: defaultWatchInterval, inDev: inDev})
	var ec *exitCodeError
	if cmd.Context().Err() == nil && (err == nil || errors.As(err, &ec) && ec.code == exitFailed) {
		// The sweep has ended: its answer, as `rlsweep results --top` and the report rank it.
		printTopConfigs(cmd, f, sweepID)
	}
	return err
}

// sweepIDTaken refuses a sweep ID that names an existing sweep: its data is never overwritten.
func sweepIDTaken(shortID, sweepID, where string) error {
	return invalidInput(fmt.Errorf("--id: got %q, want an ID no sweep has: sweep %s exists already (%s) and is left as it is; leave out --id for a fresh random ID, or choose another", shortID, sweepID, where))
}

// checkStoreFree refuses a sweep ID whose files are in the artifact store, even when the server no
// longer knows the sweep (its history deleted or past retention).
func checkStoreFree(ctx context.Context, f *Factory, sweepID string) error {
	store, err := f.Store()
	if err != nil {
		return err
	}
	where, err := sweepstore.New(store).Occupied(ctx, sweepID)
	if err != nil {
		return fmt.Errorf("check the store for sweep %s: %w", sweepID, err)
	}
	if where != "" {
		return sweepIDTaken(path.Base(sweepID), sweepID, "the artifact store holds "+where)
	}
	return nil
}

// newSubmissionID identifies one submission; the sweep's plan step claims its files for it.
func newSubmissionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newShortID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return hex.EncodeToString(b)
}
