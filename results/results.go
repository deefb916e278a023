// Package results holds a sweep's output vocabulary: trial outcomes, a trial's result (TrialSummary), a
// sweep's results (SweepResults, stored as results.json), the merge of stored result parts with the
// plan, the steps a stopped trial reached, and results.csv. It is a pure package: the caller reads and
// writes the store.
package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/sweeps"
)

// Trial outcomes, as the Trial workflow records them (docs/diagnostics.md).
const (
	OutcomeCompleted = "completed"
	OutcomeDiverged  = "diverged"
	OutcomePruned    = "pruned"
	OutcomeFailed    = "failed"
	// OutcomeOOM: the trainer died out of memory (GPU or host): a resource outcome, not the trainer's
	// failure, and never retried (the same configuration runs out again on the same GPU class).
	OutcomeOOM       = "oom"
	OutcomeCancelled = "cancelled"
)

// Outcomes lists every trial outcome in display order.
var Outcomes = []string{OutcomeCompleted, OutcomeDiverged, OutcomePruned, OutcomeFailed, OutcomeOOM, OutcomeCancelled}

// TrialSummary is one trial's result as results.json, results.csv and the Sweep workflow record it.
type TrialSummary struct {
	TrialID string         `json:"trial_id"`
	Config  int            `json:"config"`
	Seed    int64          `json:"seed"`
	Params  map[string]any `json:"params"`
	// Precision is the resources.precision setting the trial ran under (sweeps.Trial.Precision); ""
	// when the sweep has no precision dimension.
	Precision string `json:"precision,omitempty"`
	// GPUClass is the GPU class of a confirm re-run (sweeps.Trial.GPUClass): the best configurations
	// run again there once the search is over; "" for the search's trials.
	GPUClass    string   `json:"gpu_class,omitempty"`
	Outcome     string   `json:"outcome"`
	Objective   *float64 `json:"objective"`
	Steps       int64    `json:"steps"`
	StopRule    string   `json:"stop_rule,omitempty"`
	Error       string   `json:"error,omitempty"`
	WallSeconds float64  `json:"wall_seconds"`
	// TargetStep is the first step at which the trial's windowed objective reached the target of an
	// env_steps objective (sweeps.Objective.Target), at or beyond it in the metric's goal; 0 when it
	// did not, or the sweep has no such target.
	TargetStep int64  `json:"target_step,omitempty"`
	Segments   int    `json:"segments"`
	Last       Values `json:"last,omitempty"`
	// Warnings are problems the trial ran despite, each once: the trainer ignored RLSWEEP_STOP_AT_STEP,
	// an objective metric no record carries. Shown by `rlsweep status` and the report.
	Warnings []string `json:"warnings,omitempty"`
	// Stop is the verdict of the diagnostics rule that stopped the trial (outcome diverged; StopRule
	// names its rule), as the engine gave it; nil for every other outcome. Steps is the step it fired at.
	Stop *Verdict `json:"stop,omitempty"`
	// End is the verdict of the end-of-run rule that judged the trial bad once it was over
	// (collapsed_at_end: it ran its budget but ended having lost most of its gain); nil when none did.
	// The outcome stays completed, and Warnings carries End.Warning().
	End *Verdict `json:"end,omitempty"`
	// Malformed counts the metric lines (or records) its segments' readers dropped as malformed:
	// unparsable, too long, failed CRC, step going backwards (docs/diagnostics.md).
	Malformed int `json:"malformed,omitempty"`
	// MetricsSource is the source and file its metrics were read from, for the sources that find their
	// file themselves (wandb; auto once it settled, as "wandb (PATH)" or "tensorboard (PATH)"), and the
	// preset told from the tags when trainer.metrics.preset is not set ("(preset sb3, told from its
	// tags; ...)").
	MetricsSource string `json:"metrics_source,omitempty"`
	// TrainerFailures: attempts of its segments that the trainer failed (crashed, stalled, unreadable
	// metrics), which retries.max_attempts bounds; InfraRetries: attempts ended by faults outside the
	// trainer (worker lost or stopped, Temporal server or store unreachable), which
	// retries.max_infra_retries bounds; RetrainedSteps: steps trained again after those. Always
	// present, 0 when none.
	TrainerFailures int   `json:"trainer_failures"`
	InfraRetries    int   `json:"infra_retries"`
	RetrainedSteps  int64 `json:"retrained_steps"`
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
	// HandedOff: its last trainer released the standby trial that waited for its place (the sweep's
	// slot hand-off, docs/architecture.md); the sweep reads it and does not store it.
	HandedOff bool `json:"handed_off,omitempty"`
	// Unstarted: a standby trial that ended (cancelled) before it was released: it never trained, and a
	// cancelled sweep does not count it.
	Unstarted bool `json:"unstarted,omitempty"`
	// Hardware is where its last segment attempt ran (Hardware); nil when none started.
	Hardware *Hardware `json:"hardware,omitempty"`
}

