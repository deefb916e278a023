package sweeps

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/trainer"
)

// Explain says, in lines for people, what a valid spec becomes: where it was read from, its name, the
// argv of its first trial (each element quoted on its own), where its metrics come from, how many trials
// it plans, and what of a W&B config is accepted without being acted on. trials is Plan's result.
func Explain(s *Spec, trials []Trial) ([]string, error) {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if w := s.wandb; w != nil {
		add("read as: a W&B sweep config")
		add("sweep name: %s (from %s)", s.Name, w.nameFrom)
	} else {
		add("read as: an rlsweep spec")
		add("sweep name: %s", s.Name)
	}
	if len(trials) > 0 {
		argv, err := firstTrialArgv(s, trials[0])
		if err != nil {
			return nil, err
		}
		add("first trial (%s): %s", trials[0].ID, argv)
	}
	if w := s.wandb; w != nil && w.programFrom != "" {
		add("program: %s, found next to the config file (trainers run in their trial's directory)", w.programFrom)
	} else if w != nil && w.program != "" && !filepath.IsAbs(w.program) && (strings.Contains(w.program, "/") || filepath.Ext(w.program) != "") {
		add("program: %s is not next to the config file: trainers run in their trial's directory, so give its absolute path (or put the config file beside it)", w.program)
	}
	add("metrics: %s", describeMetrics(s))
	if s.MultiObjective() {
		add("objectives: %d; the results rank configurations by Pareto front (results --pareto); diagnostics judge %s", len(s.Objectives), s.Metric.Name)
		for i, o := range s.Objectives {
			add("objective %d: %s", i+1, o.Describe(s.Metric.Name))
		}
	} else {
		add("objective: %s, %s", s.Metric.Name, s.Metric.Goal)
	}
	for _, p := range s.Resources.Precision {
		add("precision %s: %s", p, describePrecision(p))
	}
	out = append(out, describeEarlyTerminate(s)...)
	n, configs := len(trials), len(trials)/max(len(s.Seeds), 1)
	count := fmt.Sprintf("trials: %d (%d configurations × %d seeds, method %s", n, configs, len(s.Seeds), s.Method)
	if ps := s.Resources.Precision; len(ps) > 0 {
		count = fmt.Sprintf("trials: %d (%d configurations × %d precision settings (%s) × %d seeds, method %s",
			n, configs/len(ps), len(ps), strings.Join(ps, ", "), len(s.Seeds), s.Method)
	}
	if s.Method == MethodBayes { // the plan holds the start-up configurations only
		count = fmt.Sprintf("trials: up to %d (%d configurations × %d seeds and %d re-run trials, method %s",
			s.Budget(), s.Trials, len(s.Seeds), s.rerunTrials(), s.Method)
	}
	switch {
	case s.Method == MethodGrid && s.Order == OrderShuffled:
		count += fmt.Sprintf("; configurations start in an order drawn from sampler_seed %d, order shuffled", s.SamplerSeed)
	case s.Method == MethodGrid && s.EarlyTerminate != nil:
		count += "; configurations start in listed order, order listed"
	case s.Method != MethodGrid:
		count += fmt.Sprintf(", sampler_seed %d", s.SamplerSeed)
	}
	if w := s.wandb; w != nil && (s.Method == MethodRandom || s.Method == MethodBayes) {
		if w.runCapSet {
			count += "; run_cap"
		} else {
			count += fmt.Sprintf("; no run_cap: rlsweep's default for W&B %s sweeps is %d, set run_cap to change it", s.Method, DefaultWandBRunCap)
		}
	}
	if p := s.PBT; s.Method == MethodPBT && p != nil {
		count = fmt.Sprintf("trials: %d members to start (method pbt, sampler_seed %d; member i has seed seeds[i mod %d]", len(trials), s.SamplerSeed, len(s.Seeds))
		if len(p.Schedule) > 0 {
			count += fmt.Sprintf("; replaying a schedule of %d entries", len(p.Schedule))
		} else {
			count += fmt.Sprintf("; ready every %d steps, bottom %g exploits top %g, mutable %s; a diverged member is replaced", p.ReadySteps, p.Quantile, p.Quantile, strings.Join(p.Mutable, ", "))
		}
	}
	add("%s)", count)
	if IsGPUFraction(s.Resources.GPUs) {
		add("resources: %s", describeGPUFraction(s.Resources.GPUs))
	}
	if s.Method == MethodBayes {
		b := s.BayesSettings()
		startup := min(b.StartupTrials, s.Trials)
		line := fmt.Sprintf("search: TPE over %d configurations: %d random start-up ones (%s), then %d proposed by TPE from the results so far",
			s.Trials, startup, s.startupSource(), s.Trials-startup)
		if b.RerunTop > 0 {
			line += fmt.Sprintf("; then the best %d run again on seeds %s to confirm them (%d trials)", b.RerunTop, formatSeeds(b.RerunSeeds), s.rerunTrials())
		} else {
			line += "; no re-run (bayes.rerun_top 0)"
		}
		add("%s", line)
	}
	if cf := s.Confirm; cf != nil {
		add("confirm: once the search is over, the best %d configurations run again on GPU classes %s (queues %s), seeds %s each: up to %d trials",
			cf.Top, strings.Join(cf.GPUClasses, ", "), confirmQueues(cf.GPUClasses), formatSeeds(s.Seeds), s.ConfirmBudget())
	}
	if w := s.wandb; w != nil {
		if s.Trainer.TotalSteps == DefaultWandBTotalSteps {
			add("total_steps: not set (rlsweep.total_steps): the trainer's own arguments decide how long it trains; diagnostics warm up for %d steps", s.WarmupSteps())
		}
		if w.target {
			add("metric.target %s: once a trial completes with its objective there, no new trial starts (those running finish)", strconv.FormatFloat(*s.Metric.Target, 'g', -1, 64))
		}
		if s.RunCap > 0 && s.RunCap < len(trials) {
			add("run_cap %d: the first %d of the grid's %d trials run", s.RunCap, s.RunCap, len(trials))
		}
		if len(w.ignored) > 0 {
			add("accepted, not used by rlsweep: %s", strings.Join(w.ignored, ", "))
		}
	}
	return out, nil
}

