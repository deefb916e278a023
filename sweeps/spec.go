// Package sweeps holds the sweep specification users write in YAML: decoding with positions, validation
// that reports every problem at once, and planning the spec into trials.
//
// It is a pure package: no Temporal, no network.
package sweeps

import (
	"encoding/json"
	"time"
)

// Objective goals.
const (
	GoalMaximize = "maximize"
	GoalMinimize = "minimize"
)

// Search methods.
const (
	MethodGrid   = "grid"
	MethodRandom = "random"
	MethodSobol  = "sobol"
)

// Orders a grid's configurations start in (Spec.Order).
const (
	OrderListed   = "listed"
	OrderShuffled = "shuffled"
)

// Parameter distributions for min/max parameters.
const (
	DistUniform    = "uniform"
	DistLogUniform = "log_uniform"
	DistIntUniform = "int_uniform"

	DistQUniform            = "q_uniform"
	DistQLogUniformValues   = "q_log_uniform_values"
	DistInvLogUniformValues = "inv_log_uniform_values"
	DistNormal              = "normal"
	DistQNormal             = "q_normal"
	DistLogNormal           = "log_normal"
	DistQLogNormal          = "q_log_normal"
	DistBeta                = "beta"
	DistQBeta               = "q_beta"
)

// Spec is a whole sweep as the user wrote it, after defaults are applied.
type Spec struct {
	// Format is what the spec was read from: "" for an rlsweep spec, FormatWandB for a W&B sweep config,
	// whose values follow W&B's rules (repeated values, null in a list, numbers written as strings).
	Format      string  `json:"format,omitempty"`
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Trainer     Trainer `json:"trainer"`
	Metric      Metric  `json:"metric"`
	// Objectives are the sweep's objectives when metric is written as a list (objectives.go); Metric is
	// then the one the trainer logs. Nil for a sweep with the one objective Metric.
	Objectives []Objective `json:"objectives,omitempty"`
	Method     string      `json:"method"`
	Trials     int         `json:"trials,omitempty"` // random, sobol and bayes: how many configurations
	// RunCap is W&B's run_cap for a grid: the sweep starts at most this many trials, in plan order (for
	// random, run_cap is Trials). 0: no cap.
	RunCap      int   `json:"run_cap,omitempty"`
	SamplerSeed int64 `json:"sampler_seed,omitempty"` // random and sobol: the sampler's seed
	// Order is the order a grid's configurations start in: OrderListed (the grid's, first parameter
	// slowest) or OrderShuffled (a permutation drawn from sampler_seed). "" is OrderListed.
	Order          string          `json:"order,omitempty"`
	Seeds          []int64         `json:"seeds"`      // every configuration runs once per seed
	Parameters     []Parameter     `json:"parameters"` // in the order the spec lists them
	Probes         Probes          `json:"probes"`
	Diagnostics    Diagnostics     `json:"diagnostics"`
	EarlyTerminate *EarlyTerminate `json:"early_terminate,omitempty"`
	// PBT configures method pbt (pbt.go); nil for the other methods.
	PBT         *PBT      `json:"pbt,omitempty"`
	Concurrency int       `json:"concurrency"`
	Resources   Resources `json:"resources"`
	Retries     Retries   `json:"retries"`
	Artifacts   string    `json:"artifacts,omitempty"` // store URL; empty means the worker's store
	// Regression holds the thresholds a nightly regression of this sweep judges by; nil when the spec
	// has no regression section (the defaults apply, see DefaultRegression).
	Regression *Regression `json:"regression,omitempty"`
	// Bayes configures method bayes; nil: its defaults (BayesSettings).
	Bayes *Bayes `json:"bayes,omitempty"`
	// BayesStartup is method bayes's start-up configurations when bayes.startup_trials is left out,
	// DefaultStartup of trials, set as the spec is read: the sweep's workflow reads it from the spec it
	// was started with. 0 (a spec recorded without it): DefaultStartupTrials.
	BayesStartup int `json:"bayes_startup,omitempty"`
	// Confirm re-runs the best configurations on other GPU classes once the search is over; nil: none.
	Confirm *Confirm `json:"confirm,omitempty"`

	// Where each field was written, for messages; empty for a Spec built in code or decoded from JSON.
	file  string
	lines map[string]int // field path ("parameters.lr.min") → 1-based line
	bad   map[string]bool
	wandb *wandbInfo // set when the spec was read from a W&B sweep config
}

