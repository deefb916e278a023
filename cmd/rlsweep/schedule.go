package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// overlapPolicies maps --overlap values to Temporal's overlap policies.
var overlapPolicies = map[string]enumspb.ScheduleOverlapPolicy{
	"skip":            enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer_one":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer_all":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	"cancel_other":    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	"terminate_other": enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
	"allow_all":       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

func overlapNames() string {
	names := make([]string, 0, len(overlapPolicies))
	for n := range overlapPolicies {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func parseOverlap(flag, v string) (enumspb.ScheduleOverlapPolicy, error) {
	p, ok := overlapPolicies[v]
	if !ok {
		return 0, fmt.Errorf("%s: got %q, want one of %s", flag, v, overlapNames())
	}
	return p, nil
}

// ScheduleCreateOptions are `schedule create`'s inputs.
type ScheduleCreateOptions struct {
	Name          string
	File          string
	Cron          string
	Baseline      string
	Overlap       string
	CatchupWindow time.Duration
	Webhook       string
	// Tolerance overrides the spec's regression.tolerance when ToleranceSet (--tolerance was given).
	Tolerance    float64
	ToleranceSet bool
	Paused       bool
	// badFlags are --catchup-window and --tolerance values that did not parse, reported by check with
	// every other problem rather than alone by the flag parser.
	badFlags []error
}

// ScheduleOptions are the inputs of the schedule commands that act on one schedule by name.
type ScheduleOptions struct {
	Action  string // list, describe, pause, unpause, trigger, backfill, delete
	Name    string
	Overlap string    // trigger, backfill: "" keeps the schedule's policy
	Start   time.Time // backfill
	End     time.Time // backfill
	Note    string    // pause, unpause
}

func newScheduleCmd(f *Factory, createF func(*ScheduleCreateOptions) error, runF func(*ScheduleOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Nightly regressions: Temporal Schedules that run a pinned sweep and compare it with a baseline",
	}
	cmd.AddCommand(newScheduleCreateCmd(f, createF))
	for _, a := range []struct{ use, short string }{
		{"list", "List the schedules"},
		{"describe NAME", "Show a schedule: its cron, policies, recent and next runs"},
		{"pause NAME", "Pause a schedule"},
		{"unpause NAME", "Unpause a schedule"},
		{"trigger NAME", "Start the schedule's regression now"},
		{"backfill NAME", "Run the regressions the schedule would have run between --start and --end"},
		{"delete NAME", "Delete a schedule (its stored spec and past results stay)"},
	} {
		cmd.AddCommand(newScheduleActionCmd(f, a.use, a.short, runF))
	}
	for _, c := range cmd.Commands() {
		argsAreInput(c)
	}
	return cmd
}

func newScheduleCreateCmd(f *Factory, runF func(*ScheduleCreateOptions) error) *cobra.Command {
	opts := &ScheduleCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create NAME SPEC.yaml --cron EXPR --baseline REF",
		Short: "Store SPEC.yaml and schedule a Regression of it against a baseline",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.File = args[0], args[1]
			opts.ToleranceSet = cmd.Flags().Changed("tolerance")
			if runF != nil {
				if err := opts.check(); err != nil {
					return invalidInput(err)
				}
				return runF(opts)
			}
			return runScheduleCreate(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Cron, "cron", "", `cron expression, e.g. "0 3 * * *" (required)`)
	fl.StringVar(&opts.Baseline, "baseline", "", "a sweep (sweep/<name>/<id>) or a baseline stored with `rlsweep baseline set` (required)")
	fl.StringVar(&opts.Overlap, "overlap", "skip", "what to do when a run is still going: "+overlapNames())
	opts.CatchupWindow = time.Hour
	fl.Var(&lenientDuration{v: &opts.CatchupWindow, flag: "catchup-window", errs: &opts.badFlags}, "catchup-window", "how late a missed run may still start (at least 10s)")
	fl.StringVar(&opts.Webhook, "webhook", "", "URL that receives regression.json as a JSON POST, or env:NAME to read it on the worker")
	fl.Var(&lenientFloat{v: &opts.Tolerance, flag: "tolerance", errs: &opts.badFlags}, "tolerance", "override the spec's regression.tolerance, the relative IQM change that counts (default: the spec's, 0.05 without one)")
	fl.BoolVar(&opts.Paused, "paused", false, "create the schedule paused")
	return cmd
}

// lenientDuration is a duration flag whose bad value is kept as a problem for check to report with the
// others, instead of ending the parse at the first bad flag.
type lenientDuration struct {
	v    *time.Duration
	flag string
	errs *[]error
}

func (d *lenientDuration) String() string { return d.v.String() }
func (d *lenientDuration) Type() string   { return "duration" }
func (d *lenientDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		*d.errs = append(*d.errs, fmt.Errorf("--%s: got %q, want %s", d.flag, s, flagWant("duration")))
		return nil
	}
	*d.v = v
	return nil
}

// lenientFloat is lenientDuration for a number.
type lenientFloat struct {
	v    *float64
	flag string
	errs *[]error
}

func (x *lenientFloat) String() string { return strconv.FormatFloat(*x.v, 'g', -1, 64) }
func (x *lenientFloat) Type() string   { return "float" }
func (x *lenientFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		*x.errs = append(*x.errs, fmt.Errorf("--%s: got %q, want %s", x.flag, s, flagWant("float64")))
		return nil
	}
	*x.v = v
	return nil
}

// checkCron is the shape check of a cron expression that needs no server: 5 to 7 fields of digits and
// cron's symbols (the server checks the values), or an @ name the server checks.
func checkCron(expr string) error {
	e := strings.TrimSpace(expr)
	if e == "" {
		return fmt.Errorf(`--cron: got "", want %s`, cronWant)
	}
	if strings.HasPrefix(e, "@") {
		return nil
	}
	fields := strings.Fields(e)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "CRON_TZ=") || strings.HasPrefix(fields[0], "TZ=")) {
		fields = fields[1:]
	}
	if len(fields) < 5 || len(fields) > 7 {
		return fmt.Errorf("--cron: got %q, %d fields; want %s", expr, len(fields), cronWant)
	}
	for _, fl := range fields {
		if strings.ContainsFunc(fl, func(r rune) bool {
			return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || strings.ContainsRune("*/,-?#", r))
		}) {
			return fmt.Errorf("--cron: got %q, whose field %q is not a cron field; want %s", expr, fl, cronWant)
		}
	}
	return nil
}

