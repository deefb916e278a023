// Package sweepstore reads and writes a sweep's stored files as their types. Store has a method pair per
// file — owner.json, spec.yaml and spec.json, plan.json, probes.json, the result parts and results.json,
// the decision-log parts and decisions.json, regression.json, report.html, and per trial divergence.json,
// resume.json and the pbt exploit records — plus the baselines and the schedules' pinned specs. Every key
// comes from artifacts/layout.go, and docs/artifacts.md lists each file with its key and type.
// Activities and the CLI both go through it, so each file has one writer and one reader.
//
// A reader of a missing file returns an error that names the file and the sweep and wraps
// artifacts.ErrNotFound; one that cannot be decoded wraps ErrMalformed.
//
// Metrics, logs and checkpoints have their own helpers in artifacts (ReadMetrics, ReadLog,
// PutCheckpoint, …).
package sweepstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// ErrMalformed is wrapped by a reader's error when the stored file is not the JSON of its type.
var ErrMalformed = errors.New("malformed")

// Store reads and writes a sweep's files in an artifact store.
type Store struct {
	s artifacts.Store
}

// New returns the sweep store over s.
func New(s artifacts.Store) *Store { return &Store{s: s} }

// file is one stored file: its key, and what to call it in an error ("sweep X's results.json").
type file struct {
	key  string
	name string
}

func sweepFile(sweepID, name, key string) file {
	return file{key: key, name: fmt.Sprintf("sweep %s's %s", sweepID, name)}
}

func trialFile(sweepID, trialID, name, key string) file {
	return file{key: key, name: fmt.Sprintf("trial %s of sweep %s: its %s", trialID, sweepID, name)}
}

// putBytes stores b as f.
func (st *Store) putBytes(ctx context.Context, f file, b []byte) error {
	if err := st.s.Put(ctx, f.key, bytes.NewReader(b)); err != nil {
		return fmt.Errorf("store %s: %w", f.name, err)
	}
	return nil
}

// putJSON stores v as f, indented or compact as the file has always been written.
func (st *Store) putJSON(ctx context.Context, f file, v any, indent bool) error {
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", f.name, err)
	}
	return st.putBytes(ctx, f, b)
}

// getBytes reads the whole of f; a missing file is an error naming it that wraps artifacts.ErrNotFound.
func (st *Store) getBytes(ctx context.Context, f file) ([]byte, error) {
	rc, err := st.s.Get(ctx, f.key)
	if errors.Is(err, artifacts.ErrNotFound) {
		return nil, fmt.Errorf("%s is not stored (%s): %w", f.name, st.s.URL(f.key), artifacts.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.name, err)
	}
	return b, nil
}

// getJSON decodes f into v (getBytes, then json.Unmarshal; a decoding error wraps ErrMalformed).
func (st *Store) getJSON(ctx context.Context, f file, v any) error {
	b, err := st.getBytes(ctx, f)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s (%s): %w: %w", f.name, st.s.URL(f.key), ErrMalformed, err)
	}
	return nil
}

// exists says whether f is stored.
func (st *Store) exists(ctx context.Context, f file) (bool, error) {
	rc, err := st.s.Get(ctx, f.key)
	if errors.Is(err, artifacts.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", f.name, err)
	}
	rc.Close()
	return true, nil
}

// Owner is owner.json: which submission a sweep's stored files belong to.
type Owner struct {
	SweepID    string `json:"sweep_id"`
	Submission string `json:"submission"`
}

func ownerFile(sweepID string) file {
	return sweepFile(sweepID, "owner.json", artifacts.OwnerKey(sweepID))
}

// WriteOwner stores owner.json of o.SweepID.
func (st *Store) WriteOwner(ctx context.Context, o Owner) error {
	return st.putJSON(ctx, ownerFile(o.SweepID), o, false)
}

