package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/workflows"
)

// ResultsOptions are results's inputs.
type ResultsOptions struct {
	Sweep  string
	Output string
}

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
				return invalidInput(fmt.Errorf("--output: got %q, want one of %q", opts.Output, resultsOutputs))
			}
			if runF != nil {
				return runF(opts)
			}
			return runResults(cmd, f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "table", "table, json or csv")
	return cmd
}

func runResults(cmd *cobra.Command, f *Factory, opts *ResultsOptions) error {
	sweepID, _, err := workflows.ParseSweepRef(opts.Sweep)
	if err != nil {
		return invalidInput(err)
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	res, err := loadResults(cmd, store, sweepID)
	if err != nil {
		return err
	}
	switch opts.Output {
	case "json":
		enc := json.NewEncoder(f.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	case "csv":
		return activities.WriteCSV(f.Out, *res)
	}
	return writeResultsTable(f.Out, res)
}

// statusPartial is the status of results read from the stored parts, results.json not being there.
const statusPartial = "partial"

// loadResults reads results.json, or the parts recorded so far when the sweep has not ended.
func loadResults(cmd *cobra.Command, store artifacts.Store, sweepID string) (*activities.SweepResults, error) {
	ctx := cmd.Context()
	res, err := activities.LoadSweepResults(ctx, store, sweepID)
	if err == nil {
		return res, nil
	}
	if !errors.Is(err, artifacts.ErrNotFound) {
		return nil, err
	}
	trials, err := activities.LoadTrialSummaries(ctx, store, sweepID)
	if err != nil {
		return nil, err
	}
	if len(trials) == 0 {
		return nil, fmt.Errorf("sweep %s: no results in %s yet", sweepID, store.URL(artifacts.SweepKey(sweepID, "")))
	}
	// The store alone cannot say whether the sweep still runs or ended without writing results.json
	// (a sweep that failed after fan-out): "partial" is true of both.
	res = &activities.SweepResults{SweepID: sweepID, Status: statusPartial, Trials: trials}
	// The spec's own order, as results.json has it; alphabetical only if spec.json is missing.
	if spec, err := loadSpec(cmd, store, sweepID); err == nil && spec != nil {
		res.Name, res.Metric, res.Params = spec.Name, spec.Metric, sweeps.ParamNames(spec)
	} else {
		for name := range trials[0].Params {
			res.Params = append(res.Params, name)
		}
		sort.Strings(res.Params)
	}
	return res, nil
}

func writeResultsTable(w io.Writer, res *activities.SweepResults) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "TRIAL\tSEED")
	for _, p := range res.Params {
		fmt.Fprint(tw, "\t"+p)
	}
	fmt.Fprintln(tw, "\tOUTCOME\tOBJECTIVE\tSTEPS\tSTOP RULE\tERROR")
	for _, t := range res.Trials {
		fmt.Fprintf(tw, "%s\t%d", t.TrialID, t.Seed)
		for _, p := range res.Params {
			fmt.Fprintf(tw, "\t%v", t.Params[p])
		}
		obj := "-"
		if t.Objective != nil {
			obj = strconv.FormatFloat(*t.Objective, 'g', 5, 64)
		}
		rule := t.StopRule
		if rule == "" {
			rule = "-"
		}
		fmt.Fprintf(tw, "\t%s\t%s\t%d\t%s\t%s\n", t.Outcome, obj, t.Steps, rule, oneLine(t.Error))
	}
	return tw.Flush()
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
