package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
)

// maxSummaryError bounds the failure quoted in a summary line: the whole error is in the result's
// LastFailure and in `rlsweep status`.
const maxSummaryError = 240

// took is how long the sweep has run, from its first run's start, to the second.
func (s *sweepRun) took(ctx workflow.Context) time.Duration {
	if s.state.Started.IsZero() {
		return 0
	}
	return max(0, workflow.Now(ctx).Sub(s.state.Started).Round(time.Second))
}

// upsertEndMemo records how the sweep ended in its memo, for the Web UI and `rlsweep list`: the outcome
// (its phase), the summary line, the best configuration when one scored, how long it ran, and the
// trials it ran (MemoTrials: a bayes sweep's plan holds only its start-up trials). A memo that cannot
// be updated does not fail the sweep.
func (s *sweepRun) upsertEndMemo(ctx workflow.Context, summary string, best *activities.BestConfig, took time.Duration) {
	ran := s.state.finished()
	memo := map[string]any{MemoOutcome: s.state.Phase, MemoSummary: summary, MemoTook: took.String()}
	if ran > 0 {
		memo[MemoTrials] = ran
	}
	if best != nil {
		memo[MemoBest] = best
	}
	if err := workflow.UpsertMemo(ctx, memo); err != nil {
		workflow.GetLogger(ctx).Warn("memo not updated", "error", err)
	}
}

// endSummary is a finished sweep's summary line: "completed: 4 trials (3 completed, 1 pruned); best
// config 2 (lr=0.001 clip=0.2): reward 215.7, mean over 3 seeds" (with ", confirmed: 210.2 on 2 fresh
// seeds" for a configuration re-run on fresh seeds), or with no trial scored the last failure:
// "failed: all 2 trials failed; last failure: trial 1-s1: trainer exited with status 2 ...".
func endSummary(res *SweepResult, paramNames []string) string {
	var b strings.Builder
	done := 0
	for _, n := range res.Counts {
		done += n
	}
	switch {
	case res.Status == PhaseFailed && res.Total > 0 && allFailed(res.Counts, res.Total):
		if res.Total == 1 {
			fmt.Fprintf(&b, "%s: its 1 trial failed", res.Status)
		} else {
			fmt.Fprintf(&b, "%s: all %d trials failed", res.Status, res.Total)
		}
		if res.Counts[results.OutcomeOOM] > 0 {
			fmt.Fprintf(&b, " (%s)", results.CountsLine(res.Counts))
		}
	case done < res.Total:
		fmt.Fprintf(&b, "%s: %d of %d trials finished (%s)", res.Status, done, res.Total, results.CountsLine(res.Counts))
	default:
		fmt.Fprintf(&b, "%s: %d trials (%s)", res.Status, res.Total, results.CountsLine(res.Counts))
	}
	switch best, lf := res.Best, res.LastFailure; {
	case best != nil:
		metric := best.Metric
		if metric == "" {
			metric = "objective"
		}
		fmt.Fprintf(&b, "; best config %d (%s): %s %.4g, mean over %d %s", best.Config,
			formatParams(paramNames, best.Params)+precisionNote(best.Precision), metric, best.Objective, best.Seeds, plural(best.Seeds, "seed"))
		if best.Confirmed && best.Fresh != nil {
			fmt.Fprintf(&b, ", confirmed: %.4g on %d fresh %s", *best.Fresh, best.FreshSeeds, plural(best.FreshSeeds, "seed"))
		}
		if best.Front > 0 {
			fmt.Fprintf(&b, "; Pareto front of its objectives: %d %s (rlsweep results --pareto)", best.Front, plural(best.Front, "configuration"))
		}
	case lf != nil:
		fmt.Fprintf(&b, "; last failure: %s", clip(lf.ErrorLine(), maxSummaryError))
	}
	if res.Confirm != "" {
		fmt.Fprintf(&b, "; %s", res.Confirm)
	}
	return b.String()
}

// precisionNote is ", under tf32" for a configuration with a precision setting, "" otherwise.
func precisionNote(p string) string {
	if p == "" {
		return ""
	}
	return ", under " + p
}

// failureSummary is the summary line of a sweep that failed before its results were written: its
// phase and the first line of the error.
func failureSummary(phase string, err error) string {
	if phase == PhaseCancelled {
		return "cancelled before any trial started"
	}
	return phase + ": " + clip(firstLine(err), maxSummaryError)
}

// firstLine is the first line of err's message (an activity's own, without the SDK's wrapping).
func firstLine(err error) string {
	msg := err.Error()
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Message() != "" {
		msg = app.Message()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// allFailed says whether every one of total trials ended failed or oom: none trained to a result.
func allFailed(counts map[string]int, total int) bool {
	return counts[results.OutcomeFailed]+counts[results.OutcomeOOM] == total
}