// flagUnparsed tells whether --name was given a value that did not parse (and so was reported as such).
func (o *ScheduleCreateOptions) flagUnparsed(name string) bool {
	for _, err := range o.badFlags {
		if strings.HasPrefix(err.Error(), "--"+name+":") {
			return true
		}
	}
	return false
}

// check reports every problem with the options at once.
func (o *ScheduleCreateOptions) check() error {
	errs := append([]error(nil), o.badFlags...)
	if err := checkName("name", o.Name); err != nil {
		errs = append(errs, err)
	}
	if err := checkCron(o.Cron); err != nil {
		errs = append(errs, err)
	}
	if o.Baseline == "" {
		errs = append(errs, errors.New(`--baseline: got "", want a sweep ID or a stored baseline's name`))
	}
	if _, err := parseOverlap("--overlap", o.Overlap); err != nil {
		errs = append(errs, err)
	}
	if o.CatchupWindow < 10*time.Second && !o.flagUnparsed("catchup-window") {
		errs = append(errs, fmt.Errorf("--catchup-window: got %s, want at least 10s", o.CatchupWindow))
	}
	if o.ToleranceSet && !o.flagUnparsed("tolerance") && !(o.Tolerance > 0 && o.Tolerance <= 1) {
		errs = append(errs, fmt.Errorf("--tolerance: got %g, want a relative IQM change in (0, 1], such as 0.05 for 5%%", o.Tolerance))
	}
	if o.Webhook != "" && !strings.HasPrefix(o.Webhook, "http://") && !strings.HasPrefix(o.Webhook, "https://") &&
		!strings.HasPrefix(o.Webhook, "env:") {
		errs = append(errs, fmt.Errorf("--webhook: got %q, want an http(s) URL or env:NAME", o.Webhook))
	}
	return errors.Join(errs...)
}

