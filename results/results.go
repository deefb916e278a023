// Package results holds a sweep's output vocabulary: trial outcomes, a trial's result (TrialSummary), a
// sweep's results (SweepResults, stored as results.json), the merge of stored result parts with the
// plan, the steps a stopped trial reached, and results.csv. It is a pure package: the caller reads and
// writes the store.
package results

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Trial outcomes, as the Trial workflow records them (docs/diagnostics.md).
const (
	OutcomeCompleted = "completed"
	OutcomeDiverged  = "diverged"
	OutcomePruned    = "pruned"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// Outcomes lists every trial outcome in display order.
var Outcomes = []string{OutcomeCompleted, OutcomeDiverged, OutcomePruned, OutcomeFailed, OutcomeCancelled}

// TrialSummary is one trial's result as results.json, results.csv and the Sweep workflow record it.
type TrialSummary struct {
	TrialID     string         `json:"trial_id"`
	Config      int            `json:"config"`
	Seed        int64          `json:"seed"`
	Params      map[string]any `json:"params"`
	Outcome     string         `json:"outcome"`
	Objective   *float64       `json:"objective"`
	Steps       int64          `json:"steps"`
	StopRule    string         `json:"stop_rule,omitempty"`
	Error       string         `json:"error,omitempty"`
	WallSeconds float64        `json:"wall_seconds"`
	Segments    int            `json:"segments"`
	Last        Values         `json:"last,omitempty"`
	// Warnings are problems the trial ran despite, each once: the trainer ignored RLSWEEP_STOP_AT_STEP,
	// an objective metric no record carries. Shown by `rlsweep status` and the report.
	Warnings []string `json:"warnings,omitempty"`
	// Malformed counts the metric lines (or records) its segments' readers dropped as malformed:
	// unparsable, too long, failed CRC, step going backwards (docs/diagnostics.md).
	Malformed int `json:"malformed,omitempty"`
	// TrainerFailures: attempts of its segments that the trainer failed (crashed, stalled, unreadable
	// metrics), which retries.max_attempts bounds; InfraRetries: attempts ended by faults outside the
	// trainer (worker lost or stopped, Temporal server or store unreachable), which
	// retries.max_infra_retries bounds; RetrainedSteps: steps trained again after those.
	TrainerFailures int   `json:"trainer_failures,omitempty"`
	InfraRetries    int   `json:"infra_retries,omitempty"`
	RetrainedSteps  int64 `json:"retrained_steps,omitempty"`
	// ServerOutages: times the Temporal server was away while a trainer of this trial kept training.
	ServerOutages int `json:"server_outages,omitempty"`
	// Pruning is the sweep's pruner's decision that stopped the trial (outcome pruned, or diverged
	// when a sibling seed diverged); nil when none did.
	Pruning *Pruning `json:"pruning,omitempty"`
	// Exploits are the pbt exploits this member made, in order; Parent the member a replacement of
	// a diverged member started from (method pbt).
	Exploits []Exploit `json:"exploits,omitempty"`
	Parent   string    `json:"parent,omitempty"`
	// StartStep: the step a member that started from another's checkpoint started at.
	StartStep int64 `json:"start_step,omitempty"`
}

// Exploit is one pbt exploit: at Step, the member Member went on from the checkpoint of the member
// From (written at FromStep, copied to Checkpoint) with its parameters explored. Old and New are the
// member's parameters before and after. Value and SourceValue are the two members' values at Step.
type Exploit struct {
	Member      string         `json:"member"`
	From        string         `json:"from"`
	Step        int64          `json:"step"`
	FromStep    int64          `json:"from_step"`
	Source      string         `json:"source"`               // the source's checkpoint key
	Checkpoint  string         `json:"checkpoint,omitempty"` // the member's copy of it
	Old         map[string]any `json:"old"`
	New         map[string]any `json:"new"`
	Value       *float64       `json:"value,omitempty"`
	SourceValue *float64       `json:"source_value,omitempty"`
	Reason      string         `json:"reason,omitempty"`
}

// FormatPruning says in one line where early_terminate stopped a trial and against what.
func FormatPruning(p *Pruning) string {
	if p.SiblingDiverged {
		return fmt.Sprintf("%s: another seed of its configuration diverged; stopped at step %d", p.Rule, p.Step)
	}
	out := fmt.Sprintf("%s, rung %d (step %d)", p.Rule, p.Rung, p.Step)
	if p.Value != nil {
		out += fmt.Sprintf(": value %.6g", *p.Value)
	}
	if p.Cutoff != nil {
		out += fmt.Sprintf(", cutoff %.6g", *p.Cutoff)
	}
	if p.Peers > 0 {
		out += fmt.Sprintf(", %d other configurations", p.Peers)
	}
	return out
}

// FormatExploit says in one line what a pbt exploit did: "step 60000 from 3-s1: lr 0.001→0.0012, gamma 0.99→0.992".
func FormatExploit(e Exploit) string {
	names := make([]string, 0, len(e.New))
	for k := range e.New {
		if e.Old == nil || fmt.Sprint(e.Old[k]) != fmt.Sprint(e.New[k]) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		if e.Old == nil {
			parts[i] = fmt.Sprintf("%s %v", k, e.New[k])
		} else {
			parts[i] = fmt.Sprintf("%s %v→%v", k, e.Old[k], e.New[k])
		}
	}
	return fmt.Sprintf("step %d from %s: %s", e.Step, e.From, strings.Join(parts, ", "))
}

// Pruning says where and why early_terminate stopped a trial.
type Pruning struct {
	Rule string `json:"rule"` // asha, median, or hyperband
	Rung int    `json:"rung"` // index of the decision step; -1 when stopped between decision steps
	Step int64  `json:"step"` // the decision step, in environment steps
	// Value is the configuration's windowed objective there (IQM over its seeds); Cutoff the value it
	// had to reach; Peers the configurations it was compared with.
	Value  *float64 `json:"value,omitempty"`
	Cutoff *float64 `json:"cutoff,omitempty"`
	Peers  int      `json:"peers,omitempty"`
	// SiblingDiverged: stopped because another seed of its configuration diverged.
	SiblingDiverged bool `json:"sibling_diverged,omitempty"`
}

// Scored says whether the trial counts in the statistics: completed with a finite objective.
func (t TrialSummary) Scored() bool {
	return t.Outcome == OutcomeCompleted && t.Objective != nil && Finite(*t.Objective)
}

// ErrorLine is the first line of the trial's error.
func (t TrialSummary) ErrorLine() string {
	if i := strings.IndexByte(t.Error, '\n'); i >= 0 {
		return t.Error[:i]
	}
	return t.Error
}

// MissingMetricWarning is the warning of a trial whose records do not carry the objective's metric:
// without it the trial has no objective and no statistic counts it.
func MissingMetricWarning(metric string, segment int, carried []string) string {
	wrote := "no metric at all"
	if len(carried) > 0 {
		wrote = strings.Join(carried, ", ")
	}
	return fmt.Sprintf("metric %q: no record of segment %d carries it, so the trial has no objective and only the at-once diagnostics rules (non_finite, std_nonpositive, grad_explosion) can stop it; its records carry %s (set metric.name to one of them, or map a tag to it with trainer.metrics)",
		metric, segment, wrote)
}

// SweepResults is results.json: every finished trial, in plan order.
type SweepResults struct {
	SweepID string         `json:"sweep_id"`
	Name    string         `json:"name"`
	Status  string         `json:"status"`
	Metric  sweeps.Metric  `json:"metric"`
	Params  []string       `json:"params"`
	Trials  []TrialSummary `json:"trials"`
}

// New returns the results of a sweep of spec with the given final status and trials.
func New(sweepID string, spec *sweeps.Spec, status string, trials []TrialSummary) *SweepResults {
	return &SweepResults{SweepID: sweepID, Name: spec.Name, Status: status, Metric: spec.Metric,
		Params: sweeps.ParamNames(spec), Trials: trials}
}

// Maximize says whether a larger objective is better.
func (r *SweepResults) Maximize() bool { return r.Metric.Goal != "minimize" }

// Merge merges a sweep's stored result parts into one list of trials in plan order. A trial recorded
// twice (a part written again after a continue-as-new) counts once, the record of the later part
// winning. A trial recorded without running to its summary (never started, terminated by hand, no
// report after a cancel) has only its ID and outcome: its configuration, seed and parameters come from
// plan (nil: none), so results.csv does not show it as configuration 0, seed 0, with no parameters.
func Merge(parts [][]TrialSummary, plan []sweeps.Trial) []TrialSummary {
	byID := map[string]TrialSummary{}
	for _, part := range parts {
		for _, t := range part {
			byID[t.TrialID] = t
		}
	}
	for _, p := range plan {
		if t, ok := byID[p.ID]; ok && t.Params == nil {
			t.Config, t.Seed, t.Params = p.Config, p.Seed, p.Params
			byID[p.ID] = t
		}
	}
	out := make([]TrialSummary, 0, len(byID))
	for _, t := range byID {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Config != out[j].Config {
			return out[i].Config < out[j].Config
		}
		if out[i].Seed != out[j].Seed {
			return out[i].Seed < out[j].Seed
		}
		return out[i].TrialID < out[j].TrialID
	})
	return out
}

