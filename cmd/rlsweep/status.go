package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/workflows"
)

// StatusOptions are status's inputs.
type StatusOptions struct {
	Ref  string
	JSON bool
}

func newStatusCmd(f *Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{}
	cmd := &cobra.Command{
		Use:   "status SWEEP[/TRIAL]",
		Short: "Show a sweep's progress, or one trial's",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runStatus(cmd, f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func runStatus(cmd *cobra.Command, f *Factory, opts *StatusOptions) error {
	sweepID, trialID, err := parseSweepRef(f, opts.Ref)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	if trialID != "" {
		return trialStatus(cmd, f, sweepID, trialID, opts.JSON)
	}
	st, err := queryStatus(ctx, c, sweepID)
	if err != nil {
		return sweepError(ctx, f, c, sweepID, err)
	}
	if opts.JSON {
		return json.NewEncoder(f.Out).Encode(st)
	}
	fmt.Fprint(f.Out, renderStatus(st, liveTrials(ctx, c, st), liveBest(cmd, f, sweepID, nil)))
	fmt.Fprintf(f.Out, "web ui: %s\n", f.WorkflowURL(sweepID))
	return nil
}

func trialStatus(cmd *cobra.Command, f *Factory, sweepID, trialID string, asJSON bool) error {
	ctx := cmd.Context()
	c, _ := f.Client(ctx)
	wid := workflows.TrialWorkflowID(sweepID, trialID)
	desc, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return trialError(ctx, f, c, sweepID, trialID, err)
	}
	out := map[string]any{"trial": wid, "status": desc.WorkflowExecutionInfo.Status.String()}
	for _, pa := range desc.PendingActivities {
		if hb, ok := heartbeatOf(pa); ok {
			out["step"], out["checkpoint"] = hb.Step, hb.CheckpointKey
		}
		out["attempt"] = pa.Attempt
		if pa.LastFailure != nil {
			out["last_failure"] = pa.LastFailure.Message
		}
	}
	var sum results.TrialSummary
	if desc.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED &&
		c.GetWorkflow(ctx, wid, "").Get(ctx, &sum) == nil {
		out["outcome"], out["objective"], out["steps"], out["stop_rule"] = sum.Outcome, sum.Objective, sum.Steps, sum.StopRule
		if sum.Error != "" {
			out["error"] = sum.Error
		}
		if sum.Pruning != nil {
			out["pruning"] = sum.Pruning
		}
		if sum.Parent != "" {
			out["parent"] = fmt.Sprintf("%s (started from its checkpoint at step %d, replacing a diverged member)", sum.Parent, sum.StartStep)
		}
		if len(sum.Exploits) > 0 {
			ex := make(exploitLines, len(sum.Exploits))
			for i, e := range sum.Exploits {
				ex[i] = results.FormatExploit(e)
			}
			out["exploits"] = ex
		}
		if len(sum.Warnings) > 0 {
			out["warnings"] = sum.Warnings
		}
		if sum.Malformed > 0 {
			out["malformed"] = sum.Malformed
		}
		if sum.MetricsSource != "" {
			out["metrics"] = sum.MetricsSource
		}
		if sum.Hardware != nil {
			if asJSON {
				out["hardware"] = sum.Hardware
			} else {
				out["hardware"] = sum.Hardware.Line()
			}
		}
		for k, n := range map[string]int64{"trainer_failures": int64(sum.TrainerFailures), "infra_retries": int64(sum.InfraRetries),
			"retrained": sum.RetrainedSteps, "server_outages": int64(sum.ServerOutages)} {
			if n > 0 {
				out[k] = n
			}
		}
	}
	if desc.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		// Warnings come as soon as a segment ends; a query no worker answers leaves them out.
		var st workflows.TrialStatus
		if v, err := c.QueryWorkflow(ctx, wid, "", workflows.QueryStatus); err == nil && v.Get(&st) == nil {
			if len(st.Warnings) > 0 {
				out["warnings"] = st.Warnings
			}
			if st.Malformed > 0 {
				out["malformed"] = st.Malformed
			}
		}
	}
	if asJSON {
		return json.NewEncoder(f.Out).Encode(out)
	}
	for _, k := range []string{"trial", "status", "outcome", "step", "steps", "objective", "stop_rule", "metrics", "malformed", "trainer_failures", "infra_retries", "retrained", "server_outages", "hardware", "checkpoint", "attempt", "last_failure", "pruning", "parent", "exploits", "error", "warnings"} {
		if v, ok := out[k]; ok {
			if ex, isExploits := v.(exploitLines); isExploits {
				for _, e := range ex {
					fmt.Fprintf(f.Out, "%-12s %s\n", "exploit", e)
				}
				continue
			}
			if p, isPruning := v.(*results.Pruning); isPruning {
				fmt.Fprintf(f.Out, "%-12s %s\n", k, results.FormatPruning(p))
				continue
			}
			if ws, isList := v.([]string); isList {
				for _, w := range ws {
					fmt.Fprintf(f.Out, "%-12s %s\n", "warning", w)
				}
				continue
			}
			if text, isText := v.(string); isText && strings.Contains(text, "\n") {
				// A whole error: its first line here, the rest (the log tail, the cause) below.
				first, rest, _ := strings.Cut(strings.TrimRight(text, "\n"), "\n")
				fmt.Fprintf(f.Out, "%-12s %s\n", k, first)
				for _, l := range strings.Split(rest, "\n") {
					fmt.Fprintf(f.Out, "%-12s %s\n", "", l)
				}
				continue
			}
			if p, isPtr := v.(*float64); isPtr {
				if p == nil {
					continue
				}
				v = *p
			}
			fmt.Fprintf(f.Out, "%-12s %v\n", k, v)
		}
	}
	fmt.Fprintf(f.Out, "%-12s %s\n", "web ui", f.WorkflowURL(wid))
	return nil
}

// exploitLines are a pbt member's exploits, one line each.
type exploitLines []string