// overrides are the thresholds the schedule sets over the spec's: only those given as flags.
func (o *ScheduleCreateOptions) overrides() regression.Thresholds {
	if !o.ToleranceSet {
		return regression.Thresholds{}
	}
	return regression.Thresholds{Regression: sweeps.Regression{Tolerance: o.Tolerance}}
}

// regressionAction is the schedule's action: a Regression of the stored spec, never the spec itself.
func regressionAction(o *ScheduleCreateOptions) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:        workflows.RegressionIDPrefix + o.Name,
		Workflow:  workflows.WorkflowTypeRegression,
		TaskQueue: workflows.ControlQueue,
		Args: []any{workflows.RegressionInput{Name: o.Name, SpecKey: artifacts.ScheduleSpecKey(o.Name), Baseline: o.Baseline,
			Thresholds: o.overrides(), WebhookURL: o.Webhook}},
	}
}

// describeThresholds says which thresholds the schedule's regressions will judge by, and where each
// comes from.
func describeThresholds(spec *sweeps.Spec, o *ScheduleCreateOptions) string {
	th, overridden := regression.Resolve(spec.Regression, o.overrides())
	from := "the spec's regression section"
	if spec.Regression == nil {
		from = "the defaults (the spec has no regression section)"
	}
	tol := fmt.Sprintf("tolerance %g", th.Tolerance)
	if len(overridden) > 0 {
		tol += " (--tolerance)"
	}
	return fmt.Sprintf("%s, confidence %g, resamples %d, min_prob_improvement %g, max_new_failures %d; from %s",
		tol, th.Confidence, th.Resamples, th.MinProbImprovement, th.MaxNewFailures, from)
}

// memoCron is the schedule memo's key for the cron expression as given: the server keeps only the
// calendar it translates the expression into.
const memoCron = "rlsweep-cron"

// cronWant says what --cron accepts.
const cronWant = `a cron expression of 5 fields, minute hour day-of-month month day-of-week, such as "0 3 * * *", or @hourly, @daily, @weekly, @monthly`