// ReadOwner reads a sweep's owner.json.
func (st *Store) ReadOwner(ctx context.Context, sweepID string) (*Owner, error) {
	var o Owner
	if err := st.getJSON(ctx, ownerFile(sweepID), &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// OwnerURL names a sweep's owner.json for people.
func (st *Store) OwnerURL(sweepID string) string { return st.s.URL(artifacts.OwnerKey(sweepID)) }

// Occupied says whether the store holds a sweep under sweepID: the URL of the first of its owner.json,
// spec.yaml and plan.json that is stored, "" when none is.
func (st *Store) Occupied(ctx context.Context, sweepID string) (string, error) {
	for _, f := range []file{ownerFile(sweepID), specYAMLFile(sweepID), planFile(sweepID)} {
		ok, err := st.exists(ctx, f)
		if err != nil || ok {
			return st.s.URL(f.key), err
		}
	}
	return "", nil
}

func specYAMLFile(sweepID string) file {
	return sweepFile(sweepID, "spec.yaml", artifacts.SpecYAMLKey(sweepID))
}

func specJSONFile(sweepID string) file {
	return sweepFile(sweepID, "spec.json", artifacts.SpecJSONKey(sweepID))
}

// WriteSpec stores a sweep's spec as the user wrote it (spec.yaml, raw) and as rlsweep read it, defaults
// filled in (spec.json).
func (st *Store) WriteSpec(ctx context.Context, sweepID string, raw []byte, spec *sweeps.Spec) error {
	if err := st.putBytes(ctx, specYAMLFile(sweepID), raw); err != nil {
		return err
	}
	return st.putJSON(ctx, specJSONFile(sweepID), spec, true)
}

// ReadSpec reads a sweep's spec.json.
func (st *Store) ReadSpec(ctx context.Context, sweepID string) (*sweeps.Spec, error) {
	var spec sweeps.Spec
	if err := st.getJSON(ctx, specJSONFile(sweepID), &spec); err != nil {
		return nil, err
	}
	return &spec, nil
}

// ReadSpecYAML reads a sweep's spec.yaml, the spec as the user wrote it.
func (st *Store) ReadSpecYAML(ctx context.Context, sweepID string) ([]byte, error) {
	return st.getBytes(ctx, specYAMLFile(sweepID))
}

// SpecURL names a sweep's spec.json for people.
func (st *Store) SpecURL(sweepID string) string { return st.s.URL(artifacts.SpecJSONKey(sweepID)) }

// Plan is plan.json: the sweep's planned trials, with the names of the parameters it varies.
type Plan struct {
	SweepID string         `json:"sweep_id"`
	Params  []string       `json:"params"`
	Trials  []sweeps.Trial `json:"trials"`
}

func planFile(sweepID string) file {
	return sweepFile(sweepID, "plan.json", artifacts.PlanKey(sweepID))
}

// WritePlan stores plan.json of p.SweepID and returns its key.
func (st *Store) WritePlan(ctx context.Context, p *Plan) (string, error) {
	f := planFile(p.SweepID)
	return f.key, st.putJSON(ctx, f, p, true)
}

// ReadPlan reads a sweep's plan.json.
func (st *Store) ReadPlan(ctx context.Context, sweepID string) (*Plan, error) {
	var p Plan
	if err := st.getJSON(ctx, planFile(sweepID), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func probesFile(sweepID string) file {
	return sweepFile(sweepID, "probes.json", artifacts.ProbesKey(sweepID))
}

// WriteProbes stores the probe stage's report as probes.json.
func (st *Store) WriteProbes(ctx context.Context, sweepID string, rep *probes.Report) error {
	return st.putJSON(ctx, probesFile(sweepID), rep, true)
}

// ReadProbes reads a sweep's probes.json (a sweep with probes off has none).
func (st *Store) ReadProbes(ctx context.Context, sweepID string) (*probes.Report, error) {
	var rep probes.Report
	if err := st.getJSON(ctx, probesFile(sweepID), &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// WriteResultsPart stores a batch of trial summaries as result part number part; writing a part again
// replaces it.
func (st *Store) WriteResultsPart(ctx context.Context, sweepID string, part int, trials []results.TrialSummary) error {
	f := sweepFile(sweepID, fmt.Sprintf("result part %d", part), artifacts.ResultsPartKey(sweepID, part))
	return st.putJSON(ctx, f, trials, false)
}

// ReadResultsParts reads every stored result part of a sweep, in the order they were numbered; none
// when it stored none.
func (st *Store) ReadResultsParts(ctx context.Context, sweepID string) ([][]results.TrialSummary, error) {
	keys, err := st.s.List(ctx, artifacts.ResultsPartsPrefix(sweepID))
	if err != nil {
		return nil, fmt.Errorf("list sweep %s's result parts: %w", sweepID, err)
	}
	parts := make([][]results.TrialSummary, 0, len(keys))
	for _, k := range keys {
		var part []results.TrialSummary
		if err := st.getJSON(ctx, sweepFile(sweepID, "result part "+k[strings.LastIndex(k, "/")+1:], k), &part); err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return parts, nil
}

// ReadTrialSummaries reads every stored result part of a sweep and merges them with its plan
// (results.Merge): each trial once, in plan order.
func (st *Store) ReadTrialSummaries(ctx context.Context, sweepID string) ([]results.TrialSummary, error) {
	parts, err := st.ReadResultsParts(ctx, sweepID)
	if err != nil {
		return nil, err
	}
	var trials []sweeps.Trial
	// The plan only fills in trials recorded without their summary: without it they stay bare.
	if plan, err := st.ReadPlan(ctx, sweepID); err == nil {
		trials = plan.Trials
	}
	return results.Merge(parts, trials), nil
}

func resultsFile(sweepID string) file {
	return sweepFile(sweepID, "results.json", artifacts.ResultsKey(sweepID))
}

// WriteResults stores results.json of res.SweepID and returns its key.
func (st *Store) WriteResults(ctx context.Context, res *results.SweepResults) (string, error) {
	f := resultsFile(res.SweepID)
	return f.key, st.putJSON(ctx, f, res, true)
}

// ReadResults reads a finished sweep's results.json.
func (st *Store) ReadResults(ctx context.Context, sweepID string) (*results.SweepResults, error) {
	var r results.SweepResults
	if err := st.getJSON(ctx, resultsFile(sweepID), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// WriteResultsCSV stores results.csv, res as a table (results.WriteCSV), and returns its key. Nothing
// reads it back: it is for people and spreadsheets; results.json is the record.
func (st *Store) WriteResultsCSV(ctx context.Context, res *results.SweepResults) (string, error) {
	var b bytes.Buffer
	if err := results.WriteCSV(&b, res); err != nil {
		return "", err
	}
	f := sweepFile(res.SweepID, "results.csv", artifacts.ResultsCSVKey(res.SweepID))
	return f.key, st.putBytes(ctx, f, b.Bytes())
}

// WriteDecisionsPart stores a batch of the sweep's scheduler decisions as decision-log part number
// part; writing a part again replaces it.
func (st *Store) WriteDecisionsPart(ctx context.Context, sweepID string, part int, ds []results.Decision) error {
	f := sweepFile(sweepID, fmt.Sprintf("decision-log part %d", part), artifacts.DecisionsPartKey(sweepID, part))
	return st.putJSON(ctx, f, ds, false)
}

// ReadDecisionsParts reads every stored decision-log part of a sweep: its decisions in the order they
// were made (Seq), each once (a part written again holds the same decisions); none when it stored none.
func (st *Store) ReadDecisionsParts(ctx context.Context, sweepID string) ([]results.Decision, error) {
	keys, err := st.s.List(ctx, artifacts.DecisionsPartsPrefix(sweepID))
	if err != nil {
		return nil, fmt.Errorf("list sweep %s's decision-log parts: %w", sweepID, err)
	}
	bySeq := map[int]results.Decision{}
	for _, k := range keys {
		var part []results.Decision
		if err := st.getJSON(ctx, sweepFile(sweepID, "decision-log part "+k[strings.LastIndex(k, "/")+1:], k), &part); err != nil {
			return nil, err
		}
		for _, d := range part {
			bySeq[d.Seq] = d
		}
	}
	out := make([]results.Decision, 0, len(bySeq))
	for _, d := range bySeq {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

func decisionsFile(sweepID string) file {
	return sweepFile(sweepID, "decisions.json", artifacts.DecisionsKey(sweepID))
}

// WriteDecisions stores decisions.json, the whole decision log of an ended sweep, and returns its key.
func (st *Store) WriteDecisions(ctx context.Context, sweepID string, ds []results.Decision) (string, error) {
	f := decisionsFile(sweepID)
	return f.key, st.putJSON(ctx, f, ds, true)
}

// ReadDecisions reads an ended sweep's decisions.json (a sweep whose scheduler made no decision has
// none).
func (st *Store) ReadDecisions(ctx context.Context, sweepID string) ([]results.Decision, error) {
	var ds []results.Decision
	if err := st.getJSON(ctx, decisionsFile(sweepID), &ds); err != nil {
		return nil, err
	}
	return ds, nil
}

func regressionFile(sweepID string) file {
	return sweepFile(sweepID, "regression.json", artifacts.RegressionKey(sweepID))
}

// WriteRegression stores regression.json of rep.SweepID, a nightly regression's comparison, and
// returns its key.
func (st *Store) WriteRegression(ctx context.Context, rep *regression.Report) (string, error) {
	f := regressionFile(rep.SweepID)
	return f.key, st.putJSON(ctx, f, rep, true)
}

// ReadRegression reads a sweep's regression.json (a sweep that ran as no regression has none).
func (st *Store) ReadRegression(ctx context.Context, sweepID string) (*regression.Report, error) {
	var rep regression.Report
	if err := st.getJSON(ctx, regressionFile(sweepID), &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// WriteReport stores report.html and returns its key. Nothing reads it back: `rlsweep report` draws it
// again from the other files.
func (st *Store) WriteReport(ctx context.Context, sweepID string, html []byte) (string, error) {
	f := sweepFile(sweepID, "report.html", artifacts.ReportKey(sweepID))
	return f.key, st.putBytes(ctx, f, html)
}

// ReportURL names a sweep's report.html for people.
func (st *Store) ReportURL(sweepID string) string { return st.s.URL(artifacts.ReportKey(sweepID)) }

func divergenceFile(sweepID, trialID string) file {
	return trialFile(sweepID, trialID, "divergence.json", artifacts.DivergenceKey(sweepID, trialID))
}

// WriteDivergence stores divergence.json of d's trial and returns its key.
func (st *Store) WriteDivergence(ctx context.Context, d *Divergence) (string, error) {
	f := divergenceFile(d.SweepID, d.TrialID)
	return f.key, st.putJSON(ctx, f, d, true)
}

// ReadDivergence reads a trial's divergence.json (only a trial a stop rule stopped has one).
func (st *Store) ReadDivergence(ctx context.Context, sweepID, trialID string) (*Divergence, error) {
	var d Divergence
	if err := st.getJSON(ctx, divergenceFile(sweepID, trialID), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

func resumePointFile(sweepID, trialID string) file {
	return trialFile(sweepID, trialID, "resume.json", artifacts.ResumePointKey(sweepID, trialID))
}

// WriteResumePoint stores a trial's resume.json, replacing the one before.
func (st *Store) WriteResumePoint(ctx context.Context, sweepID, trialID string, p ResumePoint) error {
	return st.putJSON(ctx, resumePointFile(sweepID, trialID), p, false)
}

// ReadResumePoint reads a trial's resume.json.
func (st *Store) ReadResumePoint(ctx context.Context, sweepID, trialID string) (*ResumePoint, error) {
	var p ResumePoint
	if err := st.getJSON(ctx, resumePointFile(sweepID, trialID), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func exploitFile(sweepID, trialID string, step int64) file {
	return trialFile(sweepID, trialID, fmt.Sprintf("exploit record at step %d", step), artifacts.ExploitKey(sweepID, trialID, step))
}

// WriteExploit stores the record of the pbt exploit trialID made at e.Step and returns its key. A record
// is written once: one already stored at that step is kept as it is.
func (st *Store) WriteExploit(ctx context.Context, sweepID, trialID string, e results.Exploit) (string, error) {
	f := exploitFile(sweepID, trialID, e.Step)
	if ok, err := st.exists(ctx, f); err != nil || ok {
		return f.key, err
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", f.name, err)
	}
	return f.key, st.putBytes(ctx, f, append(b, '\n'))
}

// ReadExploit reads the record of the pbt exploit trialID made at step.
func (st *Store) ReadExploit(ctx context.Context, sweepID, trialID string, step int64) (*results.Exploit, error) {
	var e results.Exploit
	if err := st.getJSON(ctx, exploitFile(sweepID, trialID, step), &e); err != nil {
		return nil, err
	}
	return &e, nil
}

func baselineFile(ref string) file {
	return file{key: artifacts.BaselineKey(ref), name: fmt.Sprintf("baseline %q", ref)}
}

// WriteBaseline stores a sweep's results.json, byte for byte, as the baseline called name (`rlsweep
// baseline set`) and returns its key.
func (st *Store) WriteBaseline(ctx context.Context, name, sweepID string) (string, error) {
	b, err := st.getBytes(ctx, resultsFile(sweepID))
	if err != nil {
		return "", err
	}
	f := file{key: artifacts.StoredBaselineKey(name), name: fmt.Sprintf("baseline %q", name)}
	return f.key, st.putBytes(ctx, f, b)
}

// ReadBaseline reads the baseline ref names (artifacts.BaselineKey: a sweep ID for that sweep's
// results.json, a bare name for a stored baseline, anything else a key) and returns it with its key.
func (st *Store) ReadBaseline(ctx context.Context, ref string) (*results.SweepResults, string, error) {
	f := baselineFile(ref)
	var r results.SweepResults
	if err := st.getJSON(ctx, f, &r); err != nil {
		return nil, f.key, err
	}
	return &r, f.key, nil
}

// Baselines lists the names of the stored baselines.
func (st *Store) Baselines(ctx context.Context) ([]string, error) {
	prefix := artifacts.BaselinesDir() + "/"
	keys, err := st.s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = strings.TrimSuffix(strings.TrimPrefix(k, prefix), ".json")
	}
	return names, nil
}

// BaselinesURL names the folder of the stored baselines for people.
func (st *Store) BaselinesURL() string { return st.s.URL(artifacts.BaselinesDir() + "/") }

// WriteScheduleSpec stores the spec a schedule pins (its spec.yaml, raw) and returns its key, which the
// schedule's action carries.
func (st *Store) WriteScheduleSpec(ctx context.Context, name string, raw []byte) (string, error) {
	f := file{key: artifacts.ScheduleSpecKey(name), name: fmt.Sprintf("schedule %s's spec.yaml", name)}
	return f.key, st.putBytes(ctx, f, raw)
}

// ReadScheduleSpec reads a schedule's pinned spec by the key WriteScheduleSpec returned.
func (st *Store) ReadScheduleSpec(ctx context.Context, key string) ([]byte, error) {
	return st.getBytes(ctx, file{key: key, name: "the schedule's pinned spec " + key})
}

// SweepURL names a sweep's folder for people.
func (st *Store) SweepURL(sweepID string) string { return st.s.URL(artifacts.SweepDir(sweepID) + "/") }

// HoldsSweep says whether the store holds anything of the sweep.
func (st *Store) HoldsSweep(ctx context.Context, sweepID string) (bool, error) {
	keys, err := st.s.List(ctx, artifacts.SweepDir(sweepID)+"/")
	return len(keys) > 0, err
}

// TrialsURL names the folder of a sweep's trials for people.
func (st *Store) TrialsURL(sweepID string) string {
	return st.s.URL(artifacts.TrialsDir(sweepID) + "/")
}

// StoredTrials lists the IDs of the trials of a sweep that have anything in the store, each once, in
// the order of their keys.
func (st *Store) StoredTrials(ctx context.Context, sweepID string) ([]string, error) {
	prefix := artifacts.TrialsDir(sweepID) + "/"
	keys, err := st.s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, k := range keys {
		id, _, _ := strings.Cut(strings.TrimPrefix(k, prefix), "/")
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}
