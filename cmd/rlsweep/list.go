package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// ListOptions are list's inputs.
type ListOptions struct {
	Name  string
	State string
	Limit int
	JSON  bool
}

// listStates are the states list can filter on: "running", a finished sweep's phase as the sweep
// records it (RlsweepOutcome), "terminated" (ended by hand, with no phase recorded) and "all".
var listStates = []string{"all", "running", workflows.PhaseCompleted, workflows.PhaseCancelled, workflows.PhaseFailed,
	workflows.PhaseProbeFailed, "terminated"}

const maxListLimit = 1000

func newListCmd(f *Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sweeps, running ones first, then the most recently ended",
		Long: "List the namespace's sweeps from Temporal's visibility store: ID, state, trials planned, start " +
			"and duration. A sweep that continued-as-new is listed once. Use the ID with status, watch, " +
			"results, report or cancel.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return invalidInput(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return runList(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Name, "name", "", "only sweeps with this spec name")
	fl.StringVar(&opts.State, "state", "all", "only sweeps in this state: "+strings.Join(listStates, ", "))
	fl.IntVar(&opts.Limit, "limit", 20, fmt.Sprintf("list at most this many sweeps (1 to %d)", maxListLimit))
	fl.BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func (o *ListOptions) validate() error {
	if o.Name != "" && !sweeps.ValidName(o.Name) {
		return fmt.Errorf("--name: got %q, want a sweep name as in a spec's name: field (%s)", o.Name, sweeps.NameRule)
	}
	if !contains(listStates, o.State) {
		return fmt.Errorf("--state: got %q, want one of %s", o.State, metrics.QuotedList(listStates))
	}
	if o.Limit < 1 || o.Limit > maxListLimit {
		return fmt.Errorf("--limit: got %d, want an integer from 1 to %d", o.Limit, maxListLimit)
	}
	return nil
}

// query is the visibility query for opts. Every value in it has been validated: names match
// sweeps.ValidName (no quotes), states come from listStates.
func (o *ListOptions) query() string {
	q := []string{fmt.Sprintf("%s = 'sweep'", workflows.AttrKind.GetName()),
		"ExecutionStatus != 'ContinuedAsNew'"}
	if o.Name != "" {
		q = append(q, fmt.Sprintf("%s = '%s'", workflows.AttrSweepName.GetName(), o.Name))
	}
	switch o.State {
	case "all":
	case "running":
		q = append(q, "ExecutionStatus = 'Running'")
	case "terminated":
		q = append(q, "ExecutionStatus = 'Terminated'")
	default:
		q = append(q, fmt.Sprintf("%s = '%s'", workflows.AttrOutcome.GetName(), o.State))
	}
	return strings.Join(q, " AND ")
}

// SweepListing is one sweep as list prints it.
type SweepListing struct {
	SweepID string `json:"sweep_id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Trials  int    `json:"trials,omitempty"`
	// Best is the best configuration of an ended sweep (its memo's), nil while it runs or when none
	// scored.
	Best    *ListedBest `json:"best,omitempty"`
	Started time.Time   `json:"started"`
	Ended   *time.Time  `json:"ended,omitempty"`
	WebUI   string      `json:"web_ui"`
}

// ListedBest is what `list` reads of a sweep's best configuration from its memo (workflows.MemoBest, the
// JSON of the sweep's activities.BestConfig).
type ListedBest struct {
	Config    int      `json:"config"`
	Metric    string   `json:"metric"`
	Objective float64  `json:"objective"`
	Confirmed bool     `json:"confirmed,omitempty"`
	Fresh     *float64 `json:"fresh,omitempty"`
}

func runList(cmd *cobra.Command, f *Factory, opts *ListOptions) error {
	ctx := cmd.Context()
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	var out []SweepListing
	var token []byte
	for len(out) < opts.Limit {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: opts.query(), PageSize: int32(min(opts.Limit, 100)), NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list sweeps: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			if len(out) == opts.Limit {
				break
			}
			l := listing(ex)
			l.WebUI = f.WorkflowURL(l.SweepID)
			out = append(out, l)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		if out == nil {
			out = []SweepListing{}
		}
		return enc.Encode(out)
	}
	return writeListing(f.Out, out, time.Now())
}

// listing reads one sweep execution from the visibility store. Its state is the phase the sweep
// recorded when it ended (RlsweepOutcome), "running" while it runs, and otherwise how Temporal closed
// it (terminated, timed_out).
func listing(ex *workflowpb.WorkflowExecutionInfo) SweepListing {
	l := SweepListing{SweepID: ex.GetExecution().GetWorkflowId(), Started: ex.GetStartTime().AsTime()}
	fields := ex.GetSearchAttributes().GetIndexedFields()
	dc := converter.GetDefaultDataConverter()
	if p := fields[workflows.AttrSweepName.GetName()]; p != nil {
		_ = dc.FromPayload(p, &l.Name)
	}
	var outcome string
	if p := fields[workflows.AttrOutcome.GetName()]; p != nil {
		_ = dc.FromPayload(p, &outcome)
	}
	if p := ex.GetMemo().GetFields()[workflows.MemoTrials]; p != nil {
		_ = dc.FromPayload(p, &l.Trials)
	}
	if p := ex.GetMemo().GetFields()[workflows.MemoBest]; p != nil {
		var b ListedBest
		if dc.FromPayload(p, &b) == nil && b.Metric != "" {
			l.Best = &b
		}
	}
	switch st := ex.GetStatus(); {
	case st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		l.State = "running"
	case outcome != "":
		l.State = outcome
	default:
		l.State = strings.ToLower(strings.TrimPrefix(st.String(), "WorkflowExecutionStatus"))
		if st == enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT {
			l.State = "timed_out"
		}
	}
	if l.State != "running" && ex.GetCloseTime() != nil {
		end := ex.GetCloseTime().AsTime()
		l.Ended = &end
	}
	// A sweep that continued-as-new is listed by its latest run; the memo, carried from run to run,
	// says when the sweep was submitted (a sweep without it shows its run's start).
	var submitted time.Time
	if p := ex.GetMemo().GetFields()[workflows.MemoSubmitted]; p != nil && dc.FromPayload(p, &submitted) == nil && !submitted.IsZero() {
		l.Started = submitted
	}
	return l
}

func writeListing(w io.Writer, ls []SweepListing, now time.Time) error {
	if len(ls) == 0 {
		_, err := fmt.Fprintln(w, "no sweeps")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWEEP\tSTATE\tTRIALS\tSTARTED\tTOOK\tBEST")
	for _, l := range ls {
		took := now.Sub(l.Started)
		if l.Ended != nil {
			took = l.Ended.Sub(l.Started)
		}
		trials := "-"
		if l.Trials > 0 {
			trials = fmt.Sprint(l.Trials)
		}
		best := "-"
		if b := l.Best; b != nil {
			best = fmt.Sprintf("%s=%s (config %d)", b.Metric, num(b.Objective), b.Config)
			if b.Confirmed && b.Fresh != nil {
				best = fmt.Sprintf("%s=%s (config %d, confirmed)", b.Metric, num(*b.Fresh), b.Config)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.SweepID, l.State, trials,
			l.Started.Local().Format("2006-01-02 15:04:05"), took.Round(time.Second), best)
	}
	return tw.Flush()
}
