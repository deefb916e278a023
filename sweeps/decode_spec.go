package sweeps

import (
	"gopkg.in/yaml.v3"
)

// spec decodes the top-level mapping.
func (d *decoder) spec(n *yaml.Node, s *Spec) {
	d.mapping(n, "", []field{
		{"name", d.text(&s.Name)},
		{"description", d.text(&s.Description)},
		{"trainer", func(p string, v *yaml.Node) { d.trainer(v, p, &s.Trainer) }},
		{"metric", func(p string, v *yaml.Node) {
			if v.Kind == yaml.SequenceNode {
				d.objectives(v, p, s)
				return
			}
			d.mapping(v, p, []field{{"name", d.text(&s.Metric.Name)}, {"goal", d.text(&s.Metric.Goal)},
				{"bounds", func(bp string, bv *yaml.Node) { d.bounds(bv, bp, &s.Metric.Bounds) }}})
		}},
		{"method", d.text(&s.Method)},
		{"trials", d.smallInt(&s.Trials)},
		{"sampler_seed", d.bigInt(&s.SamplerSeed)},
		{"order", d.text(&s.Order)},
		{"seeds", func(p string, v *yaml.Node) { d.seeds(v, p, s) }},
		{"parameters", func(p string, v *yaml.Node) { d.parameters(v, p, s) }},
		{"probes", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"enabled", d.flag(&s.Probes.Enabled)}, {"command", d.textList(&s.Probes.Command)}})
		}},
		{"diagnostics", func(p string, v *yaml.Node) { d.diagnostics(v, p, &s.Diagnostics) }},
		{"early_terminate", func(p string, v *yaml.Node) {
			s.EarlyTerminate = &EarlyTerminate{StopDivergedConfigs: true}
			d.earlyTerminate(v, p, s.EarlyTerminate)
		}},
		{"pbt", func(p string, v *yaml.Node) {
			s.PBT = NewPBT()
			d.pbt(v, p, s.PBT)
		}},
		{"concurrency", d.smallInt(&s.Concurrency)},
		{"resources", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"task_queue", d.text(&s.Resources.TaskQueue)}, {"gpu_class", d.text(&s.Resources.GPUClass)},
				{"gpus", d.float(&s.Resources.GPUs)}, {"memory_param", d.text(&s.Resources.MemoryParam)},
				{"precision", d.textList(&s.Resources.Precision)}})
		}},
		{"retries", func(p string, v *yaml.Node) {
			d.mapping(v, p, []field{{"max_attempts", d.smallInt(&s.Retries.MaxAttempts)},
				{"max_infra_retries", d.smallInt(&s.Retries.MaxInfraRetries)}})
		}},
		{"artifacts", d.text(&s.Artifacts)},
		{"regression", func(p string, v *yaml.Node) {
			r := DefaultRegression()
			s.Regression = &r
			d.mapping(v, p, []field{
				{"tolerance", d.float(&r.Tolerance)},
				{"confidence", d.float(&r.Confidence)},
				{"resamples", d.smallInt(&r.Resamples)},
				{"min_prob_improvement", d.float(&r.MinProbImprovement)},
				{"max_new_failures", d.smallInt(&r.MaxNewFailures)},
			})
		}},
		{"bayes", func(p string, v *yaml.Node) { d.bayesSection(v, p, s) }},
		{"confirm", func(p string, v *yaml.Node) {
			s.Confirm = &Confirm{Top: DefaultConfirmTop}
			d.mapping(v, p, []field{{"gpu_classes", d.textList(&s.Confirm.GPUClasses)}, {"top", d.smallInt(&s.Confirm.Top)}})
		}},
	})
}

func (d *decoder) trainer(n *yaml.Node, path string, t *Trainer) {
	d.mapping(n, path, []field{
		{"builtin", d.text(&t.Builtin)},
		{"command", d.textList(&t.Command)},
		{"env", d.text(&t.Env)},
		{"environment", d.textMap(&t.Environment)},
		{"total_steps", d.bigInt(&t.TotalSteps)},
		{"segment_steps", d.bigInt(&t.SegmentSteps)},
		{"metrics", d.metricsSource(&t.Metrics)},
		{"stall_timeout", d.duration(&t.StallTimeout)},
		{"grace_period", d.duration(&t.GracePeriod)},
	})
}

func (d *decoder) seeds(v *yaml.Node, path string, s *Spec) {
	s.Seeds = []int64{}
	d.list(v, path, "a list of integers", func(_ int, p string, e *yaml.Node) {
		if n, ok := d.integer(e, p); ok {
			s.Seeds = append(s.Seeds, n)
		}
	})
}

func (d *decoder) diagnostics(n *yaml.Node, path string, g *Diagnostics) {
	d.mapping(n, path, []field{
		{"enabled", d.flag(&g.Enabled)},
		{"warmup_steps", d.bigInt(&g.WarmupSteps)},
		{"patience", d.smallInt(&g.Patience)},
		{"actions", d.smallInt(&g.Actions)},
		{"rules", func(p string, v *yaml.Node) {
			g.Rules = map[string]RuleOverride{}
			d.each(v, p, "a mapping of rule names to overrides", func(name, rp string, _, rv *yaml.Node) {
				var r RuleOverride
				d.mapping(rv, rp, []field{
					{"threshold", d.floatPtr(&r.Threshold)},
					{"level", d.text(&r.Level)},
					{"patience", func(pp string, pv *yaml.Node) {
						var n int
						d.smallInt(&n)(pp, pv)
						r.Patience = &n
					}},
				})
				g.Rules[name] = r
			})
		}},
	})
}

