package scheduler

import (
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

func confirmSpec(t *testing.T) *sweeps.Spec {
	t.Helper()
	s, err := sweeps.Decode(strings.NewReader("name: c\ntrainer: {command: [\"python\", \"t.py\"], total_steps: 1000}\nseeds: [1, 2]\n"+
		"parameters:\n  lr: {values: [0.1, 0.2]}\nresources: {gpu_class: h100}\nconfirm: {gpu_classes: [a100], top: 1}\n"), "c.yaml")
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The re-runs start only once the search gave out every trial and they were picked; the search's
// scheduler never hears of them; the state carries them across a continue-as-new.
func TestConfirmingRunsReRunsAfterTheSearch(t *testing.T) {
	spec := confirmSpec(t)
	s, err := New(spec, State{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.(Confirmer)
	if got := s.Total(); got != 4+2 {
		t.Errorf("Total before the pick = %d, want 4 search trials and 2 re-runs at most", got)
	}
	var search []sweeps.Trial
	for {
		tr, ok := s.Next()
		if !ok {
			break
		}
		search = append(search, tr)
	}
	if len(search) != 4 || !c.SearchDone() || c.Picked() || s.Done() {
		t.Fatalf("search gave %d trials, SearchDone %v, Picked %v, Done %v; want 4, true, false, false", len(search), c.SearchDone(), c.Picked(), s.Done())
	}
	for _, tr := range search {
		s.Finished(results.TrialSummary{TrialID: tr.ID, Config: tr.Config, Seed: tr.Seed, Outcome: results.OutcomeCompleted})
	}
	reruns := spec.ConfirmTrials([]sweeps.Trial{{Config: 1, Params: search[2].Params}})
	if len(reruns) != 2 || reruns[0].ID != "1-s1-a100" || reruns[1].ID != "1-s2-a100" || reruns[0].GPUClass != "a100" {
		t.Fatalf("re-runs %+v, want 1-s1-a100 and 1-s2-a100 on a100", reruns)
	}
	c.Confirm(reruns)
	if d := s.AtBoundary(Boundary{TrialID: "1-s1-a100", Segment: 0}); d.Action != Continue {
		t.Errorf("a re-run's boundary: %v, want Continue", d.Action)
	}
	first, ok := s.Next()
	if !ok || first.ID != "1-s1-a100" {
		t.Fatalf("Next after the pick = %v %v, want 1-s1-a100", first.ID, ok)
	}
	// A continue-as-new: the next run resumes with the state.
	s2, err := New(spec, s.State())
	if err != nil {
		t.Fatal(err)
	}
	if !s2.(Confirmer).Picked() || s2.Total() != 6 {
		t.Errorf("resumed: Picked %v, Total %d; want true, 6", s2.(Confirmer).Picked(), s2.Total())
	}
	second, ok := s2.Next()
	if !ok || second.ID != "1-s2-a100" {
		t.Fatalf("resumed Next = %v %v, want 1-s2-a100", second.ID, ok)
	}
	if _, ok := s2.Next(); ok || !s2.Done() {
		t.Errorf("after both re-runs: Done %v, want true", s2.Done())
	}
}
