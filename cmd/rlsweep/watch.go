package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

const defaultWatchInterval = time.Second

// WatchOptions are watch's inputs.
type WatchOptions struct {
	Sweep    string
	Interval time.Duration
	// inDev: the watch runs inside rlsweep dev, whose server stops with it; an interrupted watch
	// then says nothing of following the sweep elsewhere.
	inDev bool
}

func newWatchCmd(f *Factory, runF func(*WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch SWEEP",
		Short: "Follow a sweep live: progress, outcome counts, running trials and the leader",
		Long: "Follow a sweep until it ends. Exit code 0 when it completes, 4 when it fails or is cancelled,\n" +
			"130 when interrupted (Ctrl-C): the sweep goes on running on the server.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sweep = args[0]
			if opts.Interval <= 0 {
				return invalidInput(fmt.Errorf("--interval: got %s, want a positive duration", opts.Interval))
			}
			if runF != nil {
				return runF(opts)
			}
			return runWatch(cmd, f, opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Interval, "interval", defaultWatchInterval, "refresh interval")
	return cmd
}

func runWatch(cmd *cobra.Command, f *Factory, opts *WatchOptions) error {
	sweepID, _, err := parseSweepRef(f, opts.Sweep)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	tty := isTerminal(f.Out)
	last := ""
	lastFinished, best := -1, (*bestConfig)(nil)
	rc := &reconnect{w: f.ErrOut}
	for {
		desc, err := c.DescribeWorkflowExecution(ctx, sweepID, "")
		if err != nil && ctx.Err() != nil {
			return watchInterrupted(f, opts, sweepID)
		}
		if err != nil && unreachable(err) {
			if !rc.wait(ctx, err) {
				return watchInterrupted(f, opts, sweepID)
			}
			continue
		}
		if err != nil {
			return sweepError(ctx, f, c, sweepID, err)
		}
		rc.back()
		if st := desc.WorkflowExecutionInfo.Status; st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			err := finishWatch(ctx, f, c, sweepID, rc)
			if ctx.Err() != nil {
				return watchInterrupted(f, opts, sweepID)
			}
			return err
		}
		status, err := queryStatus(ctx, c, sweepID)
		if err == nil {
			if n := finished(status.Counts); n != lastFinished {
				// The results recorded so far change only when a trial finishes: read them then.
				lastFinished, best = n, liveBest(cmd, f, sweepID, best)
			}
			live := liveTrials(ctx, c, status)
			switch line := progressLine(status, live); {
			case tty:
				fmt.Fprint(f.Out, "\033[H\033[2J"+renderStatus(status, live, best))
			case line != last:
				last = line
				fmt.Fprintln(f.Out, last)
			}
		}
		select {
		case <-ctx.Done():
			return watchInterrupted(f, opts, sweepID)
		case <-time.After(opts.Interval):
		}
	}
}

// reconnect paces a watch's retries while the Temporal server is unreachable: it says so on stderr at
// each try, waiting 1 s, then twice as long each time up to maxReconnectDelay, and says when the server
// answers again.
type reconnect struct {
	w     io.Writer
	delay time.Duration // 0 while the server answers
	since time.Time
}

const maxReconnectDelay = 15 * time.Second

// wait says the server is unreachable and waits before the next try; false when ctx ended meanwhile.
func (r *reconnect) wait(ctx context.Context, err error) bool {
	if r.delay == 0 {
		r.delay, r.since = time.Second, time.Now()
	} else {
		r.delay = min(2*r.delay, maxReconnectDelay)
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	fmt.Fprintf(r.w, "server unreachable (%s), retrying in %s…\n", msg, r.delay)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(r.delay):
		return true
	}
}

// back notes that the server answered: after an outage it says so.
func (r *reconnect) back() {
	if r.delay > 0 {
		fmt.Fprintf(r.w, "server reachable again after %s; following the sweep\n", time.Since(r.since).Round(time.Second))
		r.delay = 0
	}
}