// runScheduleCreate checks everything a regression run would find wrong before any of it is made:
// the spec, the baseline and whether the spec's configurations meet it, the cron expression (the
// server's check, on a schedule created paused). The pinned spec is stored only once the schedule
// exists, and the schedule is unpaused only once the spec is stored; a failure in between deletes the
// schedule again, so a refused create leaves nothing behind.
func runScheduleCreate(cmd *cobra.Command, f *Factory, opts *ScheduleCreateOptions) error {
	ctx := cmd.Context()
	// Every problem of the flags, the spec and the baseline at once.
	var problems []error
	if err := opts.check(); err != nil {
		problems = append(problems, err)
	}
	spec, trials, raw, err := loadAndPlan(opts.File)
	var ec *exitCodeError
	switch {
	case err != nil && errors.As(err, &ec) && ec.code == exitInvalid:
		problems = append(problems, ec.err)
	case err != nil:
		return err
	}
	store, err := f.Store()
	if err != nil {
		return err
	}
	if spec == nil && opts.Baseline != "" {
		// Without a spec to compare it with, the baseline is checked for existence only.
		if _, key, err := sweepstore.New(store).ReadBaseline(ctx, opts.Baseline); errors.Is(err, artifacts.ErrNotFound) {
			problems = append(problems, baselineNotFound(ctx, store, opts.Baseline, key))
		}
	}
	if spec != nil && opts.Baseline != "" {
		err := checkBaseline(ctx, store, opts, spec, trials)
		switch {
		case err != nil && errors.As(err, &ec) && ec.code == exitInvalid:
			problems = append(problems, ec.err)
		case err != nil:
			return err
		}
	}
	if len(problems) > 0 {
		return invalidInput(errors.Join(problems...))
	}
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	overlap, _ := parseOverlap("--overlap", opts.Overlap)
	note := "rlsweep regression of " + opts.File
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:            opts.Name,
		Spec:          client.ScheduleSpec{CronExpressions: []string{opts.Cron}},
		Action:        regressionAction(opts),
		Overlap:       overlap,
		CatchupWindow: opts.CatchupWindow,
		Paused:        true,
		Note:          note,
		Memo:          map[string]any{memoCron: opts.Cron},
	})
	var bad *serviceerror.InvalidArgument
	switch {
	case errors.Is(err, temporal.ErrScheduleAlreadyRunning):
		return invalidInput(fmt.Errorf("name: got %q, but a schedule of that name exists (%s); delete it first or choose another name",
			opts.Name, f.commandLine("schedule", "describe", opts.Name)))
	case errors.As(err, &bad) && strings.Contains(strings.ToLower(bad.Message), "spec"):
		// The schedule's spec holds nothing but the cron expression.
		return invalidInput(fmt.Errorf("--cron: got %q, want %s (the server said: %s)", opts.Cron, cronWant, bad.Message))
	case err != nil:
		return fmt.Errorf("create schedule %s: %w", opts.Name, err)
	}
	undo := func(cause error) error {
		// A detached context: an interrupt must not leave the schedule without its spec.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := h.Delete(dctx); derr != nil {
			return fmt.Errorf("%w; and the schedule, created paused, could not be deleted: %v (rlsweep schedule delete %s)", cause, derr, opts.Name)
		}
		return cause
	}
	specKey, err := sweepstore.New(store).WriteScheduleSpec(ctx, opts.Name, raw)
	if err != nil {
		return undo(fmt.Errorf("store the spec of schedule %s: %w", opts.Name, err))
	}
	if !opts.Paused {
		if err := h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: note}); err != nil {
			return fmt.Errorf("unpause schedule %s (the spec is stored; rlsweep schedule unpause %s): %w", opts.Name, opts.Name, err)
		}
	}
	fmt.Fprintf(f.Out, "schedule %s: %q, spec stored as %s, baseline %s\nthresholds: %s\n", opts.Name, opts.Cron,
		specKey, opts.Baseline, describeThresholds(spec, opts))
	return nil
}

// checkBaseline checks, before a schedule is made, what each of its regressions checks after its
// sweep: that the baseline exists, measured the same objective, and has at least one configuration
// with the parameter values of one of the spec's (the comparison is by parameter values).
func checkBaseline(ctx context.Context, store artifacts.Store, opts *ScheduleCreateOptions, spec *sweeps.Spec, trials []sweeps.Trial) error {
	ref := opts.Baseline
	base, key, err := sweepstore.New(store).ReadBaseline(ctx, ref)
	switch {
	case errors.Is(err, artifacts.ErrNotFound):
		return invalidInput(baselineNotFound(ctx, store, ref, key))
	case errors.Is(err, sweepstore.ErrMalformed):
		return invalidInput(fmt.Errorf("--baseline: got %q, but it is not a sweep's results: %v", ref, err))
	case err != nil:
		return fmt.Errorf("--baseline %s: %w", store.URL(key), err)
	}
	if m := base.Metric; m.Name != "" && (m.Name != spec.Metric.Name || m.Goal != "" && m.Goal != spec.Metric.Goal) {
		return invalidInput(fmt.Errorf("--baseline: got %q, whose objective is %s %s; %s's is %s %s: they cannot be compared",
			ref, m.Goal, m.Name, opts.File, spec.Metric.Goal, spec.Metric.Name))
	}
	planned := map[string]bool{}
	for _, t := range trials {
		planned[results.ParamsKey(t.Params)] = true
	}
	for _, t := range base.Trials {
		if planned[results.ParamsKey(t.Params)] {
			return nil
		}
	}
	if len(base.Trials) == 0 {
		return invalidInput(fmt.Errorf("--baseline: got %q, but %s holds no trials", ref, store.URL(key)))
	}
	var differ string
	bn, sn := append([]string(nil), base.Params...), sweeps.ParamNames(spec)
	sort.Strings(bn)
	sort.Strings(sn)
	if strings.Join(bn, ",") != strings.Join(sn, ",") {
		differ = fmt.Sprintf("the baseline's parameters are [%s], %s's are [%s]", strings.Join(base.Params, ", "),
			opts.File, strings.Join(sweeps.ParamNames(spec), ", "))
	} else {
		differ = fmt.Sprintf("both vary [%s], over different values: the baseline has %s, %s plans %s", strings.Join(sn, ", "),
			results.ParamsKey(base.Trials[0].Params), opts.File, results.ParamsKey(trials[0].Params))
	}
	return invalidInput(fmt.Errorf("--baseline: got %q, but no configuration of %s has the parameter values of one of the baseline's, so no regression could compare anything: %s",
		ref, opts.File, differ))
}

