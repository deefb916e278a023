package sweepstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

const sweepID = "sweep/unit/abc"

func newStore(t *testing.T) artifacts.Store {
	t.Helper()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s artifacts.Store, key, body string) {
	t.Helper()
	if err := s.Put(context.Background(), key, strings.NewReader(body)); err != nil {
		t.Fatal(err)
	}
}

// ReadTrialDetails gives results.New how far each trial's metrics and divergence verdict go, and
// ReportInput takes the results it is handed as they are (results.json's content), adding the curves.
func TestTrialDetailsAndReportInput(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	put(t, s, artifacts.MetricsPartKey(sweepID, "0-s1", 0, 1, 0), "{\"step\":1000,\"reward\":5}\n{\"step\":3000,\"reward\":7}\n")
	dump, _ := json.Marshal(sweepstore.Divergence{SweepID: sweepID, TrialID: "0-s1", Verdict: diagnostics.Verdict{Rule: "non_finite", Step: 2500}})
	put(t, s, artifacts.DivergenceKey(sweepID, "0-s1"), string(dump))
	obj := 7.0
	trials := []results.TrialSummary{{TrialID: "0-s1", Outcome: results.OutcomeDiverged, Objective: &obj, Steps: 0}}
	ss := sweepstore.New(s)
	details, err := ss.ReadTrialDetails(ctx, sweepID, "reward", trials)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := details.Reached(), map[string]results.Reached{"0-s1": {LastMetricStep: 3000, DivergenceStep: 2500}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Reached() = %v, want %v", got, want)
	}
	spec := &sweeps.Spec{Name: "unit", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}}
	res := results.New(sweepID, spec, "completed", trials, details.Reached())
	if trials[0].Steps != 0 || res.Trials[0].Steps != 3000 {
		t.Errorf("results.New: steps %d (handed trials: %d), want 3000 in the results and the handed trials left as they are",
			res.Trials[0].Steps, trials[0].Steps)
	}
	reg := &regression.Report{Verdict: regression.VerdictPass}
	for _, d := range []*sweepstore.TrialDetails{details, nil} {
		in, err := ss.ReportInput(ctx, res, nil, reg, d, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if in.Results != res || in.Regression != reg || len(in.Curves["0-s1"]) != 2 || in.Divergences["0-s1"] == nil {
			t.Errorf("details %p: input results %p (want %p), regression %p (want %p), curve %v, divergence %v; want the results and report handed over, the 2-point curve and the verdict",
				d, in.Results, res, in.Regression, reg, in.Curves["0-s1"], in.Divergences["0-s1"])
		}
	}
}