// unreachable tells the errors of a Temporal server that is down, restarting or overloaded, which a
// retry may overcome, from answers (the sweep does not exist, access denied).
func unreachable(err error) bool {
	var un *serviceerror.Unavailable
	var dl *serviceerror.DeadlineExceeded
	var ex *serviceerror.ResourceExhausted
	if errors.As(err, &un) || errors.As(err, &dl) || errors.As(err, &ex) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

// watchInterrupted ends a watch stopped by Ctrl-C or SIGTERM: only the watching stops, so it says the
// sweep goes on and how to follow or cancel it, and exits 130. Inside rlsweep dev it returns the
// context's error for dev to handle.
func watchInterrupted(f *Factory, opts *WatchOptions, sweepID string) error {
	if opts.inDev {
		return context.Canceled
	}
	fmt.Fprintf(f.ErrOut, "\nstopped watching; sweep %s goes on running on the server\n", sweepID)
	fmt.Fprintf(f.ErrOut, "follow it: %s\n", f.commandLine("watch", sweepID))
	fmt.Fprintf(f.ErrOut, "cancel it: %s\n", f.commandLine("cancel", sweepID))
	return withExitCode(exitInterrupted, nil)
}

func queryStatus(ctx context.Context, c client.Client, sweepID string) (*workflows.SweepStatus, error) {
	v, err := c.QueryWorkflow(ctx, sweepID, "", workflows.QueryStatus)
	if err != nil {
		return nil, err
	}
	var st workflows.SweepStatus
	return &st, v.Get(&st)
}

// finishWatch prints how the sweep ended and where its results are.
func finishWatch(ctx context.Context, f *Factory, c client.Client, sweepID string, rc *reconnect) error {
	var res workflows.SweepResult
	err := c.GetWorkflow(ctx, sweepID, "").Get(ctx, &res)
	for err != nil && ctx.Err() == nil && unreachable(err) {
		if !rc.wait(ctx, err) {
			return ctx.Err()
		}
		err = c.GetWorkflow(ctx, sweepID, "").Get(ctx, &res)
	}
	rc.back()
	var canceled *temporal.CanceledError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &canceled):
		if canceled.HasDetails() {
			_ = canceled.Details(&res)
		}
		res.Status = workflows.PhaseCancelled
	case errors.As(err, &app) && app.Type() == workflows.ErrAllTrialsFailed && app.HasDetails() && app.Details(&res) == nil:
		// Every trial failed: the sweep's result is the failure's details.
		res.Status = workflows.PhaseFailed
	case err != nil:
		fmt.Fprintf(f.Out, "sweep %s failed: %v\n", sweepID, err)
		return withExitCode(exitFailed, nil)
	}
	fmt.Fprintf(f.Out, "sweep %s %s: %d trials (%s)\n", sweepID, res.Status, res.Total, results.CountsLine(res.Counts))
	if res.LastFailure != nil {
		fmt.Fprint(f.Out, failureLines("last failure", res.LastFailure))
	}
	if store, serr := f.Store(); serr == nil && res.ResultsKey != "" {
		fmt.Fprintf(f.Out, "results:  %s\n", store.URL(res.ResultsKey))
		fmt.Fprintf(f.Out, "csv:      %s\n", store.URL(res.CSVKey))
		ss := sweepstore.New(store)
		fmt.Fprintf(f.Out, "report:   %s\n", ss.ReportURL(sweepID))
		fmt.Fprintf(f.Out, "trials:   %s\n", ss.TrialsURL(sweepID))
	}
	fmt.Fprintf(f.Out, "web ui:   %s\n", f.WorkflowURL(sweepID))
	if res.Status != workflows.PhaseCompleted {
		return withExitCode(exitFailed, nil)
	}
	return nil
}

// liveTrial is what the live view shows of a running trial: from its segment's last heartbeat, and
// whether a worker has started the segment (Training) or it waits for a worker's slot.
type liveTrial struct {
	Training  bool
	Heartbeat activities.Heartbeat
	Beat      bool // a heartbeat was recorded
}

// maxLiveTrials bounds the running trials the live view asks Temporal about, one call each.
const maxLiveTrials = 32

// liveTrials asks Temporal for the state and last heartbeat of each running trial's segment (at most
// maxLiveTrials).
func liveTrials(ctx context.Context, c client.Client, st *workflows.SweepStatus) map[string]liveTrial {
	live := map[string]liveTrial{}
	for i, id := range st.Running {
		if i == maxLiveTrials {
			break
		}
		desc, err := c.DescribeWorkflowExecution(ctx, workflows.TrialWorkflowID(st.SweepID, id), "")
		if err != nil {
			continue
		}
		for _, pa := range desc.PendingActivities {
			lt := liveTrial{Training: pa.State == enumspb.PENDING_ACTIVITY_STATE_STARTED}
			lt.Heartbeat, lt.Beat = heartbeatOf(pa)
			live[id] = lt
		}
	}
	return live
}

// bestConfig is the live view's best configuration so far: the leaderboard's first row over the
// trials recorded so far (report.Leaderboard), and whether it replaced another since the last frame.
type bestConfig struct {
	Row      report.Row
	Previous int // the configuration that led before, -1 when none or the same
	// Front and Objectives: a sweep with several objectives, the configurations on its Pareto front
	// so far and how many objectives it has; 0 for a sweep with one.
	Front, Objectives int
}

