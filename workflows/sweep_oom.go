package workflows

import (
	"fmt"
	"strconv"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// OOMBound is what a sweep learnt from a trial that ran out of memory on one GPU class (docs/
// architecture.md, "Out of memory is a resource outcome"): the smallest value of the memory parameter
// (sweeps.Spec.MemoryParam) that did, the trial, and the GPU model its hardware record names.
type OOMBound struct {
	Param string
	Value float64
	Trial string
	GPU   string `json:",omitempty"`
}

// trialClass is the GPU class a sweep's trials train on: their task queue. In rlsweep's deployment
// model one queue is served by workers of one GPU class (resources.gpu_class picks
// rlsweep-gpu-<class>, resources.task_queue names one), so a configuration that ran out of memory on
// the queue runs out again on any of its workers.
func (s *sweepRun) trialClass() string { return s.in.Spec.Resources.TrialQueue() }

// classOf is the GPU class a trial trains on: the sweep's, or the one a confirm re-run names
// (sweeps.Trial.GPUClass).
func (s *sweepRun) classOf(gpuClass string) string {
	if gpuClass != "" {
		return sweeps.GPUClassQueue(gpuClass)
	}
	return s.trialClass()
}

// learnOOM keeps, for the trial's GPU class, the smallest memory-parameter value that ran out of memory
// (sum: a trial that trained and ended oom), and says whether the bound was lowered.
func (st *SweepState) learnOOM(class, param string, sum results.TrialSummary) bool {
	if param == "" {
		return false
	}
	v, ok := sweeps.Numeric(sum.Params[param])
	if !ok {
		return false
	}
	if b, known := st.OOMBounds[class]; known && b.Value <= v {
		return false
	}
	if st.OOMBounds == nil {
		st.OOMBounds = map[string]OOMBound{}
	}
	st.OOMBounds[class] = OOMBound{Param: param, Value: v, Trial: sum.TrialID, GPU: sum.Hardware.GPUNames()}
	return true
}

// infeasible is why trial id (with params) must not start: its memory-parameter value is at or above
// one that ran out of memory on its GPU class; "" when it may.
func (s *sweepRun) infeasible(id string, params map[string]any, class string) string {
	if len(s.state.OOMBounds) == 0 {
		return ""
	}
	b, ok := s.state.OOMBounds[class]
	if !ok {
		return ""
	}
	v, ok := sweeps.Numeric(params[b.Param])
	if !ok || v < b.Value {
		return ""
	}
	on := ""
	if b.GPU != "" {
		on = " on " + b.GPU
	}
	msg := fmt.Sprintf("trial %s: not started: %s %s ≥ %s, which ran out of memory%s (trial %s) on queue %s",
		id, b.Param, fmtNum(v), fmtNum(b.Value), on, b.Trial, class)
	if advice := s.in.Spec.MemoryAdvice(b.Param, b.Value); advice != "" {
		msg += "; " + advice
	}
	return msg
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// skipped is the summary of a trial not started because it is infeasible (reason): outcome oom, no
// step trained.
func skipped(t sweeps.Trial, reason string) results.TrialSummary {
	return results.TrialSummary{TrialID: t.ID, Config: t.Config, Seed: t.Seed, Params: t.Params, Precision: t.Precision, GPUClass: t.GPUClass,
		Outcome: results.OutcomeOOM, Error: reason, Unstarted: true}
}

// skipAtLaunch records a trial about to start that is infeasible at once, without starting it, and
// says so.
func (s *sweepRun) skipAtLaunch(ctx workflow.Context, t sweeps.Trial) bool {
	reason := s.infeasible(t.ID, t.Params, s.classOf(t.GPUClass))
	if reason == "" {
		return false
	}
	s.book.running[t.ID] = true // never started: recorded at once
	s.record(ctx, skipped(t, reason))
	return true
}

// adviseOOM adds to an oom trial's error the next smaller value of the memory parameter in the space,
// to its fix line where it has one.
func (s *sweepRun) adviseOOM(sum *results.TrialSummary) {
	param := s.in.Spec.MemoryParam()
	v, ok := sweeps.Numeric(sum.Params[param])
	if param == "" || !ok {
		return
	}
	advice := s.in.Spec.MemoryAdvice(param, v)
	if advice == "" {
		return
	}
	if i := strings.Index(sum.Error, "\nfix: "); i >= 0 {
		at := i + len("\nfix: ")
		sum.Error = sum.Error[:at] + advice + "; or " + sum.Error[at:]
		return
	}
	sum.Error += " (" + advice + ")"
}

// trialParams is the parameters of a trial this sweep planned: a standby trial's, known from its
// launch in this run or from the plan (a fixed plan's, which every sweep with standby trials has).
func (s *sweepRun) trialParams(id string) (map[string]any, bool) {
	if p, ok := s.standbyParams[id]; ok {
		return p, true
	}
	if s.planned == nil {
		s.planned = map[string]map[string]any{}
		if plan, err := sweeps.Plan(&s.in.Spec); err == nil {
			for _, t := range plan {
				s.planned[t.ID] = t.Params
			}
		}
	}
	p, ok := s.planned[id]
	return p, ok
}

// skipStandby tells each standby trial that has become infeasible not to train: a release carrying
// the reason (Release.Skip), on which it ends oom without training. One the worker released before
// it arrives trains as any other.
func (s *sweepRun) skipStandby(ctx workflow.Context) {
	if len(s.state.OOMBounds) == 0 || s.state.Lanes == nil {
		return
	}
	for _, id := range sortedKeys(s.state.Lanes.Standby) {
		if s.skipSent[id] {
			continue
		}
		params, ok := s.trialParams(id)
		if !ok {
			continue
		}
		if reason := s.infeasible(id, params, s.trialClass()); reason != "" {
			s.sendSkip(ctx, id, reason)
		}
	}
}

// sendSkip sends a standby trial its skip once its start has landed (followTrials sends it then).
func (s *sweepRun) sendSkip(ctx workflow.Context, id, reason string) {
	if s.skipSent == nil {
		s.skipSent = map[string]bool{}
	}
	if !s.book.hasStarted(id) {
		return // sent as its start lands (followTrials)
	}
	s.skipSent[id] = true
	s.signalTrial(ctx, id, SignalRelease, Release{FromSweep: true, Skip: reason})
}

// standbyInfeasible is why a standby trial (one being released: no longer in Lanes.Standby) must not
// train; "" when it may.
func (s *sweepRun) standbyInfeasible(id string) string {
	if len(s.state.OOMBounds) == 0 {
		return ""
	}
	params, ok := s.trialParams(id)
	if !ok {
		return ""
	}
	return s.infeasible(id, params, s.trialClass())
}

// startedInfeasible says whether a standby trial whose start just landed is infeasible and not told
// yet (a bound learnt while its start was in flight): it is then told (release, sendSkip).
func (s *sweepRun) startedInfeasible(id string) bool {
	if len(s.state.OOMBounds) == 0 || s.skipSent[id] {
		return false
	}
	if _, standby := s.state.Lanes.standby(id); !standby {
		return false
	}
	return s.standbyInfeasible(id) != ""
}