// A reader of a file the sweep lacks says which file of which sweep, and wraps artifacts.ErrNotFound;
// one of a file that is not its type's JSON names it and wraps ErrMalformed.
func TestMissingAndMalformedFiles(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	ss := sweepstore.New(s)
	reads := []struct {
		file string
		read func() error
	}{
		{"owner.json", func() error { _, err := ss.ReadOwner(ctx, sweepID); return err }},
		{"spec.json", func() error { _, err := ss.ReadSpec(ctx, sweepID); return err }},
		{"spec.yaml", func() error { _, err := ss.ReadSpecYAML(ctx, sweepID); return err }},
		{"plan.json", func() error { _, err := ss.ReadPlan(ctx, sweepID); return err }},
		{"probes.json", func() error { _, err := ss.ReadProbes(ctx, sweepID); return err }},
		{"results.json", func() error { _, err := ss.ReadResults(ctx, sweepID); return err }},
		{"decisions.json", func() error { _, err := ss.ReadDecisions(ctx, sweepID); return err }},
		{"regression.json", func() error { _, err := ss.ReadRegression(ctx, sweepID); return err }},
		{"divergence.json", func() error { _, err := ss.ReadDivergence(ctx, sweepID, "2-s1"); return err }},
		{"resume.json", func() error { _, err := ss.ReadResumePoint(ctx, sweepID, "2-s1"); return err }},
		{"exploit record at step 4000", func() error { _, err := ss.ReadExploit(ctx, sweepID, "2-s1", 4000); return err }},
		{`baseline "nightly"`, func() error { _, _, err := ss.ReadBaseline(ctx, "nightly"); return err }},
		{"spec", func() error { _, err := ss.ReadScheduleSpec(ctx, artifacts.ScheduleSpecKey("nightly")); return err }},
	}
	for _, r := range reads {
		err := r.read()
		if !errors.Is(err, artifacts.ErrNotFound) {
			t.Errorf("reading a missing %s: %v, want an error wrapping artifacts.ErrNotFound", r.file, err)
			continue
		}
		if !strings.Contains(err.Error(), r.file) || !strings.Contains(err.Error(), sweepID) && !strings.Contains(r.file, "baseline") && r.file != "spec" {
			t.Errorf("reading a missing %s: %q, want the file and the sweep %s named", r.file, err, sweepID)
		}
	}
	if err := reads[2].read(); !strings.Contains(err.Error(), "sweep "+sweepID+"'s spec.yaml") {
		t.Errorf("missing spec.yaml: %q, want it to name sweep %s's spec.yaml", err, sweepID)
	}
	if err := reads[8].read(); !strings.Contains(err.Error(), "trial 2-s1 of sweep "+sweepID) {
		t.Errorf("missing divergence.json: %q, want it to name trial 2-s1 of sweep %s", err, sweepID)
	}
	put(t, s, artifacts.RegressionKey(sweepID), "{not json")
	_, err := ss.ReadRegression(ctx, sweepID)
	if !errors.Is(err, sweepstore.ErrMalformed) || !strings.Contains(err.Error(), "regression.json") || !strings.Contains(err.Error(), sweepID) {
		t.Errorf("ReadRegression of a broken file: %v, want an error wrapping ErrMalformed naming regression.json and the sweep", err)
	}
	if parts, err := ss.ReadResultsParts(ctx, sweepID); err != nil || len(parts) != 0 {
		t.Errorf("ReadResultsParts of a sweep with none: %v, %v; want none and no error", parts, err)
	}
	if trials, err := ss.ReadTrialSummaries(ctx, sweepID); err != nil || len(trials) != 0 {
		t.Errorf("ReadTrialSummaries of a sweep with none: %v, %v; want none and no error", trials, err)
	}
}

// roundTrip checks that what a writer stored, its reader returns as it was handed.
func roundTrip[T any](t *testing.T, file string, want T, write func() error, read func() (T, error)) {
	t.Helper()
	if err := write(); err != nil {
		t.Fatalf("write %s: %v", file, err)
	}
	got, err := read()
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: read back %+v, want %+v", file, got, want)
	}
}