// parameters decodes the parameters mapping, keeping the spec's order. A min/max parameter without a
// distribution gets int_uniform when both bounds are written as integers (as W&B does), uniform otherwise.
func (d *decoder) parameters(v *yaml.Node, path string, s *Spec) {
	d.each(v, path, "a mapping of parameter names to {values | value | min, max | distribution}", func(name, p string, k, pv *yaml.Node) {
		prm := Parameter{Name: name, Line: k.Line}
		ints := 0
		bound := func(dst **float64) func(string, *yaml.Node) {
			return func(bp string, bv *yaml.Node) {
				d.floatPtr(dst)(bp, bv)
				if bv.Kind == yaml.ScalarNode && bv.ShortTag() == "!!int" {
					ints++
				}
			}
		}
		d.mapping(pv, p, []field{
			{"values", func(vp string, vv *yaml.Node) {
				prm.Values = []any{}
				d.list(vv, vp, "a list of numbers, strings or bools", func(_ int, ep string, e *yaml.Node) {
					if x, ok := d.value(e, ep); ok {
						prm.Values = append(prm.Values, x)
					}
				})
			}},
			{"value", func(vp string, vv *yaml.Node) {
				if x, ok := d.value(vv, vp); ok {
					prm.Value = x
				}
			}},
			{"min", bound(&prm.Min)},
			{"max", bound(&prm.Max)},
			{"distribution", d.text(&prm.Distribution)},
			{"q", func(qp string, qv *yaml.Node) {
				d.floatPtr(&prm.Q)(qp, qv)
				prm.QInt = qv.Kind == yaml.ScalarNode && qv.ShortTag() == "!!int"
			}},
			{"mu", d.floatPtr(&prm.Mu)},
			{"sigma", d.floatPtr(&prm.Sigma)},
			{"a", d.floatPtr(&prm.A)},
			{"b", d.floatPtr(&prm.B)},
			{"probabilities", func(vp string, vv *yaml.Node) {
				prm.Probabilities = []float64{}
				d.list(vv, vp, "a list of numbers", func(_ int, ep string, e *yaml.Node) {
					if f, ok := d.number(e, ep); ok {
						prm.Probabilities = append(prm.Probabilities, f)
					}
				})
			}},
		})
		if quantised(prm.Distribution) && prm.Q == nil {
			q := 1.0
			prm.Q = &q
		}
		if prm.Distribution == "" && (prm.Min != nil || prm.Max != nil) {
			prm.Distribution = DistUniform
			if ints == 2 {
				prm.Distribution = DistIntUniform
			}
		}
		s.Parameters = append(s.Parameters, prm)
	})
}

// metricsSource decodes trainer.metrics (and the rlsweep block's metrics of a W&B config).
func (d *decoder) metricsSource(m *MetricsSource) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.mapping(v, p, []field{
			{"source", d.text(&m.Source)},
			{"preset", d.text(&m.Preset)},
			{"tags", d.textMap(&m.Tags)},
			{"steps_per_iteration", d.bigInt(&m.StepsPerIteration)},
			{"step_key", d.text(&m.StepKey)},
		})
	}
}

// boundsWant is what metric.bounds allows.
const boundsWant = "[lowest, highest], two finite numbers with lowest < highest: the objective's possible " +
	"range (CartPole-v1's return: [0, 500]); leave it out when the task has none"

// bounds decodes a list of two numbers into dst.
func (d *decoder) bounds(v *yaml.Node, path string, dst **[2]float64) {
	var xs []float64
	ok := true
	d.list(v, path, boundsWant, func(_ int, ep string, e *yaml.Node) {
		f, good := d.number(e, ep)
		xs, ok = append(xs, f), ok && good
	})
	switch {
	case v.Kind != yaml.SequenceNode || !ok:
	case len(xs) != 2:
		d.fail(v, path, formatFloats(xs), boundsWant)
	default:
		*dst = &[2]float64{xs[0], xs[1]}
	}
}

// objectives decodes metric written as a list of objectives. A goal left out is maximize for a metric
// the trainer logs and minimize for a derived objective (each a cost or a failure share).
func (d *decoder) objectives(v *yaml.Node, path string, s *Spec) {
	s.Objectives = []Objective{}
	d.list(v, path, "a list of objectives, each {name, goal}", func(_ int, p string, e *yaml.Node) {
		var o Objective
		d.mapping(e, p, []field{{"name", d.text(&o.Name)}, {"goal", d.text(&o.Goal)},
			{"target", d.floatPtr(&o.Target)},
			{"bounds", func(bp string, bv *yaml.Node) { d.bounds(bv, bp, &o.Bounds) }}})
		if o.Goal == "" {
			o.Goal = GoalMaximize
			if o.Derived() {
				o.Goal = GoalMinimize
			}
		}
		s.Objectives = append(s.Objectives, o)
	})
	s.objectivesFromList()
}