// liveBest reads the results recorded so far and returns the best configuration (nil when none is
// scored or the store cannot be read: the view then shows the best trial the workflow knows).
func liveBest(cmd *cobra.Command, f *Factory, sweepID string, prev *bestConfig) *bestConfig {
	store, err := f.Store()
	if err != nil {
		return prev
	}
	res, err := loadResults(cmd, f, store, sweepID)
	if err != nil {
		return prev
	}
	rows := report.Leaderboard(res)
	if len(rows) == 0 || rows[0].Scored == 0 {
		return nil
	}
	b := &bestConfig{Row: rows[0], Previous: -1, Objectives: len(res.Objectives)}
	for _, p := range res.Pareto {
		if p.OnFront() {
			b.Front++
		}
	}
	if prev != nil && prev.Row.Config != b.Row.Config {
		b.Previous = prev.Row.Config
	}
	return b
}

func finished(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// progressLine is the sweep's progress in one line, which watch prints each time it changes when its
// output is not a terminal: the running trials split as the live view splits them (live; nil when
// unknown: they are counted as running).
func progressLine(st *workflows.SweepStatus, live map[string]liveTrial) string {
	best := ""
	if l := st.Leader; l != nil && l.Objective != nil {
		best = fmt.Sprintf("; best trial %s %s=%s", l.TrialID, st.Metric.Name, num(*l.Objective))
	}
	running := fmt.Sprintf("%d running", len(st.Running))
	if waiting := waitingForSlot(st, live); waiting > 0 {
		running = fmt.Sprintf("%d training, %d waiting for a worker's slot", len(st.Running)-waiting, waiting)
	}
	return fmt.Sprintf("%s %s %d/%d finished, %s%s (%s)%s%s", st.SweepID, st.Phase, finished(st.Counts), st.Total,
		running, standbyNote(st), results.CountsLine(st.Counts), pausedNote(st), best)
}

// waitingForSlot counts the running trials whose segment waits for a worker's slot (live says the
// worker has not started it); the others train or are starting.
func waitingForSlot(st *workflows.SweepStatus, live map[string]liveTrial) int {
	waiting := 0
	for _, id := range st.Running {
		if lt, ok := live[id]; ok && !lt.Training {
			waiting++
		}
	}
	return waiting
}

// num formats a metric's value with four significant digits.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// formatParams writes parameters as name=value pairs in name order, values with four significant digits.
func formatParams(params map[string]any) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + paramValue(params[n])
	}
	return strings.Join(parts, " ")
}

// paramValue writes a parameter's value for a table: a float with four significant digits (a sampled
// learning rate of 0.0006510434506021258 is 0.000651), anything else as it is.
func paramValue(v any) string {
	if x, ok := v.(float64); ok {
		return num(x)
	}
	return fmt.Sprint(v)
}

// sparkline draws values as a line of block characters scaled between their minimum and maximum.
func sparkline(values []float64) string {
	const ticks = "▁▂▃▄▅▆▇█"
	runes := []rune(ticks)
	if len(values) == 0 {
		return ""
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int((v - lo) / (hi - lo) * float64(len(runes)-1))
		}
		b.WriteRune(runes[min(max(i, 0), len(runes)-1)])
	}
	return b.String()
}

// standbyNote counts the trials started and waiting for a place (docs/architecture.md, "Slot hand-off").
func standbyNote(st *workflows.SweepStatus) string {
	if len(st.Standby) == 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d standby)", len(st.Standby))
}

func pausedNote(st *workflows.SweepStatus) string {
	if st.Paused {
		return " [paused]"
	}
	return ""
}

