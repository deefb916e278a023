package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// ResultsOptions are results's inputs.
type ResultsOptions struct {
	Sweep  string
	Output string
	Top    int // > 0: the leaderboard's Top best configurations instead of every trial
	// Pareto: the configurations by Pareto front (a sweep with several objectives) instead of every trial.
	Pareto bool
	// ExportSchedule: write a spec replaying the best pbt member's hyperparameter schedule here.
	ExportSchedule string
	// Timeout bounds the store reads: a store that does not answer within it fails the command.
	Timeout time.Duration
}

// defaultStoreTimeout is how long results waits for the artifact store by default.
const defaultStoreTimeout = 30 * time.Second

var resultsOutputs = []string{"table", "json", "csv"}

func newResultsCmd(f *Factory, runF func(*ResultsOptions) error) *cobra.Command {
	opts := &ResultsOptions{}
	cmd := &cobra.Command{
		Use:   "results SWEEP",
		Short: "Print every finished trial of a sweep: parameters, seed, outcome, objective",
		Long: "Print the sweep's results from the artifact store: results.json once the sweep has ended, " +
			"the results stored so far (status \"partial\") while it runs, or if it ended without writing results.json.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sweep = args[0]
			if !contains(resultsOutputs, opts.Output) {
				return invalidInput(fmt.Errorf("--output: got %q, want one of %s", opts.Output, metrics.QuotedList(resultsOutputs)))
			}
			if opts.Top < 0 || opts.Top > 0 && opts.Output != "table" {
				return invalidInput(fmt.Errorf("--top: got %d with --output %s, want a positive number of configurations with --output table", opts.Top, opts.Output))
			}
			if opts.Pareto && (opts.Output != "table" || opts.Top > 0) {
				return invalidInput(fmt.Errorf("--pareto: with --output %s and --top %d, want --output table without --top (json holds the front as \"pareto\", csv as the pareto_rank column)", opts.Output, opts.Top))
			}
			if opts.Timeout <= 0 {
				return invalidInput(fmt.Errorf("--timeout: got %s, want a positive duration", opts.Timeout))
			}
			if runF != nil {
				return runF(opts)
			}
			return runResults(cmd, f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "table", "table, json or csv")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultStoreTimeout, "how long to wait for the artifact store before giving up")
	cmd.Flags().StringVar(&opts.ExportSchedule, "export-schedule", "", "method pbt: write to this new file a spec that replays the best member's hyperparameter schedule as a fixed sweep (docs/spec.md#pbt)")
	cmd.Flags().BoolVar(&opts.Pareto, "pareto", false, "a sweep with several objectives: print its configurations by Pareto front (rank 1 first), each objective's value and why a configuration is not ranked (docs/spec.md#several-objectives)")
	cmd.Flags().IntVar(&opts.Top, "top", 0, "print the leaderboard's N best configurations (mean objective over seeds, as the report ranks them) instead of every trial")
	return cmd
}

func runResults(cmd *cobra.Command, f *Factory, opts *ResultsOptions) error {
	sweepID, _, err := parseSweepRef(f, opts.Sweep)
	if err != nil {
		return err
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	res, err := loadResultsBounded(cmd, f, store, sweepID, opts.Timeout)
	if err != nil {
		return err
	}
	if opts.ExportSchedule != "" {
		member, err := exportSchedule(cmd.Context(), store, sweepID, res, opts.ExportSchedule)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "%s: a spec replaying the hyperparameter schedule of member %s; submit it with: rlsweep submit %s\n", opts.ExportSchedule, member, opts.ExportSchedule)
		return nil
	}
	switch opts.Output {
	case "json":
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	case "csv":
		return results.WriteCSV(f.Out, res)
	}
	if opts.Pareto {
		if len(res.Objectives) < 2 {
			return invalidInput(fmt.Errorf("--pareto: sweep %s has one objective (metric %s), so no Pareto front; write metric as a list of objectives, e.g. [{name: %s}, {name: env_steps}], to rank configurations by several (docs/spec.md#several-objectives)",
				sweepID, cmp.Or(res.Metric.Name, "unknown"), cmp.Or(res.Metric.Name, "reward")))
		}
		return writePareto(f.Out, res)
	}
	if opts.Top > 0 {
		return writeLeaderboard(f.Out, res, opts.Top)
	}
	return writeResultsTable(f.Out, res)
}