// baselineNotFound says what --baseline could have been: the stored baselines, or how a sweep ID looks.
func baselineNotFound(ctx context.Context, store artifacts.Store, ref, key string) error {
	if strings.HasPrefix(ref, "sweep/") {
		return fmt.Errorf("--baseline: got %q, but %s does not exist: the sweep has not ended, or does not exist (rlsweep list --state completed shows ended sweeps)",
			ref, store.URL(key))
	}
	ss := sweepstore.New(store)
	stored := "none is stored in " + ss.BaselinesURL()
	if names, err := ss.Baselines(ctx); err == nil && len(names) > 0 {
		stored = "stored: " + strings.Join(names, ", ")
	}
	hint := ""
	if id, trial, err := workflows.ParseSweepRef(ref); err == nil && trial == "" && strings.Contains(ref, "/") {
		hint = fmt.Sprintf("; did you mean the sweep %s?", id)
	}
	return fmt.Errorf("--baseline: got %q, want the name of a baseline stored with rlsweep baseline set (%s) or a sweep ID such as sweep/<name>/<id>%s",
		ref, stored, hint)
}

func newScheduleActionCmd(f *Factory, use, short string, runF func(*ScheduleOptions) error) *cobra.Command {
	opts := &ScheduleOptions{Action: strings.Fields(use)[0]}
	var start, end string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(len(strings.Fields(use)) - 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Name = args[0]
			}
			if err := opts.parse(start, end); err != nil {
				return invalidInput(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return runSchedule(cmd, f, opts)
		},
	}
	switch opts.Action {
	case "trigger", "backfill":
		cmd.Flags().StringVar(&opts.Overlap, "overlap", "", "overlap policy for these runs (default: the schedule's): "+overlapNames())
	case "pause", "unpause":
		cmd.Flags().StringVar(&opts.Note, "note", "", "why, shown with the schedule")
	}
	if opts.Action == "backfill" {
		cmd.Flags().StringVar(&start, "start", "", "start of the range, RFC 3339 (required)")
		cmd.Flags().StringVar(&end, "end", "", "end of the range, RFC 3339 (default: now)")
	}
	return cmd
}