// renderStatus draws the watch screen: a progress bar, counts, the best configuration (best, when the
// results recorded so far were read; else the best trial the workflow knows) and the running trials
// with their step, windowed objective and its trend (live).
func renderStatus(st *workflows.SweepStatus, live map[string]liveTrial, best *bestConfig) string {
	var b strings.Builder
	done := finished(st.Counts)
	fmt.Fprintf(&b, "sweep %s  %s%s  concurrency %d\n", st.SweepID, st.Phase, pausedNote(st), st.Concurrency)
	fmt.Fprintf(&b, "%s %d/%d\n", bar(done, st.Total, 40), done, st.Total)
	training := ""
	if waiting := waitingForSlot(st, live); waiting > 0 {
		training = fmt.Sprintf(" (%d training, %d waiting for a worker's slot)", len(st.Running)-waiting, waiting)
	}
	fmt.Fprintf(&b, "running %d%s%s · %s\n", len(st.Running), training, standbyNote(st), results.CountsLine(st.Counts))
	if p := st.Pruning; p != nil {
		b.WriteString(pruningLine(p))
	}
	if st.Confirm != "" {
		fmt.Fprintf(&b, "%s\n", st.Confirm)
	}
	if p := st.PBT; p != nil {
		fmt.Fprintf(&b, "pbt     %d members · %d exploits · %d replaced · ready step %d reached\n", p.Members, p.Exploits, p.Replaced, p.ReadyStep)
	}
	switch l := st.Leader; {
	case best != nil:
		r := best.Row
		note := ""
		if r.Confirmed {
			note = ", confirmed on " + report.FreshSeeds(r.FreshSeeds)
		}
		if best.Previous >= 0 {
			note += fmt.Sprintf("; new, config %d led before", best.Previous)
		}
		fmt.Fprintf(&b, "best    config %d  %s  IQM %s=%s over %d of %d seeds%s\n", r.Config, formatParams(r.Params),
			st.Metric.Name, num(r.IQM), r.Scored, r.Trials, note)
		if best.Objectives > 1 {
			noun := "configurations"
			if best.Front == 1 {
				noun = "configuration"
			}
			fmt.Fprintf(&b, "front   %d %s on the Pareto front of %d objectives (rlsweep results --pareto)\n",
				best.Front, noun, best.Objectives)
		}
	case l != nil && l.Objective != nil:
		fmt.Fprintf(&b, "leader  %s  %s=%s  %s\n", l.TrialID, st.Metric.Name, num(*l.Objective), formatParams(l.Params))
	}
	if f := st.LastFailure; f != nil {
		b.WriteString(failureLines("last failure", f))
	}
	if len(st.Running) > 0 {
		metric := st.Metric.Name
		if metric == "" {
			metric = "objective"
		}
		fmt.Fprintf(&b, "\n%-16s %21s %5s %12s  %s\n", "TRIAL", "STEP / TOTAL", "", strings.ToUpper(metric), "TREND")
		ids := append([]string(nil), st.Running...)
		sort.Strings(ids)
		for _, id := range ids {
			lt, ok := live[id]
			switch {
			case !ok || !lt.Beat && lt.Training:
				fmt.Fprintf(&b, "%-16s %21s\n", id, "starting")
				continue
			case !lt.Training:
				fmt.Fprintf(&b, "%-16s %21s\n", id, "waiting for a worker's slot")
				continue
			}
			hb := lt.Heartbeat
			step, pct := fmt.Sprint(hb.Step), ""
			if hb.TotalSteps > 0 {
				step += " / " + fmt.Sprint(hb.TotalSteps)
				pct = fmt.Sprintf("%d%%", min(100, hb.Step*100/hb.TotalSteps))
			}
			obj := "-"
			if hb.Windowed != nil {
				obj = num(*hb.Windowed)
			}
			b.WriteString(strings.TrimRight(fmt.Sprintf("%-16s %21s %5s %12s  %s", id, step, pct, obj, sparkline(hb.Trend)), " ") + "\n")
		}
		if len(st.Running) > maxLiveTrials {
			fmt.Fprintf(&b, "(the first %d of %d running trials are shown)\n", maxLiveTrials, len(st.Running))
		}
	}
	return b.String()
}

// maxRungsShown bounds the decision steps the pruning line shows: median decides at every segment end.
const maxRungsShown = 6

// pruningLine says, per decision step that configurations reached, how many did and how many were
// stopped there (the last maxRungsShown of them).
func pruningLine(p *scheduler.PruningStatus) string {
	var parts []string
	for _, r := range p.Rungs {
		if r.Reached > 0 {
			parts = append(parts, fmt.Sprintf("%d: %d reached, %d stopped", r.Step, r.Reached, r.Stopped))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no decision step reached yet"}
	}
	if n := len(parts); n > maxRungsShown {
		parts = append([]string{fmt.Sprintf("(%d earlier steps)", n-maxRungsShown)}, parts[n-maxRungsShown:]...)
	}
	return fmt.Sprintf("pruning %s · %s\n", p.Rule, strings.Join(parts, " · "))
}

// failureLines shows a failed trial's whole error: the first line after the label and the trial ID,
// the rest (a trainer's log tail, which holds the cause) indented below it.
func failureLines(label string, f *results.TrialSummary) string {
	lines := strings.Split(strings.TrimRight(strings.TrimPrefix(f.Error, "trial "+f.TrialID+": "), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s: %s\n", label, f.TrialID, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	return b.String()
}

func bar(done, total, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", width) + "]"
	}
	// Clamped: a frame must never panic the watch loop, whatever the counts say.
	n := min(max(done, 0), total) * width / total
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// heartbeatOf decodes the last heartbeat a running TrainSegment recorded.
func heartbeatOf(pa *workflowpb.PendingActivityInfo) (activities.Heartbeat, bool) {
	var hb activities.Heartbeat
	ok := pa.HeartbeatDetails != nil && converter.GetDefaultDataConverter().FromPayloads(pa.HeartbeatDetails, &hb) == nil
	return hb, ok
}