// writeLeaderboard prints the n best configurations as the report's leaderboard ranks them
// (report.Leaderboard: confirmed configurations first by their fresh-seed score, then the mean
// objective over the completed seeds), with their parameters, the 95% interval of the mean (from
// results.MinIntervalSeeds seeds), how many seeds it is over and whether it was confirmed on fresh seeds.
func writeLeaderboard(w io.Writer, res *results.SweepResults, n int) error {
	rows := report.Leaderboard(res)
	metric := res.Metric.Name
	if metric == "" {
		metric = "objective"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "RANK")
	for _, p := range res.Params {
		fmt.Fprint(tw, "\t"+p)
	}
	anyConfirmed := len(res.Confirmations) > 0
	precision := slices.ContainsFunc(rows, func(r report.Row) bool { return r.Precision != "" })
	if precision {
		fmt.Fprint(tw, "\tPRECISION")
	}
	fmt.Fprintf(tw, "\tMEAN %s\t95%% CI\tSEEDS", metric)
	if anyConfirmed {
		fmt.Fprint(tw, "\tCONFIRMED")
	}
	fmt.Fprintln(tw)
	for i, r := range rows {
		if i == n {
			break
		}
		fmt.Fprintf(tw, "%d", i+1)
		for _, p := range res.Params {
			fmt.Fprint(tw, "\t"+paramValue(r.Params[p]))
		}
		if precision {
			fmt.Fprint(tw, "\t"+cmp.Or(r.Precision, "-"))
		}
		mean, ci := "-", "-"
		if r.Scored > 0 {
			mean = strconv.FormatFloat(r.Mean, 'g', 5, 64)
		}
		switch {
		case !math.IsNaN(r.Lo):
			ci = fmt.Sprintf("[%.5g, %.5g]", r.Lo, r.Hi)
		case r.Scored > 0:
			ci = "too few seeds"
		}
		seeds := fmt.Sprintf("%d/%d", r.Scored, r.Trials)
		if r.Scored < r.Trials {
			seeds += " (" + results.CountsLine(r.Outcomes) + ")"
		}
		fmt.Fprintf(tw, "\t%s\t%s\t%s", mean, ci, seeds)
		if anyConfirmed {
			fmt.Fprint(tw, "\t"+confirmedCell(r))
		}
		fmt.Fprintln(tw)
	}
	if len(rows) > n {
		fmt.Fprintf(tw, "(%d more configurations)\n", len(rows)-n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%s)\n", report.RankingRule(res))
	return err
}

// statusPartial is the status of results read from the stored parts, results.json not being there.
const statusPartial = "partial"

// loadResults reads results.json, or the parts recorded so far when the sweep has not ended.
// loadResultsBounded is loadResults with its store reads bounded by timeout: while it waits it says so
// on stderr (after 2 s, then every 5 s), and a store that has not answered within timeout fails it
// with an error that names the store and what was being read.
func loadResultsBounded(cmd *cobra.Command, f *Factory, store artifacts.Store, sweepID string, timeout time.Duration) (*results.SweepResults, error) {
	parent := cmd.Context()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd.SetContext(ctx)
	defer cmd.SetContext(parent)
	where := sweepstore.New(store).SweepURL(sweepID)
	done := make(chan struct{})
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		start := time.Now()
		next := 2 * time.Second
		for {
			select {
			case <-done:
				return
			case <-time.After(next - time.Since(start)):
				fmt.Fprintf(f.ErrOut, "waiting for the artifact store %s (%s of --timeout %s)…\n", where, time.Since(start).Round(time.Second), timeout)
				next += 5 * time.Second
			}
		}
	}()
	res, err := loadResults(cmd, f, store, sweepID)
	close(done)
	<-waited
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		return nil, fmt.Errorf("artifact store %s did not answer within %s (--timeout) reading sweep %s's results: %w", where, timeout, sweepID, err)
	}
	return res, err
}

func loadResults(cmd *cobra.Command, f *Factory, store artifacts.Store, sweepID string) (*results.SweepResults, error) {
	ctx := cmd.Context()
	ss := sweepstore.New(store)
	res, err := ss.ReadResults(ctx, sweepID)
	if err == nil {
		return res, nil
	}
	if !errors.Is(err, artifacts.ErrNotFound) {
		return nil, err
	}
	trials, err := ss.ReadTrialSummaries(ctx, sweepID)
	if err != nil {
		return nil, err
	}
	if len(trials) == 0 {
		return nil, noResults(cmd, f, store, sweepID)
	}
	// The store alone cannot say whether the sweep still runs or ended without writing results.json
	// (a sweep that failed after fan-out): "partial" is true of both.
	res = &results.SweepResults{SweepID: sweepID, Status: statusPartial, Trials: trials}
	// The spec's own order, as results.json has it; alphabetical only if spec.json is missing.
	if spec, err := loadSpec(cmd, store, sweepID); err == nil && spec != nil {
		res.Name, res.Metric, res.Params = spec.Name, spec.Metric, sweeps.ParamNames(spec)
		if spec.MultiObjective() {
			res.Objectives, res.Pareto = spec.Objectives, results.Objectives(spec, trials)
		}
	} else {
		for name := range trials[0].Params {
			res.Params = append(res.Params, name)
		}
		sort.Strings(res.Params)
	}
	return res, nil
}