// Trainer says what runs a trial and how it reports.
type Trainer struct {
	Builtin     string            `json:"builtin,omitempty"` // "ppo", or empty with Command set
	Command     []string          `json:"command,omitempty"` // argv; each element a text/template
	Env         string            `json:"env,omitempty"`     // environment name handed to the trainer
	Environment map[string]string `json:"environment,omitempty"`
	// WandBConfig, for a spec read from a W&B sweep config, lists its parameters' leaves (nested ones
	// as paths): each segment writes the run's config as W&B's agent does (WandBConfigYAML) and points
	// WANDB_SWEEP_PARAM_PATH at it, so a script that reads wandb.config gets its parameters.
	WandBConfig  []string      `json:"wandb_config,omitempty"`
	TotalSteps   int64         `json:"total_steps"`
	SegmentSteps int64         `json:"segment_steps"` // one TrainSegment per segment; 0 means one segment
	Metrics      MetricsSource `json:"metrics"`
	StallTimeout time.Duration `json:"stall_timeout"` // no record for this long: kill and retry
	GracePeriod  time.Duration `json:"grace_period"`  // SIGTERM to SIGKILL
}

// MetricsSource says where the trainer's metrics come from.
type MetricsSource struct {
	Source string            `json:"source"`           // "jsonl", "tensorboard", "stdout", "csv", "wandb" or "auto"
	Preset string            `json:"preset,omitempty"` // rsl_rl, sb3, cleanrl, rl_games, skrl; stdout: rsl_rl or sb3
	Tags   map[string]string `json:"tags,omitempty"`   // custom tag → canonical name
	// StepsPerIteration converts a trainer's iteration count to environment steps (rsl_rl:
	// num_envs × num_steps_per_env); 0 keeps the trainer's own step. tensorboard and stdout rsl_rl only.
	StepsPerIteration int64 `json:"steps_per_iteration,omitempty"`
	// StepKey names the W&B history key that holds the step (as W&B's define_metric(step_metric=...),
	// e.g. global_step); "" is _step, the count of wandb.log calls. wandb and auto only.
	StepKey string `json:"step_key,omitempty"`
}

// Metric is the objective, as W&B writes it.
type Metric struct {
	Name string `json:"name"`
	Goal string `json:"goal"` // "maximize" or "minimize"
	// Target is W&B's metric.target: once a trial completes with its objective at or beyond it, the
	// sweep starts no new trial (those running finish).
	Target *float64 `json:"target,omitempty"`
	// Bounds is the objective's possible range, [lowest, highest], when the task has one (CartPole-v1's
	// return: [0, 500]); nil when unknown. Intervals of a configuration's score are clipped to it.
	Bounds *[2]float64 `json:"bounds,omitempty"`
}

// Parameter is one swept parameter: a list of values, a constant, or a range with a distribution.
type Parameter struct {
	Name         string   `json:"name"`
	Values       []any    `json:"values,omitempty"` // scalars: float64, int64, string or bool
	Value        any      `json:"value,omitempty"`  // a constant
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	Distribution string   `json:"distribution,omitempty"` // see Distributions
	// Q quantises q_* distributions: round(x / Q) × Q; QInt makes the result an integer (W&B does when
	// q is written as an integer).
	Q    *float64 `json:"q,omitempty"`
	QInt bool     `json:"q_int,omitempty"`
	// Mu and Sigma shape normal and log_normal (of the logarithm); A and B shape beta.
	Mu    *float64 `json:"mu,omitempty"`
	Sigma *float64 `json:"sigma,omitempty"`
	A     *float64 `json:"a,omitempty"`
	B     *float64 `json:"b,omitempty"`
	// JSON says the values are JSON texts of W&B lists and mappings (net_arch: [64, 64]), rendered back
	// into the trainer's argument as Python's str() of the list or dict.
	JSON bool `json:"json,omitempty"`
	// Probabilities weight values (one per value, summing to 1) for random and sobol.
	Probabilities []float64 `json:"probabilities,omitempty"`
	Line          int       `json:"-"` // where the spec defines it, for errors
}