// Every file's writer and reader round-trip its type, under the key artifacts/layout.go gives it.
func TestMethodPairsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := artifacts.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ss := sweepstore.New(s)
	stored := func(key string) func() error {
		return func() error {
			rc, err := s.Get(ctx, key)
			if err == nil {
				rc.Close()
			}
			return err
		}
	}
	mustKey := func(file, key, want string) {
		t.Helper()
		if key != want {
			t.Errorf("%s stored under %q, want %q (artifacts/layout.go)", file, key, want)
		}
		if err := stored(want)(); err != nil {
			t.Errorf("%s: nothing under %s: %v", file, want, err)
		}
	}
	obj, src := 7.5, 6.0
	trial := sweeps.Trial{ID: "0-s1", Config: 0, Seed: 1, Params: map[string]any{"lr": 0.1, "env": "CartPole-v1"}}

	owner := sweepstore.Owner{SweepID: sweepID, Submission: "sub-1"}
	roundTrip(t, "owner.json", &owner, func() error { return ss.WriteOwner(ctx, owner) },
		func() (*sweepstore.Owner, error) { return ss.ReadOwner(ctx, sweepID) })
	mustKey("owner.json", artifacts.OwnerKey(sweepID), artifacts.OwnerKey(sweepID))

	spec := &sweeps.Spec{Name: "unit", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"}}
	raw := []byte("name: unit\nmetric: {name: reward, goal: maximize}\n")
	roundTrip(t, "spec.json", spec, func() error { return ss.WriteSpec(ctx, sweepID, raw, spec) },
		func() (*sweeps.Spec, error) { return ss.ReadSpec(ctx, sweepID) })
	roundTrip(t, "spec.yaml", raw, func() error { return nil }, func() ([]byte, error) { return ss.ReadSpecYAML(ctx, sweepID) })
	mustKey("spec.json", artifacts.SpecJSONKey(sweepID), artifacts.SpecJSONKey(sweepID))
	mustKey("spec.yaml", artifacts.SpecYAMLKey(sweepID), artifacts.SpecYAMLKey(sweepID))
	if where, err := ss.Occupied(ctx, sweepID); err != nil || where != s.URL(artifacts.OwnerKey(sweepID)) {
		t.Errorf("Occupied = %q, %v; want owner.json's URL", where, err)
	}
	if where, err := ss.Occupied(ctx, "sweep/unit/free"); err != nil || where != "" {
		t.Errorf("Occupied of a free ID = %q, %v; want none", where, err)
	}

	plan := &sweepstore.Plan{SweepID: sweepID, Params: []string{"env", "lr"}, Trials: []sweeps.Trial{trial}}
	var key string
	roundTrip(t, "plan.json", plan, func() (err error) { key, err = ss.WritePlan(ctx, plan); return err },
		func() (*sweepstore.Plan, error) { return ss.ReadPlan(ctx, sweepID) })
	mustKey("plan.json", key, artifacts.PlanKey(sweepID))

	pr := &probes.Report{Passed: false, Results: []probes.Result{{Probe: "1", Level: 1, Passed: true}}, Failed: "3", Diagnosis: "probe 3 fails"}
	roundTrip(t, "probes.json", pr, func() error { return ss.WriteProbes(ctx, sweepID, pr) },
		func() (*probes.Report, error) { return ss.ReadProbes(ctx, sweepID) })
	mustKey("probes.json", artifacts.ProbesKey(sweepID), artifacts.ProbesKey(sweepID))

	part := []results.TrialSummary{{TrialID: "0-s1", Config: 0, Seed: 1, Params: trial.Params, Outcome: results.OutcomeCompleted, Objective: &obj, Steps: 3000}}
	roundTrip(t, "result part 3", [][]results.TrialSummary{part}, func() error { return ss.WriteResultsPart(ctx, sweepID, 3, part) },
		func() ([][]results.TrialSummary, error) { return ss.ReadResultsParts(ctx, sweepID) })
	mustKey("result part 3", artifacts.ResultsPartKey(sweepID, 3), artifacts.ResultsPartKey(sweepID, 3))

	res := &results.SweepResults{SweepID: sweepID, Name: "unit", Status: "completed", Metric: spec.Metric, Params: plan.Params, Trials: part}
	roundTrip(t, "results.json", res, func() (err error) { key, err = ss.WriteResults(ctx, res); return err },
		func() (*results.SweepResults, error) { return ss.ReadResults(ctx, sweepID) })
	mustKey("results.json", key, artifacts.ResultsKey(sweepID))
	key, err = ss.WriteResultsCSV(ctx, res)
	if err != nil {
		t.Fatal(err)
	}
	mustKey("results.csv", key, artifacts.ResultsCSVKey(sweepID))

	ds := []results.Decision{{Seq: 0, TrialID: "0-s1", Segment: 1, Step: 2000, Action: "stop", Outcome: results.OutcomePruned, Reason: "below the median"}}
	roundTrip(t, "decision-log part 0", ds, func() error { return ss.WriteDecisionsPart(ctx, sweepID, 0, ds) },
		func() ([]results.Decision, error) { return ss.ReadDecisionsParts(ctx, sweepID) })
	mustKey("decision-log part 0", artifacts.DecisionsPartKey(sweepID, 0), artifacts.DecisionsPartKey(sweepID, 0))
	roundTrip(t, "decisions.json", ds, func() (err error) { key, err = ss.WriteDecisions(ctx, sweepID, ds); return err },
		func() ([]results.Decision, error) { return ss.ReadDecisions(ctx, sweepID) })
	mustKey("decisions.json", key, artifacts.DecisionsKey(sweepID))

	rep := &regression.Report{SweepID: sweepID, Baseline: "nightly", BaselineKey: artifacts.StoredBaselineKey("nightly"), Metric: spec.Metric, Verdict: regression.VerdictPass}
	roundTrip(t, "regression.json", rep, func() (err error) { key, err = ss.WriteRegression(ctx, rep); return err },
		func() (*regression.Report, error) { return ss.ReadRegression(ctx, sweepID) })
	mustKey("regression.json", key, artifacts.RegressionKey(sweepID))

	key, err = ss.WriteReport(ctx, sweepID, []byte("<html></html>"))
	if err != nil {
		t.Fatal(err)
	}
	mustKey("report.html", key, artifacts.ReportKey(sweepID))

	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	div := &sweepstore.Divergence{SweepID: sweepID, TrialID: "0-s1", Verdict: diagnostics.Verdict{Level: diagnostics.Stop, Rule: "non_finite", Metric: "loss", Step: 1500, Objective: "reward", ObjectiveValue: 3},
		LastHealthyCkpt: "ckpt-1000.pt", LastHealthyStep: 1000, Records: []json.RawMessage{json.RawMessage(`{"step":1500,"loss":"NaN"}`)},
		LogTail: "nan\n", DetectedAt: at, KilledAt: at.Add(time.Millisecond), DetectionToKillMS: 1}
	roundTrip(t, "divergence.json", div, func() (err error) { key, err = ss.WriteDivergence(ctx, div); return err },
		func() (*sweepstore.Divergence, error) {
			d, err := ss.ReadDivergence(ctx, sweepID, "0-s1")
			// divergence.json is indented, records and all: compare them compacted.
			for i, r := range d.Records {
				var b bytes.Buffer
				if cerr := json.Compact(&b, r); cerr != nil {
					t.Fatal(cerr)
				}
				d.Records[i] = b.Bytes()
			}
			return d, err
		})
	mustKey("divergence.json", key, artifacts.DivergenceKey(sweepID, "0-s1"))

	rp := sweepstore.ResumePoint{Segment: 2, Step: 4096, Key: artifacts.CheckpointKey(sweepID, "0-s1", "ckpt-4096.pt")}
	roundTrip(t, "resume.json", &rp, func() error { return ss.WriteResumePoint(ctx, sweepID, "0-s1", rp) },
		func() (*sweepstore.ResumePoint, error) { return ss.ReadResumePoint(ctx, sweepID, "0-s1") })
	mustKey("resume.json", artifacts.ResumePointKey(sweepID, "0-s1"), artifacts.ResumePointKey(sweepID, "0-s1"))

	ex := results.Exploit{Member: "0-s1", From: "1-s1", Step: 4000, FromStep: 4000, Source: "src", Checkpoint: "dst",
		Old: map[string]any{"lr": 0.1}, New: map[string]any{"lr": 0.2}, Value: &obj, SourceValue: &src, Reason: "truncation"}
	roundTrip(t, "exploit record", &ex, func() (err error) { key, err = ss.WriteExploit(ctx, sweepID, "0-s1", ex); return err },
		func() (*results.Exploit, error) { return ss.ReadExploit(ctx, sweepID, "0-s1", 4000) })
	mustKey("exploit record", key, artifacts.ExploitKey(sweepID, "0-s1", 4000))
	// A record is written once: writing the step again keeps the first.
	again := ex
	again.From = "2-s1"
	if _, err := ss.WriteExploit(ctx, sweepID, "0-s1", again); err != nil {
		t.Fatal(err)
	}
	if got, err := ss.ReadExploit(ctx, sweepID, "0-s1", 4000); err != nil || got.From != "1-s1" {
		t.Errorf("exploit record written again: from %v (%v), want the first record's 1-s1 kept", got, err)
	}

	roundTrip(t, "baseline", res, func() (err error) { key, err = ss.WriteBaseline(ctx, "nightly", sweepID); return err },
		func() (*results.SweepResults, error) { r, _, err := ss.ReadBaseline(ctx, "nightly"); return r, err })
	mustKey("baseline", key, artifacts.StoredBaselineKey("nightly"))
	if r, k, err := ss.ReadBaseline(ctx, sweepID); err != nil || k != artifacts.ResultsKey(sweepID) || r.SweepID != sweepID {
		t.Errorf("ReadBaseline of a sweep ID: %v, %q, %v; want its results.json", r, k, err)
	}
	if names, err := ss.Baselines(ctx); err != nil || !reflect.DeepEqual(names, []string{"nightly"}) {
		t.Errorf("Baselines = %v, %v; want [nightly]", names, err)
	}

	pinned := []byte("name: pinned\n")
	roundTrip(t, "schedule spec", pinned, func() (err error) { key, err = ss.WriteScheduleSpec(ctx, "nightly", pinned); return err },
		func() ([]byte, error) { return ss.ReadScheduleSpec(ctx, key) })
	mustKey("schedule spec", key, artifacts.ScheduleSpecKey("nightly"))

	if ids, err := ss.StoredTrials(ctx, sweepID); err != nil || !reflect.DeepEqual(ids, []string{"0-s1"}) {
		t.Errorf("StoredTrials = %v, %v; want [0-s1]", ids, err)
	}
	if ok, err := ss.HoldsSweep(ctx, sweepID); err != nil || !ok {
		t.Errorf("HoldsSweep = %v, %v; want true", ok, err)
	}
	if ok, err := ss.HoldsSweep(ctx, "sweep/unit/free"); err != nil || ok {
		t.Errorf("HoldsSweep of an empty sweep = %v, %v; want false", ok, err)
	}
}