// noResults says why a sweep has no results to show: it has not recorded any yet, or it does not
// exist. A sweep with nothing at all in the store may still have just started (its plan not yet
// stored): Temporal, when it answers within a few seconds, says which.
func noResults(cmd *cobra.Command, f *Factory, store artifacts.Store, sweepID string) error {
	ctx := cmd.Context()
	ss := sweepstore.New(store)
	where := ss.SweepURL(sweepID)
	holds, err := ss.HoldsSweep(ctx, sweepID)
	if err != nil {
		return err
	}
	if holds {
		return fmt.Errorf("sweep %s: no results in %s yet", sweepID, where)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	state, err := sweepState(ctx, f, sweepID)
	switch {
	case err == nil && state == "running":
		return fmt.Errorf("sweep %s (running): no results in %s yet", sweepID, where)
	case err == nil:
		return fmt.Errorf("sweep %s is %s, but %s holds nothing of it: is --store (or RLSWEEP_STORE) the store its workers write to?", sweepID, state, where)
	case errors.Is(err, errSweepNotFound):
		return fmt.Errorf("sweep %s does not exist: Temporal (namespace %s) has no sweep of that ID and %s holds nothing of it; list the sweeps with: %s",
			sweepID, f.namespace(), where, f.commandLine("list"))
	}
	return fmt.Errorf("sweep %s does not exist in the artifact store: %s holds nothing of it (Temporal could not be asked whether it has just started: %v)", sweepID, where, err)
}

// errSweepNotFound is sweepState's error for a workflow ID Temporal does not know.
var errSweepNotFound = errors.New("not found")

// sweepState is the sweep workflow's state, such as "running" or "completed"; errSweepNotFound when
// there is no such sweep.
func sweepState(ctx context.Context, f *Factory, sweepID string) (string, error) {
	c, err := f.Client(ctx)
	if err != nil {
		return "", err
	}
	desc, err := c.DescribeWorkflowExecution(ctx, sweepID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "", fmt.Errorf("sweep %s: %w", sweepID, errSweepNotFound)
	}
	if err != nil {
		return "", err
	}
	return workflowState(desc.WorkflowExecutionInfo.Status), nil
}

// workflowState names a workflow status in lower case: running, completed, failed, canceled, ...
func workflowState(st enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

func writeResultsTable(w io.Writer, res *results.SweepResults) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "TRIAL\tSEED")
	for _, p := range res.Params {
		fmt.Fprint(tw, "\t"+p)
	}
	precision := slices.ContainsFunc(res.Trials, func(t results.TrialSummary) bool { return t.Precision != "" })
	if precision {
		fmt.Fprint(tw, "\tPRECISION")
	}
	fmt.Fprintln(tw, "\tOUTCOME\tOBJECTIVE\tSTEPS\tSTOP RULE\tGPU\tERROR")
	for _, t := range res.Trials {
		fmt.Fprintf(tw, "%s\t%d", t.TrialID, t.Seed)
		for _, p := range res.Params {
			fmt.Fprintf(tw, "\t%v", t.Params[p])
		}
		if precision {
			fmt.Fprint(tw, "\t"+cmp.Or(t.Precision, "-"))
		}
		obj := "-"
		if t.Objective != nil {
			obj = strconv.FormatFloat(*t.Objective, 'g', 5, 64)
		}
		rule := t.StopRule
		if rule == "" {
			rule = "-"
		}
		gpu := cmp.Or(t.Hardware.GPUNames(), "-")
		fmt.Fprintf(tw, "\t%s\t%s\t%d\t%s\t%s\t%s\n", t.Outcome, obj, t.Steps, rule, gpu, oneLine(t.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range results.HardwareSensitivity(res.Trials) {
		configs := make([]string, len(c.Configs))
		for i, n := range c.Configs {
			configs[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(w, "hardware-sensitive: configuration %s (%s) %s\n", strings.Join(configs, ", "), paramsLine(res.Params, c.Params), c.Line())
	}
	if line := malformedLine(res.Trials); line != "" {
		_, err := fmt.Fprintln(w, line)
		return err
	}
	return nil
}

// paramsLine is a configuration's parameters as "name=value, ..." in the sweep's order.
func paramsLine(names []string, params map[string]any) string {
	parts := make([]string, 0, len(names))
	for _, p := range names {
		if v, ok := params[p]; ok {
			parts = append(parts, p+"="+paramValue(v))
		}
	}
	return strings.Join(parts, ", ")
}

// malformedLine says how many metric lines the trials' readers dropped as malformed, and whose; ""
// when none was.
func malformedLine(trials []results.TrialSummary) string {
	total, by := 0, []string{}
	for _, t := range trials {
		if t.Malformed > 0 {
			total += t.Malformed
			by = append(by, fmt.Sprintf("%s: %d", t.TrialID, t.Malformed))
		}
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("malformed metric lines dropped: %d (%s); rlsweep status SWEEP/TRIAL shows a trial's count, its log shows the lines", total, strings.Join(by, ", "))
}

// oneLine is a trial's whole error on one line, the last cell of its row: its lines (a trainer's log
// tail holds the cause) joined by " | ", tabs as spaces; "-" when there is none.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "-"
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(strings.ReplaceAll(lines[i], "\t", " "))
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), " | ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// confirmedCell says whether a leaderboard row was confirmed on fresh seeds, and its score there.
func confirmedCell(r report.Row) string {
	switch {
	case !r.Confirmed:
		return "-"
	case r.Fresh == nil:
		return "no score on " + report.FreshSeeds(r.FreshSeeds)
	}
	return fmt.Sprintf("yes: %.5g on %s", *r.Fresh, report.FreshSeeds(r.FreshSeeds))
}

// writePareto prints a sweep's configurations by Pareto front: the ranked ones by rank, then by
// crowding (the front's spread-out members first), each objective as the IQM over seeds with its 95%
// interval where it has one; then the configurations not ranked, each with why.
func writePareto(w io.Writer, res *results.SweepResults) error {
	pts := slices.Clone(res.Pareto)
	sort.SliceStable(pts, func(a, b int) bool {
		ra, rb := pts[a].Rank, pts[b].Rank
		switch {
		case (ra == 0) != (rb == 0):
			return rb == 0
		case ra != rb:
			return ra < rb
		case pts[a].Crowding != pts[b].Crowding:
			return pts[a].Crowding > pts[b].Crowding
		}
		return pts[a].Config < pts[b].Config
	})
	precision := slices.ContainsFunc(pts, func(p results.ConfigPoint) bool { return p.Precision != "" })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "PARETO RANK	CONFIG")
	for _, p := range res.Params {
		fmt.Fprint(tw, "	"+p)
	}
	if precision {
		fmt.Fprint(tw, "	PRECISION")
	}
	for _, o := range res.Objectives {
		dir := "max"
		if o.Goal == sweeps.GoalMinimize {
			dir = "min"
		}
		fmt.Fprintf(tw, "	%s (%s)", strings.ToUpper(o.Label()), dir)
	}
	fmt.Fprintln(tw, "	SEEDS")
	front, unranked := 0, 0
	for _, p := range pts {
		rank := strconv.Itoa(p.Rank)
		if p.Rank == 0 {
			rank, unranked = "-", unranked+1
		} else if p.Rank == 1 {
			front++
		}
		fmt.Fprintf(tw, "%s	%d", rank, p.Config)
		for _, name := range res.Params {
			fmt.Fprint(tw, "	"+paramValue(p.Params[name]))
		}
		if precision {
			fmt.Fprint(tw, "	"+cmp.Or(p.Precision, "-"))
		}
		for i, o := range res.Objectives {
			cell := results.FormatObjective(o, p.Values[i])
			if i < len(p.Low) && !math.IsNaN(p.Low[i]) && !math.IsInf(p.Low[i], 1) {
				cell += " [" + results.FormatObjective(o, p.Low[i]) + ", " + results.FormatObjective(o, p.High[i]) + "]"
			}
			if o.Name == sweeps.ObjectiveEnvSteps && o.Target != nil {
				cell += fmt.Sprintf(" (%d of %d reached)", p.Reached, p.Seeds)
			}
			fmt.Fprint(tw, "	"+cell)
		}
		seeds := strconv.Itoa(p.Seeds)
		if p.Why != "" {
			seeds += " — not ranked: " + p.Why
		}
		fmt.Fprintln(tw, "	"+seeds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d configurations on the Pareto front, %d ranked behind it, %d not ranked; values are the IQM over seeds with a 95%% bootstrap interval from %d seeds; a configuration with a diverged seed is infeasible and never ranked)\n",
		front, len(pts)-front-unranked, unranked, results.MinIntervalSeeds)
	return err
}
