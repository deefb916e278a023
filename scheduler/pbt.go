package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// pbt is population-based training (docs/spec.md#pbt). At a member's boundary at a ready step s it
// waits (Wait) until every running member that started before s has a value there, then ranks the
// member against every member with a value at s, running or ended (one not started is not waited
// for: a sweep with concurrency below the population goes on); one
// in the bottom quantile exploits a member drawn from the healthy ones of the top quantile: it goes on
// from that member's checkpoint at s with its parameters explored (sweeps.Spec.Explore). A member that
// ends diverged is replaced at once by a new member started from the best healthy member's latest
// checkpoint. Every draw comes from a generator seeded by sampler_seed and the number of the decision
// (PBTState.Draws), so the decisions depend only on the order the workflow tells them in.
type pbt struct {
	spec  *sweeps.Spec
	ends  []int64 // the segment ends
	ready []int64 // the ready steps, ascending
	st    PBTState
	// added: the replacements made since Replacements was last called (not state: the sweep takes
	// them right after the Finished that made them).
	added []Replacement
}

// PBTState is pbt's whole memory: per member its parameters' schedule and one point per ready step it
// reached, so population × ready steps points (sweeps.MaxPBTPoints), plus the replacements.
type PBTState struct {
	Members []*PBTMember `json:"members"`
	// Queue: members to start, by index into Members, in order.
	Queue []int `json:"queue,omitempty"`
	// Draws: decisions that drew from the generator so far; the next one draws from stream Draws.
	Draws int `json:"draws,omitempty"`
	// Replaced: replacements made so far (at most the population).
	Replaced int `json:"replaced,omitempty"`
}

// PBTMember is one member: a trial.
type PBTMember struct {
	ID     string         `json:"id"`
	Config int            `json:"config"`
	Seed   int64          `json:"seed"`
	Params map[string]any `json:"params"`
	// Schedule: the parameters from each step on: the first from the member's start, one per exploit.
	Schedule []ScheduleEntry `json:"schedule"`
	// Parent: the member a replacement started from; ResumeFrom and ResumeStep its checkpoint.
	Parent     string     `json:"parent,omitempty"`
	ResumeFrom string     `json:"resume_from,omitempty"`
	ResumeStep int64      `json:"resume_step,omitempty"`
	Started    bool       `json:"started,omitempty"`
	Ended      bool       `json:"ended,omitempty"`
	Outcome    string     `json:"outcome,omitempty"`
	Replaced   bool       `json:"replaced,omitempty"`
	Points     []PBTPoint `json:"points,omitempty"`
}

// ScheduleEntry: a member trained with Params from Step on.
type ScheduleEntry struct {
	Step   int64          `json:"step"`
	Params map[string]any `json:"params"`
}

// PBTPoint is a member at one ready step: its value (as the metric reads; nil without one), the
// step its records reached and the checkpoint written there, whether its segment ended healthy (no
// diagnostic warning), and the decision it got there (Exploit, or nil for Continue).
type PBTPoint struct {
	Step       int64     `json:"step"`
	LastStep   int64     `json:"last_step"`
	Value      *float64  `json:"value,omitempty"`
	Checkpoint string    `json:"checkpoint,omitempty"`
	Healthy    bool      `json:"healthy"`
	Decided    bool      `json:"decided,omitempty"`
	Decision   *Decision `json:"decision,omitempty"`
}

func newPBT(spec *sweeps.Spec, state State) (*pbt, error) {
	if spec.PBT == nil {
		return nil, fmt.Errorf("pbt: got no pbt section, want one with method pbt")
	}
	s := &pbt{spec: spec, ends: spec.SegmentEnds(), ready: spec.PBTReadySteps()}
	if state.PBT != nil {
		s.st = *state.PBT
		return s, nil
	}
	trials, err := sweeps.Plan(spec)
	if err != nil {
		return nil, err
	}
	for i, t := range trials {
		s.st.Members = append(s.st.Members, &PBTMember{ID: t.ID, Config: t.Config, Seed: t.Seed, Params: t.Params,
			Schedule: []ScheduleEntry{{Step: 0, Params: t.Params}}})
		s.st.Queue = append(s.st.Queue, i)
	}
	return s, nil
}