// Probes configures the probe stage that runs before any trial.
type Probes struct {
	Enabled bool     `json:"enabled"`
	Command []string `json:"command,omitempty"` // external trainers: how to run a probe
}

// Diagnostics configures the early-stopping rules (docs/diagnostics.md).
type Diagnostics struct {
	Enabled     bool  `json:"enabled"`
	WarmupSteps int64 `json:"warmup_steps"` // 0 means 10% of total_steps
	Patience    int   `json:"patience"`     // consecutive records for "sustained"
	// Actions is a categorical policy's number of actions (0: unknown or not categorical): the entropy
	// rules then measure entropy against its maximum, log(Actions).
	Actions int                     `json:"actions,omitempty"`
	Rules   map[string]RuleOverride `json:"rules,omitempty"`
}

// RuleOverride changes one rule's defaults for a sweep.
type RuleOverride struct {
	Threshold *float64 `json:"threshold,omitempty"`
	Level     string   `json:"level,omitempty"` // off, warn, stop
	Patience  *int     `json:"patience,omitempty"`
}

// EarlyTerminate configures cross-trial pruning at segment boundaries (early_terminate.go,
// docs/spec.md#early_terminate).
type EarlyTerminate struct {
	Type     string `json:"type"` // asha, median or hyperband
	MinSteps int64  `json:"min_steps,omitempty"`
	MaxSteps int64  `json:"max_steps,omitempty"`
	Eta      int    `json:"eta,omitempty"`
	// MinTrials: median's warm-up, how many other configurations must have a value at a step.
	MinTrials int `json:"min_trials,omitempty"`
	// StopDivergedConfigs: a configuration with a diverged seed is never promoted and its other seeds
	// stop at their next boundary (default true).
	StopDivergedConfigs bool `json:"stop_diverged_configs"`
	// W&B's hyperband keys, mapped onto asha (HyperbandRungs).
	MinIter int  `json:"min_iter,omitempty"`
	MaxIter int  `json:"max_iter,omitempty"`
	S       int  `json:"s,omitempty"`
	Strict  bool `json:"strict,omitempty"`
	// Mode: PrunePause or PruneStop; "" lets PruneMode choose from the metrics source.
	Mode string `json:"mode,omitempty"`
}

// Resources says where trials run: on the trial task queue (task_queue, or the queue of a GPU class),
// each trial holding GPUs of the worker that runs it.
type Resources struct {
	TaskQueue string `json:"task_queue"` // default "rlsweep-gpu"
	// GPUClass picks the queue of one kind of GPU, "rlsweep-gpu-<class>", served by workers started
	// with `rlsweep worker --gpu-class <class>`. Set it or task_queue, not both.
	GPUClass string `json:"gpu_class,omitempty"`
	// GPUs is how much GPU a trial holds on a worker started with --gpus: a whole number of GPUs
	// (0 to MaxGPUs; 0 is none), or a fraction of one GPU in [MinGPUFraction, 1), such as 0.25 for
	// four trials sharing a GPU (activities.Slots packs them). A spec stored with an integer here
	// ("gpus": 1) decodes unchanged.
	GPUs float64 `json:"gpus"`
	// MemoryParam names the parameter that drives a trial's memory (Spec.MemoryParam): once a trial
	// runs out of memory, the sweep starts no trial whose value of it is at or above that trial's on
	// the same GPU class (docs/architecture.md, "Out of memory is a resource outcome"). "" means
	// num_envs when the sweep has a parameter of that name; MemoryParamNone means none.
	MemoryParam string `json:"memory_param,omitempty"`
	// Precision lists the precision settings every configuration runs under (trainer.Precisions:
	// default, fp32, tf32): each configuration of the search becomes one per setting, with the same
	// parameters and its own configuration number (Plan), and its trainer gets the setting's
	// environment (trainer.PrecisionEnv). Empty: no precision dimension.
	Precision []string `json:"precision,omitempty"`
}

// MemoryParamNone turns the out-of-memory bound off (resources.memory_param: none).
const MemoryParamNone = "none"

// DefaultMemoryParam is the memory parameter of a sweep that names none but has one of this name.
const DefaultMemoryParam = "num_envs"