// Hardware is where a segment attempt ran: the worker and its host, the CPU, the GPUs the trial was
// given (CUDA_VISIBLE_DEVICES) with the driver and CUDA version nvidia-smi reports, and the precision
// settings of the trainer's environment. Fields nothing could tell are empty.
type Hardware struct {
	Worker string `json:"worker,omitempty"` // the worker's Temporal identity
	Host   string `json:"host,omitempty"`
	CPU    string `json:"cpu,omitempty"` // /proc/cpuinfo's "model name"
	GPUs   []GPU  `json:"gpus,omitempty"`
	Driver string `json:"driver,omitempty"` // the NVIDIA driver's version
	CUDA   string `json:"cuda,omitempty"`   // the CUDA version the driver supports, as nvidia-smi's header says
	// Precision holds the precision settings of the trainer's environment (NVIDIA_TF32_OVERRIDE,
	// TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, XLA_FLAGS, JAX_DEFAULT_MATMUL_PRECISION, JAX_ENABLE_X64) that are
	// set; no other variable is ever copied.
	Precision map[string]string `json:"precision,omitempty"`
}

// GPU is one GPU a trial was given: its CUDA_VISIBLE_DEVICES entry (an index or a UUID), and as
// nvidia-smi names it its model and memory.
type GPU struct {
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	MemoryMiB int    `json:"memory_mib,omitempty"`
}

// GPUNames is the GPUs' models in one cell: "NVIDIA H100 80GB HBM3", "2 × NVIDIA A100-SXM4-80GB", or
// the models joined by "; " when they differ.
func (h *Hardware) GPUNames() string {
	if h == nil || len(h.GPUs) == 0 {
		return ""
	}
	names := make([]string, len(h.GPUs))
	same := true
	for i, g := range h.GPUs {
		names[i] = cmp.Or(g.Name, "GPU "+g.ID)
		same = same && names[i] == names[0]
	}
	if same && len(names) > 1 {
		return fmt.Sprintf("%d × %s", len(names), names[0])
	}
	if same {
		return names[0]
	}
	return strings.Join(names, "; ")
}

// GPUMemoryMiB is the memory of the trial's first GPU in MiB (nvidia-smi's memory.total), 0 when unknown.
func (h *Hardware) GPUMemoryMiB() int {
	if h == nil || len(h.GPUs) == 0 {
		return 0
	}
	return h.GPUs[0].MemoryMiB
}

// PrecisionLine is the precision settings as "NAME=value NAME=value", sorted by name.
func (h *Hardware) PrecisionLine() string {
	if h == nil {
		return ""
	}
	keys := make([]string, 0, len(h.Precision))
	for k := range h.Precision {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + h.Precision[k]
	}
	return strings.Join(keys, " ")
}

