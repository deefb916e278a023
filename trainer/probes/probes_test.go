package probes

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func f(x float64) *float64 { return &x }

func TestJudge(t *testing.T) {
	cases := []struct {
		name string
		id   ID
		rec  Record
		want bool
	}{
		{"probe 1 exact", "1", Record{Evals: []Eval{{Obs: []float64{0}, Value: f(1)}}}, true},
		{"probe 1 just inside", "1", Record{Evals: []Eval{{Obs: []float64{0}, Value: f(0.86)}}}, true},
		{"probe 1 outside", "1", Record{Evals: []Eval{{Obs: []float64{0}, Value: f(0.8)}}}, false},
		{"probe 1 NaN as null", "1", Record{Evals: []Eval{{Obs: []float64{0}}}}, false},
		{"probe 1 missing eval", "1", Record{}, false},
		{"probe 1 wrong probe", "1", Record{Probe: "2", Evals: []Eval{{Obs: []float64{0}, Value: f(1)}}}, false},
		{"probe 3 judged against the trainer's γ", "3", Record{Gamma: 0.7, Evals: []Eval{{Obs: []float64{0}, Value: f(0.7)}, {Obs: []float64{1}, Value: f(1)}}}, true},
		// A γ near 1 cannot tell discounting from none: a trainer that ignores it (V(0) = 1) would pass.
		{"probe 3 with γ 0.99 reported", "3", Record{Gamma: 0.99, Evals: []Eval{{Obs: []float64{0}, Value: f(1)}, {Obs: []float64{1}, Value: f(1)}}}, false},
		// No γ reported: the protocol's 0.5; a sound trainer passes, one without discounting fails.
		{"probe 3 without γ, discounting", "3", Record{Evals: []Eval{{Obs: []float64{0}, Value: f(0.5)}, {Obs: []float64{1}, Value: f(1)}}}, true},
		{"probe 3 without γ, no discounting", "3", Record{Evals: []Eval{{Obs: []float64{0}, Value: f(1)}, {Obs: []float64{1}, Value: f(1)}}}, false},
		{"probe 3 without discount", "3", Record{Gamma: 0.5, Evals: []Eval{{Obs: []float64{0}, Value: f(1)}, {Obs: []float64{1}, Value: f(1)}}}, false},
		{"probe 5 right", "5", Record{Evals: []Eval{{Obs: []float64{-1}, Probs: []*float64{f(0.95), f(0.05)}}, {Obs: []float64{1}, Probs: []*float64{f(0.05), f(0.95)}}}}, true},
		{"probe 5 ignores obs", "5", Record{Evals: []Eval{{Obs: []float64{-1}, Probs: []*float64{f(0.5), f(0.5)}}, {Obs: []float64{1}, Probs: []*float64{f(0.5), f(0.5)}}}}, false},
		{"probe 4c mean", "4c", Record{Evals: []Eval{{Obs: []float64{0}, Mean: []*float64{f(0.45)}}}}, true},
		{"probe 5c sign", "5c", Record{Evals: []Eval{{Obs: []float64{-1}, Mean: []*float64{f(0.5)}}, {Obs: []float64{1}, Mean: []*float64{f(0.5)}}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Lookup(c.id)
			if err != nil {
				t.Fatal(err)
			}
			r := Judge(p, c.rec)
			if r.Passed != c.want {
				t.Errorf("passed: got %v, want %v (%s)", r.Passed, c.want, r)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("result not JSON-encodable: %v", err)
			}
		})
	}
}

func TestDiagnose(t *testing.T) {
	pass := func(id ID, l int) Result { return Result{Probe: id, Level: l, Passed: true} }
	fail := func(id ID, l int) Result { return Result{Probe: id, Level: l} }
	cases := []struct {
		name       string
		in         []Result
		wantPassed bool
		wantFailed ID
		wantText   string
	}{
		{"all pass", []Result{pass("2", 2), pass("1", 1)}, true, "", "all 2 probes pass"},
		{"lowest failure named", []Result{fail("5", 5), pass("1", 1), fail("3", 3), pass("2", 2)}, false, "3",
			"probe 3 fails while probes 1–2 pass: the bug is in what 3 adds: discounting"},
		{"probe 2", []Result{pass("1", 1), fail("2", 2)}, false, "2", "probe 2 fails while probe 1 passes"},
		{"probe 1", []Result{fail("1", 1)}, false, "1", "probe 1 fails: value loss"},
		{"skipped ignored", []Result{pass("1", 1), {Probe: "1c", Level: 1, Skipped: true}}, true, "", "all 1 probes pass"},
		{"all skipped", []Result{{Probe: "1", Level: 1, Skipped: true}}, false, "", "no probe ran"},
		// A trainer that skips probes 2–5 has shown nothing above the value loss.
		{"ladder skipped in part", []Result{pass("1", 1), {Probe: "2", Level: 2, Skipped: true}, {Probe: "3", Level: 3, Skipped: true}},
			false, "", "probes 2, 3 skipped while 1 ran: a trainer that supports an action space must run its whole ladder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Diagnose(c.in)
			if r.Passed != c.wantPassed || r.Failed != c.wantFailed || !strings.Contains(r.Diagnosis, c.wantText) {
				t.Errorf("got passed %v failed %q %q, want %v %q containing %q", r.Passed, r.Failed, r.Diagnosis, c.wantPassed, c.wantFailed, c.wantText)
			}
		})
	}
}