// describePrecision is what a precision setting does to a trainer's environment.
func describePrecision(setting string) string {
	set, unset := trainer.PrecisionEnv(setting)
	return "removes " + strings.Join(unset, " ") + " from the worker's environment, sets " + strings.Join(set, " ")
}

func confirmQueues(classes []string) string {
	q := make([]string, len(classes))
	for i, c := range classes {
		q[i] = GPUClassQueue(c)
	}
	return strings.Join(q, ", ")
}

func formatSeeds(seeds []int64) string {
	out := make([]string, len(seeds))
	for i, s := range seeds {
		out[i] = strconv.FormatInt(s, 10)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// firstTrialArgv renders a trial's command, each argument quoted on its own; paths of the trial's
// directory read <trial dir>.
func firstTrialArgv(s *Spec, tr Trial) (string, error) {
	if s.Trainer.Builtin != "" {
		return "the built-in trainer " + s.Trainer.Builtin + " (rlsweep train) on " + s.Trainer.Env, nil
	}
	dir, err := os.MkdirTemp("", "rlsweep-explain-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	argv, err := RenderCommand(s.Trainer.Command, TemplateData{SweepID: s.Name + "/ID", TrialID: tr.ID, Seed: tr.Seed,
		Params: tr.Params, TotalSteps: s.Trainer.TotalSteps, StopAtStep: s.Trainer.SegmentSteps,
		CheckpointDir: filepath.Join(dir, "checkpoints"), MetricsFile: filepath.Join(dir, "metrics.jsonl"), Env: s.Trainer.Env})
	if err != nil {
		return "", err
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = strconv.Quote(strings.ReplaceAll(a, dir, "<trial dir>"))
	}
	return strings.Join(quoted, " "), nil
}

// describeEarlyTerminate says how the pruner meets its decision points: the prune mode, the points
// with their unit, and that max_iter wins over min_iter when both are set.
func describeEarlyTerminate(s *Spec) []string {
	e := s.EarlyTerminate
	if e == nil {
		return nil
	}
	var out []string
	if e.Type == PrunerHyperband && e.MinIter > 0 && e.MaxIter > 0 {
		out = append(out, fmt.Sprintf("early_terminate: min_iter %d and max_iter %d are both set: max_iter wins and min_iter is ignored, as in W&B", e.MinIter, e.MaxIter))
	}
	points := s.DecisionSteps()
	list := make([]string, 0, min(len(points), 10))
	for i, p := range points {
		if i == 10 {
			list = append(list, fmt.Sprintf("… (%d in all)", len(points)))
			break
		}
		list = append(list, strconv.FormatInt(p, 10))
	}
	where := "environment steps " + strings.Join(list, ", ")
	if s.RungUnit() == RungLogs {
		where = fmt.Sprintf("%s logged values of %s (W&B's hyperband bands: band b is judged on the (b+1)-th value)", strings.Join(list, ", "), s.Metric.Name)
	}
	if s.PruneMode() == PruneStop {
		out = append(out, fmt.Sprintf("early_terminate: %s, stop mode: judged as the metric stream passes %s; pruned trainers are stopped (SIGTERM, then kill after grace_period %s)", e.Type, where, s.Trainer.GracePeriod))
	} else {
		out = append(out, fmt.Sprintf("early_terminate: %s, pause mode: segments end at %s, where each trial checkpoints and resumes once its configuration is decided", e.Type, where))
	}
	switch e.Type {
	case PrunerASHA, PrunerHyperband:
		if s.MultiObjective() {
			out = append(out, fmt.Sprintf("early_terminate: %d rungs, %d objectives; at a rung reached by n configurations so far, one goes on if it is on their Pareto front there, or in the top ⌊n / %d⌋ (eta) by non-dominated rank and then crowding distance; those that pass every rung train for the full %d steps",
				len(points), len(s.Objectives), e.Eta, s.Trainer.TotalSteps))
			out = append(out, "early_terminate: at a rung, a configuration's objectives are "+rungObjectives(s))
			break
		}
		out = append(out, fmt.Sprintf("early_terminate: %d rungs; at a rung reached by n configurations so far, one goes on only if it is in the top ⌊n / %d⌋ (eta), the best so far while fewer than %d have reached it; those that pass every rung train for the full %d steps",
			len(points), e.Eta, e.Eta, s.Trainer.TotalSteps))
	case PrunerMedian:
		out = append(out, fmt.Sprintf("early_terminate: %d decision steps; at each, a configuration below the median of the others there stops, once %d others (min_trials) have a value there",
			len(points), e.MinTrials))
	}
	return out
}

// rungObjectives says what each objective reads at an early_terminate rung.
func rungObjectives(s *Spec) string {
	var parts []string
	for _, o := range s.Objectives {
		var what string
		switch {
		case !o.Derived():
			what = "the IQM over its seeds of the windowed " + o.Name
		case o.Name == ObjectiveEnvSteps && o.Target != nil:
			what = "the IQM over its seeds of the step each reached the target, never for a seed that has not yet"
		case o.Name == ObjectiveEnvSteps:
			what = "the rung's step, the same for every configuration (it separates none)"
		case o.Name == ObjectiveWallSeconds:
			what = "the IQM over its seeds of their training seconds so far"
		case o.Name == ObjectiveGPUSeconds:
			what = "the IQM over its seeds of their training seconds so far, times resources.gpus"
		case o.Name == ObjectiveSeedFailureRate:
			what = "the share of its seeds that have ended failed so far"
		}
		parts = append(parts, o.Label()+": "+what)
	}
	return strings.Join(parts, "; ")
}

func describeMetrics(s *Spec) string {
	m := s.Trainer.Metrics
	var where string
	switch m.Source {
	case "jsonl":
		where = "JSON lines the trainer writes to $RLSWEEP_METRICS_FILE"
	case "tensorboard":
		where = "TensorBoard event files the trainer writes under $RLSWEEP_TB_DIR"
	case "stdout":
		where = "the trainer's console output"
	case "csv":
		where = "the trainer's progress.csv ($RLSWEEP_METRICS_FILE)"
	case metrics.SourceWandb:
		where = "the W&B run file the trainer's wandb.log writes"
	case metrics.SourceAuto:
		where = "the W&B run file the trainer's wandb.log writes, or TensorBoard event files under $RLSWEEP_TB_DIR, whichever appears first (rlsweep status SWEEP/TRIAL says which a trial's metrics came from)"
	default:
		where = m.Source
	}
	out := "source " + m.Source + ": " + where
	if m.Preset != "" {
		out += ", preset " + m.Preset
	} else if m.Source == "tensorboard" {
		out += ", each tag under its own name"
	}
	return out
}

// Warnings are what a valid spec does that its author most likely did not mean, each naming the field,
// its value and the fix: a bayes budget no larger than its start-up trials leaves nothing to the guided
// search. `validate` and `submit` print them.
func (s *Spec) Warnings() []string {
	var out []string
	if s.Method == MethodBayes {
		b := s.BayesSettings()
		if field := s.budgetField(); s.Trials <= b.StartupTrials {
			of := "bayes.startup_trials"
			if s.StartupDefaulted() {
				of = "the start-up ones"
			}
			want := fmt.Sprintf("%s above %d (%s), e.g. %d", field, b.StartupTrials, of, 2*b.StartupTrials)
			if s.Trials > 1 {
				want += fmt.Sprintf(", or bayes.startup_trials below %d, e.g. %d", s.Trials, max(s.Trials/3, 1))
			}
			out = append(out, fmt.Sprintf("%s: got %d with method bayes, whose first %d configurations are random start-up ones (%s): all %d are, none is proposed by TPE, so this is a random search of %d trials with the re-run; want %s (or method random, if a random search is meant)",
				field, s.Trials, b.StartupTrials, s.startupSource(), s.Trials, s.Budget(), want))
		}
	}
	return out
}

// startupSource says where a bayes sweep's start-up count comes from: bayes.startup_trials as given, or,
// left out, a third of the budget within [2, 10] (DefaultStartup).
func (s *Spec) startupSource() string {
	if !s.StartupDefaulted() {
		return fmt.Sprintf("bayes.startup_trials %d", s.Bayes.StartupTrials)
	}
	return fmt.Sprintf("bayes.startup_trials left out: a third of %s %d, within [%d, %d]",
		s.budgetField(), s.Trials, MinDefaultStartupTrials, DefaultStartupTrials)
}

// budgetField names the field that sets a random, sobol or bayes sweep's number of configurations:
// run_cap in a W&B config, trials in an rlsweep spec.
func (s *Spec) budgetField() string {
	if s.wandb != nil {
		return "run_cap"
	}
	return "trials"
}

// Notices are what a user should know about how a valid spec was read that is not an error: the keys of
// a W&B config rlsweep accepts without acting on them (entity, controller, metric.impute, …), and the
// defaults it chose where W&B has none. `validate` and `submit` print them.
func (s *Spec) Notices() []string {
	w := s.wandb
	if w == nil {
		return nil
	}
	var out []string
	if len(w.ignored) > 0 {
		out = append(out, "accepted, not used by rlsweep: "+strings.Join(w.ignored, ", "))
	}
	if (s.Method == MethodRandom || s.Method == MethodBayes) && !w.runCapSet {
		out = append(out, fmt.Sprintf("no run_cap: %d trials (rlsweep's default for a W&B %s sweep); set run_cap to change it", DefaultWandBRunCap, s.Method))
	}
	return out
}