// Result parts written with WriteResultsPart come back merged with the plan, each trial once.
func TestResultsPartsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	put(t, s, artifacts.PlanKey(sweepID), `{"trials": [{"id": "0-s1", "config": 0, "seed": 1, "params": {"lr": 0.1}}]}`)
	for part, outcome := range []string{"failed", "cancelled"} {
		if err := sweepstore.New(s).WriteResultsPart(ctx, sweepID, part, []results.TrialSummary{{TrialID: "0-s1", Outcome: outcome}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sweepstore.New(s).ReadTrialSummaries(ctx, sweepID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Outcome != "cancelled" || got[0].Params["lr"] != 0.1 || got[0].Seed != 1 {
		t.Errorf("ReadTrialSummaries = %+v, want 0-s1 once, cancelled (the later part), with the plan's seed and params", got)
	}
}

// The decision log reads back each decision once, in the order the sweep made them, whichever parts
// were written again (a retried RecordResults) and in whatever order the store lists them.
func TestDecisionsRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	d := func(seq int, trial string) results.Decision {
		return results.Decision{Seq: seq, TrialID: trial, Segment: 0, Action: "stop", Reason: "r"}
	}
	for _, w := range []struct {
		part int
		ds   []results.Decision
	}{{1, []results.Decision{d(2, "b"), d(3, "c")}}, {0, []results.Decision{d(0, "a"), d(1, "d")}}, {1, []results.Decision{d(2, "b"), d(3, "c")}}} {
		if err := sweepstore.New(s).WriteDecisionsPart(ctx, "sw", w.part, w.ds); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sweepstore.New(s).ReadDecisionsParts(ctx, "sw")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, x := range got {
		if x.Seq != i {
			t.Errorf("decision %d has seq %d", i, x.Seq)
		}
		ids = append(ids, x.TrialID)
	}
	if strings.Join(ids, ",") != "a,d,b,c" {
		t.Errorf("decisions = %v, want a,d,b,c", ids)
	}
	if none, err := sweepstore.New(s).ReadDecisionsParts(ctx, "other"); err != nil || len(none) != 0 {
		t.Errorf("a sweep without decisions: %v, %v", none, err)
	}
}