// MemoryParam is the parameter that drives a trial's memory: resources.memory_param, else num_envs
// when the sweep has a parameter of that name; "" when none (or memory_param: none).
func (s *Spec) MemoryParam() string {
	switch m := s.Resources.MemoryParam; m {
	case MemoryParamNone:
		return ""
	case "":
		if s.Param(DefaultMemoryParam) != nil {
			return DefaultMemoryParam
		}
		return ""
	default:
		return m
	}
}

// Param is the parameter named name; nil when the sweep has none.
func (s *Spec) Param(name string) *Parameter {
	for i := range s.Parameters {
		if s.Parameters[i].Name == name {
			return &s.Parameters[i]
		}
	}
	return nil
}

// GPUClassQueue is the trial task queue of a GPU class.
func GPUClassQueue(class string) string { return DefaultTaskQueue + "-" + class }

// ValidGPUClass says whether class can name a GPU class: lower-case letters, digits, '_' and '-', at
// most 40 characters.
func ValidGPUClass(class string) bool { return gpuClassRe.MatchString(class) }

// TrialQueue is the task queue the spec's trials train on.
func (r Resources) TrialQueue() string {
	if r.GPUClass != "" {
		return GPUClassQueue(r.GPUClass)
	}
	return r.TaskQueue
}

// Regression holds the thresholds of a regression verdict (docs/regression.md): a configuration
// regressed when its IQM over seeds is worse than the baseline's by more than Tolerance (relative),
// the Confidence-level stratified bootstrap interval of the IQM difference excludes 0, and a candidate
// seed beats a baseline seed with probability at most 1 − MinProbImprovement; or when it has more than
// MaxNewFailures more seeds without an objective than the baseline. Improved is symmetric.
type Regression struct {
	Tolerance          float64 `json:"tolerance"`            // relative IQM change, (0, 1]
	Confidence         float64 `json:"confidence"`           // bootstrap interval level, (0.5, 1)
	Resamples          int     `json:"resamples"`            // bootstrap resamples
	MinProbImprovement float64 `json:"min_prob_improvement"` // [0.5, 1]; 0.5 turns the check off
	MaxNewFailures     int     `json:"max_new_failures"`     // extra seeds without an objective tolerated
}

// Retries bounds how often a segment is retried: MaxAttempts bounds the attempts the trainer itself
// fails (it crashed, stalled, wrote unreadable metrics); MaxInfraRetries bounds, on its own, the
// attempts ended by faults outside the trainer (its worker died or was stopped, the Temporal server or
// the store was unreachable), which never count against MaxAttempts.
type Retries struct {
	MaxAttempts     int `json:"max_attempts"`
	MaxInfraRetries int `json:"max_infra_retries"`
}

// UnmarshalJSON reads Retries as JSON; a spec given as JSON that leaves max_infra_retries out gets its
// default, as one given in YAML does.
func (r *Retries) UnmarshalJSON(b []byte) error {
	type plain Retries
	p := plain{MaxInfraRetries: DefaultMaxInfraRetries}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Retries(p)
	return nil
}

// Trial is one planned run: a configuration of parameter values and one seed.
type Trial struct {
	ID     string         `json:"id"`     // "<config>-s<seed>", stable for a spec
	Config int            `json:"config"` // configuration number, from 0
	Seed   int64          `json:"seed"`
	Params map[string]any `json:"params"`
	// Precision is the resources.precision setting the trial runs under ("fp32", "tf32", "default");
	// "" when the sweep has no precision dimension. Configurations that differ only in it have the same
	// Params and different Config numbers.
	Precision string `json:"precision,omitempty"`
	// GPUClass is the GPU class of a confirm re-run (Spec.ConfirmTrials): it trains on that class's
	// queue; "" for every trial of the search, which trains on the spec's.
	GPUClass string `json:"gpu_class,omitempty"`
	// ResumeFrom and ResumeStep: a trial that starts from another trial's checkpoint (a pbt member
	// replacing a diverged one) resumes from this key, written at this step, and trains its segments
	// past it. Empty for a trial that starts fresh.
	ResumeFrom string `json:"resume_from,omitempty"`
	ResumeStep int64  `json:"resume_step,omitempty"`
	// Parent is the trial whose checkpoint ResumeFrom is.
	Parent string `json:"parent,omitempty"`
}