// StepsReached is the steps a trial reached, given the last step of its stored metrics and the step of
// its divergence verdict (0 when unknown). The Trial workflow counts steps at segment ends, so a trial
// stopped inside a segment would otherwise report the previous segment's end (0 for a one-segment
// trial) and the report would count its steps as never spent. A completed trial's steps stand.
func StepsReached(t TrialSummary, lastMetricStep, divergenceStep int64) int64 {
	if t.Outcome == OutcomeCompleted {
		return t.Steps
	}
	return max(t.Steps, lastMetricStep, divergenceStep)
}

// Values maps metric names to numbers and survives JSON with NaN and ±Inf in it: non-finite numbers are
// written as the strings "NaN", "+Inf" and "-Inf" (encoding/json rejects them as numbers).
type Values map[string]float64

// MarshalJSON writes finite values as numbers and non-finite ones as strings (diagnostics.Float).
func (v Values) MarshalJSON() ([]byte, error) {
	m := make(map[string]diagnostics.Float, len(v))
	for k, x := range v {
		m[k] = diagnostics.Float(x)
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Values) UnmarshalJSON(b []byte) error {
	var m map[string]diagnostics.Float
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*v = make(Values, len(m))
	for k, x := range m {
		(*v)[k] = float64(x)
	}
	return nil
}

// Finite says whether x is neither NaN nor ±Inf.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ParamsKey identifies a configuration by its parameter values: their canonical JSON, keys sorted.
// Values that read back from results.json the same (the integer 32 and the float 32.0) give one key.
func ParamsKey(params map[string]any) string {
	if len(params) == 0 {
		return "{}"
	}
	b, err := json.Marshal(params)
	if err != nil {
		// Only a non-finite float fails to encode, and Plan never makes one; keep such values apart.
		return fmtParams(params)
	}
	return string(b)
}
