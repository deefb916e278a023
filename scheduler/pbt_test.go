package scheduler_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweeps"
)

// pbtSpec: population members, ready steps 100, 200, 300 of 400, lr and gamma mutable.
func pbtSpec(t *testing.T, pbt string) *sweeps.Spec {
	t.Helper()
	y := "name: p\ntrainer:\n  command: [python, train.py]\n  total_steps: 400\n" +
		"metric: {name: ret, goal: maximize}\nmethod: pbt\nsampler_seed: 3\nseeds: [1, 2]\nconcurrency: 100\n" +
		"parameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\n  gamma: {min: 0.9, max: 0.999}\n  num_envs: {values: [4, 8]}\n" +
		"pbt: {ready_steps: 100, " + pbt + "}\n"
	spec, err := sweeps.Decode(strings.NewReader(y), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec
}

func newPBT(t *testing.T, spec *sweeps.Spec, st scheduler.State) scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(spec, st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ckpt(id string, step int64) string {
	return "sweeps/x/trials/" + id + "/checkpoints/ckpt-" + id + "-" + string(rune('0'+step/100))
}

// boundary is member tr's boundary after segment seg (step (seg+1)·100) with value v.
func boundary(tr sweeps.Trial, seg int, v float64, warnings ...string) scheduler.Boundary {
	step := int64(seg+1) * 100
	return scheduler.Boundary{TrialID: tr.ID, Config: tr.Config, Seed: tr.Seed, Segment: seg, Step: step + 3, Windowed: f(v),
		CheckpointKey: ckpt(tr.ID, step), Warnings: warnings, Params: tr.Params}
}

func TestPBTBottomExploitsTop(t *testing.T) {
	spec := pbtSpec(t, "population: 4")
	s := newPBT(t, spec, scheduler.State{})
	tr := startAll(t, s)
	if len(tr) != 4 || s.Total() != 4 || !s.AsksAtBoundaries() {
		t.Fatalf("started %d members, total %d; want 4", len(tr), s.Total())
	}
	// Three members arrive: they wait for the fourth, running, member to reach step 100.
	for i := 1; i <= 3; i++ {
		if d := s.AtBoundary(boundary(tr[i], 0, float64(i+1))); d.Action != scheduler.Wait {
			t.Fatalf("member %d: %+v, want wait", i, d)
		}
	}
	// The fourth is the worst: it exploits the best (member 3), at step 100.
	d := s.AtBoundary(boundary(tr[0], 0, 1))
	if d.Action != scheduler.Exploit || d.Segment != 0 {
		t.Fatalf("worst member: %+v, want exploit", d)
	}
	if d.ResumeFrom != ckpt(tr[3].ID, 100) || d.ResumeStep != 103 {
		t.Errorf("exploit resumes from %s at %d, want %s at 103", d.ResumeFrom, d.ResumeStep, ckpt(tr[3].ID, 100))
	}
	src := tr[3].Params
	if d.Params["num_envs"] != src["num_envs"] {
		t.Errorf("num_envs = %v, want the source's %v (not mutable: it comes with the checkpoint)", d.Params["num_envs"], src["num_envs"])
	}
	lr, g := d.Params["lr"].(float64), d.Params["gamma"].(float64)
	if lr < 0.0001 || lr > 0.01 || g < 0.9 || g > 0.999 {
		t.Errorf("explored lr %v gamma %v, want within their bounds", lr, g)
	}
	e := d.Exploit
	if e == nil || e.Member != tr[0].ID || e.From != tr[3].ID || e.Step != 100 || e.Source != d.ResumeFrom ||
		!reflect.DeepEqual(e.Old, tr[0].Params) || !reflect.DeepEqual(e.New, d.Params) || *e.Value != 1 || *e.SourceValue != 4 || e.Reason != d.Reason {
		t.Errorf("exploit record %+v, want member %s from %s at 100 with old and new parameters", e, tr[0].ID, tr[3].ID)
	}
	// A member in the middle goes on; asking again is answered the same way.
	d2 := s.AtBoundary(boundary(tr[0], 0, 1))
	want := d
	we := *d.Exploit
	we.Reason = "" // kept once in the state, as the decision's Reason
	want.Exploit = &we
	if !reflect.DeepEqual(d2, want) {
		t.Errorf("asked again: %+v, want %+v", d2, want)
	}
	if st := s.(scheduler.PBTReporter).PBT(); st.Exploits != 1 || st.ReadyStep != 100 {
		t.Errorf("PBT() = %+v, want 1 exploit at ready step 100", *st)
	}
	// Those that waited are answered now: they go on.
	for i := 1; i <= 3; i++ {
		if d := s.AtBoundary(boundary(tr[i], 0, float64(i+1))); d.Action != scheduler.Continue {
			t.Errorf("member %d asked again: %+v, want continue", i, d)
		}
	}
	// A member that ended is not waited for.
	s.Finished(results.TrialSummary{TrialID: tr[2].ID, Outcome: results.OutcomeCompleted})
	for _, i := range []int{0, 1} {
		if d := s.AtBoundary(boundary(tr[i], 1, 1)); d.Action != scheduler.Wait {
			t.Errorf("member %d at step 200: %+v, want wait for member 3", i, d)
		}
	}
	if d := s.AtBoundary(boundary(tr[3], 1, 4)); d.Action == scheduler.Wait {
		t.Errorf("member 3 at step 200, the last running one to arrive: %+v, want a decision", d)
	}
}

// gamma is perturbed through 1 − x and lr multiplied, each by one of the factors.
func TestPBTPerturbsGammaThroughComplement(t *testing.T) {
	spec := pbtSpec(t, "population: 4, resample_probability: 0")
	for trial := range 10 {
		spec.SamplerSeed = int64(trial)
		s := newPBT(t, spec, scheduler.State{})
		tr := startAll(t, s)
		for i := 1; i <= 3; i++ {
			s.AtBoundary(boundary(tr[i], 0, float64(i+1)))
		}
		d := s.AtBoundary(boundary(tr[0], 0, 1))
		src := tr[3].Params
		e := d.Exploit
		lrF := d.Params["lr"].(float64) / src["lr"].(float64)
		okF := func(x float64) bool { return math.Abs(x-0.8) < 1e-9 || math.Abs(x-1.2) < 1e-9 }
		if !okF(lrF) && d.Params["lr"] != 0.01 && d.Params["lr"] != 0.0001 {
			t.Errorf("lr %v from %v: factor %v, want 0.8 or 1.2", d.Params["lr"], src["lr"], lrF)
		}
		g0, g := src["gamma"].(float64), d.Params["gamma"].(float64)
		gF := (1 - g) / (1 - g0)
		if !okF(gF) && g != 0.999 && g != 0.9 {
			t.Errorf("gamma %v from %v: (1−γ') / (1−γ) = %v, want 0.8 or 1.2 (%+v)", g, g0, gF, e)
		}
	}
}

// A member whose segment at the step or whose latest segment warned is never a source.
func TestPBTNeverExploitsUnhealthy(t *testing.T) {
	spec := pbtSpec(t, "population: 4, quantile: 0.5")
	for seed := range 20 {
		spec.SamplerSeed = int64(seed)
		s := newPBT(t, spec, scheduler.State{})
		tr := startAll(t, s)
		s.AtBoundary(boundary(tr[3], 0, 4, "clip_excess")) // the best, but warned
		s.AtBoundary(boundary(tr[2], 0, 3))
		s.AtBoundary(boundary(tr[1], 0, 2))
		d := s.AtBoundary(boundary(tr[0], 0, 1))
		if d.Action != scheduler.Exploit || d.Exploit.From != tr[2].ID {
			t.Fatalf("sampler_seed %d: %+v, want an exploit of %s, the only healthy member of the top half", seed, d, tr[2].ID)
		}
	}
	// With the top member unhealthy and quantile 0.25, there is no source: the member goes on.
	s := newPBT(t, pbtSpec(t, "population: 4"), scheduler.State{})
	tr := startAll(t, s)
	s.AtBoundary(boundary(tr[3], 0, 4, "kl_spike"))
	s.AtBoundary(boundary(tr[2], 0, 3))
	s.AtBoundary(boundary(tr[1], 0, 2))
	if d := s.AtBoundary(boundary(tr[0], 0, 1)); d.Action != scheduler.Continue || !strings.Contains(d.Reason, "no healthy member") {
		t.Errorf("%+v, want continue: no healthy member in the top quantile", d)
	}
	// Healthy at the step but its latest segment warned: not a source either.
	s = newPBT(t, pbtSpec(t, "population: 4"), scheduler.State{})
	tr = startAll(t, s)
	s.AtBoundary(boundary(tr[3], 0, 4))
	s.AtBoundary(boundary(tr[3], 1, 4, "value_anticorrelated"))
	s.AtBoundary(boundary(tr[2], 0, 3))
	s.AtBoundary(boundary(tr[1], 0, 2))
	if d := s.AtBoundary(boundary(tr[0], 0, 1)); d.Action != scheduler.Continue {
		t.Errorf("%+v, want continue: the top member's latest segment warned", d)
	}
	// A member that ended diverged is never a source.
	s = newPBT(t, pbtSpec(t, "population: 4"), scheduler.State{})
	tr = startAll(t, s)
	s.AtBoundary(boundary(tr[3], 0, 4))
	s.Finished(results.TrialSummary{TrialID: tr[3].ID, Outcome: results.OutcomeDiverged})
	s.AtBoundary(boundary(tr[2], 0, 3))
	s.AtBoundary(boundary(tr[1], 0, 2))
	if d := s.AtBoundary(boundary(tr[0], 0, 1)); d.Action != scheduler.Continue {
		t.Errorf("%+v, want continue: the top member diverged", d)
	}
}

// A diverged member is replaced at once from the best healthy member's latest checkpoint.
func TestPBTReplacesDiverged(t *testing.T) {
	spec := pbtSpec(t, "population: 4")
	s := newPBT(t, spec, scheduler.State{})
	tr := startAll(t, s)
	s.AtBoundary(boundary(tr[3], 0, 9, "clip_excess")) // best, unhealthy
	s.AtBoundary(boundary(tr[2], 0, 3))
	s.AtBoundary(boundary(tr[2], 1, 5))
	s.AtBoundary(boundary(tr[1], 0, 2))
	if !s.Done() {
		t.Fatal("Done() = false with every member started")
	}
	s.Finished(results.TrialSummary{TrialID: tr[1].ID, Outcome: results.OutcomeDiverged})
	if s.Done() || s.Total() != 5 {
		t.Fatalf("after a divergence: Done() %v, Total() %d, want a replacement queued", s.Done(), s.Total())
	}
	n, ok := s.Next()
	if !ok || n.Config != 4 || n.Seed != tr[1].Seed || n.ID != sweeps.TrialID(4, tr[1].Seed) {
		t.Fatalf("replacement %+v, want configuration 4 with the diverged member's seed", n)
	}
	if n.Parent != tr[2].ID || n.ResumeFrom != ckpt(tr[2].ID, 200) || n.ResumeStep != 203 {
		t.Errorf("replacement from %s %s at %d, want %s's latest checkpoint %s at 203 (the best healthy member)",
			n.Parent, n.ResumeFrom, n.ResumeStep, tr[2].ID, ckpt(tr[2].ID, 200))
	}
	if n.Params["num_envs"] != tr[2].Params["num_envs"] {
		t.Errorf("replacement num_envs %v, want its parent's %v", n.Params["num_envs"], tr[2].Params["num_envs"])
	}
	// A member that is told twice of its end, or one that failed, is not replaced again.
	s.Finished(results.TrialSummary{TrialID: tr[1].ID, Outcome: results.OutcomeDiverged})
	s.Finished(results.TrialSummary{TrialID: tr[0].ID, Outcome: results.OutcomeFailed})
	if s.Total() != 5 || !s.Done() {
		t.Errorf("Total() %d Done() %v, want one replacement only", s.Total(), s.Done())
	}
	if st := s.(scheduler.PBTReporter).PBT(); *st != (scheduler.PBTStatus{Members: 5, Replaced: 1, ReadyStep: 200}) {
		t.Errorf("PBT() = %+v, want 5 members, 1 replaced, ready step 200 reached, no exploit", *st)
	}
}

// The same arrivals give the same decisions, with or without a continue-as-new in between.
func TestPBTDeterministicReplay(t *testing.T) {
	spec := pbtSpec(t, "population: 8")
	run := func(cut int) []scheduler.Decision {
		s := newPBT(t, spec, scheduler.State{})
		tr := startAll(t, s)
		var out []scheduler.Decision
		step := 0
		for seg := range 3 {
			for i := range tr {
				if step == cut {
					b, err := json.Marshal(s.State())
					if err != nil {
						t.Fatal(err)
					}
					var st scheduler.State
					if err := json.Unmarshal(b, &st); err != nil {
						t.Fatal(err)
					}
					s = newPBT(t, spec, st)
				}
				step++
				j := (i*5 + seg*3) % len(tr)
				d := s.AtBoundary(boundary(tr[j], seg, float64((j*7+seg*11)%13)))
				out = append(out, d)
				if d.Action == scheduler.Exploit {
					tr[j].Params = d.Params
				}
			}
			for i := range tr { // those that waited ask again
				j := (i*5 + seg*3) % len(tr)
				d := s.AtBoundary(boundary(tr[j], seg, float64((j*7+seg*11)%13)))
				out = append(out, d)
				if d.Action == scheduler.Exploit {
					tr[j].Params = d.Params
				}
			}
		}
		return out
	}
	a := run(-1)
	exploits := 0
	for _, d := range a {
		if d.Action == scheduler.Exploit {
			exploits++
		}
	}
	if exploits == 0 {
		t.Fatal("no exploit in the run: the test decides nothing")
	}
	for _, cut := range []int{3, 9, 17} {
		b, _ := json.Marshal(run(cut))
		want, _ := json.Marshal(a)
		if string(b) != string(want) {
			t.Errorf("continue-as-new after %d boundaries: decisions differ\n got %s\nwant %s", cut, b, want)
		}
	}
}

// A schedule is replayed: one member per seed, starting with its first entry, going on from its own
// checkpoint with the next entry's parameters at its step; nothing else changes them.
func TestPBTReplaysSchedule(t *testing.T) {
	spec := pbtSpec(t, "schedule: [{step: 0, params: {lr: 0.001, gamma: 0.99, num_envs: 4}}, {step: 200, params: {lr: 0.0005}}]")
	s := newPBT(t, spec, scheduler.State{})
	tr := startAll(t, s)
	if len(tr) != 2 {
		t.Fatalf("%d members, want one per seed (2)", len(tr))
	}
	for _, m := range tr {
		if m.Params["lr"] != 0.001 || m.Params["gamma"] != 0.99 || m.Params["num_envs"] != int64(4) {
			t.Errorf("member %s starts with %v, want the schedule's first entry", m.ID, m.Params)
		}
	}
	if d := s.AtBoundary(boundary(tr[0], 0, 1)); d.Action != scheduler.Continue {
		t.Errorf("step 100: %+v, want continue", d)
	}
	d := s.AtBoundary(boundary(tr[0], 1, 1))
	if d.Action != scheduler.Exploit || d.ResumeFrom != ckpt(tr[0].ID, 200) || d.Params["lr"] != 0.0005 || d.Params["gamma"] != 0.99 {
		t.Errorf("step 200: %+v, want its own checkpoint with lr 0.0005 and gamma kept", d)
	}
	s.Finished(results.TrialSummary{TrialID: tr[1].ID, Outcome: results.OutcomeDiverged})
	if !s.Done() || s.Total() != 2 {
		t.Errorf("a diverged member of a replay was replaced (Total %d)", s.Total())
	}
}

// A member that diverges before any healthy member has a checkpoint is replaced by a member that
// starts afresh, with parameters drawn again; replacements stop at the population's size.
func TestPBTReplacesAfreshWithoutSource(t *testing.T) {
	spec := pbtSpec(t, "population: 2")
	s := newPBT(t, spec, scheduler.State{})
	tr := startAll(t, s)
	for i := range 2 {
		s.Finished(results.TrialSummary{TrialID: tr[i].ID, Outcome: results.OutcomeDiverged})
		n, ok := s.Next()
		if !ok || n.ResumeFrom != "" || n.Parent != "" || n.Config != 2+i {
			t.Fatalf("replacement %d = %+v, want a fresh member, configuration %d", i, n, 2+i)
		}
		if lr := n.Params["lr"].(float64); lr < 0.0001 || lr > 0.01 {
			t.Errorf("replacement lr %v, want within its bounds", lr)
		}
	}
	n, _ := s.Peek()
	s.Finished(results.TrialSummary{TrialID: sweeps.TrialID(2, tr[0].Seed), Outcome: results.OutcomeDiverged})
	if _, ok := s.Peek(); ok || s.Total() != 4 {
		t.Errorf("a third replacement (%+v) for a population of 2, total %d", n, s.Total())
	}
}
