package activities_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/results"
)

type fakeLookup map[string]activities.TrialState

func (f fakeLookup) LookupTrial(_ context.Context, id string) (activities.TrialState, error) {
	if id == "wf/broken" {
		return activities.TrialState{}, errors.New("server unavailable")
	}
	return f[id], nil
}

func TestCheckTrials(t *testing.T) {
	q := 7.0
	a := &activities.Activities{Trials: fakeLookup{
		"wf/running":    {},
		"wf/completed":  {Closed: true, Status: "completed", Summary: &results.TrialSummary{TrialID: "1-s1", Outcome: "completed", Objective: &q}},
		"wf/terminated": {Closed: true, Status: "terminated"},
		"wf/canceled":   {Closed: true, Status: "canceled"},
		"wf/gone":       {Closed: true, Status: "not_found"},
	}}
	refs := []activities.TrialRef{{"0-s1", "wf/running"}, {"1-s1", "wf/completed"}, {"2-s1", "wf/terminated"},
		{"3-s1", "wf/canceled"}, {"4-s1", "wf/gone"}}
	res, err := a.CheckTrials(context.Background(), activities.CheckTrialsInput{SweepID: "s", Trials: refs})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Ended {
		got = append(got, fmt.Sprintf("%s:%s:%s", s.TrialID, s.Outcome, s.Error))
	}
	want := []string{
		"1-s1:completed:",
		"2-s1:failed:trial workflow ended without reporting: terminated",
		"3-s1:cancelled:trial workflow ended without reporting: canceled",
		"4-s1:failed:trial workflow ended without reporting: not_found",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ended:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Ended[0].Objective == nil || *res.Ended[0].Objective != 7 {
		t.Errorf("the completed trial's summary lost its objective: %+v", res.Ended[0])
	}

	_, err = a.CheckTrials(context.Background(), activities.CheckTrialsInput{Trials: []activities.TrialRef{{"5-s1", "wf/broken"}}})
	if err == nil || !strings.Contains(err.Error(), "check trial 5-s1: server unavailable") {
		t.Errorf("lookup error: %v, want it returned (the activity is retried)", err)
	}
	if _, err := (&activities.Activities{}).CheckTrials(context.Background(), activities.CheckTrialsInput{}); err == nil {
		t.Error("no TrialLookup: want an error, got none")
	}
}