// Line is the record in one line: "gpu-box-3: NVIDIA H100 80GB HBM3 (81559 MiB), driver 550.54.15, CUDA
// 12.4; AMD EPYC 9654 96-Core Processor; NVIDIA_TF32_OVERRIDE=0".
func (h *Hardware) Line() string {
	if h == nil {
		return ""
	}
	var parts []string
	if g := h.GPUNames(); g != "" {
		if m := h.GPUMemoryMiB(); m > 0 {
			g += fmt.Sprintf(" (%d MiB)", m)
		}
		if h.Driver != "" {
			g += ", driver " + h.Driver
		}
		if h.CUDA != "" {
			g += ", CUDA " + h.CUDA
		}
		parts = append(parts, g)
	} else {
		parts = append(parts, "no GPU")
	}
	if h.CPU != "" {
		parts = append(parts, h.CPU)
	}
	if p := h.PrecisionLine(); p != "" {
		parts = append(parts, p)
	}
	where := cmp.Or(h.Host, h.Worker)
	if where != "" {
		where += ": "
	}
	return where + strings.Join(parts, "; ")
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

// Decision is one answer of a sweep's scheduler that changed a trial's course: a stop at a segment
// boundary, a stop between boundaries (another seed of its configuration diverged), or an exploit.
// The sweep logs each once, in the order it made them (decisions.json, docs/artifacts.md).
type Decision struct {
	// Seq numbers the sweep's decisions from 0, in the order they were made.
	Seq     int    `json:"seq"`
	TrialID string `json:"trial_id"`
	// Segment is the segment after which the decision was made; -1 between boundaries.
	Segment int    `json:"segment"`
	Step    int64  `json:"step,omitempty"` // the step the trial's segment reached, at a boundary
	Action  string `json:"action"`         // stop, exploit or replace
	// Outcome is a stop's: pruned, or diverged when another seed of the configuration diverged.
	Outcome string   `json:"outcome,omitempty"`
	Reason  string   `json:"reason"`
	Pruning *Pruning `json:"pruning,omitempty"`
	// ResumeFrom and Params are an exploit's checkpoint and the parameters the trial goes on with; a
	// replacement's (TrialID, the new member) checkpoint it starts from and its parameters.
	ResumeFrom string         `json:"resume_from,omitempty"`
	Params     map[string]any `json:"params,omitempty"`
	// Replaces and Parent are a replacement's: the diverged member it replaces, and the member whose
	// checkpoint it starts from ("" when it starts afresh).
	Replaces string `json:"replaces,omitempty"`
	Parent   string `json:"parent,omitempty"`
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
	SweepID string        `json:"sweep_id"`
	Name    string        `json:"name"`
	Status  string        `json:"status"`
	Metric  sweeps.Metric `json:"metric"`
	// Objectives are a sweep's objectives when it has several (sweeps.Spec.Objectives), and Pareto
	// each configuration's objective vector and rank (Objectives) as the sweep ended; none for a sweep
	// with one objective.
	Objectives []sweeps.Objective `json:"objectives,omitempty"`
	Pareto     []ConfigPoint      `json:"pareto,omitempty"`
	Params     []string           `json:"params"`
	Trials     []TrialSummary     `json:"trials"`
	// Confirmations: a bayes sweep's re-run of its best configurations on fresh seeds.
	Confirmations []Confirmation `json:"confirmations,omitempty"`
	// RungValues are early_terminate's values as its pruner compared them: each configuration's value at
	// each decision step it reached (IQM over its seeds), in configuration order; none without pruning.
	RungValues []ConfigRungs `json:"rung_values,omitempty"`
}

// ConfigRungs is one configuration's values at the decision steps it reached, in order.
type ConfigRungs struct {
	Config int    `json:"config"`
	Values Floats `json:"values"`
}

// Floats are numbers that JSON carries as metrics.Float does: NaN and ±Inf as strings.
type Floats []float64

// MarshalJSON writes finite values as numbers and non-finite ones as strings.
func (f Floats) MarshalJSON() ([]byte, error) {
	out := make([]metrics.Float, len(f))
	for i, v := range f {
		out[i] = metrics.Float(v)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Floats) UnmarshalJSON(b []byte) error {
	var in []metrics.Float
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*f = make(Floats, len(in))
	for i, v := range in {
		(*f)[i] = float64(v)
	}
	return nil
}

// Reached is what the store holds of how far a trial got beyond its summary: the last step of its
// stored metrics and the step of its divergence verdict (divergence.json); 0 when unknown.
type Reached struct {
	LastMetricStep int64
	DivergenceStep int64
}

// New returns the results of a sweep of spec with the given final status and trials. reached (nil:
// none) is what the store holds of each trial's steps: a trial that did not complete gets the steps it
// reached (StepsReached), in a copy of trials; trials itself is not modified.
func New(sweepID string, spec *sweeps.Spec, status string, trials []TrialSummary, reached map[string]Reached) *SweepResults {
	if len(reached) > 0 {
		trials = slices.Clone(trials)
		for i, t := range trials {
			if r, ok := reached[t.TrialID]; ok {
				trials[i].Steps = StepsReached(t, r.LastMetricStep, r.DivergenceStep)
			}
		}
	}
	r := &SweepResults{SweepID: sweepID, Name: spec.Name, Status: status, Metric: spec.Metric,
		Params: sweeps.ParamNames(spec), Trials: trials}
	if spec.MultiObjective() {
		r.Objectives, r.Pareto = spec.Objectives, Objectives(spec, trials)
	}
	if spec.Method == sweeps.MethodBayes {
		r.Confirmations = Confirmations(trials, spec.Seeds, r.Maximize(), spec.Metric.Bounds)
	}
	return r
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
			t.Config, t.Seed, t.Params, t.Precision, t.GPUClass = p.Config, p.Seed, p.Params, p.Precision, p.GPUClass
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
// its divergence verdict (0 when unknown). The Trial workflow records the step a stopped trial reached
// where its segment's failure says it (the stop rule's step, the failed segment's last heartbeat, the
// cancelled segment's result); the stored metrics can still go further (records written between a stop
// rule firing and its trainer's exit, a failure whose details carry no step, a summary recorded before
// its workflow kept that step), and a trial never counts fewer steps than its records show, so the
// report does not count steps it spent as saved. A completed trial's steps stand.
func StepsReached(t TrialSummary, lastMetricStep, divergenceStep int64) int64 {
	if t.Outcome == OutcomeCompleted {
		return t.Steps
	}
	return max(t.Steps, lastMetricStep, divergenceStep)
}

// Values maps metric names to numbers and survives JSON with NaN and ±Inf in it: non-finite numbers are
// written as the strings "NaN", "+Inf" and "-Inf" (encoding/json rejects them as numbers).
type Values map[string]float64

// MarshalJSON writes finite values as numbers and non-finite ones as strings (metrics.Float).
func (v Values) MarshalJSON() ([]byte, error) {
	m := make(map[string]metrics.Float, len(v))
	for k, x := range v {
		m[k] = metrics.Float(x)
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Values) UnmarshalJSON(b []byte) error {
	var m map[string]metrics.Float
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

// ConfigScore is a configuration's score from its trials (one per seed), as rlsweep ranks
// configurations: the IQM over its scored seeds of their objective (the windowed final objective);
// false when a seed diverged or none is scored, the configuration being infeasible.
func ConfigScore(trials []TrialSummary) (float64, bool) {
	var xs []float64
	for _, t := range trials {
		if t.Outcome == OutcomeDiverged {
			return 0, false
		}
		if t.Scored() {
			xs = append(xs, *t.Objective)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return diagnostics.IQM(xs), true
}

// Confirmation is a configuration of a bayes sweep that ran again on fresh seeds once the search
// ended (bayes.rerun_top): its score on the search's seeds with a 95% interval, and its score on the
// fresh seeds.
type Confirmation struct {
	Config int            `json:"config"`
	Params map[string]any `json:"params"`
	// SearchScore is the configuration's score on the search's seeds (ConfigScore); nil when
	// infeasible there. SearchLow and SearchHigh are the 95% Student-t prediction interval, from the
	// search's seeds, of the mean objective over as many fresh seeds as the re-run has: mean ±
	// t(0.975, n−1)·s·√(1/n + 1/m), n scored search seeds, m re-run seeds, clipped to metric.bounds;
	// where the re-run should land if the search-time score reproduces. Nil with fewer than
	// MinIntervalSeeds scored seeds (too few seeds for an interval that says anything).
	SearchScore *float64 `json:"search_score"`
	SearchLow   *float64 `json:"search_low"`
	SearchHigh  *float64 `json:"search_high"`
	SearchSeeds int      `json:"search_seeds"`
	// RerunScore is its score on the fresh seeds (ConfigScore over them); nil when infeasible there
	// (a fresh seed diverged, or none completed) or not ended yet.
	RerunScore *float64 `json:"rerun_score"`
	RerunSeeds int      `json:"rerun_seeds"`
	// Inside: the re-run score lies in the search's interval; nil when there is no interval or no
	// re-run score to judge.
	Inside *bool `json:"inside"`
}

// MinIntervalSeeds is the fewest scored seeds an interval of a configuration's score is given for:
// from two seeds, t(0.975, 1) = 12.7 makes a 95% interval of [−288, 1064] on a task scored 0 to 500,
// which says nothing; such a configuration shows "too few seeds" instead.
const MinIntervalSeeds = 3

// ClipToBounds narrows [lo, hi] to the objective's possible range, when the spec gives one (nil: none).
func ClipToBounds(lo, hi float64, bounds *[2]float64) (float64, float64) {
	if bounds == nil {
		return lo, hi
	}
	return max(lo, bounds[0]), min(hi, bounds[1])
}

// Confirmations lists the configurations that ran on seeds other than searchSeeds (a bayes sweep's
// re-run), best search score first; bounds is metric.bounds (nil: none).
func Confirmations(trials []TrialSummary, searchSeeds []int64, maximize bool, bounds *[2]float64) []Confirmation {
	type split struct{ search, rerun []TrialSummary }
	byConfig := map[int]*split{}
	params := map[int]map[string]any{}
	for _, t := range trials {
		if t.GPUClass != "" {
			continue // a confirm re-run on another GPU class
		}
		sp := byConfig[t.Config]
		if sp == nil {
			sp = &split{}
			byConfig[t.Config] = sp
		}
		if slices.Contains(searchSeeds, t.Seed) {
			sp.search = append(sp.search, t)
		} else {
			sp.rerun = append(sp.rerun, t)
			params[t.Config] = t.Params
		}
	}
	var out []Confirmation
	for c, sp := range byConfig {
		if len(sp.rerun) == 0 {
			continue
		}
		cf := Confirmation{Config: c, Params: params[c], SearchSeeds: len(sp.search), RerunSeeds: len(sp.rerun)}
		if v, ok := ConfigScore(sp.search); ok {
			cf.SearchScore = &v
		}
		var xs []float64
		for _, t := range sp.search {
			if t.Scored() {
				xs = append(xs, *t.Objective)
			}
		}
		if lo, hi, ok := diagnostics.PredictionInterval(xs, len(sp.rerun), 0.95); ok && len(xs) >= MinIntervalSeeds {
			lo, hi = ClipToBounds(lo, hi, bounds)
			cf.SearchLow, cf.SearchHigh = &lo, &hi
		}
		if v, ok := ConfigScore(sp.rerun); ok {
			cf.RerunScore = &v
			if cf.SearchLow != nil {
				inside := v >= *cf.SearchLow && v <= *cf.SearchHigh
				cf.Inside = &inside
			}
		}
		out = append(out, cf)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].SearchScore, out[j].SearchScore
		switch {
		case a == nil || b == nil:
			if (a == nil) != (b == nil) {
				return b == nil
			}
		case *a != *b:
			return (*a > *b) == maximize
		}
		return out[i].Config < out[j].Config
	})
	return out
}

// CountsLine is "3 completed, 1 pruned": each outcome with trials, in Outcomes order; "none finished"
// when there are none.
func CountsLine(counts map[string]int) string {
	var parts []string
	for _, o := range Outcomes {
		if n := counts[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
	}
	if len(parts) == 0 {
		return "none finished"
	}
	return strings.Join(parts, ", ")
}

// Verdict is a diagnostics verdict a trial carries (TrialSummary.Stop, TrialSummary.End): the rule, the
// step it judged, what it measured in words (the metric against its threshold, or the run's start, best
// and final levels) and what to do.
type Verdict struct {
	Rule   string `json:"rule"`
	Step   int64  `json:"step"`
	Detail string `json:"detail"`
	Advice string `json:"advice"`
}

// Warning is the verdict as one warning line.
func (v Verdict) Warning() string {
	return fmt.Sprintf("%s at step %d: %s; %s", v.Rule, v.Step, v.Detail, v.Advice)
}