func TestLookupAndAll(t *testing.T) {
	if _, err := All("multi"); err == nil || !strings.Contains(err.Error(), "discrete or continuous") {
		t.Errorf("All(multi): got %v, want an error naming the allowed set", err)
	}
	if _, err := Lookup("6"); err == nil {
		t.Error("Lookup(6) succeeded")
	}
	if got := len(IDs()); got != 10 {
		t.Errorf("IDs: got %d, want 10", got)
	}
}

// exact is a Trainer that reports what a sound trainer learns, in closed form: V = 1, ±1, γ and 1;
// the rewarded action with probability 1; the rewarded mean.
func exact(_ context.Context, p Probe, _ uint64) (Record, error) {
	rec := Record{Probe: p.ID, Gamma: Gamma, Steps: Budget(p)}
	for _, o := range p.Obs {
		v := map[int]float64{1: 1, 2: o, 3: 1, 4: 1, 5: 1}[p.Level]
		if p.Level == 3 && o == 0 {
			v = Gamma
		}
		e := Eval{Obs: []float64{o}, Value: f(v)}
		switch {
		case p.Continuous && p.Level == 4:
			e.Mean = []*float64{f(0.5)}
		case p.Continuous && p.Level == 5:
			e.Mean = []*float64{f(0.5 * o)}
		case p.Level == 5 && o < 0:
			e.Probs = []*float64{f(1), f(0)}
		case p.Level >= 4:
			e.Probs = []*float64{f(0), f(1)}
		}
		rec.Evals = append(rec.Evals, e)
	}
	return rec, nil
}

// TestRun runs the ladder on trainers given as functions: one that reports the closed-form answers
// passes both ladders; one whose training fails on probe 3 fails there, with the error as the reason.
func TestRun(t *testing.T) {
	for _, space := range []string{"discrete", "continuous"} {
		rep, err := Run(context.Background(), exact, Options{ActionSpace: space, Seed: 1})
		if err != nil || !rep.Passed || len(rep.Results) != 5 {
			t.Errorf("%s: exact trainer: got %+v, %v; want all 5 probes passed", space, rep, err)
		}
	}
	broken := func(ctx context.Context, p Probe, seed uint64) (Record, error) {
		if p.Level == 3 {
			return Record{}, errors.New("diverged")
		}
		return exact(ctx, p, seed)
	}
	rep, err := Run(context.Background(), broken, Options{ActionSpace: "discrete", Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || rep.Failed != "3" || !strings.Contains(rep.Diagnosis, "probe 3 fails (diverged)") {
		t.Errorf("broken on 3: got passed %v failed %q %q, want probe 3 failing with the error", rep.Passed, rep.Failed, rep.Diagnosis)
	}
	if _, err := Run(context.Background(), exact, Options{ActionSpace: "multi"}); err == nil {
		t.Error("Run(multi) succeeded")
	}
}

// A stage that stopped after an external trainer's first run (one result) says so: the file the
// protocol names, that no other probe ran, and the fix.
func TestDiagnoseAfterFirstRun(t *testing.T) {
	for _, c := range []struct {
		r    Result
		want []string
	}{
		{Result{Probe: "1", Level: 1, Fault: FaultNoRecord}, []string{
			"does not speak the probe protocol: it exited 0 on probe 1, its first probe run, without writing a result to RLSWEEP_PROBE_RESULT",
			"the stage stopped there and ran no other probe", "docs/probes.md", "`probes: {enabled: false}`"}},
		{Result{Probe: "1", Level: 1, Fault: FaultCrashed, Error: "the trainer exited with status 1"}, []string{
			"crashed on probe 1 (its first probe run: the stage stopped there and ran no other probe)", "status 1"}},
		{Result{Probe: "1", Level: 1, Fault: FaultBadRecord, Error: "bad"}, []string{
			"does not follow the probe protocol (its first probe run: the stage stopped there"}},
	} {
		rep := Diagnose([]Result{c.r})
		if rep.Passed || rep.Failed != "1" {
			t.Errorf("%s: passed %v, failed %q; want probe 1 failed", c.r.Fault, rep.Passed, rep.Failed)
		}
		for _, w := range c.want {
			if !strings.Contains(rep.Diagnosis, w) {
				t.Errorf("%s: diagnosis lacks %q: %s", c.r.Fault, w, rep.Diagnosis)
			}
		}
	}
}