func (s *pbt) member(id string) *PBTMember {
	for _, m := range s.st.Members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (s *pbt) trial(m *PBTMember) sweeps.Trial {
	return sweeps.Trial{ID: m.ID, Config: m.Config, Seed: m.Seed, Params: maps.Clone(m.Params),
		ResumeFrom: m.ResumeFrom, ResumeStep: m.ResumeStep, Parent: m.Parent}
}

func (s *pbt) Peek() (sweeps.Trial, bool) {
	if len(s.st.Queue) == 0 {
		return sweeps.Trial{}, false
	}
	return s.trial(s.st.Members[s.st.Queue[0]]), true
}

func (s *pbt) Next() (sweeps.Trial, bool) {
	t, ok := s.Peek()
	if ok {
		s.st.Members[s.st.Queue[0]].Started = true
		s.st.Queue = s.st.Queue[1:]
	}
	return t, ok
}

func (s *pbt) AsksAtBoundaries() bool { return true }

func (s *pbt) Done() bool { return len(s.st.Queue) == 0 }

func (s *pbt) Total() int { return len(s.st.Members) }

func (s *pbt) State() State {
	st := s.st
	return State{PBT: &st}
}

// rng is the generator of the next drawing decision.
func (s *pbt) rng() *rand.Rand {
	r := rand.New(rand.NewPCG(uint64(s.spec.SamplerSeed), 0x706274^uint64(s.st.Draws))) // "pbt"
	s.st.Draws++
	return r
}

// oriented is a value on a larger-is-better scale; a missing or NaN value is the worst.
func (s *pbt) oriented(v *float64) float64 {
	if v == nil || math.IsNaN(*v) {
		return math.Inf(-1)
	}
	if s.spec.Metric.Goal == sweeps.GoalMinimize {
		return -*v
	}
	return *v
}

func (m *PBTMember) point(step int64) *PBTPoint {
	for i := range m.Points {
		if m.Points[i].Step == step {
			return &m.Points[i]
		}
	}
	return nil
}

// paramsAt are the member's parameters from step on.
func (m *PBTMember) paramsAt(step int64) map[string]any {
	p := m.Params
	for _, e := range m.Schedule {
		if e.Step <= step {
			p = e.Params
		}
	}
	return p
}

// unhealthy: the member can never be a source (it diverged, failed or ran out of memory), or its
// latest segment warned.
func (m *PBTMember) unhealthy() bool {
	if m.Ended && (m.Outcome == results.OutcomeDiverged || m.Outcome == results.OutcomeFailed || m.Outcome == results.OutcomeOOM) {
		return true
	}
	return len(m.Points) > 0 && !m.Points[len(m.Points)-1].Healthy
}

// source says whether m may be exploited at step: healthy there and now, with a checkpoint there that
// it did not itself just leave for another's.
func (m *PBTMember) source(step int64) (*PBTPoint, bool) {
	p := m.point(step)
	if p == nil || !p.Healthy || p.Checkpoint == "" || m.unhealthy() {
		return nil, false
	}
	if p.Decision != nil && p.Decision.Action == Exploit {
		return nil, false
	}
	return p, true
}

func (s *pbt) AtBoundary(b Boundary) Decision {
	goOn := Decision{Segment: b.Segment, Action: Continue}
	m := s.member(b.TrialID)
	if m == nil || b.Segment < 0 || b.Segment >= len(s.ends) {
		return goOn
	}
	step := s.ends[b.Segment]
	if _, ok := slices.BinarySearch(s.ready, step); !ok {
		return goOn
	}
	if len(s.spec.PBT.Schedule) > 0 {
		return s.replay(m, b, step)
	}
	p := m.point(step)
	if p != nil && p.Decided {
		// Asked again (a continue-as-new dropped the answer): the same answer.
		if p.Decision != nil {
			return *p.Decision
		}
		return goOn
	}
	if b.Params != nil {
		// What the member trained with (a question asked again after an exploit was decided is
		// answered above: its parameters are the exploit's, not the question's).
		m.Params = maps.Clone(b.Params)
	}
	value := b.Windowed
	if value == nil {
		value = b.Objective
	}
	if p == nil {
		m.Points = append(m.Points, PBTPoint{Step: step})
		p = &m.Points[len(m.Points)-1]
	}
	p.LastStep, p.Value, p.Checkpoint, p.Healthy = b.Step, value, b.CheckpointKey, len(b.Warnings) == 0
	if !s.allArrived(step) {
		return Decision{Segment: b.Segment, Action: Wait}
	}
	p.Decided = true
	d := s.decide(m, step, b.Segment)
	if d.Action == Exploit {
		kept := d
		e := *d.Exploit
		e.Reason = "" // the decision's Reason says it: kept once in the state
		kept.Exploit = &e
		p.Decision = &kept
	}
	return d
}

// allArrived says whether every running member that started before step has a value there.
func (s *pbt) allArrived(step int64) bool {
	for _, o := range s.st.Members {
		if o.Started && !o.Ended && o.Schedule[0].Step < step && o.point(step) == nil {
			return false
		}
	}
	return true
}

// decide ranks m at step against the members with a value there and exploits when it is in the
// bottom quantile.
func (s *pbt) decide(m *PBTMember, step int64, seg int) Decision {
	goOn := Decision{Segment: seg, Action: Continue}
	type ranked struct {
		m *PBTMember
		v float64
	}
	var all []ranked
	for _, o := range s.st.Members {
		if p := o.point(step); p != nil {
			all = append(all, ranked{o, s.oriented(p.Value)})
		}
	}
	q := s.spec.PBT.Quantile
	if need := max(2, int(math.Ceil(1/q))); len(all) < need {
		return goOn
	}
	slices.SortStableFunc(all, func(a, b ranked) int { // best first; ties: the lower member number
		if c := cmp.Compare(b.v, a.v); c != 0 {
			return c
		}
		return cmp.Compare(a.m.Config, b.m.Config)
	})
	n := len(all)
	k := max(1, int(math.Floor(float64(n)*q)))
	pos := slices.IndexFunc(all, func(r ranked) bool { return r.m == m })
	if pos < n-k {
		return goOn
	}
	var sources []*PBTMember
	for _, r := range all[:k] {
		if _, ok := r.m.source(step); ok && r.m != m {
			sources = append(sources, r.m)
		}
	}
	if len(sources) == 0 {
		goOn.Reason = fmt.Sprintf("pbt at step %d: in the bottom %d of %d, but no healthy member in the top %d to exploit", step, k, n, k)
		return goOn
	}
	rng := s.rng()
	src := sources[rng.IntN(len(sources))]
	sp, _ := src.source(step)
	newParams, changes := s.spec.Explore(src.paramsAt(step), rng)
	old := maps.Clone(m.Params)
	mp := m.point(step)
	reason := fmt.Sprintf("pbt at step %d: rank %d of %d (bottom %d) exploits %s (rank %d)%s", step, pos+1, n, k, src.ID,
		slices.IndexFunc(all, func(r ranked) bool { return r.m == src })+1, formatChanges(changes))
	d := Decision{Segment: seg, Action: Exploit, Reason: reason, ResumeFrom: sp.Checkpoint, ResumeStep: sp.LastStep,
		Params: newParams, Exploit: &results.Exploit{Member: m.ID, From: src.ID, Step: step, FromStep: sp.LastStep,
			Source: sp.Checkpoint, Old: old, New: maps.Clone(newParams), Value: mp.Value, SourceValue: sp.Value, Reason: reason}}
	m.Params = maps.Clone(newParams)
	m.Schedule = append(m.Schedule, ScheduleEntry{Step: step, Params: maps.Clone(newParams)})
	return d
}

func formatChanges(changes []sweeps.Change) string {
	out := ""
	for i, c := range changes {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		how := fmt.Sprintf("×%g", c.Factor)
		if c.Resample {
			how = "resampled"
		}
		out += fmt.Sprintf("%s%s %v→%v (%s)", sep, c.Name, c.Old, c.New, how)
	}
	return out
}

// Finished records a member's end; a diverged member is replaced at once (at most population times).
func (s *pbt) Finished(sum results.TrialSummary) {
	m := s.member(sum.TrialID)
	if m == nil || m.Ended {
		return
	}
	m.Ended, m.Outcome = true, sum.Outcome
	if sum.Outcome != results.OutcomeDiverged || m.Replaced || s.st.Replaced >= s.spec.PBT.Population || len(s.spec.PBT.Schedule) > 0 {
		return
	}
	m.Replaced = true
	s.st.Replaced++
	s.replace(m)
}

// replace queues a new member for the diverged m: from the latest checkpoint of the best healthy
// member, ranked at the latest ready step every healthy member reached, with its parameters explored;
// afresh with parameters drawn again when there is none.
func (s *pbt) replace(m *PBTMember) {
	var cands []*PBTMember
	common := int64(math.MaxInt64)
	for _, o := range s.st.Members {
		if o == m || o.unhealthy() || len(o.Points) == 0 {
			continue
		}
		last := o.Points[len(o.Points)-1]
		if last.Checkpoint == "" {
			continue
		}
		cands = append(cands, o)
		common = min(common, last.Step)
	}
	valueAt := func(o *PBTMember) float64 {
		v := math.Inf(-1)
		for _, p := range o.Points {
			if p.Step <= common {
				v = s.oriented(p.Value)
			}
		}
		return v
	}
	var best *PBTMember
	for _, o := range cands {
		if best == nil || valueAt(o) > valueAt(best) {
			best = o
		}
	}
	rng := s.rng()
	n := &PBTMember{Config: len(s.st.Members), Seed: m.Seed}
	n.ID = sweeps.TrialID(n.Config, n.Seed)
	if best == nil {
		n.Params = s.spec.SampleParams(rng)
		n.Schedule = []ScheduleEntry{{Step: 0, Params: maps.Clone(n.Params)}}
	} else {
		last := best.Points[len(best.Points)-1]
		n.Params, _ = s.spec.Explore(best.paramsAt(last.Step), rng)
		n.Parent, n.ResumeFrom, n.ResumeStep = best.ID, last.Checkpoint, last.LastStep
		n.Schedule = []ScheduleEntry{{Step: last.Step, Params: maps.Clone(n.Params)}}
	}
	s.st.Members = append(s.st.Members, n)
	s.st.Queue = append(s.st.Queue, len(s.st.Members)-1)
	r := Replacement{Member: n.ID, Replaces: m.ID, Parent: n.Parent, ResumeFrom: n.ResumeFrom, ResumeStep: n.ResumeStep,
		Params: maps.Clone(n.Params)}
	if best == nil {
		r.Reason = fmt.Sprintf("member %s diverged; %s replaces it afresh with parameters drawn again (no healthy member had a checkpoint)", m.ID, n.ID)
	} else {
		r.Reason = fmt.Sprintf("member %s diverged; %s replaces it from member %s's checkpoint at step %d, its parameters explored", m.ID, n.ID, best.ID, n.ResumeStep)
	}
	s.added = append(s.added, r)
}

// Replacements returns the members added in place of diverged ones since the last call (Replacer).
func (s *pbt) Replacements() []Replacement {
	r := s.added
	s.added = nil
	return r
}

// PBTReporter is a Scheduler running pbt, for status and watch.
type PBTReporter interface {
	PBT() *PBTStatus
}

// PBTStatus is a pbt sweep's progress: its members (replacements included), the parameter changes
// they made (exploits, or a schedule's steps), the members replaced, and the highest ready step a
// member reached.
type PBTStatus struct {
	Members   int
	Exploits  int
	Replaced  int
	ReadyStep int64
}

// PBT returns the sweep's pbt progress.
func (s *pbt) PBT() *PBTStatus {
	st := &PBTStatus{Members: len(s.st.Members), Replaced: s.st.Replaced}
	for _, m := range s.st.Members {
		st.Exploits += len(m.Schedule) - 1
		for _, p := range m.Points {
			st.ReadyStep = max(st.ReadyStep, p.Step)
		}
	}
	return st
}

// replay answers a schedule's member: at a step the schedule names, go on from its own checkpoint
// with the schedule's parameters there.
func (s *pbt) replay(m *PBTMember, b Boundary, step int64) Decision {
	i := slices.IndexFunc(s.spec.PBT.Schedule, func(e sweeps.ScheduleStep) bool { return e.Step == step })
	if i <= 0 || b.CheckpointKey == "" {
		return Decision{Segment: b.Segment, Action: Continue}
	}
	params := maps.Clone(m.paramsAt(step - 1))
	for k, v := range s.spec.PBT.Schedule[i].Params {
		params[k] = v
	}
	if len(m.Schedule) == 0 || m.Schedule[len(m.Schedule)-1].Step < step {
		m.Schedule = append(m.Schedule, ScheduleEntry{Step: step, Params: maps.Clone(params)})
	}
	m.Params = maps.Clone(params)
	reason := fmt.Sprintf("schedule at step %d: %v", step, s.spec.PBT.Schedule[i].Params)
	return Decision{Segment: b.Segment, Action: Exploit, Reason: reason, ResumeFrom: b.CheckpointKey, ResumeStep: b.Step, Params: params,
		Exploit: &results.Exploit{Member: m.ID, From: m.ID, Step: step, FromStep: b.Step, Source: b.CheckpointKey,
			Old: maps.Clone(m.paramsAt(step - 1)), New: maps.Clone(params), Reason: reason}}
}