func (o *ScheduleOptions) parse(start, end string) error {
	var errs []error
	if o.Overlap != "" {
		if _, err := parseOverlap("--overlap", o.Overlap); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Action == "backfill" {
		var err error
		if o.Start, err = time.Parse(time.RFC3339, start); err != nil {
			errs = append(errs, fmt.Errorf("--start: got %q, want an RFC 3339 time such as 2026-01-02T03:00:00Z", start))
		}
		if end == "" {
			o.End = time.Now()
		} else if o.End, err = time.Parse(time.RFC3339, end); err != nil {
			errs = append(errs, fmt.Errorf("--end: got %q, want an RFC 3339 time such as 2026-01-02T03:00:00Z", end))
		}
		if len(errs) == 0 && !o.End.After(o.Start) {
			errs = append(errs, fmt.Errorf("--end: got %s, want after --start %s", o.End.Format(time.RFC3339), o.Start.Format(time.RFC3339)))
		}
	}
	return errors.Join(errs...)
}

func runSchedule(cmd *cobra.Command, f *Factory, opts *ScheduleOptions) error {
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	ctx, sc := cmd.Context(), c.ScheduleClient()
	if opts.Action == "list" {
		return listSchedules(cmd, f.Out, sc)
	}
	h := sc.GetHandle(ctx, opts.Name)
	overlap := overlapPolicies[opts.Overlap] // "" is unspecified: the schedule's own policy
	switch opts.Action {
	case "describe":
		d, err := h.Describe(ctx)
		if err != nil {
			return fmt.Errorf("describe schedule %s: %w", opts.Name, err)
		}
		printSchedule(f.Out, opts.Name, d, regressionVerdicts(ctx, c, d))
		return nil
	case "pause":
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: opts.Note})
	case "unpause":
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: opts.Note})
	case "trigger":
		return triggerSchedule(ctx, f, h, opts.Name, overlap)
	case "backfill":
		err = h.Backfill(ctx, client.ScheduleBackfillOptions{Backfill: []client.ScheduleBackfill{
			{Start: opts.Start, End: opts.End, Overlap: overlap}}})
	case "delete":
		err = h.Delete(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s schedule %s: %w", opts.Action, opts.Name, err)
	}
	fmt.Fprintf(f.Out, "schedule %s: %s done\n", opts.Name, opts.Action)
	return nil
}

