package activities

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/sweeps"
)

// RecordResultsInput is a batch of finished trials the Sweep workflow hands over for storage.
type RecordResultsInput struct {
	SweepID string
	Part    int // batch number, from 0: a retried call rewrites the same part
	Trials  []TrialSummary
}

// RecordResults stores a batch of trial summaries as results/part-NNNNNN.json. The Sweep workflow keeps
// only counts in its own state, so a sweep of any size continues-as-new with a small history.
func (a *Activities) RecordResults(ctx context.Context, in RecordResultsInput) error {
	b, err := json.Marshal(in.Trials)
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return putBytes(ctx, a.Store, resultsPartKey(in.SweepID, in.Part), b)
}

func resultsPartKey(sweepID string, part int) string {
	return artifacts.SweepKey(sweepID, fmt.Sprintf("results/part-%06d.json", part))
}

// WriteResultsInput asks for the sweep's results files.
type WriteResultsInput struct {
	SweepID string
	Spec    sweeps.Spec
	Status  string // the sweep's final status
}

// WriteResultsResult says where the results went.
type WriteResultsResult struct {
	ResultsKey  string
	CSVKey      string
	ReportKey   string // report.html; "" when it could not be drawn (ReportError says why)
	ReportError string
	Trials      int
}

// SweepResults is results.json: every finished trial, in plan order.
type SweepResults struct {
	SweepID string         `json:"sweep_id"`
	Name    string         `json:"name"`
	Status  string         `json:"status"`
	Metric  sweeps.Metric  `json:"metric"`
	Params  []string       `json:"params"`
	Trials  []TrialSummary `json:"trials"`
}

// WriteResults merges the stored result parts into results.json and results.csv, and draws
// report.html beside them. A report that cannot be drawn does not fail the results: the result says
// why, and `rlsweep report` can draw it again later; a store that cannot be read does fail (and retry).
func (a *Activities) WriteResults(ctx context.Context, in WriteResultsInput) (*WriteResultsResult, error) {
	trials, err := LoadTrialSummaries(ctx, a.Store, in.SweepID)
	if err != nil {
		return nil, err
	}
	res := SweepResults{SweepID: in.SweepID, Name: in.Spec.Name, Status: in.Status, Metric: in.Spec.Metric,
		Params: sweeps.ParamNames(&in.Spec), Trials: trials}
	rin, err := ReportInput(ctx, a.Store, &res, &in.Spec, time.Now())
	if err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	var csvBuf bytes.Buffer
	if err := WriteCSV(&csvBuf, res); err != nil {
		return nil, err
	}
	out := &WriteResultsResult{ResultsKey: artifacts.SweepKey(in.SweepID, "results.json"),
		CSVKey: artifacts.SweepKey(in.SweepID, "results.csv"), Trials: len(trials)}
	if err := putBytes(ctx, a.Store, out.ResultsKey, js); err != nil {
		return nil, err
	}
	if err := putBytes(ctx, a.Store, out.CSVKey, csvBuf.Bytes()); err != nil {
		return nil, err
	}
	var html bytes.Buffer
	if err := report.Render(&html, rin); err != nil {
		out.ReportError = err.Error()
		return out, nil
	}
	out.ReportKey = artifacts.SweepKey(in.SweepID, "report.html")
	return out, putBytes(ctx, a.Store, out.ReportKey, html.Bytes())
}

// LoadSweepResults reads a finished sweep's results.json; a sweep without one wraps artifacts.ErrNotFound.
func LoadSweepResults(ctx context.Context, s Store, sweepID string) (*SweepResults, error) {
	return readResults(ctx, s, artifacts.SweepKey(sweepID, "results.json"))
}

// LoadTrialSummaries reads every stored result part of a sweep; a trial recorded twice (a part written
// again after a continue-as-new) counts once, the last record winning. Trials come back in plan order.
func LoadTrialSummaries(ctx context.Context, s Store, sweepID string) ([]TrialSummary, error) {
	keys, err := s.List(ctx, artifacts.SweepKey(sweepID, "results/part-"))
	if err != nil {
		return nil, err
	}
	byID := map[string]TrialSummary{}
	for _, k := range keys {
		var part []TrialSummary
		if err := getJSON(ctx, s, k, &part); err != nil {
			return nil, err
		}
		for _, t := range part {
			byID[t.TrialID] = t
		}
	}
	// A trial recorded without running to its summary (never started, terminated by hand, no report
	// after a cancel) has only its ID and outcome: its configuration, seed and parameters come from the
	// plan, so results.csv does not show it as configuration 0, seed 0, with no parameters.
	var plan struct {
		Trials []sweeps.Trial `json:"trials"`
	}
	if err := getJSON(ctx, s, artifacts.SweepKey(sweepID, "plan.json"), &plan); err == nil {
		for _, p := range plan.Trials {
			if t, ok := byID[p.ID]; ok && t.Params == nil {
				t.Config, t.Seed, t.Params = p.Config, p.Seed, p.Params
				byID[p.ID] = t
			}
		}
	}
	out := make([]TrialSummary, 0, len(byID))
	for _, t := range byID {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Config != out[j].Config {
			return out[i].Config < out[j].Config
		}
		if out[i].Seed != out[j].Seed {
			return out[i].Seed < out[j].Seed
		}
		return out[i].TrialID < out[j].TrialID
	})
	return out, nil
}

// WriteCSV writes one row per trial: id, config, seed, each parameter, outcome, objective, stop rule,
// steps, wall seconds, error.
func WriteCSV(w io.Writer, res SweepResults) error {
	cw := csv.NewWriter(w)
	// The fixed columns are the names a parameter may not take (sweeps.ReservedParamNames): the trial's
	// identity, then the parameters, then its outcome.
	fixed := sweeps.ReservedParamNames
	header := append(append(slices.Clone(fixed[:3]), res.Params...), fixed[3:]...)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, t := range res.Trials {
		row := []string{t.TrialID, strconv.Itoa(t.Config), strconv.FormatInt(t.Seed, 10)}
		for _, p := range res.Params {
			row = append(row, formatParam(t.Params[p]))
		}
		obj := ""
		if t.Objective != nil {
			obj = strconv.FormatFloat(*t.Objective, 'g', -1, 64)
		}
		row = append(row, t.Outcome, obj, t.StopRule, strconv.FormatInt(t.Steps, 10),
			strconv.FormatFloat(t.WallSeconds, 'f', 3, 64), inertCell(t.Error))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func formatParam(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return inertCell(v)
	default:
		return fmt.Sprint(v)
	}
}

// inertCell keeps a text cell from being read as a formula by a spreadsheet opening results.csv
// (CSV injection, as OWASP describes it): text starting with =, +, -, @, a tab or a carriage return
// gets a leading apostrophe. Numbers are written by strconv, not through here, so they stay numbers.
func inertCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