func listSchedules(cmd *cobra.Command, out io.Writer, sc client.ScheduleClient) error {
	it, err := sc.List(cmd.Context(), client.ScheduleListOptions{})
	if err != nil {
		return fmt.Errorf("list schedules: %w", err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWORKFLOW\tPAUSED\tNEXT RUN")
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return fmt.Errorf("list schedules: %w", err)
		}
		next := "-"
		if len(e.NextActionTimes) > 0 {
			next = e.NextActionTimes[0].Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\n", e.ID, e.WorkflowType.Name, e.Paused, next)
	}
	return tw.Flush()
}

// triggerSchedule starts the schedule's regression now and prints its workflow ID, which the server
// chooses (the regression ID and the time): it waits, at most 30 s, for the schedule to record the start.
func triggerSchedule(ctx context.Context, f *Factory, h client.ScheduleHandle, name string, overlap enumspb.ScheduleOverlapPolicy) error {
	before, err := h.Describe(ctx)
	if err != nil {
		return fmt.Errorf("trigger schedule %s: %w", name, err)
	}
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: overlap}); err != nil {
		return fmt.Errorf("trigger schedule %s: %w", name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := h.Describe(ctx)
		if err != nil {
			return fmt.Errorf("trigger schedule %s: %w", name, err)
		}
		if n := len(d.Info.RecentActions); d.Info.NumActions > before.Info.NumActions && n > 0 {
			if run := d.Info.RecentActions[n-1].StartWorkflowResult; run != nil {
				fmt.Fprintf(f.Out, "schedule %s: started regression %s\n", name, run.WorkflowID)
				fmt.Fprintf(f.Out, "web ui:   %s\n", f.WorkflowURL(run.WorkflowID))
				return nil
			}
		}
		if d.Info.NumActionsSkippedOverlap > before.Info.NumActionsSkippedOverlap {
			running := make([]string, len(d.Info.RunningWorkflows))
			for i, w := range d.Info.RunningWorkflows {
				running[i] = w.WorkflowID
			}
			return fmt.Errorf("trigger schedule %s: skipped by the overlap policy, a regression still runs (%s); --overlap allow_all runs one beside it",
				name, strings.Join(running, ", "))
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(f.Out, "schedule %s: triggered; the run has not started within 30s (rlsweep schedule describe %s shows it when it does)\n", name, name)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runVerdict is what a regression run of a schedule came to.
type runVerdict struct {
	state   string // running, completed, failed, ...
	verdict string // pass, regressed, improved, failed; "" while it runs
}

// regressionVerdicts looks up the state and verdict (the RlsweepVerdict search attribute) of each of the
// schedule's recent runs; a run it cannot describe is left out.
func regressionVerdicts(ctx context.Context, c client.Client, d *client.ScheduleDescription) map[string]runVerdict {
	out := map[string]runVerdict{}
	for _, a := range d.Info.RecentActions {
		run := a.StartWorkflowResult
		if run == nil {
			continue
		}
		desc, err := c.DescribeWorkflowExecution(ctx, run.WorkflowID, "")
		if err != nil {
			continue
		}
		info := desc.GetWorkflowExecutionInfo()
		v := runVerdict{state: workflowState(info.GetStatus())}
		if p := info.GetSearchAttributes().GetIndexedFields()[workflows.AttrVerdict.GetName()]; p != nil {
			_ = converter.GetDefaultDataConverter().FromPayload(p, &v.verdict)
		}
		out[run.WorkflowID] = v
	}
	return out
}

// scheduleCron is the cron expression the schedule was created with, from its memo; schedules made
// before the memo held it show what the server kept.
func scheduleCron(d *client.ScheduleDescription) string {
	if p := d.Memo.GetFields()[memoCron]; p != nil {
		var cron string
		if converter.GetDefaultDataConverter().FromPayload(p, &cron) == nil && cron != "" {
			return cron
		}
	}
	s := d.Schedule.Spec
	if s == nil {
		return "-"
	}
	if len(s.CronExpressions) > 0 {
		return strings.Join(s.CronExpressions, "; ")
	}
	var cals []string
	for _, c := range s.Calendars {
		cals = append(cals, fmt.Sprintf("%+v", c))
	}
	if len(cals) == 0 {
		return "-"
	}
	return "calendar " + strings.Join(cals, "; ")
}

func printSchedule(out io.Writer, name string, d *client.ScheduleDescription, verdicts map[string]runVerdict) {
	fmt.Fprintf(out, "schedule:  %s\n", name)
	fmt.Fprintf(out, "cron:      %s\n", scheduleCron(d))
	if a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction); ok && len(a.Args) > 0 {
		var in workflows.RegressionInput
		if p, ok := a.Args[0].(*commonpb.Payload); ok && converter.GetDefaultDataConverter().FromPayload(p, &in) == nil {
			fmt.Fprintf(out, "baseline:  %s\nspec:      %s\n", in.Baseline, in.SpecKey)
		}
	}
	if p := d.Schedule.Policy; p != nil {
		fmt.Fprintf(out, "overlap:   %s\ncatch-up:  %s\n", p.Overlap, p.CatchupWindow)
	}
	if st := d.Schedule.State; st != nil {
		fmt.Fprintf(out, "paused:    %t %s\n", st.Paused, st.Note)
	}
	fmt.Fprintf(out, "runs:      %d (%d skipped for overlap, %d missed the catch-up window)\n", d.Info.NumActions,
		d.Info.NumActionsSkippedOverlap, d.Info.NumActionsMissedCatchupWindow)
	for _, a := range d.Info.RecentActions {
		run := a.StartWorkflowResult
		if run == nil {
			continue
		}
		line := fmt.Sprintf("recent:    %s %s", a.ActualTime.Format(time.RFC3339), run.WorkflowID)
		if v, ok := verdicts[run.WorkflowID]; ok {
			line += " " + v.state
			if v.verdict != "" {
				line += ", verdict " + v.verdict
			}
		}
		fmt.Fprintln(out, line)
	}
	for _, t := range d.Info.NextActionTimes {
		fmt.Fprintf(out, "next:      %s\n", t.Format(time.RFC3339))
	}
}
